"""Comparing two periods or two segments of the same analysis, with the drivers of the difference.

The analysis runs on each side; KPIs with the same label are set against each other; the
drivers are the parties, items, territories... whose share of the dataset's measure moved
most, so "revenue fell 12%" comes with "mostly Customer A (-40k) and Item X (-25k)".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import charts
from analytics.contract import DATASETS
from analytics.errors import AnalyticsError
from analytics.result import jsonable, num, pct_change, rounded, table

MAX_DRIVERS = 5


def drivers(before: pd.DataFrame, after: pd.DataFrame, by: str, value: str, top_n: int = MAX_DRIVERS) -> dict:
	"""Per group of `by`: the measure before and after and the change, largest moves first."""
	a = before.groupby(by)[value].sum() if len(before) else pd.Series(dtype=float)
	b = after.groupby(by)[value].sum() if len(after) else pd.Series(dtype=float)
	joined = pd.DataFrame({"before": a, "after": b}).fillna(0.0)
	joined["change"] = joined["after"] - joined["before"]
	joined = joined.reindex(joined["change"].abs().sort_values(ascending=False, kind="stable").index)
	rows = [
		{"name": str(k), "before": float(r.before), "after": float(r.after), "change": float(r.change)}
		for k, r in joined.iterrows()
	]
	total = float(joined["change"].sum())
	up = [r for r in rows if r["change"] > 0][:top_n]
	down = [r for r in rows if r["change"] < 0][:top_n]
	for r in rows:
		r["share_of_change"] = round(r["change"] / total * 100, 1) if total else None
	return {
		"all": rows,
		"up": up,
		"down": down,
		"rising": int((joined["change"] > 0).sum()),
		"falling": int((joined["change"] < 0).sum()),
		"total_change": total,
	}


def _kpi_changes(a: dict, b: dict) -> list[dict]:
	before = {k["label"]: k for k in a.get("kpis", [])}
	out = []
	for k in b.get("kpis", []):
		other = before.get(k["label"])
		if (
			other is None
			or not isinstance(k.get("value"), int | float)
			or not isinstance(other.get("value"), int | float)
		):
			continue
		item = {"label": k["label"], "a": other["value"], "b": k["value"], "unit": k.get("unit")}
		if k.get("unit") == "%":
			item["change_points"] = rounded(k["value"] - other["value"])
		else:
			item["change"] = pct_change(k["value"], other["value"])
		out.append(item)
	return out


def _driver_sentences(found: dict[str, dict], measure: str) -> list[str]:
	sentences = []
	for by, result in found.items():
		moves = sorted(result["up"] + result["down"], key=lambda r: -abs(r["change"]))[:3]
		if moves:
			sentences.append(
				f"By {by.replace('_', ' ')}: "
				+ ", ".join(f"{r['name']} ({r['change']:+,.0f})" for r in moves)
				+ "."
			)
	return sentences


def _compare(
	key: str, side_a: tuple[str, dict, dict], side_b: tuple[str, dict, dict], params: dict | None
) -> dict:
	from analytics.catalog import get
	from analytics.runner import prepare, run_prepared

	analysis = get(key)
	results, frames = [], []
	for _, data, overrides in (side_a, side_b):
		dims = {analysis.datasets[0]: DATASETS[analysis.datasets[0]].dimensions}
		prepared = prepare(analysis, data, {**(params or {}), **overrides}, dims)
		results.append(run_prepared(analysis, prepared))
		frames.append(prepared)
	primary = analysis.datasets[0]
	spec = DATASETS[primary]
	found: dict[str, dict] = {}
	if spec.measure:
		for by in spec.dimensions:
			if by in frames[0].frames[primary].columns and by in frames[1].frames[primary].columns:
				found[by] = drivers(frames[0].frames[primary], frames[1].frames[primary], by, spec.measure)
	a_total = (
		float(frames[0].frames[primary][spec.measure].sum())
		if spec.measure in frames[0].frames[primary]
		else None
	)
	b_total = (
		float(frames[1].frames[primary][spec.measure].sum())
		if spec.measure in frames[1].frames[primary]
		else None
	)
	name_a, name_b = side_a[0], side_b[0]
	observations = []
	if a_total is not None:
		observations.append(
			f"{spec.measure.capitalize()}: {num(a_total)} for {name_a}, {num(b_total)} for {name_b} "
			f"({'n/a' if pct_change(b_total, a_total) is None else f'{pct_change(b_total, a_total):+.1f}%'})."
		)
	observations += _driver_sentences(found, spec.measure)
	first = next(iter(found.values()), None)
	rows = [
		[r["name"], rounded(r["before"]), rounded(r["after"]), rounded(r["change"])]
		for r in (first or {}).get("all", [])
	]
	chart = None
	if first:
		top = rows[:15]
		chart = charts.bar(
			f"Change in {spec.measure} by {next(iter(found)).replace('_', ' ')}: {name_a} → {name_b}",
			[r[0] for r in top],
			[r[3] for r in top],
			"Change",
			horizontal=True,
		)
	return jsonable(
		{
			"key": key,
			"title": f"{analysis.title}: {name_a} vs {name_b}",
			"a": {"name": name_a, "kpis": results[0].get("kpis", [])},
			"b": {"name": name_b, "kpis": results[1].get("kpis", [])},
			"kpis": [
				{
					"label": f"{spec.measure.capitalize()} change",
					"value": rounded((b_total or 0) - (a_total or 0)),
					"change": pct_change(b_total, a_total),
				}
			]
			if a_total is not None
			else [],
			"kpi_changes": _kpi_changes(results[0], results[1]),
			"drivers": {by: {"up": r["up"], "down": r["down"]} for by, r in found.items()},
			"observations": observations,
			"table": table([next(iter(found), "group"), name_a, name_b, "change"], rows) if rows else None,
			"chart": chart,
			"warnings": results[0].get("warnings", []) + results[1].get("warnings", []),
			"results": results,
		}
	)


def compare_periods(
	key: str, data: object, period_a: tuple[str, str], period_b: tuple[str, str], params: dict | None = None
) -> dict:
	"""Run analysis `key` on two date ranges ((start, end) each) and explain the difference."""
	for name, period in (("period_a", period_a), ("period_b", period_b)):
		if not isinstance(period, list | tuple) or len(period) != 2:
			raise AnalyticsError(f"{name} must be [start, end] dates; got {period!r}")
	label_a = f"{period_a[0]} to {period_a[1]}"
	label_b = f"{period_b[0]} to {period_b[1]}"
	return _compare(
		key,
		(label_a, data, {"start": period_a[0], "end": period_a[1]}),
		(label_b, data, {"start": period_b[0], "end": period_b[1]}),
		params,
	)


def compare_segments(
	key: str, data: object, column: str, segment_a: str, segment_b: str, params: dict | None = None
) -> dict:
	"""Run analysis `key` on the rows where `column` is `segment_a`, then `segment_b`, and explain the difference."""
	from analytics.catalog import get
	from analytics.contract import normalise, to_frame

	analysis = get(key)
	primary = analysis.datasets[0]
	if DATASETS[primary].column(column) is None:
		raise AnalyticsError(f"Dataset {primary!r} has no column {column!r} to split segments by")
	sides = []
	for segment in (segment_a, segment_b):
		split = {}
		source = data if isinstance(data, dict) and primary in data else {primary: data}
		for name, rows in source.items():
			frame = to_frame(rows, name)
			if name == primary:
				if column not in frame.columns:
					raise AnalyticsError(
						f"Dataset {primary!r} is missing column {column!r} to split segments by"
					)
				cleaned = normalise(name, frame, [column]).frame
				frame = cleaned[cleaned[column].astype(str) == str(segment)]
				if not len(frame):
					raise AnalyticsError(f"No rows where {column!r} is {segment!r}")
			split[name] = frame
		sides.append((f"{column}={segment}", split, {}))
	return _compare(key, sides[0], sides[1], params)


__all__ = ["compare_periods", "compare_segments", "drivers", "np"]
