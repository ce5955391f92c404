//! The Models page: the model directories under the models root, each with its shape and
//! weight size, and a verification against the air-gap rules (metadata files, safetensors
//! only, index against shards, every file against SHA256SUMS) with a progress bar while the
//! files are hashed. What a verification found stays on the page until the console restarts
//! (and in the journal).

use crate::api::{get_model_verify, list_models, start_model_verify, ModelInfo, ModelVerifyState};
use crate::components::use_i18n;
use crate::domain::modelcheck::Level;
use crate::pages::ErrorNote;
use leptos::prelude::*;

#[component]
pub fn ModelsPage() -> impl IntoView {
    let i18n = use_i18n();
    let models = crate::api::wire::data(|| (), |_| list_models());
    view! {
        <section class="models">
            <div class="page-head"><h1>{move || i18n.t("models-title")}</h1></div>
            <p class="muted">{move || i18n.t("models-intro")}</p>
            <Transition fallback=|| ()>
                {move || models.get().map(|r| match r {
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                    Ok(list) if list.is_empty() => view! { <p class="muted" data-testid="models-none">{move || i18n.t("models-none")}</p> }.into_any(),
                    Ok(list) => view! {
                        <ul class="model-list">
                            {list.into_iter().map(|m| view! { <ModelRow model=m/> }).collect_view()}
                        </ul>
                    }.into_any(),
                })}
            </Transition>
        </section>
    }
}

/// One model directory: its facts, its last verification, and the button to run one.
#[component]
fn ModelRow(model: ModelInfo) -> impl IntoView {
    let i18n = use_i18n();
    let name = model.name.clone();
    let state: RwSignal<ModelVerifyState> = RwSignal::new(ModelVerifyState::default());
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let refresh = {
        let name = name.clone();
        move || {
            let name = name.clone();
            leptos::task::spawn_local(async move {
                if let Ok(next) = get_model_verify(name).await {
                    if state.with_untracked(|cur| *cur != next) {
                        state.set(next);
                    }
                }
            });
        }
    };
    #[cfg(feature = "hydrate")]
    {
        refresh();
        let tick = refresh.clone();
        if let Ok(handle) = set_interval_with_handle(
            move || {
                if state.with_untracked(|s| s.running) {
                    tick();
                }
            },
            std::time::Duration::from_millis(500),
        ) {
            on_cleanup(move || handle.clear());
        }
    }
    let start = {
        let name = name.clone();
        let refresh = refresh.clone();
        move |_| {
            let name = name.clone();
            let refresh = refresh.clone();
            state.update(|s| s.running = true);
            leptos::task::spawn_local(async move {
                match start_model_verify(name).await {
                    Ok(()) => error.set(None),
                    Err(e) => error.set(Some(e.to_string())),
                }
                refresh();
            });
        }
    };
    let weights = format!(
        "{} ({})",
        use_i18n().gib(model.weights_bytes as f64 / (1u64 << 30) as f64, 2),
        model.weights_source
    );
    let shape = format!(
        "{} layers, hidden {}, {} heads / {} KV heads, context {}",
        model.shape.layers, model.shape.hidden, model.shape.heads, model.shape.kv_heads, model.shape.max_position
    );
    let operator = crate::components::can(crate::domain::auth::Role::Operator);
    view! {
        <li class="model" data-testid="model" data-name=name.clone()>
            <h2>{name.clone()}</h2>
            <p class="muted">{shape}" · "{weights}</p>
            {operator.then(|| view! {
                <button type="button" data-testid="model-verify" disabled=move || state.with(|s| s.running) on:click=start>
                    {move || i18n.t("models-verify")}
                </button>
            })}
            {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            {move || {
                let s = state.get();
                let p = s.progress;
                let bar = s.running.then(|| {
                    let pct = p.done_bytes.saturating_mul(100).checked_div(p.total_bytes).unwrap_or(0);
                    view! {
                        <p data-testid="model-progress" data-pct=pct.to_string()>
                            <progress max="100" value=pct.to_string()></progress>" "
                            {move || i18n.ta("models-progress", &[
                                ("pct", pct.into()),
                                ("done", format!("{:.2}", p.done_bytes as f64 / 1e9).into()),
                                ("total", format!("{:.2}", p.total_bytes as f64 / 1e9).into()),
                                ("files", p.done_files.into()),
                                ("count", p.total_files.into()),
                            ])}
                        </p>
                    }
                });
                let result = s.report.map(|r| {
                    let ok = r.ok();
                    let summary = i18n.ta(if ok { "models-verified" } else { "models-not-verified" }, &[
                        ("files", r.files.into()),
                        ("gb", format!("{:.2}", r.bytes as f64 / 1e9).into()),
                        ("hashed", r.hashed_files.into()),
                        ("cached", r.cached_files.into()),
                        ("ms", r.elapsed_ms.into()),
                    ]);
                    let manifest = i18n.t(if r.manifest { "models-manifest-checked" } else { "models-manifest-unchecked" });
                    view! {
                        <div data-testid="model-report" data-ok=ok.to_string() data-manifest=r.manifest.to_string()>
                            <p class=if ok { "ok" } else { "error" }>{summary}" "{manifest}</p>
                            <ul class="issues">
                                {r.findings.into_iter().map(|f| {
                                    let class = match f.level {
                                        Level::Error => "error",
                                        Level::Warning => "warning",
                                        Level::Simulated => "muted",
                                    };
                                    let what = i18n.t(&format!("model-finding-{}", f.code));
                                    view! {
                                        <li class=class data-testid="model-finding" data-code=f.code.clone()>
                                            <code>{if f.file.is_empty() { ".".to_string() } else { f.file.clone() }}</code>" "{what}": "{f.detail}
                                        </li>
                                    }
                                }).collect_view()}
                            </ul>
                        </div>
                    }
                });
                let failed = s.error.map(|e| view! { <p class="error" role="alert">{e}</p> });
                view! { {bar} {result} {failed} }
            }}
        </li>
    }
}
