import { expect, test } from "@playwright/test";
import { waitForHydration } from "./pages/console";

// Issue 15 item 6: one clock (the browser's zone, UTC on hover), units in the reader's
// language, a dark scheme that follows the system with dark chart axes.

test.describe("in Vladivostok (UTC+10, no daylight saving)", () => {
  test.use({ timezoneId: "Asia/Vladivostok" });

  test("stored times read in the browser's zone, with UTC on hover", async ({ page }) => {
    await page.goto("/journal");
    await waitForHydration(page);
    const time = page.locator("[data-testid=journal-table] time[datetime]").first();
    const iso = await time.getAttribute("datetime");
    expect(iso).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const local = new Date(Date.parse(iso!) + 10 * 3600_000).toISOString().replace("T", " ").slice(0, 19);
    await expect(time).toHaveText(local);
    const utc = iso!.replace("T", " ").replace("Z", " UTC");
    await expect(time).toHaveAttribute("title", `UTC: ${utc}`);
  });
});

test("units read in Russian and in English", async ({ page, context, baseURL }) => {
  await page.goto("/engines/demo-vllm");
  await waitForHydration(page);
  await expect(page.getByTestId("probe")).toHaveText(/^\d+ ms$/, { timeout: 30_000 });
  await context.addCookies([{ name: "lang", value: "ru", url: baseURL! }]);
  await page.reload();
  await waitForHydration(page);
  await expect(page.getByTestId("probe")).toHaveText(/^\d+ мс$/, { timeout: 30_000 });
  await context.addCookies([{ name: "lang", value: "en", url: baseURL! }]);
});

test.describe("with the system in dark mode", () => {
  test.use({ colorScheme: "dark" });

  test("the console and its charts are dark", async ({ page }) => {
    await page.goto("/engines/demo-vllm?section=charts");
    await waitForHydration(page);
    const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(bg).toBe("rgb(13, 17, 23)");
    await expect(page.getByTestId("plot-queue")).toHaveAttribute("data-theme", "dark", { timeout: 30_000 });
    await test.info().attach("engine page, dark", { body: await page.screenshot({ fullPage: false }), contentType: "image/png" });
    // Back to light while the page is open: the chart is made again in the light theme.
    await page.emulateMedia({ colorScheme: "light" });
    await expect(page.getByTestId("plot-queue")).toHaveAttribute("data-theme", "light");
    expect(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)).toBe("rgb(246, 247, 249)");
  });
});
