//! Recording what happened to an engine in the change journal, with the context an auditor
//! needs later: which installation, which engine version, which driver.

use super::EngineControl;
use app::domain::gpu::GpuState;

/// The context an engine action is recorded with: the engine installation, its version (when it
/// answers), the NVIDIA driver and CUDA version (when there is a driver), and the container
/// image when the engine runs in one (as configured, and the digest the runtime resolved).
///
/// Nothing here waits on an engine: the version is the one cached when the engine became
/// healthy, and the driver is read once per process (it does not change under a running
/// console), so recording an approval never stalls on a hung engine or on NVML.
pub async fn context(control: &EngineControl, profile: &str, mut detail: serde_json::Value) -> serde_json::Value {
    if let Ok(Some(stored)) = control.store.get(profile).await {
        if let Some(image) = control
            .data
            .engine(&stored.profile.engine)
            .and_then(|i| i.image.clone())
        {
            detail["image"] = image.into();
        }
        detail["engine"] = stored.profile.engine.into();
    }
    if let Some(digest) = control.running_image_digest(profile) {
        detail["image_digest"] = digest.into();
    }
    if let Some(v) = control.cached_version(profile) {
        detail["engine_version"] = v.into();
    }
    let (driver, cuda) = driver().await;
    if let Some(d) = driver {
        detail["driver"] = d.into();
    }
    if let Some(c) = cuda {
        detail["cuda"] = c.into();
    }
    detail
}

/// The NVIDIA driver and CUDA versions, read once.
async fn driver() -> (Option<String>, Option<String>) {
    static DRIVER: tokio::sync::OnceCell<(Option<String>, Option<String>)> = tokio::sync::OnceCell::const_new();
    DRIVER
        .get_or_init(|| async {
            match crate::gpu::read().await {
                GpuState::Available { driver, cuda, .. } => (driver, cuda),
                GpuState::NoDriver { .. } => (None, None),
            }
        })
        .await
        .clone()
}
