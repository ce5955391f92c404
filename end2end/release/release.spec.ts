import { expect, test, type Page } from "@playwright/test";

// The release as an operator meets it: unpacked from the tarball, run from an empty
// directory, the browser bundle compiled into the binary.
const PASSWORD = process.env.ROOFLINE_E2E_PASSWORD ?? "correct horse battery staple";

async function signIn(page: Page, password: string) {
  await page.getByTestId("login-name").fill("root");
  await page.getByTestId("login-password").fill(password);
  await page.getByTestId("login-submit").click();
}

test("an operator signs in on the plain sign-in page and sees the fleet", async ({ page }) => {
  const wasm: string[] = [];
  page.on("request", (r) => { if (r.url().endsWith(".wasm")) wasm.push(r.url()); });
  await page.goto("/");
  // Not signed in: the sign-in page, which ships no wasm.
  await expect(page).toHaveURL(/\/login\?next=%2F|\/login\?next=\//);
  await expect(page.getByTestId("login")).toBeVisible();
  expect(wasm).toEqual([]);
  // A wrong password comes back to the page with the reason, in the page's language.
  await signIn(page, "not the password at all");
  await expect(page.getByTestId("error")).toHaveText("User name or password is wrong.");
  await signIn(page, PASSWORD);
  await expect(page).toHaveURL(/\/$/);
  await page.locator("body[data-hydrated=true]").waitFor();
  // The fleet's wasm: the main part, the fleet's own and the chunk it shares, no other page's.
  expect(wasm.some((u) => /console_bg\.wasm$/.test(u))).toBe(true);
  expect(wasm.filter((u) => /split_/.test(u)).map((u) => u.split("/").pop())).toEqual(["split_fleet.wasm"]);
  expect(wasm.length).toBeLessThanOrEqual(4);
  for (const profile of ["demo-vllm", "demo-sglang"]) {
    const row = page.locator(`[data-testid=engine-row][data-profile="${profile}"]`);
    await expect(row).toBeVisible();
    await expect(row).toContainText("healthy");
  }
  await expect(page.getByTestId("user-name")).toHaveText("root");
});

test("the sign-in page switches language without scripts", async ({ page }) => {
  await page.goto("/login");
  await page.getByTestId("lang-ru").click();
  await expect(page.getByTestId("login-submit")).toHaveText("Войти");
  await expect(page.locator("html")).toHaveAttribute("lang", "ru");
  await page.getByTestId("lang-en").click();
  await expect(page.getByTestId("login-submit")).toHaveText("Sign in");
});

test("the bundle is served precompressed under content-hashed names, cached for good", async ({ page, request }) => {
  await page.goto("/login");
  const html = await page.content();
  const css = html.match(/href="(\/pkg\/console\.[0-9a-f]{16}\.css)"/)?.[1];
  expect(css, "the stylesheet has a content-hashed name").toBeTruthy();
  const charts = await page.locator("html").getAttribute("data-charts");
  expect(charts).toMatch(/^\/pkg\/charts\.min\.[0-9a-f]{16}\.js$/);
  for (const [path, type] of [[css!, "text/css"], [charts!, "text/javascript"]] as const) {
    const br = await request.get(path, { headers: { "accept-encoding": "br" } });
    expect(br.status()).toBe(200);
    expect(br.headers()["content-encoding"]).toBe("br");
    expect(br.headers()["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(br.headers()["content-type"]).toContain(type);
    const gz = await request.get(path, { headers: { "accept-encoding": "gzip" } });
    expect(gz.headers()["content-encoding"]).toBe("gzip");
    const plain = await request.get(path, { headers: { "accept-encoding": "identity" } });
    expect(plain.headers()["content-encoding"]).toBeUndefined();
    expect(Number(br.headers()["content-length"])).toBeLessThan(Number(plain.headers()["content-length"]));
  }
  // A name the release does not hold is a 404, not a page.
  expect((await request.get("/pkg/console.0000000000000000.css")).status()).toBe(404);
});
