//! The demo fleet: two simulated engines (vLLM and SGLang) that a fresh console launches
//! through its real engine control, with small model directories to load.

use crate::config::{DataDir, CONFIG_FILE};
use anyhow::Context;
use app::domain::profile::Profile;

pub mod load;
pub mod models;

const HOST_CONFIG: &str = r#"# Roofline host configuration (demo). Engine installations that may run on this host;
# profiles refer to them by name. Real engines look like:
#   [engines.vllm-0-33]
#   kind = "vllm"
#   command = ["vllm"]
#   [engines.sglang-0-5]
#   kind = "sglang"
#   command = ["python", "-m", "sglang.launch_server"]
listen = "127.0.0.1:3000"
models_root = "models"
state_dir = "state"
serve_timeout_s = 900
stop_grace_s = 10
autostart = ["demo-vllm", "demo-sglang"]

[engines.sim-vllm]
kind = "vllm"
simulator = true

[engines.sim-sglang]
kind = "sglang"
simulator = true

# The simulator's synthetic next vLLM release (flags removed, renamed and retyped, a parser
# renamed, a default moved, a metric family renamed): try an upgrade on the editor with it.
[engines.sim-vllm-next]
kind = "vllm"
simulator = true
simulator_version = "0.34.0+synthetic"
"#;

/// Writes the demo host config, model directories and profiles into an empty data dir.
/// Does nothing when a host configuration already exists.
pub async fn init(root: &std::path::Path) -> anyhow::Result<bool> {
    let cfg_path = root.join(CONFIG_FILE);
    if cfg_path.exists() {
        return Ok(false);
    }
    std::fs::create_dir_all(root)?;
    std::fs::write(&cfg_path, HOST_CONFIG).context("writing demo host config")?;
    let data = DataDir::open(root)?;
    let models = data.models_root();
    for m in [models::LLAMA, models::QWEN] {
        m.write(&models)?;
    }
    let pool = crate::db::connect(&data).await?;
    // Hashed once here, as `roofline model verify` would on a real host: the engines' start
    // (which hashes nothing under `verify = "warn"`) then finds every file known and checked.
    let cache = crate::models::hashcache::HashCache::new(pool.clone());
    for m in [models::LLAMA, models::QWEN] {
        let mut report = crate::models::verify(
            Some(&cache),
            &models.join(m.dir),
            &models,
            crate::models::HashMode::Full,
            std::sync::Arc::new(|_| {}),
        )
        .await?;
        // The demo's installations are the simulator's: its weights are simulated.
        report.weights_simulated();
        anyhow::ensure!(
            report.manifest && report.ok(),
            "demo model {}: {:?}",
            m.dir,
            report.findings
        );
    }
    let store = crate::profile_store::ProfileStore::new(pool);
    let vllm = format!(
        "ENGINE=sim-vllm\nMODEL={}\nSERVED_MODEL_NAME=llama-3.1-8b\nTENSOR_PARALLEL=1\nCONTEXT_LENGTH=32768\nMEM_FRACTION=0.9\nTOOL_CALL_PARSER=llama3_json\nMAX_RUNNING_REQUESTS=64\nMAX_BATCHED_TOKENS=8192\nHOST=127.0.0.1\nPORT=18000\n",
        models.join(models::LLAMA.dir).display()
    );
    let sglang = format!(
        "ENGINE=sim-sglang\nMODEL={}\nSERVED_MODEL_NAME=qwen3-8b\nTENSOR_PARALLEL=1\nCONTEXT_LENGTH=32768\nMEM_FRACTION=0.88\nTOOL_CALL_PARSER=qwen25\nREASONING_PARSER=qwen3\nMAX_RUNNING_REQUESTS=64\nHOST=127.0.0.1\nPORT=18030\n",
        models.join(models::QWEN.dir).display()
    );
    for (name, text) in [("demo-vllm", vllm), ("demo-sglang", sglang)] {
        let (p, _) =
            Profile::from_env(name, &text).map_err(|issues| anyhow::anyhow!("demo profile {name}: {issues:?}"))?;
        store.upsert(&p).await?;
    }
    Ok(true)
}
