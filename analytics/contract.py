"""The data contract: datasets with fixed canonical columns, and their normalisation.

Analyses only ever see these names. A connector maps its own fields onto them; the
normaliser checks types, drops draft and cancelled rows and duplicates, and reports what it
dropped and why, so a number can always be traced back to the rows behind it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analytics.errors import AnalyticsError

DATE, NUMBER, TEXT, BOOL = "date", "number", "text", "bool"

# Filled into empty text cells so a group-by keeps the rows and says plainly what they are.
NOT_SET = "(not set)"

# Row status columns every dataset may carry; they decide which rows count.
DOCSTATUS_DROPPED = {0: "draft", 2: "cancelled"}
STATUS_DROPPED = {"draft": "draft", "cancelled": "cancelled"}


@dataclass(frozen=True)
class Column:
	name: str
	kind: str
	description: str = ""


@dataclass(frozen=True)
class Dataset:
	"""One canonical dataset: its columns, and which of them place, measure and explain a row."""

	key: str
	title: str
	description: str
	columns: tuple[Column, ...]
	date: str | None = None
	measure: str | None = None
	dimensions: tuple[str, ...] = ()
	# Identifies a row; repeated ids are duplicates and are dropped.
	id: str | None = None

	def column(self, name: str) -> Column | None:
		for col in self.columns:
			if col.name == name:
				return col
		return None

	@property
	def names(self) -> list[str]:
		return [c.name for c in self.columns]


def _cols(*spec: tuple[str, str, str]) -> tuple[Column, ...]:
	return tuple(Column(name, kind, description) for name, kind, description in spec)


_STATUS = (
	("status", TEXT, "document status; Draft and Cancelled rows are dropped"),
	("docstatus", NUMBER, "0 draft, 1 submitted, 2 cancelled; only submitted rows count"),
)

DATASETS: dict[str, Dataset] = {
	d.key: d
	for d in [
		Dataset(
			"sales",
			"Sales lines",
			"One row per sales invoice line; returns are negative amounts.",
			_cols(
				("id", TEXT, "line identifier"),
				("document", TEXT, "invoice number"),
				("date", DATE, "posting date"),
				("party", TEXT, "customer"),
				("item", TEXT, "item code"),
				("item_group", TEXT, "item group"),
				("territory", TEXT, "territory"),
				("amount", NUMBER, "net amount in company currency"),
				("quantity", NUMBER, "quantity sold"),
				("cost", NUMBER, "cost of goods sold for the line"),
				*_STATUS,
			),
			date="date",
			measure="amount",
			dimensions=("party", "item", "item_group", "territory"),
			id="id",
		),
		Dataset(
			"purchases",
			"Purchase lines",
			"One row per purchase invoice line.",
			_cols(
				("id", TEXT, "line identifier"),
				("document", TEXT, "invoice number"),
				("date", DATE, "posting date"),
				("party", TEXT, "supplier"),
				("item", TEXT, "item code"),
				("item_group", TEXT, "item group"),
				("amount", NUMBER, "net amount in company currency"),
				("quantity", NUMBER, "quantity bought"),
				*_STATUS,
			),
			date="date",
			measure="amount",
			dimensions=("party", "item", "item_group"),
			id="id",
		),
		Dataset(
			"purchase_orders",
			"Purchase order lines",
			"One row per purchase order line with its expected and actual receipt.",
			_cols(
				("id", TEXT, "line identifier"),
				("document", TEXT, "order number"),
				("date", DATE, "order date"),
				("party", TEXT, "supplier"),
				("item", TEXT, "item code"),
				("quantity", NUMBER, "quantity ordered"),
				("amount", NUMBER, "net amount"),
				("expected_date", DATE, "promised delivery date"),
				("received_date", DATE, "date of (last) receipt; empty while not received"),
				("received_quantity", NUMBER, "quantity received so far"),
				*_STATUS,
			),
			date="date",
			measure="amount",
			dimensions=("party", "item"),
			id="id",
		),
		Dataset(
			"stock",
			"Stock balances",
			"One row per item and warehouse: the balance now.",
			_cols(
				("item", TEXT, "item code"),
				("item_group", TEXT, "item group"),
				("warehouse", TEXT, "warehouse"),
				("quantity", NUMBER, "quantity on hand"),
				("value", NUMBER, "stock value"),
				("reorder_level", NUMBER, "re-order level"),
			),
			measure="value",
			dimensions=("item", "item_group", "warehouse"),
		),
		Dataset(
			"stock_moves",
			"Stock movements",
			"One row per stock ledger entry; quantity and value are signed (in positive, out negative).",
			_cols(
				("id", TEXT, "ledger entry identifier"),
				("date", DATE, "posting date"),
				("item", TEXT, "item code"),
				("warehouse", TEXT, "warehouse"),
				("quantity", NUMBER, "signed quantity change"),
				("value", NUMBER, "signed value change"),
				*_STATUS,
			),
			date="date",
			measure="value",
			dimensions=("item", "warehouse"),
			id="id",
		),
		Dataset(
			"receivables",
			"Receivables",
			"One row per sales invoice with what is still owed.",
			_cols(
				("document", TEXT, "invoice number"),
				("party", TEXT, "customer"),
				("territory", TEXT, "territory"),
				("posting_date", DATE, "posting date"),
				("due_date", DATE, "due date"),
				("amount", NUMBER, "invoice total"),
				("outstanding", NUMBER, "amount still owed"),
				*_STATUS,
			),
			date="posting_date",
			measure="outstanding",
			dimensions=("party", "territory"),
			id="document",
		),
		Dataset(
			"payables",
			"Payables",
			"One row per purchase invoice with what is still owed to the supplier.",
			_cols(
				("document", TEXT, "invoice number"),
				("party", TEXT, "supplier"),
				("posting_date", DATE, "posting date"),
				("due_date", DATE, "due date"),
				("amount", NUMBER, "invoice total"),
				("outstanding", NUMBER, "amount still owed"),
				*_STATUS,
			),
			date="posting_date",
			measure="outstanding",
			dimensions=("party",),
			id="document",
		),
		Dataset(
			"payments",
			"Payments",
			"One row per payment entry, received (in) or paid (out).",
			_cols(
				("document", TEXT, "payment entry number"),
				("date", DATE, "posting date"),
				("party", TEXT, "customer, supplier or employee"),
				("party_type", TEXT, "Customer, Supplier, Employee"),
				("direction", TEXT, "in (received) or out (paid)"),
				("amount", NUMBER, "amount, always positive"),
				("mode", TEXT, "mode of payment"),
				*_STATUS,
			),
			date="date",
			measure="amount",
			dimensions=("party", "mode"),
			id="document",
		),
		Dataset(
			"gl",
			"General ledger entries",
			"One row per GL entry.",
			_cols(
				("id", TEXT, "entry identifier"),
				("date", DATE, "posting date"),
				("account", TEXT, "account"),
				("root_type", TEXT, "Income, Expense, Asset, Liability or Equity"),
				("debit", NUMBER, "debit in company currency"),
				("credit", NUMBER, "credit in company currency"),
				("cost_center", TEXT, "cost center"),
				("project", TEXT, "project"),
				("fiscal_year", TEXT, "fiscal year"),
				("voucher_type", TEXT, "voucher type; period closing vouchers are never part of it"),
				("document", TEXT, "voucher number"),
				("party", TEXT, "party"),
				*_STATUS,
			),
			date="date",
			measure="debit",
			dimensions=("account", "cost_center"),
			id="id",
		),
		Dataset(
			"budget",
			"Budget",
			"One row per submitted budget line: an amount for one account and cost center or project, for a "
			"fiscal year (ERPNext 15) or for the dates start to end, spread evenly over their months (ERPNext 16).",
			_cols(
				("id", TEXT, "budget line identifier"),
				("document", TEXT, "budget"),
				("fiscal_year", TEXT, "fiscal year (the first one, for a budget over several)"),
				("budget_against", TEXT, "Cost Center or Project"),
				("account", TEXT, "account"),
				("cost_center", TEXT, "cost center"),
				("project", TEXT, "project"),
				("amount", NUMBER, "budgeted amount of the line"),
				("start", DATE, "first day the line's amount covers (empty: the whole fiscal year)"),
				("end", DATE, "last day the line's amount covers"),
			),
			measure="amount",
			dimensions=("account", "cost_center", "project"),
			id="id",
		),
		Dataset(
			"employees",
			"Employees",
			"One row per employee, current and former.",
			_cols(
				("employee", TEXT, "employee id"),
				("department", TEXT, "department"),
				("designation", TEXT, "designation"),
				("branch", TEXT, "branch"),
				("joining_date", DATE, "date of joining"),
				("relieving_date", DATE, "date of leaving; empty while employed"),
				("status", TEXT, "Active, Left, ..."),
			),
			date="joining_date",
			dimensions=("department", "designation", "branch"),
			id="employee",
		),
		Dataset(
			"attendance",
			"Attendance",
			"One row per employee and day.",
			_cols(
				("id", TEXT, "attendance record"),
				("employee", TEXT, "employee id"),
				("department", TEXT, "department"),
				("date", DATE, "attendance date"),
				("status", TEXT, "Present, Absent, On Leave, Half Day, Work From Home"),
				("docstatus", NUMBER, "0 draft, 1 submitted, 2 cancelled"),
			),
			date="date",
			dimensions=("employee", "department"),
			id="id",
		),
		Dataset(
			"leave",
			"Leave applications",
			"One row per leave application.",
			_cols(
				("id", TEXT, "application"),
				("employee", TEXT, "employee id"),
				("department", TEXT, "department"),
				("leave_type", TEXT, "leave type"),
				("from_date", DATE, "first day"),
				("to_date", DATE, "last day"),
				("days", NUMBER, "days of leave"),
				*_STATUS,
			),
			date="from_date",
			measure="days",
			dimensions=("leave_type", "department", "employee"),
			id="id",
		),
		Dataset(
			"projects",
			"Projects",
			"One row per project with its budget and costs so far.",
			_cols(
				("project", TEXT, "project"),
				("status", TEXT, "Open, Completed, Cancelled"),
				("start_date", DATE, "expected start"),
				("end_date", DATE, "expected end"),
				("budget", NUMBER, "estimated cost"),
				("actual_cost", NUMBER, "cost booked so far"),
				("progress", NUMBER, "percent complete"),
			),
			date="start_date",
			measure="actual_cost",
			dimensions=("project",),
			id="project",
		),
		Dataset(
			"timesheets",
			"Timesheet lines",
			"One row per timesheet line.",
			_cols(
				("id", TEXT, "line identifier"),
				("date", DATE, "day worked"),
				("employee", TEXT, "employee id"),
				("project", TEXT, "project"),
				("activity", TEXT, "activity type"),
				("hours", NUMBER, "hours"),
				("billable", BOOL, "whether the hours are billable"),
				("billing_amount", NUMBER, "billing amount"),
				("cost_amount", NUMBER, "costing amount"),
				*_STATUS,
			),
			date="date",
			measure="hours",
			dimensions=("project", "employee", "activity"),
			id="id",
		),
		Dataset(
			"issues",
			"Support issues",
			"One row per support issue.",
			_cols(
				("document", TEXT, "issue id"),
				("opened", DATE, "opening date"),
				("resolved", DATE, "resolution date; empty while open"),
				("status", TEXT, "Open, Replied, Resolved, Closed"),
				("priority", TEXT, "priority"),
				("party", TEXT, "customer"),
			),
			date="opened",
			dimensions=("priority", "party"),
			id="document",
		),
	]
}


@dataclass
class Normalised:
	"""A dataset's rows after normalisation, with the count of rows dropped by reason."""

	frame: pd.DataFrame
	dropped: dict[str, int]
	warnings: list[str]


