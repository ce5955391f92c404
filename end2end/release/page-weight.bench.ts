import { expect, test, type BrowserContext, type Page } from "@playwright/test";
import * as fs from "node:fs";
import * as path from "node:path";

// Page weight (BENCHMARKS.md "Page weight"): bytes a browser transfers and the time until the
// page is usable, for every page, on a cold cache (a new browser profile) and a warm one (the
// same page opened again). Bytes are Chromium's own
// count of what came over the wire (headers and compressed bodies: Network.loadingFinished's
// encodedDataLength); the event streams a page keeps open are live data, not page weight,
// and are left out. Figures go to ROOFLINE_WEIGHT_OUT as JSON.
const PASSWORD = process.env.ROOFLINE_E2E_PASSWORD ?? "correct horse battery staple";
const OUT = process.env.ROOFLINE_WEIGHT_OUT ?? "test-results/page-weight.json";

type Load = { page: string; cache: "cold" | "warm"; bytes: number; requests: number; ready_ms: number; charts: boolean; files: Record<string, number> };

async function measure(context: BrowserContext, page: Page, url: string, ready: (p: Page) => Promise<void>): Promise<Omit<Load, "page" | "cache">> {
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  const urls = new Map<string, string>();
  const files: Record<string, number> = {};
  let bytes = 0;
  let requests = 0;
  cdp.on("Network.requestWillBeSent", (e: any) => urls.set(e.requestId, e.request.url));
  cdp.on("Network.loadingFinished", (e: any) => {
    bytes += e.encodedDataLength;
    requests += 1;
    const u = new URL(urls.get(e.requestId) ?? "about:blank");
    files[u.pathname] = (files[u.pathname] ?? 0) + e.encodedDataLength;
  });
  const started = Date.now();
  await page.goto(url);
  await ready(page);
  const ready_ms = Date.now() - started;
  // Late requests (a chart's script, the stylesheet's fetches) are part of the page.
  await page.waitForLoadState("networkidle").catch(() => {});
  await page.waitForTimeout(500);
  await cdp.detach();
  const charts = Object.keys(files).some((p) => p.includes("/charts.min."));
  return { bytes, requests, ready_ms, charts, files };
}

const hydrated = async (p: Page) => { await p.locator("body[data-hydrated=true]").waitFor(); };
const settled = async (p: Page) => { await hydrated(p); await p.waitForLoadState("networkidle").catch(() => {}); };
const PAGES: { name: string; url: string; ready: (p: Page) => Promise<void> }[] = [
  { name: "sign-in", url: "/login", ready: async (p) => { await p.getByTestId("login-submit").waitFor(); await p.waitForLoadState("load"); } },
  { name: "fleet", url: "/", ready: async (p) => { await hydrated(p); await p.locator("[data-testid=engine-row]").first().waitFor(); } },
  // The engine page opens on its overview (no chart shown, the chart script not loaded); its charts
  // section is the heaviest view of it.
  { name: "engine", url: "/engines/demo-vllm", ready: async (p) => { await hydrated(p); await p.getByTestId("live-kv").waitFor(); } },
  { name: "engine-charts", url: "/engines/demo-vllm?section=charts", ready: async (p) => { await hydrated(p); await p.getByTestId("plot-queue").locator("canvas").waitFor(); } },
  { name: "profiles", url: "/profiles", ready: settled },
  { name: "profile", url: "/profiles/demo-vllm", ready: settled },
  { name: "editor", url: "/profiles/demo-vllm/edit", ready: settled },
  { name: "changes", url: "/changes", ready: settled },
  { name: "incidents", url: "/incidents", ready: settled },
  { name: "bench", url: "/bench", ready: settled },
  { name: "vram", url: "/vram", ready: settled },
  { name: "models", url: "/models", ready: settled },
  { name: "journal", url: "/journal", ready: settled },
  { name: "account", url: "/account", ready: settled },
  { name: "hosts", url: "/hosts", ready: settled },
];

/** Every page's budget on a cold cache (issue 31): bytes on the wire and requests. Issue 31
 *  asks 400 KiB and 20 requests of every page (150 KB of the sign-in page); every page meets
 *  it (BENCHMARKS.md "Page weight"). */
