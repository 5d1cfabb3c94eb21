// Plotly (npm: plotly.js-dist-min), loaded only when an answer carries a chart.
import Plotly from "plotly.js-dist-min";

window.Plotly = Plotly;
