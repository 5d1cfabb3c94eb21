"""Plotly figures, built with `plotly.graph_objects` and handed on as the JSON dict plotly.js draws.

Every figure is made from plotly's typed objects (a misspelt property or a wrong value fails
here, not in the person's browser) and leaves as `{"data": [...], "layout": {...}}`, the form
the desk chat passes to `Plotly.newPlot` and the PDF reads (see `analytics.pdf`). Plotly's
default template is not sent: the desk draws with plotly.js's own defaults and this palette.

`scoped(figure, result)` puts whose figures they are under the title: company, currency,
period, and a last period that is not over yet.
"""

from __future__ import annotations

from analytics.result import jsonable

# Okabe & Ito's colour-blind-safe palette (yellow last: it is faint on white).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#000000", "#F0E442"]
MAX_CATEGORIES = 30


def _go():
	import plotly.graph_objects as go  # a few hundred ms to import: only when a chart is drawn

	return go


def _figure(traces: list, layout) -> dict:
	"""A validated figure as plain JSON types, without plotly.py's default template."""
	go = _go()
	figure = go.Figure(data=traces, layout=layout)
	out = figure.to_plotly_json()
	out["layout"].pop("template", None)
	return jsonable(out)


def _layout(title: str, x_title: str = "", y_title: str = "", **extra):
	go = _go()
	layout = go.Layout(
		title={"text": title},
		margin={"l": 60, "r": 20, "t": 50, "b": 60},
		legend={"orientation": "h"},
		colorway=PALETTE,
		template="none",
		**extra,
	)
	if x_title:
		layout.xaxis.title.text = x_title
	if y_title:
		layout.yaxis.title.text = y_title
	return layout


def _lines(name: str, x: list, y: list, **extra):
	return _go().Scatter(mode="lines+markers", name=name, x=list(x), y=list(y), **extra)


def line(title: str, x: list, series: dict[str, list], y_title: str = "", x_title: str = "") -> dict:
	return _figure([_lines(name, x, y) for name, y in series.items()], _layout(title, x_title, y_title))


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
	go = _go()
	traces = [_lines("Actual", x, y)]
	if forecast and forecast_x:
		fx = [x[-1], *forecast_x] if x else list(forecast_x)
		anchor = [y[-1]] if y else []
		traces.append(
			go.Scatter(
				mode="lines",
				name="80% range",
				x=list(forecast_x) + list(reversed(forecast_x)),
				y=list(forecast["upper"]) + list(reversed(forecast["lower"])),
				fill="toself",
				fillcolor="rgba(47,111,222,0.15)",
				line={"width": 0},
				hoverinfo="skip",
			)
		)
		traces.append(_lines("Forecast", fx, anchor + list(forecast["point"]), line={"dash": "dash"}))
	if anomalies:
		traces.append(
			go.Scatter(
				mode="markers",
				name="Anomaly",
				x=[x[a["index"]] for a in anomalies],
				y=[y[a["index"]] for a in anomalies],
				marker={"size": 12, "color": "#e15759", "symbol": "circle-open", "line": {"width": 2}},
			)
		)
	layout = _layout(title, "", y_title)
	if change_index is not None and 0 < change_index < len(x):
		layout.shapes = [
			go.layout.Shape(
				type="line",
				xref="x",
				yref="paper",
				x0=x[change_index],
				x1=x[change_index],
				y0=0,
				y1=1,
				line={"dash": "dot", "color": "#888"},
			)
		]
	return _figure(traces, layout)


def bar(title: str, x: list, y: list, y_title: str = "", horizontal: bool = False, name: str = "") -> dict:
	x, y = list(x)[:MAX_CATEGORIES], list(y)[:MAX_CATEGORIES]
	go = _go()
	if horizontal:
		trace = go.Bar(
			name=name or y_title or title,
			x=list(reversed(y)),
			y=[str(v) for v in reversed(x)],
			orientation="h",
		)
	else:
		trace = go.Bar(name=name or y_title or title, x=[str(v) for v in x], y=y)
	return _figure([trace], _layout(title, "", "" if horizontal else y_title))


def grouped(title: str, x: list, series: dict[str, list], y_title: str = "", stacked: bool = False) -> dict:
	go = _go()
	traces = [go.Bar(name=name, x=[str(v) for v in x], y=list(y)) for name, y in series.items()]
	return _figure(traces, _layout(title, "", y_title, barmode="stack" if stacked else "group"))


def stacked(title: str, x: list, series: dict[str, list], y_title: str = "") -> dict:
	return grouped(title, x, series, y_title, stacked=True)


def pie(title: str, labels: list, values: list) -> dict:
	pairs = [(str(label), v) for label, v in zip(labels, values, strict=False) if v is not None and v > 0]
	trace = _go().Pie(labels=[p[0] for p in pairs], values=[p[1] for p in pairs], hole=0.4)
	return _figure([trace], _layout(title))


