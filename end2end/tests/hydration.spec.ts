import { expect, test } from "@playwright/test";
import { waitForHydration } from "./pages/console";

// Every page, opened cold, hydrates without a warning or an error from the framework or the
// page: a resource read outside <Suspense>/<Transition> (leptos warns and the page renders its
// data without waiting for it), a hydration mismatch, a panic. The browser tests run the
// debug bundle, which carries leptos' warnings.
const PAGES = [
  "/",
  "/engines/demo-vllm",
  "/engines/demo-vllm?section=charts",
  "/profiles",
  "/profiles/demo-vllm",
  "/profiles/demo-vllm/edit",
  "/changes",
  "/incidents",
  "/bench",
  "/journal",
  "/hosts",
  "/vram",
  "/models",
  "/account",
  "/admin/accounts",
];

test("every page hydrates without a warning or an error in the browser's console", async ({ page }) => {
  const said: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "warning" || m.type() === "error") said.push(`${page.url()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => said.push(`${page.url()}: ${e.message}`));
  for (const path of PAGES) {
    await page.goto(path);
    await waitForHydration(page);
    // The page's first data and its stream: a late read warns after hydration.
    await page.waitForTimeout(500);
  }
  expect(said).toEqual([]);
});
