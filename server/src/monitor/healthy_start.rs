//! What a start that became healthy leaves behind: the VRAM calculator calibrated from the
//! engine's own memory lines, and the set of versions it ran on (pinned). The monitor sees
//! every start; `roofline serve` sees its own, with or without a console running. Both call
//! this one function, and each half records once per engine process, so a start seen by both
//! is recorded once.

use crate::context::Context;
use app::domain::pins::KnownGood;
use app::domain::vram::Calibration;

/// What one healthy start recorded; the failures are already logged.
pub struct HealthyStart {
    /// `None` when this start was calibrated from before or its lines say nothing new.
    pub calibration: Result<Option<Calibration>, crate::vram::PredictError>,
    /// `None` when there was nothing to record (a gate records its candidate's set itself).
    pub pinned: anyhow::Result<Option<KnownGood>>,
}

/// Records what the healthy start of `profile` teaches: calibration, then its pinned set.
pub async fn on_healthy_start(ctx: &Context, profile: &str) -> HealthyStart {
    let calibration = crate::vram::calibrate(ctx, profile).await;
    match &calibration {
        Ok(Some(c)) => tracing::info!(
            profile,
            activation_gib = c.activation_gib,
            other_gib = c.other_gib,
            "VRAM calculator calibrated from this start"
        ),
        Ok(None) => {}
        Err(e) => tracing::debug!(profile, "no calibration from this start: {e}"),
    }
    let pinned = ctx.control.record_start_once(profile).await;
    if let Err(e) = &pinned {
        tracing::warn!(profile, error = %e, "the known-good set of this start is not recorded");
    }
    HealthyStart { calibration, pinned }
}