def pareto(title: str, labels: list, values: list, total: float, y_title: str = "") -> dict:
	"""Bars of the largest contributors with the cumulative share of the total on a second axis."""
	go = _go()
	labels, values = [str(v) for v in labels][:MAX_CATEGORIES], list(values)[:MAX_CATEGORIES]
	running, cumulative = 0.0, []
	for v in values:
		running += v
		cumulative.append(round(running / total * 100, 1) if total else None)
	traces = [
		go.Bar(name=y_title or "Value", x=labels, y=values),
		_lines("Cumulative %", labels, cumulative, yaxis="y2"),
	]
	layout = _layout(title, "", y_title)
	layout.yaxis2 = {"overlaying": "y", "side": "right", "range": [0, 105], "title": {"text": "Cumulative %"}}
	return _figure(traces, layout)


def heatmap(title: str, x: list, y: list, z: list[list], z_title: str = "") -> dict:
	trace = _go().Heatmap(
		x=[str(v) for v in x],
		y=[str(v) for v in y],
		z=z,
		colorscale="Blues",
		colorbar={"title": {"text": z_title}},
	)
	layout = _layout(title)
	layout.yaxis.autorange = "reversed"
	return _figure([trace], layout)


def histogram(title: str, edges: list, counts: list, x_title: str = "", y_title: str = "count") -> dict:
	labels = [f"{_edge(a)}–{_edge(b)}" for a, b in zip(edges[:-1], edges[1:], strict=False)]
	trace = _go().Bar(name=y_title or title, x=labels[:MAX_CATEGORIES], y=list(counts)[:MAX_CATEGORIES])
	return _figure([trace], _layout(title, x_title, y_title))


def _edge(value: float) -> str:
	return f"{value:,.0f}" if abs(value) >= 10 or float(value).is_integer() else f"{value:.2g}"


def with_line(figure: dict, name: str, x: list, y: list, secondary: bool = False) -> dict:
	"""Add a line trace (e.g. a rate on a second axis) to a bar figure."""
	layout = _go().Layout({**figure.get("layout", {}), "template": "none"})
	if secondary:
		layout.yaxis2 = {"overlaying": "y", "side": "right", "title": {"text": name}}
	line_trace = _lines(name, [str(v) for v in x], y, yaxis="y2" if secondary else None)
	built = _figure([*figure.get("data", []), line_trace], layout)
	figure.clear()
	figure.update(built)
	return figure


# --- whose figures a chart shows --------------------------------------------------------


def scope_line(
	company: str | None = None,
	currency: str | None = None,
	period: str | None = None,
	partial: str | None = None,
) -> str:
	"""`Acme Ltd · USD · 2025-01 – 2026-11 (2026-11 so far)`: the parts that are known, in that order."""
	shown = (
		f"{period} ({partial} so far)" if period and partial else period or (partial and f"{partial} so far")
	)
	return " · ".join(str(part) for part in (company, currency, shown) if part)


def period_of(result: dict) -> str | None:
	"""The period a result covers: its own `period`, its start and end, or its series' first and last labels."""
	period = result.get("period")
	if isinstance(period, dict):
		if period.get("as_of"):
			return f"as of {period['as_of']}"
		if period.get("start") or period.get("end"):
			return f"{period.get('start') or '…'} – {period.get('end') or '…'}"
	elif period:
		return str(period)
	params = result.get("params") or {}
	start, end = params.get("start"), params.get("end")
	if start or end:
		return f"{start or '…'} – {end or params.get('as_of') or '…'}"
	labels = (result.get("series") or {}).get("labels") or []
	if labels:
		return f"{labels[0]} – {labels[-1]}" if len(labels) > 1 else str(labels[0])
	if params.get("as_of"):
		return f"as of {params['as_of']}"
	return None


def partial_of(result: dict) -> str | None:
	"""The label of a last period that is still running, when the result marks one."""
	partial = (result.get("series") or {}).get("partial") or result.get("partial")
	if isinstance(partial, dict):
		return partial.get("label")
	return partial if isinstance(partial, str) else None


def scoped(figure: dict, result: dict) -> dict:
	"""A copy of `figure` whose title is followed by the company, currency and period of `result`
	(a partial last period marked), as plotly's title subtitle; `layout.meta.scope` keeps the parts."""
	scope = {
		"company": result.get("company"),
		"currency": result.get("currency"),
		"period": period_of(result),
		"partial": partial_of(result),
	}
	layout = dict(figure.get("layout") or {})
	title = layout.get("title")
	title = dict(title) if isinstance(title, dict) else {"text": title or ""}
	line_text = scope_line(**scope)
	if line_text:
		title["subtitle"] = {"text": line_text}
	else:
		title.pop("subtitle", None)
	layout["title"] = title
	# Room for the second line under the title.
	margin = dict(layout.get("margin") or {})
	margin["t"] = max(int(margin.get("t") or 0), 70 if line_text else 50)
	layout["margin"] = margin
	layout["meta"] = {**(layout.get("meta") if isinstance(layout.get("meta"), dict) else {}), "scope": scope}
	return {**figure, "layout": layout}


def scope_of(figure: dict | None) -> dict:
	"""The scope `scoped` put on a figure, or {}."""
	meta = ((figure or {}).get("layout") or {}).get("meta")
	return dict(meta.get("scope") or {}) if isinstance(meta, dict) else {}
