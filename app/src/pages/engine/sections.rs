//! The engine page's sections: overview, charts, log, runs, GPU, profile. Each fits a screen
//! instead of one long scroll; the chosen one is in the address (`?section=charts`), so a link
//! to an engine's log or charts opens there, and Back returns to the section before. A section
//! stays mounted while hidden, and the page keeps what the engine's stream brings (points,
//! log, run, GPUs) whichever is shown, so switching shows them current. The charts, the runs
//! and the GPUs are drawn in the browser when first shown, from parts of the bundle of their
//! own (`LazySectionPanel`): the overview, what an operator opens at 3 a.m., loads without
//! their code.

use crate::components::use_i18n;
use crate::pages::on_demand::{drawn, LoadedView};
use leptos::prelude::*;

/// One section of the engine page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Overview,
    Charts,
    Log,
    Runs,
    Gpu,
    Profile,
}

impl Section {
    pub const ALL: [Section; 6] = [
        Section::Overview,
        Section::Charts,
        Section::Log,
        Section::Runs,
        Section::Gpu,
        Section::Profile,
    ];

    /// The value of `?section=` and the suffix of its `engine-section-…` locale key.
    pub fn id(self) -> &'static str {
        match self {
            Section::Overview => "overview",
            Section::Charts => "charts",
            Section::Log => "log",
            Section::Runs => "runs",
            Section::Gpu => "gpu",
            Section::Profile => "profile",
        }
    }

    /// The section an address names; anything else (absent, mistyped, hostile) is the overview.
    pub fn from_query(value: Option<&str>) -> Section {
        Section::ALL
            .into_iter()
            .find(|s| Some(s.id()) == value)
            .unwrap_or(Section::Overview)
    }

    /// This section's address on an engine's page (a profile name is a URL segment as it is:
    /// `domain::profile::valid_name`).
    pub fn href(self, profile: &str) -> String {
        let path = format!("/engines/{profile}");
        match self {
            Section::Overview => path,
            s => format!("{path}?section={}", s.id()),
        }
    }
}

/// The row of section links under the engine's name. Links, not script-only tabs: each
/// section has an address, opens in a new tab, and is reached by Tab and opened by Enter.
#[component]
pub fn SectionNav(profile: String, current: Signal<Section>) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <nav class="sections" aria-label=move || i18n.t("engine-sections")>
            {Section::ALL
                .into_iter()
                .map(|s| {
                    view! {
                        <a
                            href=s.href(&profile)
                            data-noscroll="true"
                            data-testid=format!("section-{}", s.id())
                            aria-current=move || (current.get() == s).then_some("page")
                        >
                            {move || i18n.t(&format!("engine-section-{}", s.id()))}
                        </a>
                    }
                })
                .collect_view()}
        </nav>
    }
}

/// A section's content, hidden (not removed) while another is shown.
#[component]
pub fn SectionPanel(section: Section, current: Signal<Section>, children: Children) -> impl IntoView {
    view! {
        <div class="section" data-section=section.id() hidden=move || current.get() != section>
            {children()}
        </div>
    }
}

/// A section drawn in the browser once first shown, its view from `load` (a part of the bundle
/// of its own: `crate::lazy_pages`), then kept like the others. The server and the hydrating
/// browser both leave it empty (effects run in the browser only, after hydration), so a link
/// to it opens on the page and the section fills in as its part arrives; until then the shown
/// section is `aria-busy` (from the server on, so that assistive technology and tests know the
/// page is not complete yet).
#[component]
pub fn LazySectionPanel<F>(section: Section, current: Signal<Section>, load: F) -> impl IntoView
where
    F: Fn() -> LoadedView + Send + Sync + 'static,
{
    let load = std::sync::Arc::new(load);
    let shown = RwSignal::new(false);
    let loaded = RwSignal::new(false);
    Effect::new(move |_| {
        if current.get() == section && !shown.get_untracked() {
            shown.set(true);
        }
    });
    view! {
        <div
            class="section"
            data-section=section.id()
            hidden=move || current.get() != section
            aria-busy=move || (current.get() == section && !loaded.get()).then_some("true")
        >
            {move || shown.get().then(|| {
                let load = load.clone();
                drawn(move || load(), Some(loaded))
            })}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_names_its_section_and_anything_else_is_the_overview() {
        for s in Section::ALL {
            assert_eq!(Section::from_query(Some(s.id())), s);
        }
        for odd in [
            None,
            Some(""),
            Some("Charts"),
            Some("log "),
            Some("../admin"),
            Some("<script>"),
        ] {
            assert_eq!(Section::from_query(odd), Section::Overview, "{odd:?}");
        }
        assert_eq!(Section::Overview.href("demo-vllm"), "/engines/demo-vllm");
        assert_eq!(Section::Log.href("demo-vllm"), "/engines/demo-vllm?section=log");
    }
}
