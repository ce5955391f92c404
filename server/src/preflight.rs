//! What a serve checks before it launches anything: a start the console already knows will
//! fail is refused with the flag or the figure named, instead of spending a minute of model
//! loading (and, on a GPU host, a minute of a busy GPU) to end in the same error.
//!
//! Three checks, each from knowledge the console already has:
//! - the installed engine's own `--help` (`control::flags`): a flag it does not know, or a
//!   value outside the choices it lists (what its argparse would refuse);
//! - the model's `config.json`: a context above `max_position_embeddings`, unless the profile
//!   sets the engine's own override (vLLM `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`, SGLang
//!   `SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1`);
//! - the VRAM calculator (`vram::predict`): a verdict of "does not fit" that holds across its
//!   whole range (a marginal one is left to the start).
//!
//! A check that cannot be made (no NVIDIA driver for the calculator, a `--help` that does not
//! run) refuses nothing: it is reported as skipped. `roofline serve --no-preflight` overrides
//! the refusals, and the journal says so.

use crate::context::Context;
use app::domain::engine::EngineKind;
use serde::Serialize;
use std::path::Path;

/// One reason a start would fail, naming what to change.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Refusal {
    /// `flags`, `context` or `vram`.
    pub check: &'static str,
    /// The flag, key or figure at fault (`--dtype`, `CONTEXT_LENGTH`, …).
    pub subject: String,
    pub detail: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.subject, self.detail)
    }
}

/// What the preflight found: refusals, and the checks it could not make.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Preflight {
    pub refusals: Vec<Refusal>,
    pub skipped: Vec<String>,
}

/// Runs every check for a stored profile.
pub async fn check(ctx: &Context, name: &str) -> Preflight {
    let mut out = Preflight::default();
    let Ok(resolved) = ctx.control.resolve(name).await else {
        // The serve itself names what is wrong with the profile.
        return out;
    };
    let profile = resolved.profile.clone();

    // 1. Flags, as the installed engine's argparse would read them.
    match ctx.control.check_flags(name).await {
        Ok((report, _)) => {
            for u in report.unknown {
                out.refusals.push(Refusal {
                    check: "flags",
                    subject: u.flag.clone(),
                    detail: format!(
                        "{} {} does not know this flag{}",
                        report.install,
                        report.version,
                        did_you_mean(u.suggestion)
                    ),
                });
            }
            for b in report.bad_values {
                out.refusals.push(Refusal {
                    check: "flags",
                    subject: b.flag.clone(),
                    detail: format!(
                        "{} {} refuses the value {:?}; it accepts {}{}",
                        report.install,
                        report.version,
                        b.value,
                        b.choices.join(", "),
                        did_you_mean(b.suggestion)
                    ),
                });
            }
        }
        Err(e) => out.skipped.push(format!("flags: {e}")),
    }

    // 2. The context against the model's own limit.
    let override_env = match resolved.kind {
        EngineKind::Vllm => "VLLM_ALLOW_LONG_MAX_MODEL_LEN",
        EngineKind::Sglang => "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN",
    };
    let overridden = profile
        .env
        .get(override_env)
        .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    if let (Some(context_len), false) = (profile.context_length, overridden) {
        let dir = crate::config::confined(&ctx.data.models_root(), Path::new(&profile.model));
        let shape = match dir {
            Ok(dir) => tokio::task::spawn_blocking(move || crate::vram::read_model_dir(&dir, None))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map_err(|e| e.to_string())),
            Err(e) => Err(e.to_string()),
        };
        match shape {
            Ok((shape, _, _)) if u64::from(context_len) > shape.max_position => out.refusals.push(Refusal {
                check: "context",
                subject: "CONTEXT_LENGTH".into(),
                detail: format!(
                    "{context_len} tokens is above the model's max_position_embeddings ({}) in its config.json; the engine refuses it (set ENV_{override_env}=1 only with rope scaling the model supports)",
                    shape.max_position
                ),
            }),
            Ok(_) => {}
            Err(e) => out.skipped.push(format!("context: {e}")),
        }
    }

    // 3. The calculator, on this host's GPU (or the simulator's).
    match crate::vram::predict(ctx, name, None).await {
        Ok(p) if !p.report.verdict.fits() && !p.report.marginal => out.refusals.push(Refusal {
            check: "vram",
            subject: format!("VRAM ({} GiB, {})", fmt_gib(p.gpu_gib), p.gpu_name),
            detail: format!(
                "the calculator says {}: weights {} GiB, KV budget {} GiB ({} tokens), {} requests of {} tokens at once",
                p.report.verdict.id(),
                fmt_gib(p.report.weights_per_gpu_gib),
                fmt_gib(p.report.kv_budget_gib),
                p.report.kv_tokens,
                (p.report.max_concurrency * 100.0).floor() / 100.0,
                p.ctx
            ),
        }),
        Ok(_) => {}
        Err(e) => out.skipped.push(format!("vram: {e}")),
    }
    out
}

fn did_you_mean(suggestion: Option<String>) -> String {
    suggestion.map(|s| format!(" (did you mean {s}?)")).unwrap_or_default()
}

fn fmt_gib(v: f64) -> String {
    format!("{v:.2}")
}
