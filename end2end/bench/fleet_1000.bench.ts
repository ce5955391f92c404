import { expect, test, type Page } from "@playwright/test";
import * as fs from "node:fs";
import * as path from "node:path";

// The fleet page with a thousand engines (issue 15): 50 remote consoles of 20 engines each
// (end2end/bench/fake_consoles.py), their figures moving every second. Measured in the page:
// long tasks (PerformanceObserver "longtask": main-thread work over 50 ms) and frame times
// (requestAnimationFrame deltas) while it updates, and how long a search and clearing it take
// to show their rows. Figures go to ROOFLINE_BENCH_OUT (JSON) and the log.
const PASSWORD = process.env.ROOFLINE_E2E_PASSWORD ?? "correct horse battery staple";
const OUT = process.env.ROOFLINE_BENCH_OUT ?? "test-results/fleet-1000.json";
const ENGINES = Number(process.env.ROOFLINE_BENCH_ENGINES ?? 1000);
const WINDOW_MS = Number(process.env.ROOFLINE_BENCH_WINDOW_MS ?? 20_000);

type Window = { longtasks: number; longtask_ms: number; longest_ms: number; frames: number; frame_p50_ms: number; frame_p95_ms: number; frame_max_ms: number; updates: number };

async function measure(page: Page): Promise<Window> {
  await page.evaluate(() => {
    const b = (window as any).__bench;
    b.tasks = [];
    b.frames = [];
    b.updates = 0;
  });
  await page.waitForTimeout(WINDOW_MS);
  return page.evaluate(() => {
    const b = (window as any).__bench;
    const frames = [...b.frames].sort((x: number, y: number) => x - y);
    const q = (p: number) => (frames.length ? frames[Math.min(frames.length - 1, Math.floor(p * frames.length))] : 0);
    return {
      longtasks: b.tasks.length,
      longtask_ms: Math.round(b.tasks.reduce((s: number, t: number) => s + t, 0)),
      longest_ms: Math.round(Math.max(0, ...b.tasks)),
      frames: frames.length,
      frame_p50_ms: Math.round(q(0.5) * 10) / 10,
      frame_p95_ms: Math.round(q(0.95) * 10) / 10,
      frame_max_ms: Math.round((frames[frames.length - 1] ?? 0) * 10) / 10,
      updates: b.updates,
    };
  });
}

test("a thousand engines: the fleet page stays responsive while it updates every second", async ({ page, baseURL }) => {
  const login = await page.request.post("/api/fn/login", { form: { name: "root", password: PASSWORD } });
  expect(login.ok()).toBe(true);
  await page.addInitScript(() => {
    const b: any = ((window as any).__bench = { tasks: [], frames: [], updates: 0 });
    new PerformanceObserver((l) => l.getEntries().forEach((e) => b.tasks.push(e.duration))).observe({ type: "longtask", buffered: true });
    let last = performance.now();
    const tick = (now: number) => {
      b.frames.push(now - last);
      last = now;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    // Each fleet update rewrites the summary's text: counting its mutations counts updates seen.
    new MutationObserver(() => (b.updates += 1)).observe(document, { subtree: true, characterData: true, childList: true });
  });
  // The table draws only the rows on screen (and a margin): it says how many rows it holds in
  // `data-shown`, and the rows in the page stay a screenful whatever the fleet's size.
  const rows = page.locator("[data-testid=engine-row]");
  const table = page.getByTestId("fleet-table");
  const drawn = () => rows.count();
  const t0 = Date.now();
  await page.goto("/");
  await page.locator("body[data-hydrated=true]").waitFor();
  await expect(table).toHaveAttribute("data-shown", String(ENGINES));
  await expect(rows.first()).toBeVisible();
  const first_rows_ms = Date.now() - t0;
  const rows_drawn = await drawn();
  expect(rows_drawn).toBeLessThan(120);
  const idle = await measure(page);

  // The last engine is one scroll away, drawn where it belongs (its aria-rowindex).
  let t = Date.now();
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  await expect(page.locator(`[data-testid=engine-row][aria-rowindex="${ENGINES + 1}"]`)).toBeVisible();
  const scroll_end_ms = Date.now() - t;
  expect(await drawn()).toBeLessThan(120);
  const scrolled = await measure(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  await expect(page.locator(`[data-testid=engine-row][aria-rowindex="2"]`)).toBeVisible();

  const search = page.getByTestId("fleet-search");
  t = Date.now();
  await search.fill("gpu-07 ");
  await expect(rows).toHaveCount(ENGINES / 50);
  const search_ms = Date.now() - t;
  const narrowed = await measure(page);
  t = Date.now();
  await search.fill("");
  await expect(table).toHaveAttribute("data-shown", String(ENGINES));
  await expect.poll(drawn).toBeGreaterThan(ENGINES / 50);
  const clear_ms = Date.now() - t;
  t = Date.now();
  await page.locator("button[data-sort=waiting]").click();
  await expect(page.locator("th:has(button[data-sort=waiting])")).toHaveAttribute("aria-sort", "ascending");
  const sort_ms = Date.now() - t;
  const after = await measure(page);

  const result = { url: baseURL, when: new Date().toISOString(), engines: ENGINES, window_ms: WINDOW_MS, first_rows_ms, rows_drawn, scroll_end_ms, search_ms, clear_ms, sort_ms, idle, scrolled, narrowed, after };
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify(result, null, 2));
  console.log(JSON.stringify(result, null, 2));
  // What must hold whatever the machine: the page keeps painting while a thousand rows update
  // (frames at all, not one frozen stretch of the window), and every view comes back.
  expect(after.frames).toBeGreaterThan(0);
  expect(after.frame_max_ms).toBeLessThan(WINDOW_MS / 2);
});