const KIB = 1024;
const BUDGET_KIB: Record<string, number> = {
  "sign-in": 150_000 / KIB,
  // Issue 31's goal: a part of the wasm per page (and per lazily drawn section or view),
  // shared code in the main part or its group's chunk, the release's standard library without
  // panic messages. Measured at this stop's head: fleet 344.9, engine 352.4, its charts
  // section 395.0; incidents, bench, journal, hosts 327.6, 326.1, 333.7, 351.2; profiles,
  // profile, editor, changes 330.8, 345.1, 385.7, 325.4; vram, models, account 355.1, 332.1,
  // 328.2 KiB.
  fleet: 400, engine: 400, "engine-charts": 400,
  incidents: 400, bench: 400, journal: 400, hosts: 400,
  profiles: 400, profile: 400, editor: 400, changes: 400,
  vram: 400, models: 400, account: 400,
};
const BUDGET: Record<string, { bytes: number; requests: number }> = Object.fromEntries(
  PAGES.map((p) => [p.name, { bytes: BUDGET_KIB[p.name] * KIB, requests: 20 }]),
);

test("page weight: every page, cold and warm cache, against its budget", async ({ browser, baseURL }) => {
  const loads: Load[] = [];
  // A session made once, through the form; each cold load then starts from an empty cache.
  const signInContext = await browser.newContext();
  const signInPage = await signInContext.newPage();
  await signInPage.goto("/login");
  await signInPage.getByTestId("login-name").fill("root");
  await signInPage.getByTestId("login-password").fill(PASSWORD);
  await signInPage.getByTestId("login-submit").click();
  await signInPage.waitForURL(/\/$/);
  const state = await signInContext.storageState();
  await signInContext.close();
  for (const target of PAGES) {
    const context = await browser.newContext(target.name === "sign-in" ? {} : { storageState: state });
    const page = await context.newPage();
    for (const cache of ["cold", "warm"] as const) {
      const m = await measure(context, page, target.url, target.ready);
      loads.push({ page: target.name, cache, ...m });
      console.log(`${target.name.padEnd(9)} ${cache}: ${(m.bytes / 1024).toFixed(1).padStart(8)} KiB in ${String(m.requests).padStart(3)} requests, usable after ${m.ready_ms} ms${m.charts ? ", chart script loaded" : ""}`);
    }
    await context.close();
  }
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify({ url: baseURL, when: new Date().toISOString(), loads }, null, 2));
  const get = (page: string, cache: string) => loads.find((l) => l.page === page && l.cache === cache)!;
  // What the layout promises, whatever the sizes: the chart script only where a chart is drawn, the
  // sign-in page without the wasm bundle, and a warm cache that fetches no bundle again.
  expect(get("sign-in", "cold").charts).toBe(false);
  expect(Object.keys(get("sign-in", "cold").files).some((f) => f.endsWith(".wasm"))).toBe(false);
  expect(get("fleet", "cold").charts).toBe(false);
  expect(get("engine", "cold").charts).toBe(false);
  expect(get("engine-charts", "cold").charts).toBe(true);
  for (const page of ["fleet", "engine", "engine-charts"]) {
    expect(get(page, "warm").bytes).toBeLessThan(get(page, "cold").bytes / 5);
  }
  // The budgets (deterministic for a build, unlike a time): every page cold within its
  // bytes and requests; all pages are checked before the test fails, so one run lists each
  // page over budget. Each page loads its own part of the split wasm and no other page's;
  // the engine page's overview loads none of its sections' parts, its charts section that one.
  const over = PAGES.map((p) => get(p.name, "cold"))
    .filter((l) => l.bytes > BUDGET[l.page].bytes || l.requests > BUDGET[l.page].requests)
    .map((l) => `${l.page}: ${(l.bytes / 1024).toFixed(1)} KiB in ${l.requests} requests (budget ${(BUDGET[l.page].bytes / 1024).toFixed(0)} KiB, ${BUDGET[l.page].requests})`);
  expect(over, "pages over their budget").toEqual([]);
  const parts = (page: string) => Object.keys(get(page, "cold").files).flatMap((f) => f.match(/split_([a-z_]+)\.wasm$/)?.[1] ?? []);
  expect(parts("fleet")).toEqual(["fleet"]);
  expect(parts("engine")).toEqual(["engine"]);
  expect(parts("engine-charts").sort()).toEqual(["engine", "engine__charts"]);
  expect(parts("editor")).toEqual(["profiles__edit"]);
});
