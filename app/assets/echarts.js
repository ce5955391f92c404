// The console's own ECharts build: only what it draws (line charts on a time axis, with a
// grid, a legend and an axis tooltip, on canvas), its dark theme (registered by the core) and
// the Russian locale, bundled by esbuild (pinned in package-lock.json) into one minified script
// that sets `window.echarts`. scripts/build-site.sh runs it; a chart type or component the
// console starts to use must be added here (app/src/charts.rs builds the options).
import * as echarts from "echarts/core";
import { LineChart } from "echarts/charts";
import { GridComponent, LegendComponent, TooltipComponent } from "echarts/components";
import { LabelLayout } from "echarts/features";
import { CanvasRenderer } from "echarts/renderers";
import langRU from "echarts/lib/i18n/langRU.js";

echarts.use([LineChart, GridComponent, LegendComponent, TooltipComponent, LabelLayout, CanvasRenderer]);
echarts.registerLocale("RU", langRU);
window.echarts = echarts;
