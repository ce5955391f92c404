//! The VRAM calculator page: pick a model from the models root (or paste a config.json), set
//! GPU size, TP, utilisation, context and KV dtype, and the answer updates as you type: the
//! same calculation as `roofline vram`, running in the browser.

use crate::api::{
    get_vram_check, list_host_gpus, list_models, list_profiles, predict_profile_vram, ModelInfo, VramPrediction,
};
use crate::components::{use_i18n, ConcurrencyCurve, VramBars};
use crate::domain::vram::{calculate, parse_config, EngineSetup, Inputs, KvDtype, ModelShape, Report};
use crate::domain::vram_picture::{concurrency_curve, segments, PRESETS};
use crate::pages::on_demand::{self, PredictionArgs};
use crate::pages::ErrorNote;
use leptos::prelude::*;

const GIB: f64 = (1u64 << 30) as f64;

/// The calculator: the form (a model or a pasted config.json, the GPU, TP, utilisation,
/// context, KV dtype, concurrency), the answer as you type, and a stored profile's prediction.
#[component]
pub fn VramPage() -> impl IntoView {
    let i18n = use_i18n();
    let chosen: RwSignal<Option<ModelInfo>> = RwSignal::new(None);
    let pasted = RwSignal::new(String::new());
    let weights_gib = RwSignal::new(String::new());
    let gpu_gib = RwSignal::new("80".to_string());
    // The GPU's NVML name when picked from the list (vLLM takes other defaults on A100).
    let gpu_name: RwSignal<Option<String>> = RwSignal::new(None);
    let tp = RwSignal::new("1".to_string());
    let util = RwSignal::new("0.90".to_string());
    let ctx = RwSignal::new("32768".to_string());
    let kv = RwSignal::new(KvDtype::Auto);
    let concurrency = RwSignal::new(String::new());

    // The shape: a pasted config.json wins over the chosen model.
    let shape = Memo::new(move |_| -> Option<Result<(ModelShape, Option<u64>), String>> {
        let text = pasted.get();
        if !text.trim().is_empty() {
            return Some(parse_config(&text).map(|s| (s, None)).map_err(|e| e.to_string()));
        }
        chosen.get().map(|m| Ok((m.shape, Some(m.weights_bytes))))
    });
    let inputs = Memo::new(move |_| -> Option<Result<(ModelShape, Inputs), String>> {
        let (shape, weights) = match shape.get()? {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        let num = |s: RwSignal<String>| s.get().trim().parse::<f64>().ok();
        let weights_bytes = match (num(weights_gib), weights) {
            (Some(g), _) => (g * GIB) as u64,
            (None, Some(b)) => b,
            (None, None) => return Some(Err(i18n.t("vram-need-weights"))),
        };
        let inputs = Inputs {
            weights_bytes,
            gpu_gib: num(gpu_gib).unwrap_or(0.0),
            tp: num(tp).map(|v| v as u64).unwrap_or(0),
            util: num(util).unwrap_or(0.0),
            ctx: num(ctx).map(|v| v as u64).unwrap_or(0),
            kv_dtype: kv.get(),
            concurrency: num(concurrency).map(|v| v as u64),
            activation_gib: None,
            non_torch_gib: None,
            engine: EngineSetup {
                gpu_name: gpu_name.get(),
                ..Default::default()
            },
            calibration: None,
        };
        Some(Ok((shape, inputs)))
    });
    let result = Memo::new(move |_| {
        inputs.get().map(|r| {
            r.and_then(|(shape, i)| {
                calculate(&shape, &i)
                    .map_err(|e| e.to_string())
                    .map(|rep| (rep, i, shape))
            })
        })
    });
    let field = move |key: &'static str, value: RwSignal<String>| {
        view! {
            <label class="vram-field">
                <span>{move || i18n.t(key)}</span>
                <input type="text" inputmode="decimal" data-testid=key prop:value=move || value.get() on:input=move |ev| value.set(event_target_value(&ev))/>
            </label>
        }
    };
    view! {
        <section class="vram">
            <div class="page-head"><h1>{move || i18n.t("vram-title")}</h1></div>
            <p class="muted">{move || i18n.t("vram-intro")}</p>
            <div class="vram-inputs">
                <ModelPick chosen=chosen/>
                {field("vram-weights-gib", weights_gib)}
                <GpuPick gpu_gib=gpu_gib gpu_name=gpu_name/>
                {field("vram-tp", tp)}
                {field("vram-util", util)}
                {field("vram-ctx", ctx)}
                <label class="vram-field">
                    <span>{move || i18n.t("vram-kv-dtype")}</span>
                    <select data-testid="vram-kv-dtype" on:change=move |ev| kv.set(if event_target_value(&ev) == "fp8" { KvDtype::Fp8 } else { KvDtype::Auto })>
                        <option value="auto">"auto"</option>
                        <option value="fp8">"fp8"</option>
                    </select>
                </label>
                {field("vram-concurrency", concurrency)}
            </div>
            <label class="vram-field wide">
                <span>{move || i18n.t("vram-paste-config")}</span>
                <textarea data-testid="vram-config" rows="4" prop:value=move || pasted.get() on:input=move |ev| pasted.set(event_target_value(&ev))></textarea>
            </label>
            {move || match result.get() {
                None => view! { <p class="muted">{move || i18n.t("vram-choose")}</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error" role="alert" data-testid="vram-error">{e}</p> }.into_any(),
                Some(Ok((r, i, shape))) => view! { <CalculatorAnswer report=r inputs=i shape=shape ctx=ctx/> }.into_any(),
            }}
            <ProfilePrediction/>
        </section>
    }
}

/// The models root's models to pick from; the one picked goes into `chosen`.
#[component]
fn ModelPick(chosen: RwSignal<Option<ModelInfo>>) -> impl IntoView {
    let i18n = use_i18n();
    let models = crate::api::wire::data(|| (), |_| list_models());
    view! {
        <label class="vram-field">
            <span>{move || i18n.t("vram-model")}</span>
            <Transition fallback=|| ()>
                {move || models.get().map(|r| match r {
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                    Ok(list) => {
                        let options = list.clone();
                        view! {
                            <select data-testid="vram-model" on:change=move |ev| {
                                let name = event_target_value(&ev);
                                chosen.set(options.iter().find(|m| m.name == name).cloned());
                            }>
                                <option value="">"—"</option>
                                {list.iter().map(|m| view! { <option value=m.name.clone()>{m.name.clone()}</option> }).collect_view()}
                            </select>
                        }.into_any()
                    }
                })}
            </Transition>
        </label>
    }
}

/// The GPU: this host's (with their usable memory), a common card, or a size typed in. A
/// card picked by name sets `gpu_name` too (vLLM takes other defaults on an A100).
#[component]
fn GpuPick(gpu_gib: RwSignal<String>, gpu_name: RwSignal<Option<String>>) -> impl IntoView {
    let i18n = use_i18n();
    let gpu_pick = RwSignal::new("custom".to_string());
    let host_gpus = crate::api::wire::data(|| (), |_| list_host_gpus());
    view! {
        <label class="vram-field">
            <span>{move || i18n.t("vram-gpu-pick")}</span>
            <select data-testid="vram-gpu-pick" prop:value=move || gpu_pick.get() on:change=move |ev| {
                let v = event_target_value(&ev);
                gpu_pick.set(v.clone());
                if let Some(i) = v.strip_prefix("preset:").and_then(|i| i.parse::<usize>().ok()).and_then(|i| PRESETS.get(i)) {
                    gpu_gib.set(format!("{:.2}", i.usable_gib));
                    gpu_name.set(Some(i.name.to_string()));
                } else if let Some(g) = v.strip_prefix("host:").and_then(|i| i.parse::<u32>().ok())
                    .and_then(|i| host_gpus.get_untracked().and_then(|r| r.ok()).and_then(|l| l.into_iter().find(|g| g.index == i))) {
                    gpu_gib.set(format!("{:.2}", g.usable_gib));
                    gpu_name.set(Some(g.name));
                } else {
                    gpu_name.set(None);
                }
            }>
                <option value="custom">{move || i18n.t("vram-gpu-custom")}</option>
                <Transition fallback=|| ()>
                    {move || host_gpus.get().map(|r| match r {
                        Ok(list) if !list.is_empty() => view! {
                            <optgroup label=move || i18n.t("vram-gpu-host")>
                                {list.into_iter().map(|g| {
                                    let text = move || i18n.ta("vram-gpu-host-option", &[("index", u64::from(g.index).into()), ("name", g.name.clone().into()), ("gib", i18n.num(g.usable_gib, 2).into())]);
                                    view! { <option value=format!("host:{}", g.index) title=move || i18n.ta("vram-gpu-host-total", &[("gib", i18n.num(g.total_gib, 2).into())])>{text}</option> }
                                }).collect_view()}
                            </optgroup>
                        }.into_any(),
                        Ok(_) => ().into_any(),
                        Err(e) => view! { <optgroup label=move || i18n.ta("vram-gpu-host-none", &[("reason", e.to_string().into())])></optgroup> }.into_any(),
                    })}
                </Transition>
                <optgroup label=move || i18n.t("vram-gpu-common")>
                    {PRESETS.iter().enumerate().map(|(n, p)| view! {
                        <option value=format!("preset:{n}") title=p.source>{move || format!("{} ({})", p.name, i18n.gib(p.usable_gib, 2))}</option>
                    }).collect_view()}
                </optgroup>
            </select>
        </label>
        <label class="vram-field">
            <span>{move || i18n.t("vram-gpu-gib")}</span>
            <input type="text" inputmode="decimal" data-testid="vram-gpu-gib" prop:value=move || gpu_gib.get() on:input=move |ev| {
                gpu_gib.set(event_target_value(&ev));
                gpu_pick.set("custom".into());
                gpu_name.set(None);
            }/>
        </label>
    }
}

/// The calculator's answer: the verdict, the facts, the memory picture with the concurrency
/// curve (a point on it sets the context), and the arithmetic.
#[component]
fn CalculatorAnswer(report: Report, inputs: Inputs, shape: ModelShape, ctx: RwSignal<String>) -> impl IntoView {
    let i18n = use_i18n();
    let (r, i) = (report, inputs);
    let verdict = r.verdict;
    let bars = segments(&r, i.gpu_gib);
    let curve = concurrency_curve(&shape, &i);
    let pick = Callback::new(move |c: u64| ctx.set(c.to_string()));
    view! {
        <div class="vram-result" data-testid="vram-result" data-verdict=verdict.id()>
            <p class="verdict"><strong>{move || i18n.t(&format!("vram-verdict-{}", verdict.id()))}</strong></p>
            <dl class="facts">
                <dt>{move || i18n.t("vram-weights-per-gpu")}</dt><dd data-testid="vram-weights-per-gpu">{move || i18n.gib(r.weights_per_gpu_gib, 2)}</dd>
                <dt>{move || i18n.t("vram-kv-per-token")}</dt><dd data-testid="vram-kv-per-token">{format!("{} B", r.kv_bytes_per_token.max(r.kv_bytes_per_token_sliding))}</dd>
                <dt>{move || i18n.t("vram-kv-tokens")}</dt><dd data-testid="vram-kv-tokens">{r.kv_tokens.to_string()}</dd>
                <dt>{move || i18n.t("vram-max-concurrency")}</dt><dd data-testid="vram-max-concurrency">{move || format!("{}×", i18n.num(r.max_concurrency, 2))}</dd>
                <dt>{move || i18n.t("vram-max-ctx")}</dt><dd data-testid="vram-max-ctx">{r.max_ctx.to_string()}</dd>
                <dt>{move || i18n.t("vram-budget")}</dt><dd>{move || i18n.gib(r.kv_budget_gib, 2)}</dd>
            </dl>
            <div class="vram-picture">
                <VramBars segments=bars gpu_gib=i.gpu_gib gpus=i.tp/>
                <ConcurrencyCurve points=curve chosen=i.ctx on_pick=pick/>
            </div>
            <pre class="argv" data-testid="vram-arithmetic">{r.arithmetic.join("\n")}</pre>
        </div>
    }
}

/// On an engine page: the calculator's KV cache prediction for the profile against what the
/// engine logged at startup ("GPU KV cache size", "Maximum concurrency"), with the error.
/// Loaded again whenever the engine becomes healthy (a new start logs new lines).
#[component]
pub fn EngineKvCheck(profile: String, #[prop(into)] healthy: Signal<bool>) -> impl IntoView {
    let i18n = use_i18n();
    let check = crate::api::wire::data(move || (profile.clone(), healthy.get()), |(p, _)| get_vram_check(p));
    view! {
        <section class="kv-check" data-testid="kv-check">
            <h2>{move || i18n.t("vram-check-title")}</h2>
            <Transition fallback=|| ()>
                {move || check.get().map(|r| match r {
                    Ok(c) => {
                        let err = c.error_pct.map(|e| format!("{e:+.1}")).unwrap_or_else(|| "?".into());
                        let class = if c.error_pct.is_some_and(|e| e.abs() > 10.0) { "warning" } else { "ok" };
                        view! {
                            <p class=class data-testid="kv-check-result" data-error=c.error_pct.map(|e| format!("{e:.2}")).unwrap_or_default()>
                                {move || i18n.ta("vram-check-line", &[
                                    ("predicted", c.predicted_tokens.into()),
                                    ("observed", c.observed.kv_tokens.unwrap_or(0).into()),
                                    ("error", err.clone().into()),
                                    ("gpu", format!("{:.0}", c.gpu_gib).into()),
                                    ("source", i18n.t(&format!("vram-check-source-{}", c.gpu_source)).into()),
                                ])}
                                {c.observed.kv_gib.map(|kv| {
                                    let predicted = format!("{:.2}", c.predicted_kv_gib);
                                    view! { " " {move || i18n.ta("vram-check-memory", &[("observed", format!("{kv:.2}").into()), ("predicted", predicted.clone().into())])} }
                                })}
                                {c.calibrated_from_ms.map(|at| {
                                    let when = crate::i18n::time_utc(at);
                                    view! { " " <span data-testid="kv-check-calibrated">{move || i18n.ta("vram-check-calibrated", &[("at", when.clone().into())])}</span> }
                                })}
                                {c.observed.max_concurrency.map(|x| {
                                    let predicted = format!("{:.2}", c.predicted_concurrency);
                                    view! { " " {move || i18n.ta("vram-check-concurrency", &[("observed", format!("{x:.2}").into()), ("predicted", predicted.clone().into())])} }
                                })}
                            </p>
                        }.into_any()
                    }
                    Err(e) => view! { <p class="muted" data-testid="kv-check-none">{e.to_string()}</p> }.into_any(),
                })}
            </Transition>
        </section>
    }
}

/// A profile's prediction on this host: verdict, KV tokens with the range the unknown inputs
/// allow, concurrency, the engine path, whether it was calibrated from a start, and the
/// arithmetic. `testid` names the block (the editor and the calculator page both show one).
#[component]
pub fn PredictionView(prediction: VramPrediction, testid: &'static str) -> impl IntoView {
    let i18n = use_i18n();
    let r = prediction.report.clone();
    let verdict = r.verdict;
    let range = format!("{}…{}", r.kv_tokens_range.0, r.kv_tokens_range.1);
    let budget = move || {
        format!(
            "{} ({}…{})",
            i18n.gib(r.kv_budget_gib, 2),
            i18n.num(r.kv_budget_range_gib.0, 2),
            i18n.num(r.kv_budget_range_gib.1, 2)
        )
    };
    let (gpu_name, gpu_gib, gpu_source) = (
        prediction.gpu_name.clone(),
        prediction.gpu_gib,
        prediction.gpu_source.clone(),
    );
    let gpu = move || {
        format!(
            "{} ({}, {})",
            gpu_name,
            i18n.gib(gpu_gib, 0),
            i18n.t(&format!("vram-check-source-{gpu_source}"))
        )
    };
    let calibrated = prediction.calibrated_from_ms.map(crate::i18n::time_utc);
    let version = prediction.engine_version.clone();
    let ctx = prediction.ctx;
    let is_calibrated = calibrated.is_some().to_string();
    let bars = segments(&r, prediction.gpu_gib);
    let (tp, curve) = (prediction.tp.max(1), prediction.curve.clone());
    view! {
        <div class="vram-result" data-testid=testid data-verdict=verdict.id() data-marginal=r.marginal.to_string() data-calibrated=is_calibrated>
            <p class="verdict"><strong>{move || i18n.t(&format!("vram-verdict-{}", verdict.id()))}</strong>
                {r.marginal.then(|| view! { " " <span class="warning">{move || i18n.t("vram-marginal")}</span> })}
            </p>
            <dl class="facts">
                <dt>{move || i18n.t("vram-gpu")}</dt><dd>{gpu}</dd>
                <dt>{move || i18n.t("vram-engine-version")}</dt><dd>{version}</dd>
                <dt>{move || i18n.t("vram-weights-per-gpu")}</dt><dd>{move || i18n.gib(r.weights_per_gpu_gib, 2)}</dd>
                <dt>{move || i18n.t("vram-budget")}</dt><dd>{budget}</dd>
                <dt>{move || i18n.t("vram-kv-tokens")}</dt><dd data-testid=format!("{testid}-tokens")>{r.kv_tokens.to_string()}" ("{range}")"</dd>
                <dt>{move || i18n.ta("vram-concurrency-at", &[("ctx", ctx.into())])}</dt><dd>{move || format!("{}×", i18n.num(r.max_concurrency, 2))}</dd>
                <dt>{move || i18n.t("vram-path")}</dt><dd>{r.path.clone()}</dd>
            </dl>
            <div class="vram-picture">
                <VramBars segments=bars gpu_gib=gpu_gib gpus=tp/>
                <ConcurrencyCurve points=curve chosen=ctx/>
            </div>
            <p class="muted" data-testid=format!("{testid}-calibration")>{move || match &calibrated {
                Some(at) => i18n.ta("vram-check-calibrated", &[("at", at.clone().into())]),
                None => i18n.t("vram-not-calibrated"),
            }}</p>
            <details>
                <summary>{move || i18n.t("vram-arithmetic")}</summary>
                <pre class="argv">{r.arithmetic.join("\n")}</pre>
            </details>
        </div>
    }
}

/// The calculator page's profile section: the stored profile as this host will start it,
/// calibrated from its own starts.
#[component]
fn ProfilePrediction() -> impl IntoView {
    let i18n = use_i18n();
    let profiles = crate::api::wire::data(|| (), |_| list_profiles());
    let chosen = RwSignal::new(String::new());
    let prediction = crate::api::wire::data(
        move || chosen.get(),
        |name| async move {
            if name.is_empty() {
                None
            } else {
                Some(predict_profile_vram(name, None).await)
            }
        },
    );
    view! {
        <section class="vram-profile">
            <h2>{move || i18n.t("vram-profile-title")}</h2>
            <label class="vram-field">
                <span>{move || i18n.t("vram-profile")}</span>
                <Transition fallback=|| ()>
                    {move || profiles.get().map(|r| match r {
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                        Ok(list) => view! {
                            <select data-testid="vram-profile" on:change=move |ev| chosen.set(event_target_value(&ev))>
                                <option value="">"—"</option>
                                {list.iter().map(|p| view! { <option value=p.name.clone()>{p.name.clone()}</option> }).collect_view()}
                            </select>
                        }.into_any(),
                    })}
                </Transition>
            </label>
            <Transition fallback=|| ()>
                {move || prediction.get().flatten().map(|r| match r {
                    Ok(p) => on_demand::prediction(PredictionArgs { prediction: p, testid: "vram-profile-result" }),
                    Err(e) => view! { <p class="muted" data-testid="vram-profile-none">{e.to_string()}</p> }.into_any(),
                })}
            </Transition>
        </section>
    }
}
