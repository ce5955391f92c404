import { defineConfig } from "@playwright/test";
import { chromium } from "./chromium";

// The release tarball's checks (scripts/test-release.sh): the console unpacked into an empty
// directory, started on a fresh data dir. No global sign-in: the browser signs in through the
// page, as an operator would.
export default defineConfig({
  testDir: "./release",
  testMatch: /.*\.(spec|bench)\.ts/,
  timeout: 120_000,
  expect: { timeout: 30_000 },
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  use: {
    baseURL: process.env.ROOFLINE_URL ?? "http://127.0.0.1:3996",
    trace: "off",
    launchOptions: chromium,
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
});
