import { expect, test } from "@playwright/test";
import { waitForHydration } from "./pages/console";

// The Hosts page on a console with its own SQLite: its host alone in the registry, and a job
// it asks of itself (the same queue a fleet on PostgreSQL uses) performed and shown live.
// scripts/test-multihost-browser.sh runs the same page across hosts sharing a PostgreSQL.

test("the hosts page lists this host and follows a job to its end", async ({ page }) => {
  await page.goto("/hosts");
  await waitForHydration(page);
  const me = page.getByTestId("host-row");
  await expect(me).toHaveCount(1);
  await expect(me).toHaveAttribute("data-reachable", "true");
  await expect(me).toContainText("(this console)");

  await page.getByTestId("job-profile").selectOption("demo-vllm");
  await page.getByTestId("job-action").selectOption("logs");
  await page.getByTestId("job-reason").fill("reading the log from the hosts page");
  await page.getByTestId("job-submit").click();
  const queued = page.getByTestId("job-queued");
  await expect(queued).toBeVisible();
  const id = await queued.getAttribute("data-job");
  const row = page.locator(`[data-testid=job-row][data-job="${id}"]`);
  // The list follows the job over the record stream: no reload.
  await expect(row).toHaveAttribute("data-state", "done", { timeout: 30_000 });
  await row.getByTestId("job-outcome").locator("summary").click();
  await expect(row.getByTestId("job-outcome").locator("pre")).toContainText("vLLM");
});

test("the hosts page speaks Russian", async ({ page, context, baseURL }) => {
  await context.addCookies([{ name: "lang", value: "ru", url: baseURL! }]);
  await page.goto("/hosts");
  await expect(page.locator("h1")).toHaveText("Хосты парка");
  await expect(page.getByTestId("host-row")).toContainText("(эта консоль)");
  await expect(page.getByTestId("job-submit")).toHaveText("Поставить в очередь");
});
