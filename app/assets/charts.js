// The console's chart script: uPlot (line charts on a time axis, canvas, ~20 KiB compressed)
// and its stylesheet, bundled by esbuild (pinned in package-lock.json) into one minified
// script that sets `window.uPlot`. scripts/build-site.sh runs it; app/src/components/chart.rs
// turns the console's chart description (app/src/charts.rs) into uPlot's options.
import uPlot from "uplot";
import css from "uplot/dist/uPlot.min.css";

const style = document.createElement("style");
style.textContent = css;
document.head.appendChild(style);
window.uPlot = uPlot;
