import { defineConfig } from "@playwright/test";
import { chromium } from "./chromium";

// Browser benches (scripts/bench-fleet-browser.sh): a console the script started, signed into
// by the bench itself. Figures go to ROOFLINE_BENCH_OUT; BENCHMARKS.md has them.
export default defineConfig({
  testDir: "./bench",
  testMatch: /.*\.bench\.ts/,
  timeout: 600_000,
  expect: { timeout: 120_000 },
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  use: {
    baseURL: process.env.ROOFLINE_URL ?? "http://127.0.0.1:3997",
    trace: "off",
    launchOptions: chromium,
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
});
