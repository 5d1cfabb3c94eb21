"""Running one analysis: resolve parameters, normalise each dataset, keep the period, compute, shape.

`run(key, data, params)` returns the full result (see `analytics.result`); callers keep it and
hand the model `summary_for_model(result)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analytics.catalog import get
from analytics.catalog.base import Analysis
from analytics.contract import DATASETS, Normalised, normalise, restrict, to_frame
from analytics.errors import AnalyticsError
from analytics.result import jsonable

RESULT_FIELDS = (
	"kpis",
	"observations",
	"watch_outs",
	"recommendations",
	"table",
	"chart",
	"series",
	"warnings",
	"metrics",
)


@dataclass
class Prepared:
	params: dict
	frames: dict[str, pd.DataFrame]
	dropped: dict[str, dict[str, int]]
	warnings: list[str]
	rows: dict[str, int]


class Shared:
	"""Datasets normalised once for several analyses run on the same data (see `run_many`).

	Each dataset is normalised with every column any of the analyses reads; each analysis then
	gets exactly what normalising for it alone would give (`contract.restrict`).
	"""

	def __init__(self, analyses: list[Analysis]):
		self.columns: dict[str, set[str]] = {}
		for analysis in analyses:
			for name, columns in analysis.needs.items():
				self.columns.setdefault(name, set()).update(columns, analysis.uses.get(name, ()))
		self._done: dict[tuple[str, int], tuple[object, pd.DataFrame, Normalised]] = {}

	def normalise(self, name: str, rows: object, require: tuple, optional: tuple) -> Normalised:
		key = (name, id(rows))
		if key not in self._done:
			frame = to_frame(rows, name)
			# The rows are held so their id is not reused while this lasts.
			self._done[key] = (rows, frame, normalise(name, frame, (), sorted(self.columns.get(name, ()))))
		_, frame, base = self._done[key]
		return restrict(base, name, frame.columns, len(frame), require, optional)


def _datasets(analysis: Analysis, data: object) -> dict:
	if isinstance(data, dict) and any(name in DATASETS for name in data):
		return data
	if len(analysis.needs) == 1:
		# A bare list of rows (or a frame) is the analysis's only dataset.
		return {analysis.datasets[0]: data}
	raise AnalyticsError(
		f"Analysis {analysis.key!r} needs datasets {', '.join(analysis.datasets)}; pass an object keyed by dataset name"
	)


def prepare(
	analysis: Analysis,
	data: object,
	params: dict | None = None,
	extra_columns: dict[str, tuple[str, ...]] | None = None,
	shared: Shared | None = None,
) -> Prepared:
	"""Parameters resolved and every needed dataset normalised and cut to start/end."""
	resolved = analysis.resolve(params)
	given = _datasets(analysis, data)
	frames, dropped, warnings, rows = {}, {}, [], {}
	for name, columns in analysis.needs.items():
		if name not in given:
			if name in analysis.optional:
				continue
			raise AnalyticsError(
				f"Analysis {analysis.key!r} needs dataset {name!r} (columns: {', '.join(columns)})"
			)
		optional = (*analysis.uses.get(name, ()), *(extra_columns or {}).get(name, ()))
		if shared is not None and not extra_columns:
			cleaned = shared.normalise(name, given[name], columns, optional)
		else:
			cleaned = normalise(name, given[name], columns, optional)
		frame = cleaned.frame
		date = DATASETS[name].date
		if analysis.period_filter and date and date in frame.columns and len(frame):
			keep = pd.Series(True, index=frame.index)
			if resolved.get("start"):
				keep &= frame[date] >= pd.Timestamp(resolved["start"])
			if resolved.get("end"):
				keep &= frame[date] <= pd.Timestamp(resolved["end"])
			if not keep.all():
				dropped_outside = int((~keep).sum())
				cleaned.dropped["outside period"] = dropped_outside
				frame = frame[keep.to_numpy()]
		frames[name] = frame
		rows[name] = len(frame)
		if cleaned.dropped:
			dropped[name] = cleaned.dropped
		warnings += [f"{name}: {w}" for w in cleaned.warnings]
	return Prepared(resolved, frames, dropped, warnings, rows)


def run_prepared(analysis: Analysis, prepared: Prepared) -> dict:
	part = analysis.compute(prepared.frames, prepared.params)
	result = {"key": analysis.key, "title": analysis.title, "category": analysis.category}
	for field in RESULT_FIELDS:
		if field in part:
			result[field] = part[field]
	result.setdefault("kpis", [])
	result.setdefault("observations", [])
	result.setdefault("watch_outs", [])
	result.setdefault("recommendations", [])
	result.setdefault("table", None)
	result.setdefault("chart", None)
	result["warnings"] = prepared.warnings + list(part.get("warnings", []))
	result["dropped"] = prepared.dropped
	result["rows"] = prepared.rows
	result["params"] = {k: v for k, v in prepared.params.items() if v is not None}
	return jsonable(result)


def run(key: str, data: object, params: dict | None = None, shared: Shared | None = None) -> dict:
	"""Run analysis `key` on `data` (rows of its one dataset, or {dataset: rows}) with `params`.

	`shared` (a `Shared` made for the analyses about to run) normalises each dataset once for all.
	"""
	analysis = get(key)
	return run_prepared(analysis, prepare(analysis, data, params, shared=shared))
