import { expect, test } from "@playwright/test";
import { Charts, EnginePage } from "./pages/console";

test("an engine page draws live charts that update from the event stream", async ({ page }) => {
  const engine = new EnginePage(page, "demo-vllm");
  await engine.open();
  await engine.show("charts");
  const charts = new Charts(page);
  const queue = charts.card("queue");
  await expect(queue).toHaveAttribute("data-sourced", "true", { timeout: 30_000 });
  // uPlot (served by the console itself) draws into a canvas.
  await expect(page.getByTestId("plot-queue").locator("canvas")).toBeVisible();
  await expect(charts.card("latency")).toHaveAttribute("data-sourced", "true");
  // New scrapes arrive over the page's one stream: the point count grows without a reload.
  const before = await charts.points("queue");
  await expect.poll(() => charts.points("queue"), { timeout: 20_000 }).toBeGreaterThan(before);
  // A simulated engine has no GPU: the GPU charts say why instead of drawing empty axes.
  await expect(charts.card("gpu-memory").getByTestId("nosource")).not.toBeEmpty();
  // The GPU section (drawn when first shown, from its own part of the bundle) says the same.
  await engine.show("gpu");
  await expect(page.getByTestId("gpu-no-driver")).toContainText("NVIDIA");
  await engine.show("charts");
  // Longer ranges come from the stored minute rollups (plus the minute in progress).
  await charts.range("1h");
  await expect(page.getByTestId("plot-queue").locator("canvas")).toBeVisible();
  await charts.range("15m");
});

test("charts follow the language", async ({ page, context, baseURL }) => {
  await context.addCookies([{ name: "lang", value: "ru", url: baseURL! }]);
  const engine = new EnginePage(page, "demo-sglang");
  await engine.open("charts");
  await expect(new Charts(page).card("queue")).toContainText("Запросы");
  await expect(page.getByTestId("range-1h")).toHaveText("1 час");
});

test("the state timeline under the charts shows the engine's states across the range", async ({ page, context, baseURL }) => {
  const engine = new EnginePage(page, "demo-vllm");
  await engine.open("charts");
  const bar = page.getByTestId("state-timeline").locator("svg");
  await expect(bar).toHaveAttribute("data-states", /healthy/);
  await expect(bar.locator("rect.tl-healthy").first()).toBeAttached();
  await expect(page.getByTestId("timeline-summary")).toContainText(/start/);
  // A longer range reads the same record.
  await new Charts(page).range("1h");
  await expect(bar).toHaveAttribute("data-states", /healthy/);
  await new Charts(page).range("15m");
  await context.addCookies([{ name: "lang", value: "ru", url: baseURL! }]);
  await engine.open("charts");
  await expect(page.getByTestId("state-timeline")).toContainText("Состояние за период");
  await expect(page.getByTestId("timeline-summary")).toContainText(/запуск/);
});
