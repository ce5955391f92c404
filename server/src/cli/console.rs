//! `roofline console`: autostart what host configuration names, then serve the web console.

use super::{ConsoleServer, OK, USAGE};
use crate::control::EngineControl;

pub async fn run(control: EngineControl, addr: Option<std::net::SocketAddr>, server: ConsoleServer) -> i32 {
    let addr = addr.unwrap_or(control.data.config.listen);
    // Autostart serves a profile the first time this host sees it (the demo fleet); after
    // that the operator's last action stands: a stopped engine stays stopped.
    for name in control.data.config.autostart.clone() {
        if control.dir(&name).exists() {
            continue;
        }
        let c = control.clone();
        tokio::spawn(async move {
            let ok = match c.serve(&name, |_| {}).await {
                Ok(o) => {
                    tracing::info!(profile = %name, outcome = ?o, "autostart");
                    true
                }
                Err(e) => {
                    tracing::warn!(profile = %name, error = %e, "autostart failed");
                    false
                }
            };
            let detail = crate::control::actions::context(&c, &name, serde_json::json!({"ok": ok})).await;
            c.journal()
                .record(
                    "console",
                    "serve",
                    &name,
                    "autostart on first sight (host configuration)",
                    detail,
                )
                .await;
        });
    }
    match server(control, addr).await {
        Ok(()) => OK,
        Err(e) => {
            eprintln!("{e:#}");
            USAGE
        }
    }
}
