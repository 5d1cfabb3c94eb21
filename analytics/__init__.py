"""Frappe-free analytics: the data contract, the catalogue of analyses, forecasts and charts.

contract     canonical datasets (sales, receivables, gl, ...) and their normalisation
catalog/     the 100 standard analyses, registered as data by category
runner       run(key, data, params) -> result; summary_for_model(result) in result
blocks       building blocks: trend, breakdown, ratios, ageing, ABC, distribution
forecast, smoothing, seasonality, backtest, anomalies, changepoint   the shared statistics
compare      two periods or two segments, with the drivers of the difference
charts, dashboard, pdf   Plotly figure dicts, dashboards, and their PDF (matplotlib)
cli          the `noviz-agent analytics` command
"""
