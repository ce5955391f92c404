//! `roofline console`: autostart what host configuration names, then serve the web console.

use super::{ConsoleServer, OK, USAGE};
use crate::context::Context;

pub async fn run(ctx: Context, addr: Option<std::net::SocketAddr>, server: ConsoleServer) -> i32 {
    let addr = addr.unwrap_or(ctx.data.config.listen);
    // Autostart serves a profile the first time this host sees it (the demo fleet); after
    // that the operator's last action stands: a stopped engine stays stopped.
    for name in ctx.data.config.autostart.clone() {
        if ctx.control.dir(&name).exists() {
            continue;
        }
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let ok = match ctx.control.serve(&name, |_| {}).await {
                Ok(o) => {
                    tracing::info!(profile = %name, outcome = ?o, "autostart");
                    true
                }
                Err(e) => {
                    tracing::warn!(profile = %name, error = %e, "autostart failed");
                    false
                }
            };
            let reason = "autostart on first sight (host configuration)";
            ctx.record("console", "serve", &name, reason, serde_json::json!({"ok": ok}))
                .await;
        });
    }
    match server(ctx, addr).await {
        Ok(()) => OK,
        Err(e) => {
            eprintln!("{e:#}");
            USAGE
        }
    }
}
