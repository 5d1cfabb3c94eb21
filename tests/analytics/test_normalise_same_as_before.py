"""The fast normalisation gives exactly what the row-by-row-copying one gave before it.

`normalise_before.normalise` is the earlier implementation, kept unchanged as the oracle: the
same frame (values, dtypes, column order), the same dropped counts, warnings and errors, on
generated datasets and on awkward inputs - strings for numbers and dates, missing and empty
cells, repeated and empty ids, statuses in any case, categories, several companies and
currencies, filtered frames - so the speed-up cannot change a figure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analytics import catalog, generate
from analytics.contract import DATASETS, NOT_SET, normalise
from analytics.errors import AnalyticsError
from tests.analytics import normalise_before as before


def _same(dataset_key, rows, require=(), optional=None):
	copy = rows.copy() if isinstance(rows, pd.DataFrame) else rows
	old = before.normalise(dataset_key, copy, require, optional)
	new = normalise(dataset_key, rows, require, optional)
	pd.testing.assert_frame_equal(new.frame, old.frame, check_dtype=True, check_exact=True)
	assert list(new.frame.columns) == list(old.frame.columns)
	assert new.dropped == old.dropped
	assert new.warnings == old.warnings
	return new


@pytest.fixture(scope="module")
def datasets():
	return generate.all_datasets(3_000, seed=4)


def test_every_dataset_whole_same_as_before(datasets):
	for key, frame in datasets.items():
		_same(key, frame)


def test_every_catalogue_analysis_columns_same_as_before(datasets):
	for analysis in catalog.all_analyses():
		for name, columns in analysis.needs.items():
			_same(name, datasets[name], columns, analysis.uses.get(name, ()))


def _messy_sales(n: int, seed: int) -> pd.DataFrame:
	"""Generated sales lines with holes, repeats, drafts and text where numbers belong."""
	rng = np.random.default_rng(seed)
	frame = generate.sales(n, seed=seed)
	pick = lambda share: rng.random(n) < share  # noqa: E731
	frame["id"] = frame["id"].where(~pick(0.02), frame["id"].iloc[0])
	frame.loc[pick(0.01), "id"] = ""
	frame.loc[pick(0.01), "id"] = None
	frame.loc[pick(0.005), "id"] = NOT_SET
	frame.loc[pick(0.02), "party"] = None
	frame.loc[pick(0.02), "party"] = ""
	frame.loc[pick(0.01), "item"] = "   "
	frame.loc[pick(0.03), "date"] = pd.NaT
	frame.loc[pick(0.02), "amount"] = np.nan
	frame["status"] = rng.choice(
		["Paid", "Draft", " cancelled ", "CANCELLED", "Unpaid", None], n, p=[0.5, 0.02, 0.02, 0.02, 0.4, 0.04]
	)
	frame["docstatus"] = rng.choice([0.0, 1.0, 2.0, np.nan], n, p=[0.02, 0.9, 0.03, 0.05])
	frame["company"] = rng.choice(["Acme GmbH", "Acme Inc", "Acme Ltd"], n)
	frame["currency"] = rng.choice(["EUR", "USD", "GBP"], n)
	return frame


@pytest.mark.parametrize("seed", [0, 1])
def test_messy_generated_sales_same_as_before(seed):
	# Over 20,000 rows kept, so repeated text goes the way large columns go.
	frame = _messy_sales(30_000, seed)
	out = _same("sales", frame)
	assert {"draft", "cancelled", "duplicate", "missing date"} <= set(out.dropped)
	_same("sales", frame, ["party", "amount"], ())
	_same("sales", frame, ["date", "amount", "item"], ("cost",))
	# The same rows with ids as numbers, missing ones included.
	numeric = frame.assign(id=pd.to_numeric(frame["id"], errors="coerce"))
	_same("sales", numeric)
	# Categories for the repeated text.
	_same("sales", frame.astype({"party": "category", "item": "category", "status": "category"}))
	# Plain Python objects rather than pandas strings.
	_same("sales", frame.astype({"party": object, "id": object, "document": object}))
	# pandas strings kept in Python rather than Arrow (as where pyarrow is not installed).
	python_strings = pd.StringDtype("python", na_value=np.nan)
	_same("sales", frame.astype({"party": python_strings, "item": python_strings, "id": python_strings}))


def test_filtered_frame_with_gaps_in_its_index_same_as_before():
	frame = _messy_sales(5_000, 2)
	_same("sales", frame[frame["quantity"] > 3])
	_same("sales", frame.sample(frac=0.5, random_state=1))


def test_rows_as_dicts_with_mixed_types_same_as_before():
	rows = [
		{
			"id": 1,
			"date": "2025-01-03",
			"amount": "12.50",
			"quantity": 2,
			"party": "A",
			"company": "Acme Ltd",
		},
		{"id": "1", "date": "2025-01-03 14:30", "amount": 7, "quantity": "3", "party": 5, "currency": "USD"},
		{"id": "2", "date": pd.Timestamp("2025-02-01 08:00"), "amount": "", "quantity": None, "party": ""},
		{"id": None, "date": "2025-02-02", "amount": " ", "party": None, "status": "Draft"},
		{"id": "", "date": "", "amount": 3.5, "party": "B", "docstatus": "2"},
		{
			"id": "3",
			"date": "2025-03-01",
			"amount": None,
			"party": "B",
			"docstatus": 1,
			"status": " Cancelled",
		},
		{"id": "4", "date": "2025-03-05", "amount": -4, "party": "C", "docstatus": None},
		{"id": "4", "date": "2025-03-06", "amount": 8, "party": "C", "docstatus": 0},
	]
	out = _same("sales", rows, ["date", "amount"])
	assert out.dropped and out.warnings
	_same("sales", rows)
	_same("sales", rows, ["party"], ("amount",))


def test_dates_with_times_and_zones_same_as_before():
	frame = pd.DataFrame(
		{
			"id": ["a", "b", "c", "d"],
			"date": pd.to_datetime(
				["2025-01-01 23:59", "1969-12-31 06:00", "2025-03-01 00:00", None], utc=True
			).tz_convert("Asia/Tokyo"),
			"amount": [1.0, 2.0, 3.0, 4.0],
		}
	)
	out = _same("sales", frame, ["date", "amount"])
	assert out.frame["date"].dt.hour.eq(0).all()
	_same("sales", frame.assign(date=frame["date"].dt.tz_localize(None).astype("datetime64[s]")))


def test_other_datasets_with_awkward_cells_same_as_before():
	timesheets = pd.DataFrame(
		{
			"id": ["t1", "t2", "t2", "t3", "t4"],
			"date": ["2025-01-01", "2025-01-02", "2025-01-02", None, "2025-01-05"],
			"hours": ["1.5", 2, 2, 3, "4"],
			"billable": ["Yes", "no", "no", 1, ""],
			"project": ["P1", None, None, "P2", ""],
			"docstatus": [1, 1, 1, 2, 1],
		}
	)
	_same("timesheets", timesheets)
	_same("timesheets", timesheets, ["hours", "billable"], ("project",))
	employees = pd.DataFrame(
		{
			"employee": ["E1", "E2", "E2", None],
			"status": ["Active", "Left", "Active", "Draft"],
			"joining_date": ["2020-01-01", "2021-05-05", "2021-05-05", "2022-02-02"],
			"relieving_date": [None, "2024-01-01", "", None],
			"department": pd.Categorical(["Ops", "Ops", None, "Sales"]),
		}
	)
	_same("employees", employees)
	_same(
		"payments",
		pd.DataFrame({"document": [1, 2, 2, None], "date": ["2025-01-01"] * 4, "amount": [1, 2, 3, 4]}),
	)


@pytest.mark.parametrize(
	"column, value",
	[("amount", "twelve"), ("amount", np.inf), ("date", "31/31/2025"), ("quantity", "1,5")],
)
def test_bad_cell_same_error_as_before(column, value):
	frame = _messy_sales(300, 3)
	frame[column] = frame[column].astype(object)
	frame.loc[frame.index[7], column] = value
	with pytest.raises(AnalyticsError) as old:
		before.normalise("sales", frame.copy())
	with pytest.raises(AnalyticsError) as new:
		normalise("sales", frame)
	assert str(new.value) == str(old.value)


def test_empty_input_same_as_before():
	for key in DATASETS:
		_same(key, [])
		_same(key, pd.DataFrame({"id": []}), (), ())


def test_normalised_frame_never_shares_the_callers_columns():
	# Analyses may change their frame; the caller's data must not change with it.
	frame = generate.sales(1_000, seed=3).astype({"party": object})
	frame["id"] = np.arange(len(frame))
	frame["docstatus"] = 1
	kept = frame.copy()
	out = normalise("sales", frame, ["date", "amount", "party", "quantity"], ())
	for name in out.frame.columns:
		assert not np.shares_memory(np.asarray(out.frame[name].array), np.asarray(frame[name].array)), name
	out.frame.loc[0, "amount"] = -1.0
	out.frame.loc[0, "party"] = "changed"
	pd.testing.assert_frame_equal(frame, kept)
