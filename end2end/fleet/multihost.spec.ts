import { expect, test } from "@playwright/test";
import { signIn, waitForHydration } from "../tests/pages/console";

// Issue 16: three hosts on one PostgreSQL. An operator signed in on host A restarts an engine
// of host B from A's pages: the fleet shows B's engine, its host links to the Hosts page with
// it chosen, the job is queued, B's console performs it, A's page follows it to the end, and
// A's journal (the fleet's one chain) holds the restart B made, by the operator, with the
// reason. Then, from the same page, a smoke test runs on host C's engine, to its verdict.

const PASSWORD = process.env.ROOFLINE_E2E_PASSWORD ?? "correct horse battery staple";

test("a restart of host B's engine asked from host A's pages", async ({ page }) => {
  await signIn(page, "alice", PASSWORD);
  await page.goto("/");
  await waitForHydration(page);
  const row = page.locator('[data-testid=engine-row][data-profile="b-llama"]');
  await expect(row).toHaveAttribute("data-state", "healthy");
  await expect(row.getByTestId("host-act")).toHaveText("gpu-b");
  await row.getByTestId("host-act").click();
  await expect(page).toHaveURL(/\/hosts\?host=gpu-b&profile=b-llama/);
  await waitForHydration(page);
  for (const host of ["gpu-a", "gpu-b", "gpu-c"]) {
    await expect(page.locator(`[data-testid=host-row][data-host="${host}"]`)).toHaveAttribute("data-reachable", "true");
  }
  await expect(page.getByTestId("job-host")).toHaveValue("gpu-b");
  await expect(page.getByTestId("job-profile")).toHaveValue("b-llama");
  await page.getByTestId("job-action").selectOption("restart");
  await page.getByTestId("job-reason").fill("rolling restart from gpu-a");
  await page.getByTestId("job-submit").click();
  const queued = page.getByTestId("job-queued");
  await expect(queued).toContainText("gpu-b");
  const id = await queued.getAttribute("data-job");
  const job = page.locator(`[data-testid=job-row][data-job="${id}"]`);
  await expect(job).toHaveAttribute("data-state", "done", { timeout: 90_000 });
  await expect(job).toContainText("alice on gpu-a");

  // Host C's engine, from the same page: its smoke test runs there, to its verdict.
  await page.getByTestId("job-host").selectOption("gpu-c");
  await page.getByTestId("job-profile").selectOption("c-llama");
  await page.getByTestId("job-action").selectOption("smoke");
  await page.getByTestId("job-reason").fill("after the driver update");
  await page.getByTestId("job-submit").click();
  await expect(page.getByTestId("job-queued")).toContainText("gpu-c");
  const smokeId = await page.getByTestId("job-queued").getAttribute("data-job");
  const smoke = page.locator(`[data-testid=job-row][data-job="${smokeId}"]`);
  await expect(smoke).toHaveAttribute("data-state", "done", { timeout: 90_000 });
  await expect(smoke.getByTestId("job-outcome")).toContainText("smoke-toolcall passed");

  // One journal: host B's restart is in host A's journal, with who and why, and the chain holds.
  await page.goto("/journal");
  await waitForHydration(page);
  await expect(page.getByTestId("journal-check")).toHaveAttribute("data-intact", "true");
  const restart = page.locator('[data-testid=journal-row][data-kind="restart"]').first();
  await expect(restart).toContainText("alice");
  await expect(restart).toContainText(`rolling restart from gpu-a (job #${id} from gpu-a)`);
  await expect(restart).toContainText("b-llama");
});
