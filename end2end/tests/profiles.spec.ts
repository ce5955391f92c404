import { expect, test } from "@playwright/test";
import { waitForHydration } from "./pages/console";

test("the profile list leads to a profile's file and rendered command line", async ({ page }) => {
  await page.goto("/profiles");
  await waitForHydration(page);
  await expect(page.getByTestId("profile-row")).toHaveCount(2);
  await page.getByRole("link", { name: "demo-sglang" }).click();
  await expect(page).toHaveURL(/\/profiles\/demo-sglang$/);
  const argv = page.getByTestId("argv");
  await expect(argv).toContainText("sim sglang --model-path");
  await expect(argv).toContainText("--tp-size 1");
  await expect(argv).toContainText("--enable-metrics");
  await expect(page.getByTestId("envfile")).toContainText("ENGINE=sim-sglang");
  await expect(page.getByTestId("simulated")).toBeVisible();
  // Keyboard: the engine link is reachable and opens the engine page.
  await page.getByRole("link", { name: "Open engine" }).focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/engines\/demo-sglang$/);
});
