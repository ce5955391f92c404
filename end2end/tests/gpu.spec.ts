import { expect, test } from "@playwright/test";
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PASSWORD } from "../global-setup";
import { waitForHydration } from "./pages/console";

// The GPU section as a GPU host shows it. The suite's console has no NVIDIA driver (what CI and
// the demo have), so this test runs a console of its own (its own data directory, one simulated
// vLLM on a free port: the suite's demo engines hold the demo's ports) whose GPUs are a
// recording (the NVML seam, ROOFLINE_GPU_RECORDING): one H200 with that engine's process on it
// and a foreign one, at its power cap.
const BIN = resolve(__dirname, "../../target/debug/roofline");

type Row = { profile: string; state: string; pid?: number | null };

/** A port nobody listens on now (the kernel's pick). */
async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => ok(port));
    });
  });
}

test("the GPU section draws each GPU, its throttling, and its processes: ours named, a foreign one flagged", async ({ browser }) => {
  test.setTimeout(120_000);
  const data = mkdtempSync(join(tmpdir(), "roofline-gpu-e2e-"));
  const recording = join(data, "gpu.json");
  const cli = (...args: string[]) => execFileSync(BIN, ["--data", data, ...args], { encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] });
  mkdirSync(join(data, "models", "llama"), { recursive: true });
  writeFileSync(join(data, "roofline.toml"), [
    'models_root = "models"', 'state_dir = "state"', "serve_timeout_s = 60", "",
    "[engines.sim-vllm]", 'kind = "vllm"', "simulator = true", "",
  ].join("\n"));
  writeFileSync(join(data, "models", "llama", "config.json"), JSON.stringify({
    architectures: ["LlamaForCausalLM"], hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32,
    num_hidden_layers: 32, num_key_value_heads: 8, head_dim: 128, max_position_embeddings: 131072, vocab_size: 128256,
  }));
  writeFileSync(join(data, "gpu-llama.env"), [
    "ENGINE=sim-vllm", `MODEL=${join(data, "models", "llama")}`, "SERVED_MODEL_NAME=m", "CONTEXT_LENGTH=8192",
    "MAX_RUNNING_REQUESTS=8", `PORT=${await freePort()}`, "ENV_ROOFLINE_SIM_STARTUP_S=0.5", "",
  ].join("\n"));
  execFileSync(BIN, ["--data", data, "user", "add", "root", "--role", "admin"], { input: `${PASSWORD}\n` });
  const port = await freePort();
  let server: ChildProcess | undefined;
  const context = await browser.newContext({ baseURL: `http://127.0.0.1:${port}` });
  try {
    cli("profile", "import", join(data, "gpu-llama.env"));
    cli("serve", "--profile", "gpu-llama");
    server = spawn(BIN, ["--data", data, "console", "--addr", `127.0.0.1:${port}`], {
      env: { ...process.env, ROOFLINE_GPU_RECORDING: recording },
      stdio: "ignore",
    });
    let engine: Row | undefined;
    await expect(async () => {
      const rows: Row[] = JSON.parse(cli("status", "--json"));
      engine = rows.find((r) => r.profile === "gpu-llama" && r.state === "healthy" && r.pid);
      expect(engine).toBeTruthy();
    }).toPass({ timeout: 60_000 });
    const pid = engine!.pid!;
    writeFileSync(recording, JSON.stringify({
      status: "available", driver: "570.86.15", cuda: "12.8",
      gpus: [{
        index: 0, name: "NVIDIA H200", uuid: "GPU-0",
        memory_used_bytes: 75 * 2 ** 30, memory_total_bytes: 141 * 2 ** 30, memory_reserved_bytes: 616 * 2 ** 20,
        utilization_pct: 97, temperature_c: 64, power_w: 612.5, power_limit_w: 700, sm_clock_mhz: 1755,
        throttle: ["sw_power_cap"],
        processes: [{ pid, used_bytes: 70 * 2 ** 30 }, { pid: 1, used_bytes: 5 * 2 ** 30 }],
      }],
    }));
    await expect(async () => {
      const signIn = await context.request.post("/api/fn/login", { form: { name: "root", password: PASSWORD } });
      expect(signIn.ok()).toBe(true);
    }).toPass({ timeout: 30_000 });
    const page = await context.newPage();
    await page.goto("/engines/gpu-llama?section=gpu");
    await waitForHydration(page);
    const row = page.getByTestId("gpu-row");
    await expect(row).toHaveCount(1, { timeout: 30_000 });
    await expect(row).toContainText("NVIDIA H200");
    await expect(row).toContainText("sw_power_cap");
    await expect(row).toContainText("97%");
    const ours = row.locator("[data-testid=gpu-process][data-owner=ours]");
    await expect(ours).toContainText(`${pid} · 70.0 GiB`);
    await expect(ours.getByRole("link", { name: "gpu-llama" })).toHaveAttribute("href", "/engines/gpu-llama");
    const foreign = row.locator("[data-testid=gpu-process][data-owner=foreign]");
    await expect(foreign).toContainText(/^1 · 5\.0 GiB/);
    await expect(page.getByTestId("gpu-no-driver")).toHaveCount(0);
    await test.info().attach("gpu section", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
  } finally {
    await context.close();
    server?.kill();
    try { cli("stop", "--profile", "gpu-llama"); } catch { /* not running */ }
    rmSync(data, { recursive: true, force: true });
  }
});
