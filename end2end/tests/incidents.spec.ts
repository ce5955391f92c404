import { expect, test } from "@playwright/test";
import { EnginePage, IncidentPage, waitForHydration } from "./pages/console";

// The demo vLLM simulator listens here (see server/src/demo.rs).
const DEMO_VLLM = "http://127.0.0.1:18000";

test("a hang is triaged in Russian, restarted with a reason, and the postmortem exported", async ({ page, context, baseURL, request }) => {
  await context.addCookies([{ name: "lang", value: "ru", url: baseURL! }]);
  // Inject the runbook's hang: /health stays 200, completions never answer.
  const fault = await request.post(`${DEMO_VLLM}/sim/faults`, { data: { enable: ["hang"] } });
  expect(fault.ok()).toBeTruthy();

  const engine = new EnginePage(page, "demo-vllm");
  await engine.open();
  // The console calls it hung by itself (an idle engine's probe got no answer) before anyone
  // opens an incident, and keeps what a restart would destroy at that moment.
  await engine.expectState("hung", 45_000);
  // The verdict itself in the reader's language, not the console's English log line (the
  // demo's traffic makes it the busy engine's verdict, flat counters with requests pending;
  // an idle one gets the probe's).
  await expect(page.getByTestId("note")).toContainText(/запрос(а|ов)? в работе и в очереди|запрос на один токен/);
  await expect(page.getByTestId("note")).toContainText(/завис \d+ с назад/);
  await expect(page.getByTestId("note")).not.toContainText("hung for");
  await page.getByTestId("open-incident").click();
  await page.waitForURL(/\/incidents\/\d+$/, { timeout: 60_000 });
  await waitForHydration(page);

  const incident = new IncidentPage(page);
  // Evidence before action: the engine's process tree (the API server and its EngineCore) at
  // the moment of the verdict; the simulator has no py-spy beside it, which the page says.
  const capture = page.getByTestId("incident-capture");
  await expect(capture).toContainText("Снято, когда консоль признала движок");
  expect(Number(await capture.getAttribute("data-processes"))).toBeGreaterThanOrEqual(2);
  await expect(capture.getByTestId("incident-capture-process").filter({ hasText: "VLLM::EngineCor" })).toHaveCount(1);
  await expect(page.getByTestId("incident-capture-no-stacks")).toBeVisible();
  // Evidence first, then the four triage steps, then the diagnosis from the runbook's table.
  await expect(page.getByTestId("incident-steps").locator("li[data-step]")).toHaveCount(4);
  await expect(incident.diagnosis).toHaveAttribute("data-rule", "hung");
  await expect(incident.diagnosis).toContainText("Движок завис");
  await expect(incident.diagnosis).toContainText("completion на один токен: нет ответа");
  await expect(page.getByTestId("restart-not-offered")).toHaveCount(0);

  // One action, confirmed with a reason; a missing reason is refused.
  await page.getByTestId("incident-action-restart").click();
  await page.getByTestId("action-confirm").click();
  await expect(page.getByTestId("action-confirm-box")).toContainText("Сначала укажите причину");
  await page.getByTestId("action-reason").fill("Движок завис: health 200, completion не отвечает");
  await page.getByTestId("action-confirm").click();

  // The outcome and the re-check (health and metrics again) land on the timeline.
  await expect(page.locator("[data-testid=timeline-entry][data-kind=action]")).toContainText("completion не отвечает");
  await expect(page.locator("[data-testid=timeline-entry][data-kind=outcome-ok]")).toHaveCount(1, { timeout: 90_000 });
  await expect(page.locator("[data-testid=timeline-entry][data-kind=recheck]")).toHaveCount(1, { timeout: 60_000 });
  await expect(incident.latest).toHaveAttribute("data-rule", "none");

  // The postmortem: fields from the runbook, saved, exported as Markdown in Russian.
  await page.getByTestId("postmortem-symptom").fill("Запросы висели, /health отвечал 200");
  await page.getByTestId("postmortem-root-cause").fill("Внедрённое зависание симулятора");
  await page.getByTestId("postmortem-save-draft").click();
  await expect(page.getByTestId("postmortem-saved")).toBeVisible();
  const href = await page.getByTestId("postmortem-export").getAttribute("href");
  expect(href).toContain("lang=ru");
  const md = await request.get(href!);
  expect(md.ok()).toBeTruthy();
  const text = await md.text();
  expect(text).toContain("# Постмортем");
  expect(text).toContain("## Таймлайн");
  expect(text).toContain("Запросы висели, /health отвечал 200");
  expect(text).toContain("Движок завис");
});

test("an incident on a healthy engine finds nothing and offers no restart", async ({ page, context }) => {
  // The incidents list, open in another tab, shows the new incident without a reload.
  const list = await context.newPage();
  await list.goto("/incidents");
  await waitForHydration(list);
  const engine = new EnginePage(page, "demo-sglang");
  await engine.open();
  await page.getByTestId("open-incident").click();
  await page.waitForURL(/\/incidents\/\d+$/, { timeout: 60_000 });
  await waitForHydration(page);
  await expect(page.getByTestId("incident-diagnosis")).toHaveAttribute("data-rule", "none");
  await expect(page.getByTestId("restart-not-offered")).toBeVisible();
  const id = page.url().split("/").pop();
  await expect(list.locator(`[data-testid=incident-row] a[href="/incidents/${id}"]`)).toHaveCount(1, { timeout: 10_000 });
  await page.goto("/incidents");
  await expect(page.getByTestId("incident-row").first()).toContainText("demo-sglang");
  // The engine's page links its open incident at the top, and drops the link once resolved.
  await page.goto("/engines/demo-sglang");
  await waitForHydration(page);
  await expect(page.getByTestId("current-incident").locator("a")).toHaveAttribute("href", `/incidents/${id}`);
  await expect(page.getByTestId("current-incident")).toContainText(`#${id}`);
  const wizard = await context.newPage();
  await wizard.goto(`/incidents/${id}`);
  await waitForHydration(wizard);
  await wizard.getByTestId("incident-resolve").click();
  // (An older incident still open on this engine, from another spec, would take its place.)
  await expect(page.locator(`[data-testid=current-incident] a[href="/incidents/${id}"]`)).toHaveCount(0, { timeout: 10_000 });
});
