import { expect, Locator, Page } from "@playwright/test";

/** The fleet page. */
export class FleetPage {
  readonly rows: Locator;
  constructor(readonly page: Page) {
    this.rows = page.getByTestId("engine-row");
  }
  async open() {
    await this.page.goto("/");
    await waitForHydration(this.page);
  }
  row(profile: string): Locator {
    return this.page.locator(`[data-testid=engine-row][data-profile="${profile}"]`);
  }
}

/** The engine page's sections (app/src/pages/engine/sections.rs). */
export const ENGINE_SECTIONS = ["overview", "charts", "log", "runs", "gpu", "profile"] as const;
export type EngineSection = (typeof ENGINE_SECTIONS)[number];

/** One engine's page. */
export class EnginePage {
  readonly state: Locator;
  readonly log: Locator;
  constructor(readonly page: Page, readonly profile: string) {
    this.state = page.locator("section.engine .page-head [data-testid=state]");
    this.log = page.getByTestId("log");
  }
  /** Opens the page, at one of its sections when named (`?section=…`). */
  async open(section?: EngineSection) {
    await this.page.goto(`/engines/${this.profile}${section && section !== "overview" ? `?section=${section}` : ""}`);
    await waitForHydration(this.page);
  }
  /** Shows a section through its link, as an operator does. */
  async show(section: EngineSection) {
    await this.page.getByTestId(`section-${section}`).click();
    await expect(this.page.getByTestId(`section-${section}`)).toHaveAttribute("aria-current", "page");
    await expect(this.page.locator(`section.engine [data-section=${section}]`)).toBeVisible();
  }
  async act(action: "serve" | "stop" | "restart") {
    await this.page.getByTestId(`action-${action}`).click();
    await expect(this.page.getByTestId("confirm")).toBeVisible();
    await this.page.getByTestId("confirm-yes").click();
  }
  async expectState(state: string, timeout = 60_000) {
    await expect(this.state).toHaveAttribute("data-state", state, { timeout });
  }
}

/** Waits until the wasm bundle has hydrated the page (buttons react to clicks from then on). */
export async function waitForHydration(page: Page) {
  await page.locator("body[data-hydrated=true]").waitFor({ timeout: 30_000 });
  // A section drawn from a part of the bundle of its own is busy until the part has arrived.
  await expect(page.locator("[aria-busy=true]")).toHaveCount(0, { timeout: 30_000 });
}

/** The live charts of an engine page. */
export class Charts {
  constructor(readonly page: Page) {}
  card(id: string): Locator {
    return this.page.getByTestId(`chart-${id}`);
  }
  /** How many points the chart holds (its `data-points`), once it draws. */
  async points(id: string): Promise<number> {
    const v = await this.page.getByTestId(`plot-${id}`).getAttribute("data-points");
    return Number(v ?? "0");
  }
  async range(id: "15m" | "1h" | "24h") {
    await this.page.getByTestId(`range-${id}`).click();
    await expect(this.page.getByTestId(`range-${id}`)).toHaveAttribute("aria-pressed", "true");
  }
}

/** The triage wizard of one incident. */
export class IncidentPage {
  readonly diagnosis: Locator;
  readonly latest: Locator;
  readonly timeline: Locator;
  constructor(readonly page: Page) {
    this.diagnosis = page.getByTestId("incident-diagnosis");
    this.latest = page.getByTestId("incident-latest");
    this.timeline = page.getByTestId("timeline-entry");
  }
  /** Starts an action with a reason and confirms it. */
  async act(action: string, reason: string) {
    await this.page.getByTestId(`incident-action-${action}`).click();
    await this.page.getByTestId("action-reason").fill(reason);
    await this.page.getByTestId("action-confirm").click();
  }
}

/** Signs in through the sign-in page (in a context without the admin's session). The page is
 * a plain form (no wasm): nothing to wait for but the page itself. */
export async function signIn(page: Page, name: string, password: string) {
  await page.goto("/login");
  await page.getByTestId("login-name").fill(name);
  await page.getByTestId("login-password").fill(password);
  await page.getByTestId("login-submit").click();
  await expect(page.getByTestId("user-name")).toHaveText(name);
}
