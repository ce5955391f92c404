import { expect, test } from "@playwright/test";
import { EnginePage, FleetPage } from "./pages/console";

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
  await expect(engine.log).toContainText("GPU KV cache size:");
  await expect(engine.log).toContainText("Application startup complete.");
  // This start's phases against the one before (the autostart), and the KV prediction
  // calibrated from that earlier start's own memory lines.
  const timeline = page.getByTestId("startup-timeline");
  await expect(timeline).toBeVisible();
  await expect(timeline.locator('tr[data-phase="loading-weights"] td')).toHaveCount(2);
  await expect(timeline.locator('tr[data-phase="loading-weights"] td').nth(1)).toContainText(" s");
  await expect(page.getByTestId("kv-check-calibrated")).toBeVisible();

  // Cancel leaves the engine alone.
  await page.getByTestId("action-stop").click();
  await page.getByTestId("confirm-no").click();
  await expect(page.getByTestId("confirm")).toHaveCount(0);
  await engine.expectState("healthy");
});
