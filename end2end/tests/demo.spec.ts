import { expect, test, type Page } from "@playwright/test";
import { EnginePage } from "./pages/console";

// The first five minutes (issue 31): the console test.sh starts is the README's demo
// (`console --demo` on a fresh data dir). Within seconds of opening it, the demo engines carry
// demo traffic (labelled as such), the fleet's sparklines and the engine page's request chart
// move, the fleet says what the demo is and how to add a real engine, and the demo's model
// directories pass the model check (the engines' logs hold no model-check error).

/** The y of each point of the page's sparklines (15 is a zero value, smaller is more). */
async function sparkHeights(page: Page): Promise<number[]> {
  return page.getByTestId("spark").locator("polyline").evaluateAll((lines) =>
    lines.flatMap((l) => (l.getAttribute("points") ?? "").split(" ").filter(Boolean).map((p) => Number(p.split(",")[1]))),
  );
}

test("the demo fleet carries demo traffic: sparklines and the request chart move", async ({ page }) => {
  await page.goto("/");
  await page.locator("body[data-hydrated=true]").waitFor();
  const note = page.getByTestId("demo-note");
  await expect(note).toContainText("demo");
  await expect(note.getByTestId("demo-install")).toHaveAttribute("href", "/help/INSTALL.md");
  for (const profile of ["demo-vllm", "demo-sglang"]) {
    const row = page.locator(`[data-testid=engine-row][data-profile=${profile}]`);
    await expect(row.getByTestId("simulated")).toBeVisible();
    await expect(row.getByTestId("demo-traffic")).toBeVisible();
  }
  await expect.poll(async () => (await sparkHeights(page)).some((y) => y < 15), { timeout: 10_000 }).toBe(true);

  const engine = new EnginePage(page, "demo-vllm");
  await engine.open("charts");
  await expect(page.getByTestId("demo-traffic")).toBeVisible();
  await expect(page.getByTestId("plot-queue").locator("canvas")).toBeVisible();
  // A line the chart draws (uPlot's data: the times, then one column per line) has a point
  // above zero.
  const peak = async () =>
    page.getByTestId("plot-queue").evaluate((el) => {
      const data: (number | null)[][] = (el as any)._rlChart?.data ?? [];
      return Math.max(0, ...data.slice(1).flatMap((line) => line.map((v) => v ?? 0)));
    });
  await expect.poll(peak, { timeout: 10_000 }).toBeGreaterThan(0);
});

test("the demo's model directories pass the model check: no error heads the engines' logs", async ({ page }) => {
  for (const profile of ["demo-vllm", "demo-sglang"]) {
    const engine = new EnginePage(page, profile);
    await engine.open();
    const log = page.getByTestId("log");
    await expect(log).toContainText("model check: Simulated", { timeout: 15_000 });
    await expect(log).not.toContainText("model check: Error");
    await expect(log).not.toContainText("model check: Warning");
  }
  const guide = await page.request.get("/help/INSTALL.md");
  expect(guide.ok()).toBe(true);
  expect(await guide.text()).toContain("roofline");
});

test("the demo explains itself in Russian too", async ({ page, context, baseURL }) => {
  await context.addCookies([{ name: "lang", value: "ru", url: baseURL! }]);
  await page.goto("/");
  await expect(page.getByTestId("demo-note")).toContainText("демонстрация");
  await expect(page.locator("[data-testid=engine-row][data-profile=demo-vllm]").getByTestId("demo-traffic")).toHaveText("демо-нагрузка");
});