def dataset(key: str) -> Dataset:
	try:
		return DATASETS[key]
	except KeyError:
		raise AnalyticsError(f"Unknown dataset {key!r}; known datasets: {', '.join(DATASETS)}") from None


def to_frame(rows: object, dataset_key: str) -> pd.DataFrame:
	"""Accept a DataFrame, a list of row dicts or a dict of columns."""
	if isinstance(rows, pd.DataFrame):
		return rows
	if rows is None:
		return pd.DataFrame()
	if isinstance(rows, Mapping):
		try:
			return pd.DataFrame(dict(rows))
		except ValueError as exc:
			raise AnalyticsError(f"Dataset {dataset_key!r}: columns have different lengths ({exc})") from None
	if isinstance(rows, Iterable) and not isinstance(rows, str | bytes):
		rows = list(rows)
		bad = next((i for i, r in enumerate(rows) if not isinstance(r, Mapping)), None)
		if bad is not None:
			raise AnalyticsError(
				f"Dataset {dataset_key!r}: row {bad} is {type(rows[bad]).__name__}, expected an object of column values"
			)
		return pd.DataFrame.from_records(rows) if rows else pd.DataFrame()
	raise AnalyticsError(f"Dataset {dataset_key!r}: expected a list of rows, got {type(rows).__name__}")


