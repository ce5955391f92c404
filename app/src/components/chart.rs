//! A chart: a `div` that uPlot draws into, fed the console's JSON description of it
//! ([`crate::charts::chart`]). uPlot (from npm at build time) is served by the console: no
//! CDN, so it works air-gapped; the first chart shown on a page loads it (a chart in a hidden
//! section waits until it is shown). The chart is made once and then only given new points;
//! new lines, a new language or colour scheme make it again.

use leptos::prelude::*;

#[cfg(feature = "hydrate")]
mod glue {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen(inline_js = r#"
// The chart script (uPlot and its stylesheet, app/assets/charts.js) is loaded only by pages
// that draw a chart, once, from the address the server wrote on <html data-charts>
// (content-hashed in a release).
function rlCharts() {
  if (typeof uPlot !== 'undefined') return Promise.resolve();
  if (window.__rlCharts) return window.__rlCharts;
  const load = (src) => new Promise((ok, fail) => {
    const s = document.createElement('script');
    s.src = src;
    s.onload = ok;
    s.onerror = () => fail(new Error('cannot load ' + src));
    document.head.appendChild(s);
  });
  window.__rlCharts = load(document.documentElement.dataset.charts);
  window.__rlCharts.catch(() => { window.__rlCharts = null; });
  return window.__rlCharts;
}
// Dark axes and rules while the system asks for a dark scheme (the stylesheet follows the same
// query); a chart is made again when the scheme changes under it.
const rlDarkQuery = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
function rlTheme() { return rlDarkQuery && rlDarkQuery.matches ? 'dark' : 'light'; }
if (rlDarkQuery && rlDarkQuery.addEventListener) {
  rlDarkQuery.addEventListener('change', () => {
    document.querySelectorAll('[data-theme]').forEach((el) => {
      if (el._rlDrawn && el.isConnected) rlDraw(el, el._rlDrawn, el._rlLocale);
    });
  });
}
// The line colours operators knew from the console's earlier charts (ECharts' palette).
const RL_COLOURS = ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272', '#fc8452', '#9a60b4'];
const RL_HEIGHT = 190;
const RL_DAY = 86400000;
// Time labels in the browser's zone and the page's language: hours and minutes (seconds too
// when the ticks are under a minute apart), and the day under the first label of a range
// longer than a day and wherever the day changes.
function rlTimeLabels(locale) {
  const minutes = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit' });
  const seconds = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const day = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short' });
  return (u, splits, axis, space, incr) => {
    const time = incr < 60000 ? seconds : minutes;
    let last = null;
    return splits.map((t) => {
      if (t == null) return null;
      const d = new Date(t);
      const dayText = day.format(d);
      if (incr >= RL_DAY) { last = dayText; return dayText; }
      const first = last === null;
      const withDay = first ? u.scales.x.max - u.scales.x.min > RL_DAY : last !== dayText;
      last = dayText;
      return withDay ? time.format(d) + '\n' + dayText : time.format(d);
    });
  };
}
// The legend is the chart's tooltip: the values under the cursor, and the latest ones while
// the cursor is elsewhere.
function rlLegendValue(format) {
  return (u, v, sidx, idx) => {
    if (idx == null) {
      const column = u.data[sidx];
      for (let i = column.length - 1; i >= 0; i--) if (column[i] != null) return format(column[i]);
      return '—';
    }
    return v == null ? '—' : format(v);
  };
}
// A flat line gets an axis around it (all zero: 0 to 1) rather than uPlot's 0 to 100.
function rlValueRange(u, min, max) {
  if (min == null || max == null) return [0, 1];
  if (min === max) return [Math.min(0, min), Math.max(0, max) + Math.max(1, Math.abs(max) * 0.1)];
  return uPlot.rangeNum(min, max, 0.1, true);
}
function rlOptions(el, spec, theme, locale) {
  const dark = theme === 'dark';
  const ink = dark ? '#c9d1d9' : '#4a4f57';
  const rule = dark ? 'rgba(255,255,255,0.10)' : 'rgba(0,0,0,0.08)';
  const num = new Intl.NumberFormat(locale, { maximumFractionDigits: 3 });
  const stamp = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const axis = () => ({ stroke: ink, grid: { stroke: rule, width: 1 }, ticks: { stroke: rule, width: 1 } });
  const lines = spec.labels.map((label, i) => ({
    label,
    stroke: RL_COLOURS[i % RL_COLOURS.length],
    width: 1.5,
    spanGaps: false,
    points: { show: false },
    value: rlLegendValue((v) => num.format(v)),
  }));
  return {
    width: Math.max(el.clientWidth, 100),
    height: RL_HEIGHT,
    ms: 1,
    series: [{ label: spec.time, value: rlLegendValue((t) => stamp.format(new Date(t))) }].concat(lines),
    scales: {
      // The range the console chose (the points held), read at each redraw.
      x: { time: true, range: (u, min, max) => (el._rlSpec && el._rlSpec.range) || [min, max] },
      y: spec.percent ? { range: [0, 100] } : { range: rlValueRange },
    },
    axes: [
      Object.assign(axis(), { space: 70, values: rlTimeLabels(locale) }),
      Object.assign(axis(), { size: 50, values: (u, splits) => splits.map((v) => (v == null ? '' : num.format(v))) }),
    ],
    legend: { live: true },
  };
}
function rlDraw(el, json, locale) {
  const theme = rlTheme();
  const spec = JSON.parse(json);
  el._rlSpec = spec;
  const data = [spec.x].concat(spec.y);
  // New lines, axis kind, scheme or language: a new chart; new points: the same one.
  const shape = JSON.stringify([spec.time, spec.labels, spec.percent, theme, locale]);
  let chart = el._rlChart;
  if (chart && el._rlShape !== shape) {
    chart.destroy();
    chart = null;
  }
  if (chart) {
    chart.setData(data);
  } else {
    el._rlChart = new uPlot(rlOptions(el, spec, theme, locale), data, el);
    el._rlShape = shape;
    el.dataset.theme = theme;
    if (!el._rlResize) {
      el._rlResize = new ResizeObserver(() => {
        const c = el._rlChart;
        if (c && el.clientWidth > 0 && c.width !== el.clientWidth) c.setSize({ width: el.clientWidth, height: RL_HEIGHT });
      });
      el._rlResize.observe(el);
    }
  }
  el._rlDrawn = json;
  el._rlLocale = locale;
}
export function rl_chart_set(el, json, locale) {
  el._rlWanted = json;
  el._rlWantedLocale = locale;
  // A chart in a hidden section (the engine page shows one at a time) waits until it is shown:
  // no chart script loaded and nothing drawn for a section no one has opened. A
  // ResizeObserver sees the element get a size when its section is shown.
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
  rlCharts().then(() => {
    // Descriptions that came while the script loaded: only the latest is drawn, and none once
    // the chart has left the page.
    if (!el.isConnected || el._rlWanted !== json) return;
    delete el.dataset.error;
    rlDraw(el, json, locale);
  }, () => { el.dataset.error = 'charts-missing'; });
}
export function rl_chart_dispose(el) {
  el._rlWanted = null;
  if (el._rlShown) { el._rlShown.disconnect(); el._rlShown = null; }
  if (el._rlResize) { el._rlResize.disconnect(); el._rlResize = null; }
  if (el._rlChart) { el._rlChart.destroy(); el._rlChart = null; }
}
"#)]
    extern "C" {
        pub fn rl_chart_set(el: &web_sys::Element, json: &str, locale: &str);
        pub fn rl_chart_dispose(el: &web_sys::Element);
    }
}

/// A chart drawn from `spec` (the JSON of [`crate::charts::chart`]), redrawn when it changes.
/// `points` is exposed as `data-points` so tests (and curious operators) can see it update.
#[component]
pub fn Chart(
    spec: Signal<String>,
    points: Signal<usize>,
    #[prop(into)] testid: String,
    #[prop(into)] label: Signal<String>,
) -> impl IntoView {
    let node = NodeRef::<leptos::html::Div>::new();
    #[cfg(feature = "hydrate")]
    {
        let i18n = crate::components::use_i18n();
        Effect::new(move |_| {
            let json = spec.get();
            let locale = i18n.lang.get().code();
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
    let _ = spec;
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
