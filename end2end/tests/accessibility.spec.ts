import AxeBuilder from "@axe-core/playwright";
import { expect, Page, test } from "@playwright/test";
import { waitForHydration } from "./pages/console";

// Issue 15 item 8: axe-core over every page in both languages (no serious or critical
// violation of WCAG 2.x A/AA), and every action on a page reachable with the Tab key.

/** Every page of the console, with ids of records the demo fleet has or the test makes. */
async function pages(page: Page): Promise<string[]> {
  // One incident and one change to look at (the demo fleet starts without either).
  await page.goto("/engines/demo-sglang");
  await waitForHydration(page);
  await page.getByTestId("open-incident").click();
  await page.waitForURL(/\/incidents\/\d+$/, { timeout: 60_000 });
  const incident = page.url().split("/").pop();
  await page.goto("/profiles/demo-sglang/edit");
  await waitForHydration(page);
  await page.getByTestId("field-MAX_RUNNING_REQUESTS").fill("40");
  await page.getByTestId("editor-reason").fill("accessibility audit");
  await page.getByTestId("editor-submit").click();
  await page.waitForURL(/\/changes\/\d+$/, { timeout: 30_000 });
  const change = page.url().split("/").pop();
  return [
    "/",
    // Every section of the engine page (a hidden section is not audited).
    "/engines/demo-vllm",
    "/engines/demo-vllm?section=charts",
    "/engines/demo-vllm?section=log",
    "/engines/demo-vllm?section=runs",
    "/engines/demo-vllm?section=gpu",
    "/engines/demo-vllm?section=profile",
    "/profiles",
    "/profiles/demo-vllm",
    "/profiles/demo-vllm/edit",
    "/bench",
    "/incidents",
    `/incidents/${incident}`,
    "/vram",
    "/models",
    "/journal",
    "/hosts",
    "/changes",
    `/changes/${change}`,
    "/account",
    "/accounts",
    "/no-such-page",
  ];
}

async function audit(page: Page, where: string): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${where}: ${v.id} (${v.impact}): ${v.help}; ${v.nodes.slice(0, 4).map((n) => `${n.target.join(" ")} ${n.html.slice(0, 80)} [${(n.any[0] ?? n.all[0] ?? n.none[0])?.message ?? ""}]`).join(" | ")}`);
}

test("no serious or critical accessibility violation on any page, in English and in Russian", async ({ page, context, baseURL }) => {
  test.setTimeout(240_000);
  const paths = await pages(page);
  const found: string[] = [];
  for (const lang of ["en", "ru"]) {
    await context.addCookies([{ name: "lang", value: lang, url: baseURL! }]);
    for (const path of paths) {
      await page.goto(path);
      await waitForHydration(page);
      found.push(...(await audit(page, `${lang} ${path}`)));
    }
  }
  // The sign-in page, as someone not signed in sees it.
  const anonymous = await (await page.context().browser()!.newContext({ storageState: { cookies: [], origins: [] } })).newPage();
  for (const lang of ["en", "ru"]) {
    await anonymous.context().addCookies([{ name: "lang", value: lang, url: baseURL! }]);
    await anonymous.goto(`${baseURL}/login`);
    found.push(...(await audit(anonymous, `${lang} /login`)));
  }
  await context.addCookies([{ name: "lang", value: "en", url: baseURL! }]);
  expect(found, found.join("\n")).toEqual([]);
});

test.describe("with the system in dark mode", () => {
  test.use({ colorScheme: "dark" });

  test("no serious or critical accessibility violation on any page", async ({ page }) => {
    test.setTimeout(180_000);
    const found: string[] = [];
    for (const path of await pages(page)) {
      await page.goto(path);
      await waitForHydration(page);
      found.push(...(await audit(page, `dark ${path}`)));
    }
    expect(found, found.join("\n")).toEqual([]);
  });
});

/** The visible, enabled controls of the page that the Tab key never reached. */
async function unreachable(page: Page): Promise<{ total: number; missed: string[] }> {
  const total = await page.evaluate(() => {
    const w = window as unknown as { __kbdSeen: Set<string> };
    const controls = [...document.querySelectorAll<HTMLElement>("a[href], button, input, select, textarea, summary, [tabindex]")].filter(
      (e) =>
        !(e as HTMLButtonElement).disabled &&
        e.tabIndex >= 0 &&
        (e as HTMLInputElement).type !== "radio" &&
        (e as HTMLInputElement).type !== "hidden" &&
        e.getClientRects().length > 0 &&
        getComputedStyle(e).visibility !== "hidden",
    );
    controls.forEach((e, i) => e.setAttribute("data-kbd", String(i)));
    w.__kbdSeen = new Set();
    document.addEventListener("focusin", (ev) => {
      const k = (ev.target as HTMLElement).getAttribute?.("data-kbd");
      if (k) w.__kbdSeen.add(k);
    });
    (document.activeElement as HTMLElement | null)?.blur();
    return controls.length;
  });
  for (let i = 0; i < total + 10; i++) await page.keyboard.press("Tab");
  const missed = await page.evaluate(() => {
    const w = window as unknown as { __kbdSeen: Set<string> };
    return [...document.querySelectorAll("[data-kbd]")]
      .filter((e) => !w.__kbdSeen.has(e.getAttribute("data-kbd")!))
      .map((e) => e.outerHTML.slice(0, 120));
  });
  return { total, missed };
}

test("every control on the working pages is reached with the Tab key", async ({ page }) => {
  test.setTimeout(180_000);
  const all = await pages(page);
  const working = all.filter((p) => /^\/(engines|profiles\/[^/]+\/edit|changes\/|incidents\/|vram|journal)/.test(p) || p === "/");
  const missed: string[] = [];
  for (const path of working) {
    await page.goto(path);
    await waitForHydration(page);
    const r = await unreachable(page);
    expect(r.total, `${path} has controls to reach`).toBeGreaterThan(5);
    missed.push(...r.missed.map((m) => `${path}: ${m}`));
  }
  expect(missed, missed.join("\n")).toEqual([]);
});
