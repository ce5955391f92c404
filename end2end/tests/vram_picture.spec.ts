import { expect, test, type Page } from "@playwright/test";
import { waitForHydration } from "./pages/console";

async function openCalculator(page: Page) {
  await page.goto("/vram");
  await waitForHydration(page);
  await page.getByTestId("vram-model").selectOption({ label: "llama-3.1-8b-instruct" });
}

const sum = async (page: Page, bar = 0) =>
  page
    .getByTestId("vram-bars")
    .first()
    .getByTestId("vram-bar")
    .nth(bar)
    .locator("[data-part]")
    .evaluateAll((parts) => parts.map((p) => [p.getAttribute("data-part"), Number(p.getAttribute("data-gib"))] as [string, number]));

test("the calculator draws each GPU's memory and the concurrency curve, and a picked GPU sets the size", async ({ page }) => {
  await openCalculator(page);
  // A common device from the list: its size is what CUDA reports (79.18 GiB on an H100 80GB).
  await page.getByTestId("vram-gpu-pick").selectOption({ label: "NVIDIA H100 80GB HBM3 (79.18 GiB)" });
  await expect(page.getByTestId("vram-gpu-gib")).toHaveValue("79.18");
  await page.getByTestId("vram-tp").fill("2");
  await page.getByTestId("vram-ctx").fill("32768");
  const bars = page.getByTestId("vram-result").getByTestId("vram-bars");
  // One bar per GPU of the tensor-parallel group.
  await expect(bars.getByTestId("vram-bar")).toHaveCount(2);
  const parts = await sum(page);
  expect(parts.map(([p]) => p)).toEqual(["weights", "activation", "non-torch", "kv", "reserve"]);
  const total = parts.reduce((s, [, g]) => s + g, 0);
  expect(Math.abs(total - 79.18)).toBeLessThan(0.01);
  // The reserve is what utilisation 0.90 leaves.
  expect(Math.abs(parts[4][1] - 0.1 * 79.18)).toBeLessThan(0.01);
  // The curve marks the chosen context with the same concurrency the facts give.
  const chosen = page.getByTestId("vram-curve-chosen");
  await expect(chosen).toHaveAttribute("data-ctx", "32768");
  const facts = Number((await page.getByTestId("vram-max-concurrency").textContent())!.replace("×", "").replace(",", "."));
  expect(Math.abs(Number(await chosen.getAttribute("data-concurrency")) - facts)).toBeLessThan(0.01);
  // Clicking a point picks its context.
  await page.locator("[data-testid=vram-curve-point][data-ctx='8192']").click();
  await expect(page.getByTestId("vram-ctx")).toHaveValue("8192");
  await expect(chosen).toHaveAttribute("data-ctx", "8192");
  // Fewer tokens per request: more of them at once.
  expect(Number(await chosen.getAttribute("data-concurrency"))).toBeGreaterThan(3.9 * facts);
  // Typing a size by hand leaves the list's choice.
  await page.getByTestId("vram-gpu-gib").fill("80");
  await expect(page.getByTestId("vram-gpu-pick")).toHaveValue("custom");
  // This host has no NVIDIA driver here: the list says so instead of offering nothing.
  await expect(page.locator("[data-testid=vram-gpu-pick] optgroup").first()).toHaveAttribute("label", /^This host: /);
  await test.info().attach("vram (en)", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
});

test("weights over the GPU run the bar past its edge, and no request fits", async ({ page }) => {
  await openCalculator(page);
  await page.getByTestId("vram-weights-gib").fill("90");
  await page.getByTestId("vram-gpu-gib").fill("80");
  await expect(page.getByTestId("vram-result")).toHaveAttribute("data-verdict", "weights-do-not-fit");
  const bar = page.getByTestId("vram-result").getByTestId("vram-bar");
  await expect(bar).toHaveAttribute("data-overflow", "true");
  await expect(bar.locator("[data-part=overflow]")).toHaveCount(1);
  await expect(bar.locator("[data-part=kv]")).toHaveCount(0);
  await expect(page.getByTestId("vram-curve-none")).toBeVisible();
});

test("the picture speaks Russian, and a stored profile is drawn too", async ({ page }) => {
  await page.context().addCookies([{ name: "lang", value: "ru", url: new URL(page.url() === "about:blank" ? process.env.ROOFLINE_URL ?? "http://127.0.0.1:3000" : page.url()).origin }]);
  await openCalculator(page);
  await page.getByTestId("vram-gpu-pick").selectOption({ label: "NVIDIA H200 (139,80 ГиБ)" });
  await expect(page.getByTestId("vram-gpu-gib")).toHaveValue("139.80");
  const result = page.getByTestId("vram-result");
  await expect(result.locator(".vram-legend")).toContainText("KV-кэш");
  await expect(result.locator(".vram-legend")).toContainText("ГиБ");
  await expect(result.getByTestId("vram-curve-label")).toContainText("одновременных запросов");
  await page.getByTestId("vram-profile").selectOption("demo-vllm");
  const profile = page.getByTestId("vram-profile-result");
  await expect(profile).toHaveAttribute("data-verdict", "fits", { timeout: 30_000 });
  await expect(profile.getByTestId("vram-bar")).toHaveCount(1);
  await expect(profile.getByTestId("vram-curve-chosen")).toHaveCount(1);
  await test.info().attach("vram (ru)", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
});
