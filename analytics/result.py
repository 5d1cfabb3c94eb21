"""The shape of an analysis result, number formatting, and the bounded summary for the model.

A result is a plain JSON-ready dict:
`{"key", "title", "kpis": [{"label", "value", "unit"?, "change"?, "prior"?}], "observations",
"watch_outs", "recommendations", "table": {"columns", "rows", "total_rows"}, "chart", "series"?,
"warnings", "dropped"}`. The full result stays with the caller; the model gets
`summary_for_model(result)`, a few hundred tokens whatever the row count.
"""

from __future__ import annotations

import datetime as dt
import json
import math

import numpy as np
import pandas as pd

SUMMARY_MAX_CHARS = 2400
TABLE_MAX_ROWS = 50


def jsonable(value: object) -> object:
	"""Plain JSON types only: numpy scalars become Python numbers, NaN and infinity become None."""
	if isinstance(value, dict):
		return {str(k): jsonable(v) for k, v in value.items()}
	if isinstance(value, list | tuple):
		return [jsonable(v) for v in value]
	if isinstance(value, np.ndarray):
		return [jsonable(v) for v in value.tolist()]
	if isinstance(value, bool | np.bool_):
		return bool(value)
	if isinstance(value, int | np.integer):
		return int(value)
	if isinstance(value, float | np.floating):
		value = float(value)
		return value if math.isfinite(value) else None
	if value is pd.NaT:
		return None
	if isinstance(value, pd.Timestamp | dt.datetime):
		midnight = value.hour == value.minute == value.second == value.microsecond == 0
		return value.date().isoformat() if midnight else value.isoformat()
	if isinstance(value, dt.date):
		return value.isoformat()
	if isinstance(value, np.datetime64):
		return jsonable(pd.Timestamp(value)) if not np.isnat(value) else None
	return value


def rounded(value: float | None, unit: str | None = None) -> float | int | None:
	if value is None:
		return None
	value = float(value)
	if not math.isfinite(value):
		return None
	if unit in ("count", "people", "documents"):
		return int(round(value))
	return round(value, 2 if abs(value) >= 1 or value == 0 else 4)


def pct_change(current: float, prior: float) -> float | None:
	"""Percent change, or None when the prior value is zero (a change from nothing has no ratio)."""
	if (
		prior is None
		or current is None
		or not math.isfinite(prior)
		or not math.isfinite(current)
		or prior == 0
	):
		return None
	return round((current - prior) / abs(prior) * 100, 1)


def kpi(
	label: str, value: float | None, unit: str | None = None, prior: float | None = None, **extra
) -> dict:
	"""One KPI; with a prior value it carries the percent change (`change`) against it."""
	item: dict = {"label": label, "value": rounded(value, unit)}
	if unit:
		item["unit"] = unit
	if prior is not None:
		item["prior"] = rounded(prior, unit)
		if unit == "%":
			item["change_points"] = rounded(float(value) - float(prior)) if value is not None else None
		else:
			item["change"] = pct_change(value, prior)
	item.update(extra)
	return item


def num(value: float | None, unit: str | None = None) -> str:
	"""A number as a person reads it: thousands separators, two decimals only where they matter."""
	if value is None or (isinstance(value, float) and not math.isfinite(value)):
		return "n/a"
	value = float(value)
	if unit == "%":
		return f"{value:.1f}%"
	if abs(value) >= 1000 or float(value).is_integer():
		text = f"{value:,.0f}"
	elif abs(value) >= 1:
		text = f"{value:,.2f}"
	else:
		text = f"{value:.3g}"
	if unit == "days":
		return f"{text} days"
	if unit == "hours":
		return f"{text} h"
	return text


def plural(noun: str) -> str:
	"""English plural of a noun phrase's last word (territory -> territories, cost center -> cost centers)."""
	if noun.endswith("y") and noun[-2:-1] not in "aeiou":
		return noun[:-1] + "ies"
	if noun.endswith(("s", "x", "ch", "sh")):
		return noun + "es"
	return noun + "s"


def signed_pct(value: float | None) -> str:
	return "n/a" if value is None else f"{value:+.1f}%"


def table(
	columns: list[str], rows: list[list], total_rows: int | None = None, limit: int = TABLE_MAX_ROWS
) -> dict:
	kept = [list(r) for r in rows[:limit]]
	return {
		"columns": list(columns),
		"rows": kept,
		"total_rows": len(rows) if total_rows is None else total_rows,
	}


def empty_result(what: str = "rows") -> dict:
	return {"kpis": [], "observations": [f"No {what} in the selected period."], "table": None, "chart": None}


def _clip(items: list, count: int, chars: int) -> list:
	out = []
	for item in items[:count]:
		out.append(item if not isinstance(item, str) or len(item) <= chars else item[: chars - 1] + "…")
	return out


def _compact_kpi(k: dict) -> dict:
	return {
		key: k[key]
		for key in ("label", "value", "unit", "change", "change_points", "prior_label")
		if k.get(key) is not None
	}


def summary_for_model(result: dict, max_chars: int = SUMMARY_MAX_CHARS) -> dict:
	"""A bounded digest of a result for the model: KPIs, observations, top rows, warnings.

	It is cut down step by step until its JSON fits in `max_chars`, so its size does not grow
	with the number of rows analysed.
	"""
	table_ = result.get("table") or {}
	plans = [(8, 6, 5, 3, 220), (6, 5, 3, 2, 180), (5, 4, 2, 2, 140), (4, 3, 0, 1, 120), (3, 2, 0, 1, 100)]
	summary: dict = {}
	for kpis, observations, rows, extra, chars in plans:
		summary = {
			"key": result.get("key"),
			"title": result.get("title"),
			"kpis": [_compact_kpi(k) for k in (result.get("kpis") or [])[:kpis]],
			"observations": _clip(result.get("observations") or [], observations, chars),
		}
		for field in ("watch_outs", "recommendations", "warnings"):
			if result.get(field):
				summary[field] = _clip(result[field], extra, chars)
		if rows and table_.get("rows"):
			summary["top_rows"] = {
				"columns": table_["columns"][:6],
				"rows": [[_short(c) for c in r[:6]] for r in table_["rows"][:rows]],
				"total_rows": table_.get("total_rows", len(table_["rows"])),
			}
		if result.get("dropped"):
			summary["dropped"] = result["dropped"]
		summary["chart"] = bool(result.get("chart"))
		if len(json.dumps(jsonable(summary), default=str)) <= max_chars:
			return jsonable(summary)
	# Pathological labels: keep only what always fits.
	return jsonable(
		{
			"key": result.get("key"),
			"title": result.get("title"),
			**{
				"kpis": [_compact_kpi(k) for k in (result.get("kpis") or [])[:3]],
				"observations": _clip(result.get("observations") or [], 2, 200),
				"chart": bool(result.get("chart")),
			},
		}
	)


def _short(cell: object) -> object:
	if isinstance(cell, str) and len(cell) > 40:
		return cell[:39] + "…"
	return cell
