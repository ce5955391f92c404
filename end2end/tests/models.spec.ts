import { expect, test, type Page } from "@playwright/test";
import * as fs from "node:fs";
import * as path from "node:path";
import { waitForHydration } from "./pages/console";

/** The console's models root, read from the demo engine's command line (test.sh runs the
 *  console on this machine, in a temporary data dir). */
async function modelsRoot(page: Page): Promise<string> {
  await page.goto("/engines/demo-vllm");
  await waitForHydration(page);
  const argv = (await page.getByTestId("argv").textContent()) ?? "";
  const model = argv.split(/\s+/).find((w) => w.endsWith("/llama-3.1-8b-instruct"));
  expect(model, argv).toBeTruthy();
  return path.dirname(model!);
}

test("the demo's model directories pass the Models page's verification, weights simulated", async ({ page }) => {
  await page.goto("/models");
  await waitForHydration(page);
  const model = page.locator('[data-testid=model][data-name="llama-3.1-8b-instruct"]');
  await model.getByTestId("model-verify").click();
  const report = model.getByTestId("model-report");
  await expect(report).toHaveAttribute("data-ok", "true", { timeout: 30_000 });
  await expect(report).toHaveAttribute("data-manifest", "true");
  // Only the simulator's profiles load it: the missing weights are the simulator's, not an error.
  await expect(model.locator("[data-testid=model-finding][data-code=weights-simulated]")).toBeVisible();
  await expect(model.locator("[data-testid=model-finding][data-code=no-safetensors]")).toHaveCount(0);
});

test("the Models page verifies a model directory and names what is wrong", async ({ page }) => {
  // An incomplete transfer beside the demo's models: a config.json and nothing else.
  const root = await modelsRoot(page);
  const broken = path.join(root, "half-copied");
  fs.mkdirSync(broken, { recursive: true });
  fs.copyFileSync(path.join(root, "llama-3.1-8b-instruct", "config.json"), path.join(broken, "config.json"));
  try {
    await page.goto("/models");
    await waitForHydration(page);
    const model = page.locator('[data-testid=model][data-name="half-copied"]');
    await expect(model).toBeVisible();
    await model.getByTestId("model-verify").click();
    const report = model.getByTestId("model-report");
    await expect(report).toHaveAttribute("data-ok", "false", { timeout: 30_000 });
    await expect(report).toHaveAttribute("data-manifest", "false");
    await expect(model.locator("[data-testid=model-finding][data-code=missing]").first()).toContainText("tokenizer.json");
    // No profile loads it: missing weights are an error, whatever the host runs.
    await expect(model.locator("[data-testid=model-finding][data-code=no-safetensors]")).toBeVisible();
    await expect(model.locator("[data-testid=model-finding][data-code=no-manifest]")).toBeVisible();

    // In Russian too.
    await page.getByTestId("lang-ru").click();
    await expect(model.locator("[data-testid=model-finding][data-code=no-manifest]")).toContainText("нет манифеста");
    await page.getByTestId("lang-en").click();
  } finally {
    fs.rmSync(broken, { recursive: true, force: true });
  }
});
