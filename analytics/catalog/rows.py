"""Constructors that turn one catalogue row into an Analysis over a building block.

A value is a column name, a function of the frame (e.g. amount - cost), or None (count rows);
`where` keeps only some rows (e.g. payments received).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from analytics import blocks
from analytics.catalog.base import FREQ, HORIZON, THRESHOLD, TOP_N, Analysis, Param
from analytics.contract import DATASETS
from analytics.errors import AnalyticsError
from analytics.result import empty_result

Value = str | Callable[[pd.DataFrame], np.ndarray] | None
Where = Callable[[pd.DataFrame], np.ndarray] | None


def value_of(frame: pd.DataFrame, value: Value) -> np.ndarray | None:
	if value is None:
		return None
	if callable(value):
		return np.asarray(value(frame))
	return frame[value].to_numpy()


def keep(frame: pd.DataFrame, where: Where) -> pd.DataFrame:
	if where is None or not len(frame):
		return frame
	return frame[np.asarray(where(frame), dtype=bool)]


def as_of(frame: pd.DataFrame, p: dict, *columns: str) -> np.datetime64:
	"""The reference date: the parameter, else the latest date in the given columns."""
	if p.get("as_of"):
		return np.datetime64(p["as_of"], "D")
	latest = [frame[c].max() for c in columns if c in frame.columns and len(frame) and frame[c].notna().any()]
	if not latest:
		raise AnalyticsError("No dates in the data to take 'as_of' from; pass as_of")
	return np.datetime64(max(latest).date(), "D")


def as_of_note(p: dict, when: np.datetime64) -> list[str]:
	if p.get("as_of"):
		return []
	return [f"As of {str(when)[:10]}, the latest date in the data; pass as_of for another date."]


def freq_param(default: str) -> Param:
	return Param(FREQ.name, FREQ.kind, default, FREQ.description, FREQ.choices)


def horizon_param(default: int) -> Param:
	return Param(HORIZON.name, HORIZON.kind, default, HORIZON.description, minimum=0, maximum=24)


def trend_row(
	key: str,
	title: str,
	purpose: str,
	dataset: str,
	columns: tuple[str, ...],
	value: Value,
	*,
	label: str,
	unit: str | None,
	agg: str = "sum",
	freq: str = "month",
	horizon: int = 3,
	where: Where = None,
	date: str | None = None,
	tags: tuple[str, ...] = (),
) -> Analysis:
	date = date or DATASETS[dataset].date

	def compute(data: dict, p: dict) -> dict:
		frame = keep(data[dataset], where)
		return blocks.trend(
			frame,
			date,
			value_of(frame, value),
			freq=p["freq"],
			agg=agg,
			label=label,
			unit=unit,
			horizon=p["horizon"],
			threshold=p["threshold"],
		)

	return Analysis(
		key,
		key.split(".")[0],
		title,
		purpose,
		{dataset: (date, *columns)},
		compute,
		(freq_param(freq), horizon_param(horizon), THRESHOLD),
		tags=("trend", "forecast", *tags),
	)


def breakdown_row(
	key: str,
	title: str,
	purpose: str,
	dataset: str,
	by: str,
	columns: tuple[str, ...],
	value: Value,
	*,
	label: str,
	unit: str | None,
	noun: str,
	agg: str = "sum",
	chart: str = "pareto",
	where: Where = None,
	extra: dict[str, tuple[Value, str]] | None = None,
	top_n: int = 10,
	tags: tuple[str, ...] = (),
) -> Analysis:
	def compute(data: dict, p: dict) -> dict:
		frame = keep(data[dataset], where)
		extras = {name: (value_of(frame, v), how) for name, (v, how) in (extra or {}).items()}
		return blocks.breakdown(
			frame,
			by,
			value_of(frame, value),
			agg=agg,
			label=label,
			unit=unit,
			noun=noun,
			top_n=p["top_n"],
			chart=chart,
			extra=extras,
		)

	top = Param(TOP_N.name, TOP_N.kind, top_n, TOP_N.description, minimum=1, maximum=100)
	return Analysis(
		key,
		key.split(".")[0],
		title,
		purpose,
		{dataset: (by, *columns)},
		compute,
		(top,),
		tags=("breakdown", *tags),
	)


def ratio_trend_row(
	key: str,
	title: str,
	purpose: str,
	dataset: str,
	columns: tuple[str, ...],
	numerator: Value,
	denominator: Value,
	*,
	label: str,
	unit: str = "%",
	scale: float = 100.0,
	den_agg: str = "sum",
	higher_is_better: bool = True,
	where: Where = None,
	freq: str = "month",
	extra_kpis: Callable[[pd.DataFrame], list[dict]] | None = None,
	extra_params: tuple[Param, ...] = (),
	filter_by: Callable[[pd.DataFrame, dict], pd.DataFrame] | None = None,
	tags: tuple[str, ...] = (),
) -> Analysis:
	date = DATASETS[dataset].date

	def compute(data: dict, p: dict) -> dict:
		frame = keep(data[dataset], where)
		if filter_by is not None:
			frame = filter_by(frame, p)
		if not len(frame):
			return empty_result()
		out = blocks.ratio_trend(
			frame,
			date,
			value_of(frame, numerator),
			value_of(frame, denominator),
			freq=p["freq"],
			label=label,
			unit=unit,
			scale=scale,
			den_agg=den_agg,
			higher_is_better=higher_is_better,
		)
		if extra_kpis is not None:
			out["kpis"] = out["kpis"] + extra_kpis(frame)
		return out

	return Analysis(
		key,
		key.split(".")[0],
		title,
		purpose,
		{dataset: (date, *columns)},
		compute,
		(freq_param(freq), *extra_params),
		tags=("ratio", "trend", *tags),
	)


def ratio_by_row(
	key: str,
	title: str,
	purpose: str,
	dataset: str,
	by: str,
	columns: tuple[str, ...],
	numerator: Value,
	denominator: Value,
	*,
	label: str,
	noun: str,
	unit: str | None = "%",
	scale: float = 100.0,
	weight_label: str = "base",
	higher_is_better: bool = True,
	where: Where = None,
	prepare: Callable[[pd.DataFrame, dict], pd.DataFrame] | None = None,
	extra_params: tuple[Param, ...] = (),
	tags: tuple[str, ...] = (),
) -> Analysis:
	def compute(data: dict, p: dict) -> dict:
		frame = keep(data[dataset], where)
		warnings = []
		if not len(frame):
			return empty_result()
		if prepare is not None:
			frame, warnings = prepare(frame, p)
		out = blocks.ratio_by(
			frame,
			by,
			value_of(frame, numerator),
			value_of(frame, denominator),
			label=label,
			unit=unit,
			scale=scale,
			noun=noun,
			weight_label=weight_label,
			top_n=p["top_n"],
			higher_is_better=higher_is_better,
		)
		out.pop("ranked", None)
		out["warnings"] = out.get("warnings", []) + warnings
		return out

	return Analysis(
		key,
		key.split(".")[0],
		title,
		purpose,
		{dataset: (by, *columns)},
		compute,
		(TOP_N, *extra_params),
		tags=("ratio", *tags),
	)


def stacked_row(
	key: str,
	title: str,
	purpose: str,
	dataset: str,
	by: str,
	columns: tuple[str, ...],
	value: Value,
	*,
	label: str,
	freq: str = "month",
	where: Where = None,
) -> Analysis:
	date = DATASETS[dataset].date

	def compute(data: dict, p: dict) -> dict:
		frame = keep(data[dataset], where)
		return blocks.stacked(
			frame, date, by, value_of(frame, value), freq=p["freq"], label=label, top_n=p["top_n"]
		)

	top = Param("top_n", "int", 6, "how many groups to show before 'Others'", minimum=1, maximum=20)
	return Analysis(
		key,
		key.split(".")[0],
		title,
		purpose,
		{dataset: (date, by, *columns)},
		compute,
		(freq_param(freq), top),
		tags=("stacked", "trend"),
	)


def recent_windows(
	dates: pd.Series, months: int, end: object = None
) -> tuple[pd.Timestamp, pd.Timestamp, pd.Timestamp]:
	"""(prior start, current start, current end exclusive): the last `months` whole calendar months
	up to the latest date, and the `months` before them."""
	last = pd.Timestamp(end) if end else dates.max()
	current_end = pd.Timestamp(year=last.year, month=last.month, day=1) + pd.DateOffset(months=1)
	current_start = current_end - pd.DateOffset(months=months)
	prior_start = current_start - pd.DateOffset(months=months)
	return prior_start, current_start, current_end


MONTHS = Param("months", "int", 3, "length of each compared window in months", minimum=1, maximum=24)
