//! The GPU panel: every GPU of this host with memory, utilisation, temperature, power, clocks
//! and throttle reasons, and the processes on it marked as one of our engines or foreign.
//! Without an NVIDIA driver it says so, in words, instead of showing an empty table.

use crate::components::use_i18n;
use crate::components::{Grid, Head};
use crate::domain::gpu::{GpuReading, GpuState};
use leptos::prelude::*;

const GIB: f64 = (1u64 << 30) as f64;

#[component]
pub fn GpuPanel(gpu: RwSignal<GpuState>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <h2>{move || i18n.t("gpu-title")}</h2>
        {move || match gpu.get() {
            GpuState::NoDriver { reason } => view! {
                <p class="note" data-testid="gpu-no-driver">
                    {move || i18n.ta("gpu-no-driver", &[("reason", reason.clone().into())])}
                </p>
            }
            .into_any(),
            GpuState::Available { driver, cuda, gpus, .. } => view! {
                <p class="muted">{move || i18n.ta("gpu-driver", &[("driver", driver.clone().unwrap_or_default().into())])}
                    {cuda.clone().map(|c| format!(" · CUDA {c}"))}</p>
                <Grid heads=vec![Head::text("#"), Head::t("gpu-col-name"), Head::t("gpu-col-memory"), Head::t("gpu-col-util"), Head::t("gpu-col-temp"), Head::t("gpu-col-power"), Head::t("gpu-col-clock"), Head::t("gpu-col-throttle"), Head::t("gpu-col-processes")] testid="gpu-table">{gpus.into_iter().map(|g| view! { <GpuRow g/> }).collect_view()}</Grid>
            }
            .into_any(),
        }}
    }
}

#[component]
fn GpuRow(g: GpuReading) -> impl IntoView {
    let i18n = use_i18n();
    let dash = || "—".to_string();
    let power = match (g.power_w, g.power_limit_w) {
        (Some(w), Some(l)) => i18n.ta(
            "value-w-of",
            &[("used", i18n.num(w, 0).into()), ("total", i18n.num(l, 0).into())],
        ),
        (Some(w), None) => i18n.unit("value-w", w, 0),
        _ => dash(),
    };
    let processes = g
        .processes
        .iter()
        .map(|p| {
            let mem = p.used_bytes.map(|b| i18n.gib(b as f64 / GIB, 1)).unwrap_or_else(dash);
            let pid = p.pid;
            match p.profile.clone() {
                Some(profile) => view! {
                    <li data-testid="gpu-process" data-owner="ours">
                        {format!("{pid} · {mem} · ")}<a href=format!("/engines/{profile}")>{profile.clone()}</a>
                    </li>
                }
                .into_any(),
                None => view! {
                    <li data-testid="gpu-process" data-owner="foreign" class="foreign">
                        {format!("{pid} · {mem} · ")}{move || i18n.t("gpu-foreign")}
                    </li>
                }
                .into_any(),
            }
        })
        .collect_view();
    view! {
        <tr data-testid="gpu-row">
            <td class="num">{g.index}</td>
            <td>{g.name.clone()}</td>
            <td class="num">{i18n.gib_of(g.memory_used_bytes as f64 / GIB, g.memory_total_bytes as f64 / GIB, 1, 1)}</td>
            <td class="num">{g.utilization_pct.map(|u| format!("{u}%")).unwrap_or_else(dash)}</td>
            <td class="num">{g.temperature_c.map(|t| i18n.unit("value-c", t as f64, 0)).unwrap_or_else(dash)}</td>
            <td class="num">{power}</td>
            <td class="num">{g.sm_clock_mhz.map(|c| i18n.unit("value-mhz", c as f64, 0)).unwrap_or_else(dash)}</td>
            <td>{if g.throttle.is_empty() { dash() } else { g.throttle.join(", ") }}</td>
            <td><ul class="plain">{processes}</ul></td>
        </tr>
    }
}
