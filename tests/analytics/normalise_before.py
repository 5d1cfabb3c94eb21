"""The contract's normalisation as it was before it was made fast, kept as the oracle.

`analytics.contract.normalise` must give exactly what this gives - same frame, same dtypes,
same dropped counts, warnings and errors - on every input; the tests in
test_normalise_same_as_before.py compare the two.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from analytics.contract import (
	BOOL,
	DATE,
	DOCSTATUS_DROPPED,
	NOT_SET,
	NUMBER,
	STATUS_DROPPED,
	TEXT,
	Normalised,
	dataset,
	to_frame,
)
from analytics.errors import AnalyticsError


def _first_bad(values: pd.Series, mask: np.ndarray) -> str:
	position = int(np.flatnonzero(mask)[0])
	return f"first: {values.iloc[position]!r} in row {position}"


def _to_number(frame: pd.DataFrame, name: str, dataset_key: str) -> pd.Series:
	values = frame[name]
	if pd.api.types.is_bool_dtype(values):
		return values.astype(float)
	if pd.api.types.is_numeric_dtype(values):
		out = values.astype(float)
	else:
		out = pd.to_numeric(values, errors="coerce")
		bad = (out.isna() & values.notna()).to_numpy()
		# Empty strings are missing values, not malformed numbers.
		if bad.any():
			text = values[bad].astype(str).str.strip()
			really_bad = bad.copy()
			really_bad[np.flatnonzero(bad)] = (text != "").to_numpy()
			if really_bad.any():
				raise AnalyticsError(
					f"Dataset {dataset_key!r}, column {name!r}: {int(really_bad.sum())} value(s) are not numbers "
					f"({_first_bad(values, really_bad)})"
				)
		out = out.astype(float)
	inf = np.isinf(out.to_numpy())
	if inf.any():
		raise AnalyticsError(
			f"Dataset {dataset_key!r}, column {name!r}: {int(inf.sum())} value(s) are infinite ({_first_bad(values, inf)})"
		)
	return out


def _to_date(frame: pd.DataFrame, name: str, dataset_key: str) -> pd.Series:
	values = frame[name]
	if pd.api.types.is_datetime64_any_dtype(values):
		out = values
		if getattr(out.dt, "tz", None) is not None:
			out = out.dt.tz_localize(None)
	else:
		text = (
			values.where(values.astype(str).str.strip() != "", None)
			if (values.dtype == object or pd.api.types.is_string_dtype(values))
			else values
		)
		out = pd.to_datetime(text, errors="coerce", format="mixed") if len(values) else pd.to_datetime(text)
		bad = (out.isna() & text.notna()).to_numpy()
		if bad.any():
			raise AnalyticsError(
				f"Dataset {dataset_key!r}, column {name!r}: {int(bad.sum())} value(s) are not dates "
				f"({_first_bad(values, bad)}); use YYYY-MM-DD"
			)
	out = out.astype("datetime64[ns]")
	return out.dt.normalize() if len(out) else out


def _to_bool(frame: pd.DataFrame, name: str, dataset_key: str) -> pd.Series:
	values = frame[name]
	if pd.api.types.is_bool_dtype(values):
		return values
	mapping = {"1": True, "0": False, "true": True, "false": False, "yes": True, "no": False, "": False}
	text = values.astype(str).str.strip().str.lower().replace({"nan": "", "none": "", "1.0": "1", "0.0": "0"})
	out = text.map(mapping)
	bad = out.isna().to_numpy()
	if bad.any():
		raise AnalyticsError(
			f"Dataset {dataset_key!r}, column {name!r}: {int(bad.sum())} value(s) are not yes/no ({_first_bad(values, bad)})"
		)
	return out.astype(bool)


def _to_text(frame: pd.DataFrame, name: str) -> pd.Series:
	values = frame[name]
	if isinstance(values.dtype, pd.CategoricalDtype):
		values = values.astype(object)
	missing = values.isna().to_numpy().copy()
	if values.dtype != object and not pd.api.types.is_string_dtype(values):
		values = values.astype(str)
	array = values.to_numpy(dtype=object)
	missing |= array == ""
	if missing.any():
		array = array.copy()
		array[missing] = NOT_SET
	return pd.Series(array, index=values.index, dtype=object)


def _drop_by_status(frame: pd.DataFrame, dropped: dict[str, int]) -> pd.DataFrame:
	keep = np.ones(len(frame), dtype=bool)
	if "docstatus" in frame.columns:
		docstatus = frame["docstatus"].fillna(1).to_numpy()
		for code, reason in DOCSTATUS_DROPPED.items():
			hit = keep & (docstatus == code)
			if hit.any():
				dropped[reason] = dropped.get(reason, 0) + int(hit.sum())
				keep &= ~hit
	if "status" in frame.columns and not pd.api.types.is_numeric_dtype(frame["status"]):
		status = frame["status"].astype(str).str.strip().str.lower().to_numpy()
		for word, reason in STATUS_DROPPED.items():
			hit = keep & (status == word)
			if hit.any():
				dropped[reason] = dropped.get(reason, 0) + int(hit.sum())
				keep &= ~hit
	return frame if keep.all() else frame[keep]


def normalise(
	dataset_key: str, rows: object, require: Iterable[str] = (), optional: Iterable[str] | None = None
) -> Normalised:
	"""Validate and clean one dataset's rows.

	Known columns get their canonical type (an unparseable value raises AnalyticsError naming
	the column); required columns must be present; draft and cancelled rows, duplicate ids and
	rows without their date are dropped and counted by reason. With `optional` given, only the
	required and optional columns (and the row status and id) are kept: checking columns an
	analysis never reads costs seconds on a million rows.
	"""
	spec = dataset(dataset_key)
	frame = to_frame(rows, dataset_key)
	required = list(dict.fromkeys(require))
	for name in required:
		if spec.column(name) is None:
			raise AnalyticsError(f"Dataset {dataset_key!r} has no column {name!r} in the data contract")
	wanted = None
	if optional is not None:
		wanted = {*required, *optional, "status", "docstatus"}
		if spec.id:
			wanted.add(spec.id)
		if spec.date:
			wanted.add(spec.date)
	missing = [name for name in required if name not in frame.columns]
	if missing and len(frame):
		raise AnalyticsError(
			f"Dataset {dataset_key!r} is missing column(s) {', '.join(repr(m) for m in missing)}; "
			f"expected columns: {', '.join(spec.names)}"
		)
	dropped: dict[str, int] = {}
	warnings: list[str] = []
	if not len(frame):
		columns = {}
		for col in spec.columns:
			if col.kind == DATE:
				columns[col.name] = pd.Series([], dtype="datetime64[ns]")
			elif col.kind == NUMBER:
				columns[col.name] = pd.Series([], dtype=float)
			elif col.kind == BOOL:
				columns[col.name] = pd.Series([], dtype=bool)
			else:
				columns[col.name] = pd.Series([], dtype=object)
		return Normalised(pd.DataFrame(columns), dropped, warnings)

	if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0 or frame.index.step != 1:
		# Columns are rebuilt on a fresh 0..n index below; a filtered frame's labels would misalign.
		frame = frame.reset_index(drop=True)
	known = [c for c in spec.columns if c.name in frame.columns and (wanted is None or c.name in wanted)]
	out = {}
	for col in known:
		if col.kind == NUMBER:
			out[col.name] = _to_number(frame, col.name, dataset_key)
		elif col.kind == DATE:
			out[col.name] = _to_date(frame, col.name, dataset_key)
		elif col.kind == BOOL:
			out[col.name] = _to_bool(frame, col.name, dataset_key)
		else:
			out[col.name] = frame[col.name]
	clean = pd.DataFrame(out, index=pd.RangeIndex(len(frame)))
	clean = _drop_by_status(clean, dropped)
	for col in known:
		if col.kind == TEXT and col.name in clean.columns:
			if col.name == spec.id and pd.api.types.is_numeric_dtype(clean[col.name]):
				continue  # numeric ids deduplicate fast as they are; turning them into text costs seconds
			clean[col.name] = _to_text(clean, col.name)

	if spec.id and spec.id in clean.columns:
		duplicate = (
			clean[spec.id].duplicated(keep="first").to_numpy() & (clean[spec.id] != NOT_SET).to_numpy()
		)
		if duplicate.any():
			dropped["duplicate"] = int(duplicate.sum())
			clean = clean[~duplicate]
	if spec.date and spec.date in clean.columns:
		no_date = clean[spec.date].isna().to_numpy()
		if no_date.any():
			dropped[f"missing {spec.date}"] = int(no_date.sum())
			clean = clean[~no_date]
	for col in known:
		if col.kind == NUMBER and col.name in required and col.name in clean.columns:
			empty = clean[col.name].isna()
			if empty.any():
				warnings.append(f"{int(empty.sum())} empty {col.name!r} value(s) counted as 0")
				clean[col.name] = clean[col.name].fillna(0.0)
	unknown = [c for c in frame.columns if spec.column(str(c)) is None]
	if unknown:
		warnings.append(f"ignored column(s) outside the contract: {', '.join(map(str, unknown[:5]))}")
	return Normalised(clean.reset_index(drop=True), dropped, warnings)
