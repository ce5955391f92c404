import { defineConfig } from "@playwright/test";
import { chromium } from "./chromium";

// The console under test is started by scripts/test.sh (a fresh data dir with the demo fleet);
// ROOFLINE_URL points at it. Browsers come from Debian's chromium package: nothing is downloaded.
export default defineConfig({
  testDir: "./tests",
  // Signs in as the admin test.sh created; specs about other roles sign in themselves.
  globalSetup: "./global-setup.ts",
  timeout: 90_000,
  expect: { timeout: 30_000 },
  workers: 1,
  retries: 0,
  // The HTML report keeps the screenshots specs attach (end2end/playwright-report, not opened).
  reporter: [["list"], ["html", { outputFolder: "playwright-report", open: "never" }]],
  use: {
    baseURL: process.env.ROOFLINE_URL ?? "http://127.0.0.1:3000",
    trace: "off",
    storageState: "test-results/.auth/admin.json",
    launchOptions: chromium,
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
});
