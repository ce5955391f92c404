import { expect, test } from "@playwright/test";
import { FleetPage } from "./pages/console";

test("the fleet page lists both simulated engines, healthy", async ({ page }) => {
  const fleet = new FleetPage(page);
  await fleet.open();
  await expect(fleet.rows).toHaveCount(2);
  for (const profile of ["demo-vllm", "demo-sglang"]) {
    const row = fleet.row(profile);
    await expect(row.getByTestId("simulated")).toBeVisible();
    await expect(row.getByTestId("state")).toHaveAttribute("data-state", "healthy");
  }
  await expect(fleet.row("demo-vllm")).toContainText("127.0.0.1:18000");
  // Live signals from each engine's /metrics arrive over the page's event stream.
  await expect(fleet.row("demo-vllm").getByTestId("kv")).toContainText("%");
  await expect(fleet.row("demo-sglang").getByTestId("waiting")).toHaveText("0");
  await expect(fleet.row("demo-sglang")).toContainText("sglang");
});
