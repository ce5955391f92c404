import { expect, test } from "@playwright/test";
import { EnginePage } from "./pages/console";

test("smoke-toolcall and bench run from the engine page and the runs compare side by side", async ({ page }) => {
  const engine = new EnginePage(page, "demo-sglang");
  await engine.open();
  await engine.expectState("healthy");
  await engine.show("runs");

  await page.getByTestId("run-smoke").click();
  const progress = page.getByTestId("run-progress");
  await expect(progress).toContainText("smoke-toolcall");
  await expect(progress).toContainText("10 of 10 done", { timeout: 60_000 });
  await expect(progress).toHaveAttribute("data-state", "run-passed");
  await expect(page.getByTestId("smoke-result")).toHaveAttribute("data-passed", "true");
  await expect(page.getByTestId("smoke-case")).toHaveCount(10);
  await expect(page.locator("[data-testid=smoke-case][data-verdict=fail]")).toHaveCount(0);

  for (const n of ["12", "16"]) {
    await page.getByTestId("bench-requests").fill(n);
    await page.getByTestId("bench-requests").dispatchEvent("change");
    await page.getByTestId("run-bench").click();
    await expect(progress).toContainText(`${n} of ${n} done`, { timeout: 60_000 });
    await expect(progress).toHaveAttribute("data-state", "run-passed");
    await expect(page.getByTestId("bench-result-link")).toBeVisible();
  }

  await page.goto("/bench?profile=demo-sglang");
  await page.locator("body[data-hydrated=true]").waitFor();
  const boxes = page.locator("[data-testid=bench-row] input[type=checkbox]");
  await expect(boxes.nth(1)).toBeVisible();
  await boxes.nth(0).check();
  await boxes.nth(1).check();
  await page.getByTestId("compare").click();
  await expect(page).toHaveURL(/\/bench\/compare\?ids=/);
  const table = page.getByTestId("compare-table");
  await expect(table).toContainText("TTFT p95 (ms)");
  await expect(table.locator("thead th")).toHaveCount(3);
});
