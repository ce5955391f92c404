import { expect, test } from "@playwright/test";
import { waitForHydration } from "./pages/console";

test("the profile editor validates step by step, previews and converts argv, diffs, and saves a draft", async ({ page, context, baseURL }) => {
  const parts: string[] = [];
  page.on("request", (r) => {
    const m = r.url().match(/split_([a-z_]+)\.wasm/);
    if (m) parts.push(m[1]);
  });
  await page.goto("/profiles/demo-sglang/edit");
  await waitForHydration(page);
  // Each field carries the installed engine's own help for its flag, its default, the values
  // the engine lists, and the runbook's advice.
  const memHelp = page.getByTestId("help-MEM_FRACTION");
  await expect(memHelp).toContainText("--mem-fraction-static", { timeout: 60_000 });
  await expect(memHelp.getByTestId("field-advice")).toHaveText("0.85–0.92; above 0.95 prefill runs out of memory.");
  await expect(page.getByTestId("help-CONTEXT_LENGTH").getByTestId("field-advice")).toContainText("take the value from the calculator");
  await expect(page.getByTestId("field-TOOL_CALL_PARSER")).toHaveAttribute("list", "choices-TOOL_CALL_PARSER");
  expect(await page.locator("#choices-TOOL_CALL_PARSER option").count()).toBeGreaterThan(5);
  await expect(page.locator("#choices-TOOL_CALL_PARSER option[value=hermes]")).toHaveCount(1);
  await expect(page.getByTestId("field-MEM_FRACTION")).toHaveAttribute("aria-describedby", "help-MEM_FRACTION issues-MEM_FRACTION");
  // The calculator's verdict for the profile as edited, without asking.
  await expect(page.getByTestId("editor-verdict")).toHaveAttribute("data-verdict", "fits", { timeout: 30_000 });
  await expect(page.getByTestId("editor-verdict")).toContainText(/KV cache for \d+ tokens: [\d.]+ requests of \d+ tokens at once/);
  await test.info().attach("editor (en)", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
  await context.addCookies([{ name: "lang", value: "ru", url: baseURL! }]);
  await page.reload();
  await waitForHydration(page);
  await expect(page.getByTestId("help-MEM_FRACTION").getByTestId("field-advice")).toHaveText("0,85–0,92; выше 0,95 — OOM на prefill.");
  await expect(page.getByTestId("editor-verdict")).toContainText("KV-кэш на", { timeout: 30_000 });
  await test.info().attach("editor (ru)", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
  await context.addCookies([{ name: "lang", value: "en", url: baseURL! }]);
  await page.reload();
  await waitForHydration(page);
  const argv = page.getByTestId("editor-argv");
  await expect(argv).toContainText("sim sglang --model-path");
  await expect(argv).toContainText("--mem-fraction-static 0.88");

  // Switching to a vLLM installation converts through the flag map, as you type.
  await page.getByTestId("field-ENGINE").selectOption("sim-vllm");
  await expect(argv).toContainText("sim vllm serve");
  await expect(argv).toContainText("--gpu-memory-utilization 0.88");
  await page.getByTestId("field-ENGINE").selectOption("sim-sglang");
  await expect(argv).toContainText("--mem-fraction-static 0.88");

  // An invalid memory fraction names the field and closes the later steps.
  await page.getByTestId("field-MEM_FRACTION").fill("1.5");
  await expect(page.locator("[data-step=memory] [data-testid=field-issue]")).toBeVisible();
  await expect(page.getByTestId("field-MEM_FRACTION")).toHaveAttribute("aria-invalid", "true");
  await expect(page.locator("#issues-MEM_FRACTION [data-testid=field-issue]")).toHaveCount(1);
  await expect(page.locator("fieldset[data-step=parsers]")).toHaveAttribute("data-open", "false");
  await page.getByTestId("field-MEM_FRACTION").fill("0.85");
  await expect(page.locator("fieldset[data-step=parsers]")).toHaveAttribute("data-open", "true");
  await expect(page.getByTestId("field-MEM_FRACTION")).toHaveAttribute("aria-invalid", "false");

  // Flags are checked against the installed engine's own --help.
  await page.getByTestId("editor-check-flags").click();
  await expect(page.getByTestId("editor-flags")).toHaveAttribute("data-ok", "true", { timeout: 60_000 });

  // The calculator predicts the edit as written, on this host's (simulated) GPU, as you type;
  // its breakdown (the calculator's own view, a part of the bundle of its own) when asked for.
  await expect(page.getByTestId("editor-verdict")).toHaveAttribute("data-verdict", "fits", { timeout: 30_000 });
  await expect(page.getByTestId("editor-vram-result")).toHaveCount(0);
  expect(parts).not.toContain("views__prediction");
  await page.getByTestId("editor-vram-breakdown").click();
  await expect(page.getByTestId("editor-vram-breakdown")).toHaveAttribute("aria-expanded", "true");
  await expect(page.getByTestId("editor-vram-result")).toHaveAttribute("data-verdict", "fits", { timeout: 30_000 });
  await expect(page.getByTestId("editor-vram-result-calibration")).toBeVisible();
  expect(parts).toContain("views__prediction");
  await page.getByTestId("field-MEM_FRACTION").fill("0.1");
  await expect(page.getByTestId("editor-verdict")).toHaveAttribute("data-verdict", "weights-do-not-fit", { timeout: 30_000 });
  await expect(page.getByTestId("editor-vram-result")).toHaveAttribute("data-verdict", "weights-do-not-fit");
  expect(parts.filter((p) => p === "views__prediction")).toHaveLength(1);
  await page.getByTestId("field-MEM_FRACTION").fill("0.85");

  // The diff against the active version; submitting for review needs a reason, a draft not.
  await expect(page.getByTestId("editor-diff")).toContainText("-MEM_FRACTION=0.88");
  await expect(page.getByTestId("editor-diff")).toContainText("+MEM_FRACTION=0.85");
  await expect(page.getByTestId("editor-submit")).toBeDisabled();
  await page.getByTestId("editor-reason").fill("leave room for the CUDA graphs");
  await page.getByTestId("editor-draft").click();

  // The draft has its own page; its author can edit it again from there.
  await expect(page).toHaveURL(/\/changes\/\d+$/);
  await waitForHydration(page);
  await expect(page.getByTestId("change-state")).toHaveAttribute("data-state", "draft");
  await expect(page.getByTestId("change-diff")).toContainText("+MEM_FRACTION=0.85");
  await page.getByTestId("change-edit").click();
  await expect(page.getByTestId("editor-change")).toBeVisible();
  await expect(page.getByTestId("field-MEM_FRACTION")).toHaveValue("0.85");
});

test("moving a profile to a newer installation runs the upgrade preflight as you edit", async ({ page }) => {
  // The preflight's view is a part of the bundle of its own, fetched with its first answer.
  const parts: string[] = [];
  page.on("request", (r) => {
    const m = r.url().match(/split_([a-z_]+)\.wasm/);
    if (m) parts.push(m[1]);
  });
  await page.goto("/profiles/demo-vllm/edit");
  await waitForHydration(page);
  await expect(page.getByTestId("editor-upgrade")).toHaveCount(0);
  expect(parts).not.toContain("views__upgrade");

  // The demo's synthetic next vLLM release renamed the llama3_json parser: the start would fail.
  await page.getByTestId("field-ENGINE").selectOption("sim-vllm-next");
  const result = page.getByTestId("upgrade-result");
  await expect(result).toHaveAttribute("data-blocking", "1", { timeout: 60_000 });
  expect(parts.filter((p) => p === "views__upgrade")).toHaveLength(1);
  await expect(page.getByTestId("upgrade-versions")).toContainText("0.34.0+synthetic");
  const parser = page.locator("[data-testid=upgrade-findings] li[data-kind=value-gone]");
  await expect(parser).toHaveAttribute("data-flag", "--tool-call-parser");
  await expect(parser).toContainText("llama3_json");
  await expect(parser).toContainText("llama3)");
  await expect(page.getByTestId("upgrade-other-defaults")).toBeVisible();
  await expect(page.getByTestId("upgrade-metrics")).toHaveAttribute("data-checked", "false");

  // In Russian too, with the plural form.
  await page.getByTestId("lang-ru").click();
  await expect(page.getByTestId("upgrade-verdict")).toContainText("1 замечание не даст движку запуститься");
  await page.getByTestId("lang-en").click();

  // With the parser's new name nothing stops the start.
  await page.getByTestId("field-TOOL_CALL_PARSER").fill("llama3");
  await page.getByTestId("editor-upgrade-check").click();
  await expect(result).toHaveAttribute("data-blocking", "0", { timeout: 60_000 });
  await expect(page.getByTestId("upgrade-verdict")).toContainText("Nothing here stops the start");

  // The reviewer sees the same preflight on the change's page.
  await page.getByTestId("editor-reason").fill("vLLM 0.34");
  await page.getByTestId("editor-draft").click();
  await expect(page).toHaveURL(/\/changes\/\d+$/);
  await waitForHydration(page);
  await expect(page.getByTestId("change-upgrade")).toBeVisible();
  await expect(page.getByTestId("upgrade-result")).toHaveAttribute("data-blocking", "0", { timeout: 60_000 });
  await expect(page.getByTestId("upgrade-versions")).toContainText("sim-vllm-next");
  await page.getByTestId("change-withdraw").click();

  // Back on the installation it runs on, there is nothing to preflight.
  await page.goto("/profiles/demo-vllm/edit");
  await waitForHydration(page);
  await page.getByTestId("field-ENGINE").selectOption("sim-vllm-next");
  await expect(page.getByTestId("editor-upgrade")).toBeVisible();
  await page.getByTestId("field-ENGINE").selectOption("sim-vllm");
  await expect(page.getByTestId("editor-upgrade")).toHaveCount(0);
});
