import { expect, test } from "@playwright/test";
import { waitForHydration } from "./pages/console";

test("the Models page verifies a model directory and names what is wrong", async ({ page }) => {
  await page.goto("/models");
  await waitForHydration(page);
  const model = page.locator('[data-testid=model][data-name="llama-3.1-8b-instruct"]');
  await expect(model).toBeVisible();
  await model.getByTestId("model-verify").click();
  // The demo's directories hold a config.json only: not something to serve on a real host.
  const report = model.getByTestId("model-report");
  await expect(report).toHaveAttribute("data-ok", "false", { timeout: 30_000 });
  await expect(report).toHaveAttribute("data-manifest", "false");
  await expect(model.locator("[data-testid=model-finding][data-code=missing]").first()).toContainText("tokenizer.json");
  await expect(model.locator("[data-testid=model-finding][data-code=no-safetensors]")).toBeVisible();
  await expect(model.locator("[data-testid=model-finding][data-code=no-manifest]")).toBeVisible();

  // In Russian too.
  await page.getByTestId("lang-ru").click();
  await expect(model.locator("[data-testid=model-finding][data-code=no-manifest]")).toContainText("нет манифеста");
  await page.getByTestId("lang-en").click();
});
