import { request } from "@playwright/test";

/** Accounts test.sh creates on the console's fresh data dir (roofline user add). */
export const PASSWORD = process.env.ROOFLINE_E2E_PASSWORD ?? "correct horse battery staple";
export const ADMIN_STATE = "test-results/.auth/admin.json";

/** Signs in once as the admin; specs start from that session unless they sign in themselves. */
export default async function globalSetup() {
  const baseURL = process.env.ROOFLINE_URL ?? "http://127.0.0.1:3000";
  const ctx = await request.newContext({ baseURL });
  const r = await ctx.post("/api/fn/login", { form: { name: "root", password: PASSWORD } });
  if (!r.ok()) {
    throw new Error(`signing in as root failed: ${r.status()} ${await r.text()}`);
  }
  await ctx.storageState({ path: ADMIN_STATE });
  await ctx.dispose();
}