def _first_bad(values: pd.Series, mask: np.ndarray) -> str:
	position = int(np.flatnonzero(mask)[0])
	return f"first: {values.iloc[position]!r} in row {position}"


def _to_number(values: pd.Series, name: str, dataset_key: str) -> np.ndarray:
	if pd.api.types.is_bool_dtype(values):
		return values.to_numpy(dtype=float)
	if pd.api.types.is_numeric_dtype(values):
		out = values.to_numpy(dtype=float, na_value=np.nan)
	else:
		parsed = pd.to_numeric(values, errors="coerce")
		bad = (parsed.isna() & values.notna()).to_numpy()
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
		out = parsed.to_numpy(dtype=float, na_value=np.nan)
	inf = np.isinf(out)
	if inf.any():
		raise AnalyticsError(
			f"Dataset {dataset_key!r}, column {name!r}: {int(inf.sum())} value(s) are infinite ({_first_bad(values, inf)})"
		)
	return out


_DAY_NS = 86_400 * 10**9


def _to_date(values: pd.Series, name: str, dataset_key: str) -> np.ndarray:
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
	array = out.astype("datetime64[ns]").to_numpy()
	ticks = array.view(np.int64)
	# Dates carry no time of day; NaT (the smallest int64) is a whole day too.
	if (ticks % _DAY_NS != 0).any():
		present = ~np.isnat(array)
		ticks = ticks.copy()
		ticks[present] -= ticks[present] % _DAY_NS
		array = ticks.view("datetime64[ns]")
	return array


