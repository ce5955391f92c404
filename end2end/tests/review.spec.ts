import { expect, test } from "@playwright/test";
import { signIn, waitForHydration } from "./pages/console";
import { PASSWORD } from "../global-setup";

// Each person signs in in a browser context of their own (no admin session).
test.use({ storageState: { cookies: [], origins: [] } });

test("an operator proposes a change, an approver approves it, the gate runs on the simulated engine, the journal shows it", async ({ browser }) => {
  test.setTimeout(240_000);
  const alice = await (await browser.newContext()).newPage();
  const bob = await (await browser.newContext()).newPage();

  // Alice (operator) proposes a smaller batch for demo-vllm, with a reason.
  await signIn(alice, "alice", PASSWORD);
  await alice.goto("/profiles/demo-vllm/edit");
  await waitForHydration(alice);
  await alice.getByTestId("field-MAX_RUNNING_REQUESTS").fill("48");
  await expect(alice.getByTestId("editor-diff")).toContainText("+MAX_RUNNING_REQUESTS=48");
  await alice.getByTestId("editor-reason").fill("cap the batch: p95 TPOT over budget at 64");
  await alice.getByTestId("editor-submit").click();
  await expect(alice).toHaveURL(/\/changes\/\d+$/);
  const url = alice.url();
  await waitForHydration(alice);
  await expect(alice.getByTestId("change-state")).toHaveAttribute("data-state", "submitted");
  // Nobody approves their own change: Alice is not offered the review.
  await expect(alice.getByTestId("change-review")).toHaveCount(0);
  await expect(alice.getByTestId("change-start-gate")).toHaveCount(0);

  // Bob (approver) reviews and approves with a comment.
  await signIn(bob, "bob", PASSWORD);
  await bob.goto(url);
  await waitForHydration(bob);
  await expect(bob.getByTestId("change-author")).toHaveText("alice");
  await expect(bob.getByTestId("change-diff")).toContainText("-MAX_RUNNING_REQUESTS=64");
  // What changed, key by key; the command line before and after; the calculator's verdict
  // for both; the full content hash that an approval approves.
  const key = bob.locator("[data-testid=change-key][data-key=MAX_RUNNING_REQUESTS]");
  await expect(key.locator("[data-side=before]")).toHaveText("64");
  await expect(key.locator("[data-side=after]")).toHaveText("48");
  await expect(bob.getByTestId("change-key")).toHaveCount(1);
  await expect(bob.getByTestId("change-argv-before").getByTestId("argv-removed")).toHaveText(["--max-num-seqs 64"]);
  await expect(bob.getByTestId("change-argv-after").getByTestId("argv-added")).toHaveText(["--max-num-seqs 48"]);
  await expect(bob.getByTestId("change-argv-after")).toContainText("--served-model-name");
  const verdicts = bob.getByTestId("change-verdicts");
  await expect(verdicts.locator("td[data-side=before][data-verdict]")).toHaveCount(1);
  await expect(verdicts.locator("td[data-side=after][data-verdict]")).toHaveCount(1);
  await expect(verdicts).toContainText("KV cache for");
  await expect(bob.getByTestId("change-hash")).toHaveText(/^[0-9a-f]{64}$/);
  await test.info().attach("review (en)", { body: await bob.screenshot({ fullPage: true }), contentType: "image/png" });
  // The same review in Russian.
  await bob.context().addCookies([{ name: "lang", value: "ru", url: new URL(url).origin }]);
  await bob.reload();
  await waitForHydration(bob);
  await expect(bob.getByTestId("change-keys")).toContainText("До (активный)");
  await expect(verdicts).toContainText("KV-кэш на");
  await test.info().attach("review (ru)", { body: await bob.screenshot({ fullPage: true }), contentType: "image/png" });
  await bob.context().addCookies([{ name: "lang", value: "en", url: new URL(url).origin }]);
  await bob.reload();
  await waitForHydration(bob);
  await bob.getByTestId("change-note").fill("did the TPOT drop on the bench run?");
  await bob.getByTestId("change-note-submit").click();
  await expect(bob.getByTestId("change-events")).toContainText("did the TPOT drop on the bench run?");
  await bob.getByTestId("change-comment").fill("agreed, watch the queue after");
  await bob.getByTestId("change-approve").click();
  await expect(bob.getByTestId("change-state")).toHaveAttribute("data-state", "approved");

  // Alice's page, open all along, shows Bob's note and approval without a reload (the record
  // stream), then she starts the gate: the candidate is served on the simulator and checked.
  await expect(alice.getByTestId("change-state")).toHaveAttribute("data-state", "approved", { timeout: 10_000 });
  await expect(alice.getByTestId("change-events")).toContainText("did the TPOT drop on the bench run?");
  await alice.getByTestId("change-start-gate").click();
  await expect(alice.getByTestId("change-state")).toHaveAttribute("data-state", "active", { timeout: 180_000 });
  for (const step of ["model", "vram", "serve", "health", "metrics", "smoke", "bench"]) {
    await expect(alice.locator(`[data-testid=gate-step][data-step=${step}]`)).toHaveAttribute("data-pass", "true");
  }
  await expect(alice.getByTestId("gate-checks")).toBeVisible();
  await expect(alice.getByTestId("change-events")).toContainText("bob");

  // The profile is the candidate now, and the engine runs it.
  await alice.goto("/profiles/demo-vllm");
  await waitForHydration(alice);
  await expect(alice.getByTestId("envfile")).toContainText("MAX_RUNNING_REQUESTS=48");
  await expect(alice.getByTestId("argv")).toContainText("--max-num-seqs 48");

  // The journal shows the approval and the activation, with who and why.
  await alice.goto("/journal");
  await waitForHydration(alice);
  const approved = alice.locator("[data-testid=journal-row][data-kind=change-approved]").first();
  await expect(approved).toContainText("bob");
  const activated = alice.locator("[data-testid=journal-row][data-kind=change-activated]").first();
  await expect(activated).toContainText("alice");
  await expect(activated).toContainText("cap the batch");
  await expect(alice.getByTestId("journal-check")).toHaveAttribute("data-intact", "true");
});

test("a viewer is offered no operator actions, and signing out ends the session", async ({ page }) => {
  await signIn(page, "vera", PASSWORD);
  await expect(page.getByTestId("user-menu")).toHaveAttribute("data-role", "viewer");
  // A viewer reads everything but is not offered what only operators may do.
  await page.goto("/engines/demo-sglang");
  await waitForHydration(page);
  await expect(page.getByTestId("action-stop")).toBeDisabled();
  await expect(page.getByTestId("open-incident")).toBeDisabled();
  await page.goto("/profiles/demo-sglang");
  await waitForHydration(page);
  await expect(page.getByTestId("envfile")).toBeVisible();
  await expect(page.getByTestId("profile-edit")).toHaveCount(0);
  await page.getByTestId("logout").click();
  await expect(page).toHaveURL(/\/login/);
  await page.goto("/journal");
  await expect(page).toHaveURL(/\/login\?next=\/journal/);
});
