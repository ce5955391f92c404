import { expect, test } from "@playwright/test";
import { ENGINE_SECTIONS, EnginePage, FleetPage } from "./pages/console";

test("stop and start a simulated engine from its page, and read its log", async ({ page }) => {
  const fleet = new FleetPage(page);
  await fleet.open();
  await fleet.row("demo-vllm").getByRole("link", { name: "demo-vllm" }).click();
  const engine = new EnginePage(page, "demo-vllm");
  await expect(page).toHaveURL(/\/engines\/demo-vllm$/);
  await engine.expectState("healthy");
  await expect(page.getByTestId("argv")).toContainText("serve");
  await expect(page.getByTestId("argv")).toContainText("--served-model-name llama-3.1-8b");
  // Live signals and the completion probe arrive over the page's event stream.
  await expect(page.getByTestId("live-kv")).toContainText("%");
  await expect(page.getByTestId("probe")).toContainText("ms");

  await engine.act("stop");
  await engine.expectState("stopped");
  await expect(page.getByTestId("action-serve")).toBeEnabled();

  await engine.act("serve");
  await engine.expectState("healthy");
  // The live tail shows the new run's startup lines as they are written.
  await engine.show("log");
  await expect(engine.log).toBeVisible();
  await expect(engine.log).toContainText("GPU KV cache size:");
  await expect(engine.log).toContainText("Application startup complete.");
  // This start's phases against the one before (the autostart), and the KV prediction
  // calibrated from that earlier start's own memory lines.
  await engine.show("runs");
  const timeline = page.getByTestId("startup-timeline");
  await expect(timeline).toBeVisible();
  await expect(timeline.locator('tr[data-phase="loading-weights"] td')).toHaveCount(2);
  await expect(timeline.locator('tr[data-phase="loading-weights"] td').nth(1)).toContainText(" s");
  await engine.show("gpu");
  await expect(page.getByTestId("kv-check-calibrated")).toBeVisible();

  // Cancel leaves the engine alone.
  await engine.show("overview");
  await page.getByTestId("action-stop").click();
  await page.getByTestId("confirm-no").click();
  await expect(page.getByTestId("confirm")).toHaveCount(0);
  await engine.expectState("healthy");
});

test("the overview loads without the code of the charts, the runs and the GPUs; each comes when first shown", async ({ page }) => {
  const parts: string[] = [];
  page.on("request", (r) => {
    const m = r.url().match(/split_(engine[a-z_]*)\.wasm/);
    if (m) parts.push(m[1]);
  });
  const engine = new EnginePage(page, "demo-vllm");
  await engine.open();
  await expect(page.getByTestId("live-kv")).toBeVisible();
  expect(parts).toEqual(["engine"]);
  // Nothing is drawn in a section not yet shown, and nothing is busy.
  await expect(page.locator("section.engine [data-section=runs]")).toBeEmpty();
  await expect(page.locator("[aria-busy=true]")).toHaveCount(0);
  for (const [section, part, shows] of [
    ["charts", "engine__charts", "chart-queue"],
    ["runs", "engine__runs", "run-smoke"],
    ["gpu", "engine__gpu", "kv-check"],
  ] as const) {
    await engine.show(section);
    await expect(page.getByTestId(shows)).toBeVisible();
    expect(parts).toContain(part);
  }
  // Shown once, a section stays: back at the overview and again at the runs, no part twice.
  await engine.show("overview");
  await engine.show("runs");
  expect(parts.filter((p) => p === "engine__runs")).toHaveLength(1);
  // A link to a lazily drawn section is served busy, and the browser fills it in.
  const html = await (await page.request.get("/engines/demo-vllm?section=runs")).text();
  expect(html).toMatch(/data-section="runs"[^>]*aria-busy="true"/);
  await engine.open("runs");
  await expect(page.getByTestId("run-smoke")).toBeVisible();
  await expect(page.locator("[aria-busy=true]")).toHaveCount(0);
});

test("the engine page comes in sections, each with its own address", async ({ page, context, baseURL }) => {
  const engine = new EnginePage(page, "demo-sglang");
  await engine.open();
  const panel = (s: string) => page.locator(`section.engine [data-section=${s}]`);
  // The overview first; the other sections are there (they keep following the stream) but hidden.
  await expect(panel("overview")).toBeVisible();
  await expect(page.getByTestId("section-overview")).toHaveAttribute("aria-current", "page");
  for (const s of ENGINE_SECTIONS.filter((s) => s !== "overview")) await expect(panel(s)).toBeHidden();
  // Each link shows its section alone and puts it in the address.
  for (const s of ENGINE_SECTIONS) {
    await engine.show(s);
    if (s !== "overview") await expect(page).toHaveURL(new RegExp(`\\?section=${s}$`));
    for (const other of ENGINE_SECTIONS.filter((o) => o !== s)) await expect(panel(other)).toBeHidden();
  }
  // Back returns to the section before.
  await page.goBack();
  await expect(panel("gpu")).toBeVisible();
  // The current incident, when there is one (the accessibility audit opens one on this
  // engine), is linked above the sections: seen from any of them.
  const banner = page.getByTestId("current-incident");
  if ((await banner.count()) > 0) await expect(banner).toBeVisible();
  await expect(page.locator("section.engine [data-section] [data-testid=current-incident]")).toHaveCount(0);
  // A link to a section is served already open there (the server draws it, before any script).
  const html = await (await page.request.get("/engines/demo-sglang?section=log")).text();
  expect(html).toMatch(/data-section="log"(?![^>]*hidden)/);
  expect(html).toMatch(/data-section="overview"[^>]*hidden/);
  // An unknown section is the overview.
  await page.goto("/engines/demo-sglang?section=%3Cscript%3E");
  await expect(panel("overview")).toBeVisible();
  // By keyboard: the section links are reached with Tab and opened with Enter.
  await engine.open();
  await page.getByTestId("section-charts").focus();
  await page.keyboard.press("Enter");
  await expect(panel("charts")).toBeVisible();
  await expect(page.getByTestId("plot-queue").locator("canvas")).toBeVisible();
  // In Russian.
  await context.addCookies([{ name: "lang", value: "ru", url: baseURL! }]);
  await engine.open("runs");
  await expect(page.getByTestId("run-smoke")).toBeVisible();
  await expect(page.getByTestId("section-runs")).toHaveText("Прогоны");
  await expect(page.getByTestId("section-overview")).toHaveText("Обзор");
  await context.addCookies([{ name: "lang", value: "en", url: baseURL! }]);
});
