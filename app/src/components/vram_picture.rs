//! The calculator's answer drawn: one stacked bar per GPU (how its memory divides) and the
//! curve of requests at once against context length. Plain HTML and SVG, so it renders on
//! the server, follows the colour scheme through CSS variables and needs no chart library.

use super::use_i18n;
use crate::components::{Grid, Head};
use crate::domain::vram_picture::{CurvePoint, Part, Segment};
use leptos::prelude::*;

/// One bar per GPU of the tensor-parallel group; the GPUs hold equal shares, so the bars are
/// the same, and seeing eight of them is what tells an operator that TP 8 means eight cards.
/// When the weights do not fit, the bar runs past a line at the GPU's edge.
#[component]
pub fn VramBars(segments: Vec<Segment>, gpu_gib: f64, gpus: u64) -> impl IntoView {
    let i18n = use_i18n();
    let drawn: f64 = segments.iter().map(|s| s.gib).sum();
    let scale = drawn.max(gpu_gib).max(f64::MIN_POSITIVE);
    let pct = move |gib: f64| format!("{:.3}%", (gib / scale * 100.0).clamp(0.0, 100.0));
    let edge = pct(gpu_gib);
    let overflows = segments.iter().any(|s| s.part == Part::Overflow);
    // Eight bars at most: a TP 16 profile spans two hosts of eight, drawn as "× 2".
    let shown = gpus.clamp(1, 8);
    let bar = {
        let segments = segments.clone();
        move |gpu: u64| {
            let segments = segments.clone();
            view! {
                <div class="vram-bar-row">
                    <span class="vram-bar-label">{move || i18n.ta("vram-bar-gpu", &[("n", gpu.into())])}</span>
                    <div class="vram-bar" data-testid="vram-bar" data-overflow=overflows.to_string()>
                        {segments.iter().map(|s| {
                            let (part, gib) = (s.part, s.gib);
                            let title = move || format!("{}: {}", i18n.t(&format!("vram-part-{}", part.id())), i18n.gib(gib, 2));
                            view! {
                                <span class=format!("seg seg-{}", part.id()) data-part=part.id() data-gib=format!("{gib:.3}")
                                    style=format!("width: {}", pct(gib)) title=title></span>
                            }
                        }).collect_view()}
                        <span class="vram-edge" style=format!("left: {edge}") aria-hidden="true"></span>
                    </div>
                </div>
            }
        }
    };
    let summary = {
        let segments = segments.clone();
        move || {
            segments
                .iter()
                .map(|s| {
                    format!(
                        "{} {}",
                        i18n.t(&format!("vram-part-{}", s.part.id())),
                        i18n.gib(s.gib, 1)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    view! {
        <figure class="vram-bars" data-testid="vram-bars" data-gpus=gpus.to_string()>
            <figcaption>{move || i18n.ta("vram-bars-title", &[("gpu", i18n.gib(gpu_gib, 2).into()), ("n", gpus.into())])}</figcaption>
            <div role="img" aria-label=summary>
                {(0..shown).map(&bar).collect_view()}
                {(gpus > shown).then(|| view! { <p class="muted">{move || i18n.ta("vram-bar-more", &[("n", (gpus - shown).into())])}</p> })}
            </div>
            <ul class="vram-legend">
                {segments.iter().map(|s| {
                    let (part, gib) = (s.part, s.gib);
                    view! {
                        <li data-part=part.id()>
                            <span class=format!("swatch seg-{}", part.id()) aria-hidden="true"></span>
                            {move || i18n.t(&format!("vram-part-{}", part.id()))}" "
                            <strong>{move || i18n.gib(gib, 2)}</strong>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </figure>
    }
}

/// Drawing area of the curve, in SVG units.
const W: f64 = 600.0;
const H: f64 = 240.0;
const LEFT: f64 = 48.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 32.0;
/// Concurrency below this is drawn at the floor of the log axis.
const FLOOR: f64 = 0.01;

/// Tokens as an axis label: 512, 2k, 128k, 1M (powers of two, as contexts are quoted).
fn ctx_label(i18n: super::I18n, ctx: u64) -> String {
    if ctx >= 1 << 20 && ctx.is_multiple_of(1 << 20) {
        i18n.ta("value-mega-tokens", &[("value", (ctx >> 20).into())])
    } else if ctx >= 1024 && ctx.is_multiple_of(1024) {
        i18n.ta("value-kilo-tokens", &[("value", (ctx >> 10).into())])
    } else {
        ctx.to_string()
    }
}

/// Requests at once against context length, both axes logarithmic (the curve is close to
/// `budget / (bytes per token × context)`, a straight line there), with the line where one
/// request stops fitting and the chosen context marked. Clicking a point picks its context
/// when `on_pick` is given. The same points are listed in a table under it.
#[component]
pub fn ConcurrencyCurve(
    points: Vec<CurvePoint>,
    chosen: u64,
    #[prop(optional)] on_pick: Option<Callback<u64>>,
) -> impl IntoView {
    let i18n = use_i18n();
    if points.is_empty() || points.iter().all(|p| p.concurrency <= 0.0) {
        return view! { <p class="muted" data-testid="vram-curve-none">{move || i18n.t("vram-curve-none")}</p> }
            .into_any();
    }
    let (x0, x1) = (
        (points[0].ctx.max(1) as f64).log2(),
        (points[points.len() - 1].ctx.max(2) as f64).log2(),
    );
    let top = points.iter().map(|p| p.concurrency).fold(1.0_f64, f64::max);
    let bottom = points
        .iter()
        .map(|p| p.concurrency)
        .filter(|c| *c > 0.0)
        .fold(1.0_f64, f64::min)
        .max(FLOOR);
    let (y0, y1) = (
        bottom.log10().floor(),
        top.log10().ceil().max(bottom.log10().floor() + 1.0),
    );
    let x = move |ctx: u64| LEFT + ((ctx.max(1) as f64).log2() - x0) / (x1 - x0).max(1e-9) * (W - LEFT - RIGHT);
    let y = move |c: f64| H - BOTTOM - (c.max(FLOOR).log10() - y0) / (y1 - y0) * (H - TOP - BOTTOM);
    let line: String = points
        .iter()
        .map(|p| format!("{:.1},{:.1}", x(p.ctx), y(p.concurrency)))
        .collect::<Vec<_>>()
        .join(" ");
    let one = y(1.0);
    let x_ticks: Vec<u64> = points
        .iter()
        .map(|p| p.ctx)
        .filter(|c| c.is_power_of_two() && c.trailing_zeros() % 2 == 1)
        .collect();
    let y_ticks: Vec<f64> = (y0 as i32..=y1 as i32).map(|e| 10f64.powi(e)).collect();
    let chosen_point = points.iter().find(|p| p.ctx == chosen).copied();
    let table = points.clone();
    let label = move || {
        chosen_point
            .map(|p| {
                i18n.ta(
                    "vram-curve-chosen",
                    &[("ctx", p.ctx.into()), ("n", i18n.num(p.concurrency, 2).into())],
                )
            })
            .unwrap_or_default()
    };
    view! {
        <figure class="vram-curve" data-testid="vram-curve">
            <figcaption>{move || i18n.t("vram-curve-title")}</figcaption>
            <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=move || format!("{}. {}", i18n.t("vram-curve-title"), label())>
                {y_ticks.iter().map(|&v| {
                    let yy = y(v);
                    view! {
                        <line class="grid-line" x1=LEFT y1=yy x2=W - RIGHT y2=yy></line>
                        <text class="tick" x=LEFT - 6.0 y=yy + 4.0 text-anchor="end">{move || i18n.num(v, if v < 1.0 { 2 } else { 0 })}</text>
                    }
                }).collect_view()}
                {x_ticks.iter().map(|&c| {
                    let xx = x(c);
                    view! {
                        <line class="grid-line" x1=xx y1=TOP x2=xx y2=H - BOTTOM></line>
                        <text class="tick" x=xx y=H - BOTTOM + 16.0 text-anchor="middle">{move || ctx_label(i18n, c)}</text>
                    }
                }).collect_view()}
                <line class="one-request" x1=LEFT y1=one x2=W - RIGHT y2=one>
                    <title>{move || i18n.t("vram-curve-one")}</title>
                </line>
                <text class="tick one-request-label" x=W - RIGHT y=one - 4.0 text-anchor="end">{move || i18n.t("vram-curve-one")}</text>
                <polyline class="curve" points=line></polyline>
                {points.iter().map(|p| {
                    let (ctx, c) = (p.ctx, p.concurrency);
                    let is_chosen = ctx == chosen;
                    let pick = move |_| if let Some(f) = on_pick { f.run(ctx) };
                    view! {
                        <circle class=if is_chosen { "point chosen" } else { "point" } cx=x(ctx) cy=y(c) r=if is_chosen { 6.0 } else { 3.5 }
                            data-ctx=ctx.to_string() data-concurrency=format!("{c:.3}")
                            data-testid=if is_chosen { "vram-curve-chosen" } else { "vram-curve-point" }
                            on:click=pick>
                            <title>{move || i18n.ta("vram-curve-chosen", &[("ctx", ctx.into()), ("n", i18n.num(c, 2).into())])}</title>
                        </circle>
                    }
                }).collect_view()}
                <text class="axis" x=(LEFT + W - RIGHT) / 2.0 y=H - 4.0 text-anchor="middle">{move || i18n.t("vram-curve-x")}</text>
            </svg>
            <p class="muted" data-testid="vram-curve-label">{label}</p>
            <details>
                <summary>{move || i18n.t("vram-curve-table")}</summary>
                <Grid heads=vec![Head::t("vram-curve-x"), Head::t("vram-curve-y")]>
                        {table.into_iter().map(|p| view! {
                            <tr><td class="num">{p.ctx.to_string()}</td><td class="num">{move || i18n.num(p.concurrency, 2)}</td></tr>
                        }).collect_view()}
                    </Grid>
            </details>
        </figure>
    }
    .into_any()
}
