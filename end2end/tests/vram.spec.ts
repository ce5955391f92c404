import { expect, test } from "@playwright/test";
import { waitForHydration } from "./pages/console";

test("the VRAM calculator answers as you type", async ({ page }) => {
  await page.goto("/vram");
  await waitForHydration(page);
  const result = page.getByTestId("vram-result");
  // The demo's Llama-3.1-8B shape, from the models root (weights estimated: no safetensors).
  await page.getByTestId("vram-model").selectOption({ label: "llama-3.1-8b-instruct" });
  await page.getByTestId("vram-gpu-gib").fill("24");
  await page.getByTestId("vram-ctx").fill("131072");
  await expect(result).toHaveAttribute("data-verdict", "kv-too-small");
  // 32 layers × 2 × 8 KV heads × 128 × 2 bytes.
  await expect(page.getByTestId("vram-kv-per-token")).toHaveText("131072 B");
  await page.getByTestId("vram-ctx").fill("16384");
  await expect(result).toHaveAttribute("data-verdict", "fits");
  const bf16 = Number(await page.getByTestId("vram-kv-tokens").textContent());
  await page.getByTestId("vram-kv-dtype").selectOption("fp8");
  await expect(page.getByTestId("vram-kv-per-token")).toHaveText("65536 B");
  const fp8 = Number(await page.getByTestId("vram-kv-tokens").textContent());
  expect(fp8).toBeGreaterThan(1.9 * bf16);
  // Bad input names the field.
  await page.getByTestId("vram-tp").fill("0");
  await expect(page.getByTestId("vram-error")).toContainText("--tp");
});

test("the calculator page predicts a stored profile on this host", async ({ page }) => {
  await page.goto("/vram");
  await waitForHydration(page);
  await page.getByTestId("vram-profile").selectOption("demo-vllm");
  const result = page.getByTestId("vram-profile-result");
  await expect(result).toHaveAttribute("data-verdict", "fits", { timeout: 30_000 });
  await expect(page.getByTestId("vram-profile-result-tokens")).toContainText("…");
  await expect(page.getByTestId("vram-profile-result-calibration")).toBeVisible();
});
