"""A dashboard: several analyses for one request, their headline KPIs and charts side by side."""

from __future__ import annotations

from analytics.errors import AnalyticsError
from analytics.result import jsonable

MAX_PANELS = 12


def build(results: list[dict], title: str = "Dashboard") -> dict:
	"""Gather finished results into one dashboard: `{"title", "kpis", "panels": [{"key", "title", "chart", ...}]}`."""
	if not results:
		raise AnalyticsError("A dashboard needs at least one analysis result")
	panels, kpis = [], []
	for result in results[:MAX_PANELS]:
		panels.append(
			{
				"key": result.get("key"),
				"title": result.get("title"),
				"chart": result.get("chart"),
				"kpis": (result.get("kpis") or [])[:4],
				"observations": (result.get("observations") or [])[:3],
				"watch_outs": (result.get("watch_outs") or [])[:2],
				# The figures behind the chart and the period they cover, for the PDF.
				"table": result.get("table"),
				"period": _period(result.get("params") or {}),
			}
		)
		kpis += [{**k, "analysis": result.get("key")} for k in (result.get("kpis") or [])[:2]]
	return jsonable({"title": title, "kpis": kpis, "panels": panels})


def run_many(keys: list[str], data: object, params: dict | None = None, title: str = "Dashboard") -> dict:
	"""Run several analyses on the same data (shared parameters apply where an analysis has them)."""
	from analytics.catalog import get
	from analytics.runner import Shared, run

	# Each dataset is normalised once for all the panels, not once per panel.
	shared = Shared([get(key) for key in keys])
	results = []
	for key in keys:
		analysis = get(key)
		own = {k: v for k, v in (params or {}).items() if k in {p.name for p in analysis.all_params()}}
		source = data
		if isinstance(data, dict) and any(name in data for name in analysis.needs):
			source = {name: data[name] for name in analysis.needs if name in data}
		results.append(run(key, source, own, shared=shared))
	return build(results, title)


def _period(params: dict) -> str | None:
	start, end = params.get("start"), params.get("end")
	if start and end:
		return f"{start} – {end}"
	if start:
		return f"from {start}"
	if end:
		return f"until {end}"
	return None