def _to_bool(values: pd.Series, name: str, dataset_key: str) -> np.ndarray | pd.api.extensions.ExtensionArray:
	if pd.api.types.is_bool_dtype(values):
		return values.array
	mapping = {"1": True, "0": False, "true": True, "false": False, "yes": True, "no": False, "": False}
	text = values.astype(str).str.strip().str.lower().replace({"nan": "", "none": "", "1.0": "1", "0.0": "0"})
	out = text.map(mapping)
	bad = out.isna().to_numpy()
	if bad.any():
		raise AnalyticsError(
			f"Dataset {dataset_key!r}, column {name!r}: {int(bad.sum())} value(s) are not yes/no ({_first_bad(values, bad)})"
		)
	return out.to_numpy(dtype=bool)


def _text_values(values: pd.Series) -> pd.Series:
	"""Values as a text column holds them before empty cells are filled (categories undone)."""
	if isinstance(values.dtype, pd.CategoricalDtype):
		return values.astype(object)
	return values


def _factorize(values: pd.Series) -> tuple[np.ndarray, np.ndarray | pd.api.extensions.ExtensionArray]:
	"""Codes (-1 where missing) and distinct values, without wrapping the values in an index."""
	array = values.array
	if isinstance(array, pd.api.extensions.ExtensionArray) and not isinstance(
		array, pd.arrays.NumpyExtensionArray
	):
		return array.factorize()
	return pd.factorize(values.to_numpy())


# A text column with fewer distinct values than this share of its rows is filled in from its
# distinct values (one Python string each) instead of converting every row.
_REPEATED = 0.2
_SAMPLE = 20_000


def _to_text(values: pd.Series, rows: np.ndarray | None = None) -> np.ndarray:
	"""Text with empty cells filled in, for `rows` (positions) or every row."""
	values = _text_values(values)
	if pd.api.types.is_string_dtype(values) and values.dtype != object and len(values) > _SAMPLE:
		_, sample = _factorize(values.iloc[:_SAMPLE])
		if len(sample) < _REPEATED * _SAMPLE:
			codes, uniques = _factorize(values)
			names = np.append(np.asarray(uniques, dtype=object), NOT_SET)
			names[:-1][names[:-1] == ""] = NOT_SET
			# Code -1 (missing) picks the last name, NOT_SET.
			return names[codes if rows is None else codes[rows]]
	if rows is not None:
		values = values.take(rows)
	missing = values.isna().to_numpy().copy()
	if values.dtype != object and not pd.api.types.is_string_dtype(values):
		values = values.astype(str)
	array = values.to_numpy(dtype=object)
	missing |= array == ""
	if missing.any():
		return np.where(missing, NOT_SET, array)
	# Never the caller's own column: the normalised frame is the analysis's to change.
	return array.copy() if values.dtype == object and np.may_share_memory(array, values.array) else array


