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

test("a profile page shows the set its engine last started well on", async ({ page }) => {
  await page.goto("/profiles/demo-sglang");
  await waitForHydration(page);
  const pinned = page.getByTestId("profile-known-good");
  await expect(pinned).toHaveAttribute("data-empty", "false");
  await expect(pinned.locator("[data-pin=engine]")).toHaveText("0.5.23");
  await expect(pinned.locator("[data-pin=torch]")).toHaveText("2.9.0+cu128");
  await expect(pinned.locator("[data-pin=cuda]")).toHaveText("12.8");
  await expect(pinned.locator("[data-pin=driver]")).toHaveText("570.133.20");
  await page.getByTestId("lang-ru").click();
  await expect(pinned).toContainText("Драйвер NVIDIA");
  await page.getByTestId("lang-en").click();
});
