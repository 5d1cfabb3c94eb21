"""The vectorised unusual_entries rows and bought_together pairs give what the earlier
iterrows and self-join versions gave, on generated ledgers and sales."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analytics import anomalies, generate
from analytics.catalog import items
from analytics.result import rounded
from analytics.runner import run


def _pairs_by_self_join(sales: pd.DataFrame, max_lines: int, min_count: int) -> list[tuple[str, int]]:
	doc_codes, _ = pd.factorize(sales["document"])
	item_codes, item_names = pd.factorize(sales["item"])
	lines = pd.DataFrame({"doc": doc_codes, "item": item_codes}).drop_duplicates()
	sizes = lines.groupby("doc")["item"].transform("size").to_numpy()
	multi = lines[(sizes > 1) & (sizes <= max_lines)]
	pairs = multi.merge(multi, on="doc")
	pairs = pairs[pairs["item_x"] < pairs["item_y"]]
	counts = pairs.groupby(["item_x", "item_y"]).size()
	names = [str(n) for n in item_names]
	return sorted(
		(" + ".join(sorted((names[a], names[b]))), int(c)) for (a, b), c in counts.items() if c >= min_count
	)


@pytest.mark.parametrize("seed", [0, 1])
def test_bought_together_pairs_same_as_a_self_join(seed):
	sales = generate.sales(20_000, seed=seed)
	out = items.bought_together({"sales": sales}, {"min_count": 1, "max_lines": 50})
	expected = _pairs_by_self_join(sales, 50, 1)
	shown = sorted((r[0], r[1]) for r in out["table"]["rows"])
	counts = dict(expected)
	assert shown and all(counts[pair] == n for pair, n in shown)
	assert out["table"]["total_rows"] == len(expected)
	# The table lists the most frequent pairs first.
	top = sorted(counts.values(), reverse=True)[: len(shown)]
	assert sorted((n for _, n in shown), reverse=True) == top


@pytest.mark.parametrize("seed", [0, 1])
def test_unusual_entries_rows_same_as_iterrows(seed):
	gl = generate.gl(20_000, seed=seed)
	out = run("finance.unusual_entries", {"gl": gl}, {"threshold": 2.0})
	vouchers = gl.groupby("document").agg(
		amount=("debit", "sum"), date=("date", "min"), account=("account", "first")
	)
	z = anomalies.robust_z(vouchers["amount"].to_numpy(dtype=float))
	found = vouchers[z > 2.0].assign(z=z[z > 2.0]).sort_values("amount", ascending=False)
	expected = [
		[str(k), str(r.date.date()), r.account, rounded(r.amount), rounded(r.z)] for k, r in found.iterrows()
	]
	assert out["table"]["rows"] and out["table"]["rows"] == expected[: len(out["table"]["rows"])]
	assert out["table"]["total_rows"] == len(expected)
	assert np.all(np.diff([r[3] for r in out["table"]["rows"]]) <= 0)


def test_unusual_entries_ties_ranked_as_grouping_by_name_ranked_them():
	# Equal voucher totals, names out of order of appearance: the ranking must not depend on it.
	names = [f"JV-{i:03d}" for i in (7, 3, 9, 1, 5, 8, 2, 6, 4)]
	debits = [1000.0, 1000.0, 1000.0, 10.0, 11.0, 12.0, 10.5, 11.5, 1000.0]
	gl = pd.DataFrame(
		{
			"document": names,
			"debit": debits,
			"date": pd.to_datetime(["2025-01-05"] * len(names)),
			"account": ["Rent - C"] * len(names),
		}
	)
	out = run("finance.unusual_entries", {"gl": gl}, {"threshold": 2.0})
	vouchers = gl.groupby("document").agg(
		amount=("debit", "sum"), date=("date", "min"), account=("account", "first")
	)
	z = anomalies.robust_z(vouchers["amount"].to_numpy(dtype=float))
	found = vouchers[z > 2.0].assign(z=z[z > 2.0]).sort_values("amount", ascending=False)
	assert [r[0] for r in out["table"]["rows"]] == [str(k) for k in found.index]
	assert len(found) == 4


def test_large_payments_table_is_the_largest_by_robust_z_and_counts_them_all():
	payments = generate.payments(20_000, seed=3)
	out = run("cash.large_payments", {"payments": payments}, {"threshold": 2.0})
	rows = []
	for flow in ("in", "out"):
		part = payments[payments["direction"] == flow]
		z = anomalies.robust_z(part["amount"].to_numpy(dtype=float))
		rows += [
			(d, rounded(a), rounded(v))
			for d, a, v in zip(part["document"], part["amount"], z, strict=True)
			if v > 2.0
		]
	expected = sorted(rows, key=lambda r: -r[1])
	assert len(expected) > 50
	assert out["table"]["total_rows"] == len(expected)
	shown = [(r[0], r[4], r[5]) for r in out["table"]["rows"]]
	assert len(shown) == 50
	assert [r[1] for r in shown] == [r[1] for r in expected[:50]]
	assert set(shown) <= set(expected)


def test_rfm_table_lists_the_customers_by_revenue_and_counts_them_all():
	sales = generate.sales(20_000, seed=4)
	out = run("customers.rfm", sales)
	counted = sales[sales["docstatus"] == 1]
	revenue = counted.groupby("party")["amount"].sum().sort_values(ascending=False)
	invoices = counted.groupby("party")["document"].nunique()
	assert out["table"]["total_rows"] == len(revenue) > 50
	rows = out["table"]["rows"]
	assert [r[0] for r in rows] == list(revenue.index[: len(rows)])
	assert [r[4] for r in rows] == [rounded(v) for v in revenue.iloc[: len(rows)]]
	assert [r[3] for r in rows] == [int(invoices[name]) for name in revenue.index[: len(rows)]]


def _messy(datasets: dict) -> dict:
	"""The same datasets with holes, repeated ids and text where numbers and dates belong."""
	out = dict(datasets)
	sales = datasets["sales"].copy()
	rng = np.random.default_rng(9)
	n = len(sales)
	sales.loc[rng.random(n) < 0.03, "party"] = ""
	sales.loc[rng.random(n) < 0.03, "item"] = None
	sales.loc[rng.random(n) < 0.02, "id"] = sales["id"].iloc[0]
	sales["amount"] = sales["amount"].astype(str).where(rng.random(n) > 0.05, "")
	sales["date"] = sales["date"].dt.strftime("%Y-%m-%d").where(rng.random(n) > 0.02, None)
	sales["status"] = rng.choice(["Paid", "Draft", "Cancelled", "Unpaid"], n, p=[0.6, 0.05, 0.05, 0.3])
	out["sales"] = sales
	gl = datasets["gl"].copy()
	gl["debit"] = gl["debit"].astype(object).where(rng.random(len(gl)) > 0.05, None)
	gl["docstatus"] = rng.choice([0, 1, 2], len(gl), p=[0.05, 0.9, 0.05])
	out["gl"] = gl
	return out


@pytest.mark.parametrize("messy", [False, True])
def test_every_analysis_same_result_as_with_the_earlier_normaliser(messy, monkeypatch):
	from analytics import catalog, runner
	from tests.analytics import normalise_before

	data = generate.all_datasets(2_000, seed=6)
	if messy:
		data = _messy(data)
	analyses = list(catalog.all_analyses())
	assert len(analyses) >= 100
	now = {a.key: run(a.key, {name: data[name] for name in a.needs}) for a in analyses}
	monkeypatch.setattr(runner, "normalise", normalise_before.normalise)
	for analysis in analyses:
		earlier = run(analysis.key, {name: data[name] for name in analysis.needs})
		assert now[analysis.key] == earlier, analysis.key


@pytest.mark.parametrize(
	"freq, pandas_freq", [("month", "M"), ("quarter", "Q"), ("year", "Y"), ("week", "W")]
)
def test_period_starts_of_many_dates_same_as_pandas_periods(freq, pandas_freq):
	from analytics import periods

	rng = np.random.default_rng(5)
	# Pre-1970 days, leap days and times of day, more dates than days in their range (the looked-up way).
	days = np.datetime64("1967-11-15") + rng.integers(0, 3_000, 20_000).astype("timedelta64[D]")
	dates = days.astype("datetime64[ns]") + rng.integers(0, 86_400, days.size).astype("timedelta64[s]")
	expected = pd.Series(dates).dt.to_period(pandas_freq).dt.start_time.to_numpy().astype("datetime64[D]")
	assert np.array_equal(periods.start_of(dates, freq), expected)
	# Few dates over a wide range, and a missing date: worked out date by date.
	sparse = np.array(["1900-02-28", "2024-02-29", "2199-12-31"], dtype="datetime64[ns]")
	sparse = np.concatenate([sparse] * 400)
	expected = pd.Series(sparse).dt.to_period(pandas_freq).dt.start_time.to_numpy().astype("datetime64[D]")
	assert np.array_equal(periods.start_of(sparse, freq), expected)
	with_gap = np.concatenate([dates[:5_000], np.array(["NaT"], dtype="datetime64[ns]")])
	out = periods.start_of(with_gap, freq)
	assert np.array_equal(out[:-1], periods.start_of(dates[:5_000], freq))


@pytest.mark.parametrize("sort", [True, False])
def test_distinct_counts_same_as_pandas_nunique(sort):
	from analytics.blocks import distinct_counts

	rng = np.random.default_rng(8)
	keys = rng.choice(np.array(["b", "a", "c", "d", None], dtype=object), 5_000)
	values = rng.choice(np.array([f"SINV-{i}" for i in range(300)] + [None], dtype=object), 5_000)
	values[keys == "d"] = None  # a key whose values are all missing counts 0
	out = distinct_counts(keys, values, sort=sort)
	expected = pd.Series(values).groupby(keys, sort=sort).nunique()
	assert out.to_dict() == expected.to_dict()
	assert out["d"] == 0 and out["a"] > 100
	if sort:
		assert list(out.index) == list(expected.index)


def test_top_customers_invoices_are_their_distinct_invoices():
	sales = generate.sales(20_000, seed=5)
	out = run("customers.top", sales)
	counted = sales[sales["docstatus"] == 1]
	invoices = counted.groupby("party")["document"].nunique()
	column = out["table"]["columns"].index("invoices")
	rows = out["table"]["rows"]
	assert len(rows) >= 10
	assert all(r[column] == invoices[r[0]] for r in rows)


@pytest.mark.parametrize("freq", ["day", "week", "month", "quarter", "year"])
def test_distinct_per_period_same_as_pandas_nunique(freq):
	# Period codes from day numbers and integer codes taken as they are give what grouping the
	# period starts and counting distinct values gave.
	from analytics import periods

	rng = np.random.default_rng(3)
	dates = np.datetime64("2021-01-01") + rng.integers(0, 900, 50_000).astype("timedelta64[D]")
	dates[rng.random(dates.size) < 0.3] = np.datetime64("2021-06-15")  # a busy day
	names = np.array([f"SINV-{i}" for i in rng.integers(0, 8_000, dates.size)], dtype=object)
	names[rng.random(dates.size) < 0.05] = None
	codes, _ = pd.factorize(names)
	starts = periods.start_of(dates, freq)
	expected = pd.Series(names).groupby(starts).nunique()
	for values in (names, codes):
		index, counts = periods.aggregate(dates, values, freq, "nunique", fill=False)
		assert list(index) == list(expected.index.to_numpy().astype("datetime64[D]"))
		assert counts.tolist() == expected.to_numpy(dtype=float).tolist()


def test_breakdown_on_keys_hashed_once_same_as_grouping_the_names():
	# Totals and distinct counts from the keys' codes, hashed once, equal grouping by the names.
	from analytics import blocks

	sales = generate.sales(30_000, seed=4)
	sales.loc[sales.index[::97], "party"] = None  # lines with no customer are left out, as groupby does
	out = blocks.breakdown(
		sales,
		"party",
		"amount",
		label="Revenue",
		noun="customer",
		top_n=5000,
		extra={"invoices": ("document", "nunique")},
	)
	grouped = sales.groupby("party", sort=False)
	totals = grouped["amount"].sum().sort_values(ascending=False, kind="stable")
	invoices = grouped["document"].nunique()
	expected = [[name, rounded(amount), float(invoices[name])] for name, amount in totals.items()]
	rows = [[r[0], r[1], r[4]] for r in out["table"]["rows"]]
	assert rows == expected[: len(rows)] and out["table"]["total_rows"] == len(expected)