def _status_hits(values: pd.Series, words: Iterable[str]) -> dict[str, np.ndarray]:
	"""For each word, the rows whose status (trimmed, any case) is that word."""
	codes, uniques = _factorize(values)
	# The few distinct statuses are cleaned, not the million rows that repeat them.
	cleaned = pd.Series(np.asarray(uniques, dtype=object)).astype(str).str.strip().str.lower().to_numpy()
	return {word: np.isin(codes, np.flatnonzero(cleaned == word)) for word in words}


def _duplicate_ids(ids: np.ndarray | pd.Series, rows: np.ndarray) -> np.ndarray:
	"""Among `rows` (positions, in order), those whose id an earlier one already had.

	Text ids come filled in (`_to_text`), and an id that is not set never repeats; numeric ids
	stay numbers, and a missing one repeats like any other value.
	"""
	if isinstance(ids, pd.Series):
		return pd.Series(ids.to_numpy()[rows]).duplicated(keep="first").to_numpy()
	codes, uniques = pd.factorize(ids)
	if len(uniques) == len(ids):
		return np.zeros(len(rows), dtype=bool)
	codes = codes[rows]
	return pd.Series(codes).duplicated(keep="first").to_numpy() & (ids[rows] != NOT_SET)


def normalise(
	dataset_key: str, rows: object, require: Iterable[str] = (), optional: Iterable[str] | None = None
) -> Normalised:
	"""Validate and clean one dataset's rows.

	Known columns get their canonical type (an unparseable value raises AnalyticsError naming
	the column); required columns must be present; draft and cancelled rows, duplicate ids and
	rows without their date are dropped and counted by reason. With `optional` given, only the
	required and optional columns (and the row status and id) are kept: checking columns an
	analysis never reads costs seconds on a million rows.

	Every column is checked over all rows (so an error names the row as it was given), the rows
	to keep are decided on the typed columns, and each kept column is then cut once: the
	million-row frames are never copied whole between steps.
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

	known = [c for c in spec.columns if c.name in frame.columns and (wanted is None or c.name in wanted)]
	kinds = {c.name: c.kind for c in known}
	raw = {c.name: frame[c.name] for c in known}
	typed: dict[str, np.ndarray] = {}
	for col in known:
		if col.kind == NUMBER:
			typed[col.name] = _to_number(raw[col.name], col.name, dataset_key)
		elif col.kind == DATE:
			typed[col.name] = _to_date(raw[col.name], col.name, dataset_key)
		elif col.kind == BOOL:
			typed[col.name] = _to_bool(raw[col.name], col.name, dataset_key)

	keep = np.ones(len(frame), dtype=bool)
	if "docstatus" in kinds:
		docstatus = typed.get("docstatus")
		if docstatus is None:
			docstatus = raw["docstatus"].to_numpy()
		docstatus = np.where(pd.isna(docstatus), 1, docstatus) if docstatus.dtype.kind in "fOM" else docstatus
		for code, reason in DOCSTATUS_DROPPED.items():
			hit = keep & (docstatus == code)
			if hit.any():
				dropped[reason] = dropped.get(reason, 0) + int(hit.sum())
				keep &= ~hit
	if "status" in kinds and kinds["status"] == TEXT and not pd.api.types.is_numeric_dtype(raw["status"]):
		for word, matches in _status_hits(raw["status"], STATUS_DROPPED).items():
			hit = keep & matches
			if hit.any():
				reason = STATUS_DROPPED[word]
				dropped[reason] = dropped.get(reason, 0) + int(hit.sum())
				keep &= ~hit
	rows_kept = np.flatnonzero(keep)
	if spec.id and spec.id in kinds and kinds[spec.id] == TEXT:
		ids = raw[spec.id]
		if not pd.api.types.is_numeric_dtype(ids):
			# Filled in once over every row: the same array is checked and then kept.
			ids = typed[spec.id] = _to_text(ids)
		duplicate = _duplicate_ids(ids, rows_kept)
		if duplicate.any():
			dropped["duplicate"] = int(duplicate.sum())
			rows_kept = rows_kept[~duplicate]
	if spec.date and spec.date in typed:
		no_date = np.isnat(typed[spec.date][rows_kept])
		if no_date.any():
			dropped[f"missing {spec.date}"] = int(no_date.sum())
			rows_kept = rows_kept[~no_date]
	every_row = len(rows_kept) == len(frame)

	out = {}
	for col in known:
		name = col.name
		if name in typed:
			# A copy or a cut, never the caller's own column.
			out[name] = typed[name].copy() if every_row else typed[name][rows_kept]
			continue
		if name == spec.id and pd.api.types.is_numeric_dtype(raw[name]):
			# numeric ids deduplicate fast as they are; turning them into text costs seconds
			out[name] = raw[name].array.copy() if every_row else raw[name].take(rows_kept).array
		else:
			out[name] = _to_text(raw[name], None if every_row else rows_kept)
	for col in known:
		if col.kind == NUMBER and col.name in required:
			empty = np.isnan(out[col.name])
			if empty.any():
				warnings.append(f"{int(empty.sum())} empty {col.name!r} value(s) counted as 0")
				out[col.name] = np.where(empty, 0.0, out[col.name])
	unknown = [c for c in frame.columns if spec.column(str(c)) is None]
	if unknown:
		warnings.append(f"ignored column(s) outside the contract: {', '.join(map(str, unknown[:5]))}")
	index = pd.RangeIndex(len(rows_kept))
	# Series keep text columns as Python objects (a frame built from bare arrays would make them
	# pandas strings) and the frame takes the arrays as they are, without another copy.
	series = {
		name: pd.Series(
			values,
			index=index,
			dtype=object if isinstance(values, np.ndarray) and values.dtype.kind == "O" else None,
			copy=False,
		)
		for name, values in out.items()
	}
	clean = pd.DataFrame(series, index=index, copy=False)
	return Normalised(clean, dropped, warnings)


def restrict(
	base: Normalised,
	dataset_key: str,
	given_columns: Iterable[str],
	given_rows: int,
	require: Iterable[str] = (),
	optional: Iterable[str] | None = None,
) -> Normalised:
	"""What `normalise(dataset_key, rows, require, optional)` gives, from `base`: the same rows
	normalised once with `require=()` and every column of `optional` here included.

	Which rows count does not depend on the columns asked for (status, id and date are always
	read), so one normalisation serves several analyses: each gets its own columns, its own
	required numbers filled in and its own copy of the counts.
	"""
	spec = dataset(dataset_key)
	required = list(dict.fromkeys(require))
	for name in required:
		if spec.column(name) is None:
			raise AnalyticsError(f"Dataset {dataset_key!r} has no column {name!r} in the data contract")
	given = set(given_columns)
	missing = [name for name in required if name not in given]
	if missing and given_rows:
		raise AnalyticsError(
			f"Dataset {dataset_key!r} is missing column(s) {', '.join(repr(m) for m in missing)}; "
			f"expected columns: {', '.join(spec.names)}"
		)
	if not given_rows:
		return Normalised(base.frame.copy(), dict(base.dropped), list(base.warnings))
	wanted = None
	if optional is not None:
		wanted = {*required, *optional, "status", "docstatus"} | {spec.id, spec.date} - {None}
	columns = [c for c in base.frame.columns if wanted is None or c in wanted]
	frame = base.frame[columns]
	warnings = []
	for col in spec.columns:
		if col.kind == NUMBER and col.name in required and col.name in frame.columns:
			empty = np.isnan(frame[col.name].to_numpy())
			if empty.any():
				warnings.append(f"{int(empty.sum())} empty {col.name!r} value(s) counted as 0")
				frame[col.name] = np.where(empty, 0.0, frame[col.name].to_numpy())
	return Normalised(frame, dict(base.dropped), warnings + list(base.warnings))


def describe() -> list[dict]:
	"""The contract as data, for the catalogue and for connectors to map their fields."""
	return [
		{
			"key": d.key,
			"title": d.title,
			"description": d.description,
			"date": d.date,
			"columns": [{"name": c.name, "type": c.kind, "description": c.description} for c in d.columns],
		}
		for d in DATASETS.values()
	]
