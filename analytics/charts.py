"""Plotly figures as plain dicts (`{"data": [...], "layout": {...}}`).

Plain dicts serialise straight to JSON for the chat and skip plotly's per-figure validation
cost; a test loads every catalogue chart into `plotly.graph_objects.Figure` to prove they
are valid. The same data drives the PDF (see `analytics.pdf`).
"""

from __future__ import annotations

from analytics.result import jsonable

# Okabe & Ito's colour-blind-safe palette (yellow last: it is faint on white).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#000000", "#F0E442"]
MAX_CATEGORIES = 30


def _layout(title: str, x_title: str = "", y_title: str = "", **extra) -> dict:
	layout = {
		"title": {"text": title},
		"margin": {"l": 60, "r": 20, "t": 50, "b": 60},
		"legend": {"orientation": "h"},
		"colorway": PALETTE,
	}
	if x_title:
		layout["xaxis"] = {"title": {"text": x_title}}
	if y_title:
		layout["yaxis"] = {"title": {"text": y_title}}
	layout.update(extra)
	return layout


def line(title: str, x: list, series: dict[str, list], y_title: str = "", x_title: str = "") -> dict:
	data = [
		{"type": "scatter", "mode": "lines+markers", "name": name, "x": list(x), "y": list(y)}
		for name, y in series.items()
	]
	return jsonable({"data": data, "layout": _layout(title, x_title, y_title)})


def trend(
	title: str,
	x: list,
	y: list,
	y_title: str = "",
	forecast: dict | None = None,
	forecast_x: list | None = None,
	anomalies: list[dict] | None = None,
	change_index: int | None = None,
) -> dict:
	"""A history line with the forecast and its 80% range, anomalies marked, the change point drawn."""
	data: list[dict] = [
		{"type": "scatter", "mode": "lines+markers", "name": "Actual", "x": list(x), "y": list(y)}
	]
	shapes = []
	if forecast and forecast_x:
		fx = [x[-1], *forecast_x] if x else list(forecast_x)
		anchor = [y[-1]] if y else []
		data.append(
			{
				"type": "scatter",
				"mode": "lines",
				"name": "80% range",
				"x": list(forecast_x) + list(reversed(forecast_x)),
				"y": list(forecast["upper"]) + list(reversed(forecast["lower"])),
				"fill": "toself",
				"fillcolor": "rgba(47,111,222,0.15)",
				"line": {"width": 0},
				"hoverinfo": "skip",
			}
		)
		data.append(
			{
				"type": "scatter",
				"mode": "lines+markers",
				"name": "Forecast",
				"x": fx,
				"y": anchor + list(forecast["point"]),
				"line": {"dash": "dash"},
			}
		)
	if anomalies:
		data.append(
			{
				"type": "scatter",
				"mode": "markers",
				"name": "Anomaly",
				"x": [x[a["index"]] for a in anomalies],
				"y": [y[a["index"]] for a in anomalies],
				"marker": {"size": 12, "color": "#e15759", "symbol": "circle-open", "line": {"width": 2}},
			}
		)
	if change_index is not None and 0 < change_index < len(x):
		shapes.append(
			{
				"type": "line",
				"xref": "x",
				"yref": "paper",
				"x0": x[change_index],
				"x1": x[change_index],
				"y0": 0,
				"y1": 1,
				"line": {"dash": "dot", "color": "#888"},
			}
		)
	layout = _layout(title, "", y_title)
	if shapes:
		layout["shapes"] = shapes
	return jsonable({"data": data, "layout": layout})


def bar(title: str, x: list, y: list, y_title: str = "", horizontal: bool = False, name: str = "") -> dict:
	x, y = list(x)[:MAX_CATEGORIES], list(y)[:MAX_CATEGORIES]
	trace = {"type": "bar", "name": name or y_title or title}
	if horizontal:
		trace.update({"x": list(reversed(y)), "y": [str(v) for v in reversed(x)], "orientation": "h"})
	else:
		trace.update({"x": [str(v) for v in x], "y": y})
	return jsonable({"data": [trace], "layout": _layout(title, "", "" if horizontal else y_title)})


def grouped(title: str, x: list, series: dict[str, list], y_title: str = "", stacked: bool = False) -> dict:
	data = [
		{"type": "bar", "name": name, "x": [str(v) for v in x], "y": list(y)} for name, y in series.items()
	]
	return jsonable(
		{"data": data, "layout": _layout(title, "", y_title, barmode="stack" if stacked else "group")}
	)


def stacked(title: str, x: list, series: dict[str, list], y_title: str = "") -> dict:
	return grouped(title, x, series, y_title, stacked=True)


def pie(title: str, labels: list, values: list) -> dict:
	pairs = [(str(label), v) for label, v in zip(labels, values, strict=False) if v is not None and v > 0]
	trace = {"type": "pie", "labels": [p[0] for p in pairs], "values": [p[1] for p in pairs], "hole": 0.4}
	return jsonable({"data": [trace], "layout": _layout(title)})


def pareto(title: str, labels: list, values: list, total: float, y_title: str = "") -> dict:
	"""Bars of the largest contributors with the cumulative share of the total on a second axis."""
	labels, values = [str(v) for v in labels][:MAX_CATEGORIES], list(values)[:MAX_CATEGORIES]
	running, cumulative = 0.0, []
	for v in values:
		running += v
		cumulative.append(round(running / total * 100, 1) if total else None)
	data = [
		{"type": "bar", "name": y_title or "Value", "x": labels, "y": values},
		{
			"type": "scatter",
			"mode": "lines+markers",
			"name": "Cumulative %",
			"x": labels,
			"y": cumulative,
			"yaxis": "y2",
		},
	]
	layout = _layout(title, "", y_title)
	layout["yaxis2"] = {
		"overlaying": "y",
		"side": "right",
		"range": [0, 105],
		"title": {"text": "Cumulative %"},
	}
	return jsonable({"data": data, "layout": layout})


def heatmap(title: str, x: list, y: list, z: list[list], z_title: str = "") -> dict:
	trace = {
		"type": "heatmap",
		"x": [str(v) for v in x],
		"y": [str(v) for v in y],
		"z": z,
		"colorscale": "Blues",
		"colorbar": {"title": {"text": z_title}},
	}
	layout = _layout(title)
	layout["yaxis"] = {"autorange": "reversed"}
	return jsonable({"data": [trace], "layout": layout})


def histogram(title: str, edges: list, counts: list, x_title: str = "", y_title: str = "count") -> dict:
	labels = [f"{_edge(a)}–{_edge(b)}" for a, b in zip(edges[:-1], edges[1:], strict=False)]
	return bar(title, labels, list(counts), y_title=y_title) | {"layout": _layout(title, x_title, y_title)}


def _edge(value: float) -> str:
	return f"{value:,.0f}" if abs(value) >= 10 or float(value).is_integer() else f"{value:.2g}"


def with_line(figure: dict, name: str, x: list, y: list, secondary: bool = False) -> dict:
	"""Add a line trace (e.g. a rate on a second axis) to a bar figure."""
	trace = {"type": "scatter", "mode": "lines+markers", "name": name, "x": [str(v) for v in x], "y": list(y)}
	if secondary:
		trace["yaxis"] = "y2"
		figure["layout"]["yaxis2"] = {"overlaying": "y", "side": "right", "title": {"text": name}}
	figure["data"].append(jsonable(trace))
	return figure
