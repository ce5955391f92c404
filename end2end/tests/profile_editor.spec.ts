import { expect, test } from "@playwright/test";
import { waitForHydration } from "./pages/console";

test("the profile editor validates step by step, previews and converts argv, diffs, and saves with a reason", async ({ page }) => {
  await page.goto("/profiles/demo-sglang/edit");
  await waitForHydration(page);
  const argv = page.getByTestId("editor-argv");
  await expect(argv).toContainText("sim sglang --model-path");
  await expect(argv).toContainText("--mem-fraction-static 0.88");

  // Switching to a vLLM installation converts through the flag map, as you type.
  await page.getByTestId("field-ENGINE").selectOption("sim-vllm");
  await expect(argv).toContainText("sim vllm serve");
  await expect(argv).toContainText("--gpu-memory-utilization 0.88");
  await page.getByTestId("field-ENGINE").selectOption("sim-sglang");
  await expect(argv).toContainText("--mem-fraction-static 0.88");

  // An invalid memory fraction names the field and closes the later steps.
  await page.getByTestId("field-MEM_FRACTION").fill("1.5");
  await expect(page.locator("[data-step=memory] [data-testid=field-issue]")).toBeVisible();
  await expect(page.locator("fieldset[data-step=parsers]")).toHaveAttribute("data-open", "false");
  await page.getByTestId("field-MEM_FRACTION").fill("0.85");
  await expect(page.locator("fieldset[data-step=parsers]")).toHaveAttribute("data-open", "true");

  // The diff against the active version; saving needs a reason.
  await expect(page.getByTestId("editor-diff")).toContainText("-MEM_FRACTION=0.88");
  await expect(page.getByTestId("editor-diff")).toContainText("+MEM_FRACTION=0.85");
  await expect(page.getByTestId("editor-save")).toBeDisabled();
  await page.getByTestId("editor-reason").fill("leave room for the CUDA graphs");
  await page.getByTestId("editor-save").click();
  await expect(page.getByTestId("editor-saved")).toBeVisible();

  // Flags are checked against the installed engine's own --help.
  await page.getByTestId("editor-check-flags").click();
  await expect(page.getByTestId("editor-flags")).toHaveAttribute("data-ok", "true", { timeout: 60_000 });

  // The change is in the journal, with its reason.
  await page.goto("/journal");
  await waitForHydration(page);
  await expect(page.locator("[data-testid=journal-row][data-kind=profile-change]").first()).toContainText("leave room for the CUDA graphs");
});
