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
  // A number (the demo traffic keeps it moving: usually 0, more during a burst).
  await expect(fleet.row("demo-sglang").getByTestId("waiting")).toHaveText(/^\d+\s*$/);
  await expect(fleet.row("demo-sglang")).toContainText("sglang");
});

test("the fleet table sorts by any column and keeps the order through live updates", async ({ page }) => {
  const fleet = new FleetPage(page);
  await fleet.open();
  await expect(fleet.rows).toHaveCount(2);
  const order = async () => fleet.rows.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-profile")));
  await page.locator("button[data-sort=profile]").click();
  await expect.poll(order).toEqual(["demo-sglang", "demo-vllm"]);
  await page.locator("button[data-sort=profile]").click();
  await expect.poll(order).toEqual(["demo-vllm", "demo-sglang"]);
  await expect(page.locator("th:has(button[data-sort=profile])")).toHaveAttribute("aria-sort", "descending");
  // Several fleet updates later (one a second), the chosen order holds.
  await page.waitForTimeout(2500);
  expect(await order()).toEqual(["demo-vllm", "demo-sglang"]);
  // Local engines are on "this host"; GPU columns exist even when a host has no GPU data.
  await expect(fleet.row("demo-vllm")).toContainText("this host");
  await expect(fleet.row("demo-vllm").getByTestId("gpu-mem")).toHaveText("—");
});

test("live updates change cells, not the table: rows are not rebuilt on every update", async ({ page }) => {
  const fleet = new FleetPage(page);
  await fleet.open();
  await expect(fleet.rows).toHaveCount(2);
  // Marks on the live DOM nodes: a table or row rebuilt by an update is a new node without
  // the mark (with a thousand engines, a rebuild every second never finishes).
  await page.getByTestId("fleet-table").evaluate((el) => ((el as any).__rlMark = true));
  await fleet.row("demo-vllm").evaluate((el) => ((el as any).__rlMark = true));
  const before = await fleet.row("demo-vllm").getByTestId("spark").first().locator("polyline").getAttribute("points");
  // Several updates later (one a second), the sparkline moved in the same row of the same table.
  await expect.poll(() => fleet.row("demo-vllm").getByTestId("spark").first().locator("polyline").getAttribute("points"), { timeout: 10_000 }).not.toBe(before);
  expect(await page.getByTestId("fleet-table").evaluate((el) => (el as any).__rlMark === true)).toBe(true);
  expect(await fleet.row("demo-vllm").evaluate((el) => (el as any).__rlMark === true)).toBe(true);
});
