import { defineConfig } from "@playwright/test";
import { chromium } from "./chromium";

// Several host consoles sharing one PostgreSQL (scripts/test-multihost-browser.sh starts them
// and the database): ROOFLINE_URL is host A's console, ROOFLINE_URL_B host B's. The browser
// signs in through the page.
export default defineConfig({
  testDir: "./fleet",
  timeout: 120_000,
  expect: { timeout: 30_000 },
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  use: {
    baseURL: process.env.ROOFLINE_URL ?? "http://127.0.0.1:3994",
    trace: "off",
    launchOptions: chromium,
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
});
