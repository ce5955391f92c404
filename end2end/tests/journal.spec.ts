import { expect, test } from "@playwright/test";
import { waitForHydration } from "./pages/console";

test("the change journal lists actions with who and why, searches, exports, and verifies", async ({ page, request }) => {
  await page.goto("/journal");
  await waitForHydration(page);
  await expect(page.getByTestId("journal-check")).toHaveAttribute("data-intact", "true");
  // The demo fleet's autostart is on record for both engines.
  await page.getByTestId("journal-query").fill("autostart");
  await page.getByTestId("journal-search").click();
  await expect(page.locator("[data-testid=journal-row][data-kind=serve]")).toHaveCount(2);
  await expect(page.getByTestId("journal-table")).toContainText("demo-vllm");
  const href = await page.getByTestId("journal-export").getAttribute("href");
  const exported = await (await request.get(href!)).json();
  expect(exported.length).toBe(2);
  expect(exported[0].hash).toMatch(/^[0-9a-f]{64}$/);
});
