//! Small UI pieces shared by the pages.

mod chart;
mod confirm;
mod grid;
mod i18n_ctx;
mod lang_switch;
pub mod locales;
mod role_ctx;
mod sse;
mod state_badge;
mod time;
mod vram_picture;

pub use chart::Chart;
pub use confirm::ConfirmDialog;
pub use grid::{Grid, Head};
pub use i18n_ctx::{initial_lang as i18n_ctx_initial, provide_i18n, use_i18n, I18n};
pub use lang_switch::LangSwitch;
pub use role_ctx::{can, initial_role, provide_role};
pub use sse::{use_event_stream, use_record_changes};
pub use state_badge::{DemoTrafficBadge, PhaseSteps, SimulatedBadge, StateBadge};
pub use time::{Time, TimeMs};
pub use vram_picture::{ConcurrencyCurve, VramBars};
