//! An ECharts chart: a `div` that ECharts draws into, fed a JSON option. ECharts itself
//! (from npm at build time) is served by the console: no CDN, so it works air-gapped; the
//! first chart shown on a page loads it (a chart in a hidden section waits until it is shown).
//! The instance is created once and then only given new options.

use leptos::prelude::*;

#[cfg(feature = "hydrate")]
mod glue {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen(inline_js = r#"
// ECharts (the console's own build, its Russian locale inside) is loaded only by pages that
// draw a chart, once, from the address the server wrote on <html data-echarts>
// (content-hashed in a release).
function rlEcharts() {
  if (typeof echarts !== 'undefined') return Promise.resolve();
  if (window.__rlEcharts) return window.__rlEcharts;
  const root = document.documentElement;
  const load = (src) => new Promise((ok, fail) => {
    const s = document.createElement('script');
    s.src = src;
    s.onload = ok;
    s.onerror = () => fail(new Error('cannot load ' + src));
    document.head.appendChild(s);
  });
  window.__rlEcharts = load(root.dataset.echarts);
  window.__rlEcharts.catch(() => { window.__rlEcharts = null; });
  return window.__rlEcharts;
}
// ECharts' dark theme while the system asks for a dark scheme (the stylesheet follows the same
// query); a chart is made again when the scheme changes under it.
const rlDarkQuery = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
function rlTheme() { return rlDarkQuery && rlDarkQuery.matches ? 'dark' : null; }
if (rlDarkQuery && rlDarkQuery.addEventListener) {
  rlDarkQuery.addEventListener('change', () => {
    document.querySelectorAll('[data-theme]').forEach((el) => {
      if (el._rlDrawn && el.isConnected) rlDraw(el, el._rlDrawn, el._rlLocale);
    });
  });
}
function rlDraw(el, json, locale) {
  const theme = rlTheme();
  let chart = echarts.getInstanceByDom(el);
  if (chart && el._rlTheme !== theme) {
    if (el._rlResize) { el._rlResize.disconnect(); el._rlResize = null; }
    chart.dispose();
    chart = null;
  }
  if (!chart) {
    chart = echarts.init(el, theme, { renderer: 'canvas', locale: locale });
    el._rlTheme = theme;
    el.dataset.theme = theme || 'light';
    const ro = new ResizeObserver(() => chart.resize());
    ro.observe(el);
    el._rlResize = ro;
  }
  el._rlDrawn = json;
  el._rlLocale = locale;
  const option = JSON.parse(json);
  // The theme's own dark blue would box each chart in; the page's panel shows through instead.
  if (theme && option.backgroundColor === undefined) option.backgroundColor = 'transparent';
  chart.setOption(option, { notMerge: true, lazyUpdate: true });
}
export function rl_chart_set(el, json, locale) {
  el._rlWanted = json;
  el._rlWantedLocale = locale;
  // A chart in a hidden section (the engine page shows one at a time) waits until it is shown:
  // no ECharts loaded and nothing drawn for a section no one has opened. A ResizeObserver sees
  // the element get a size when its section is shown.
  if (!el._rlDrawn && el.getClientRects().length === 0) {
    if (!el._rlShown) {
      el._rlShown = new ResizeObserver(() => {
        if (el.getClientRects().length === 0) return;
        el._rlShown.disconnect();
        el._rlShown = null;
        if (el._rlWanted && el.isConnected) rl_chart_set(el, el._rlWanted, el._rlWantedLocale);
      });
      el._rlShown.observe(el);
    }
    return;
  }
  rlEcharts().then(() => {
    // Options that came while ECharts loaded: only the latest is drawn, and none once the
    // chart has left the page.
    if (!el.isConnected || el._rlWanted !== json) return;
    delete el.dataset.error;
    rlDraw(el, json, locale);
  }, () => { el.dataset.error = 'echarts-missing'; });
}
export function rl_chart_dispose(el) {
  el._rlWanted = null;
  if (el._rlShown) { el._rlShown.disconnect(); el._rlShown = null; }
  if (typeof echarts === 'undefined') return;
  if (el._rlResize) { el._rlResize.disconnect(); el._rlResize = null; }
  const chart = echarts.getInstanceByDom(el);
  if (chart) chart.dispose();
}
"#)]
    extern "C" {
        pub fn rl_chart_set(el: &web_sys::Element, json: &str, locale: &str);
        pub fn rl_chart_dispose(el: &web_sys::Element);
    }
}

/// A chart drawn from `option` (ECharts JSON), redrawn when it changes. `points` is exposed as
/// `data-points` so tests (and curious operators) can see it update.
#[component]
pub fn EChart(
    option: Signal<String>,
    points: Signal<usize>,
    #[prop(into)] testid: String,
    #[prop(into)] label: Signal<String>,
) -> impl IntoView {
    let node = NodeRef::<leptos::html::Div>::new();
    #[cfg(feature = "hydrate")]
    {
        let i18n = crate::components::use_i18n();
        Effect::new(move |_| {
            let json = option.get();
            let locale = if i18n.lang.get() == crate::i18n::Lang::Ru {
                "RU"
            } else {
                "EN"
            };
            if let Some(el) = node.get() {
                glue::rl_chart_set(&el, &json, locale);
            }
        });
        on_cleanup(move || {
            if let Some(el) = node.get_untracked() {
                glue::rl_chart_dispose(&el);
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = option;
    view! {
        <div
            class="chart"
            node_ref=node
            role="img"
            aria-label=move || label.get()
            data-testid=testid
            data-points=move || points.get()
        ></div>
    }
}
