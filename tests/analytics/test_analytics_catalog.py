"""Every catalogue analysis: registration, result shape, bounded summary, valid chart, and the edge cases
(empty input, one period, missing columns, non-numeric values, negative amounts, all zeros, duplicates)."""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from analytics import catalog, generate
from analytics.catalog.base import CATEGORIES
from analytics.contract import DATASETS, NUMBER
from analytics.errors import AnalyticsError
from analytics.result import summary_for_model
from analytics.runner import run

KEYS = list(catalog.ANALYSES)


@cache
def data() -> dict[str, pd.DataFrame]:
	return generate.all_datasets(3_000, seed=5)


def inputs(key: str, change=None) -> dict[str, pd.DataFrame]:
	analysis = catalog.get(key)
	out = {}
	for name in analysis.needs:
		frame = data()[name].copy()
		out[name] = change(name, frame) if change else frame
	return out


def strict_json(result: dict) -> str:
	return json.dumps(result, allow_nan=False)


def test_catalogue_has_100_analyses_in_12_categories():
	assert len(KEYS) == 100
	assert {a.category for a in catalog.all_analyses()} == set(CATEGORIES)
	assert len(CATEGORIES) == 12


@pytest.mark.parametrize("key", KEYS)
def test_registration_is_complete_data(key):
	analysis = catalog.get(key)
	assert analysis.title and len(analysis.purpose) > 30
	for name, columns in analysis.needs.items():
		assert name in DATASETS
		for column in columns:
			assert DATASETS[name].column(column) is not None, f"{key}: {name}.{column} is not in the contract"
	defaults = analysis.resolve({})
	assert set(defaults) == {p.name for p in analysis.all_params()}
	json.dumps(analysis.describe())


@pytest.mark.parametrize("key", KEYS)
def test_runs_on_generated_data_with_a_bounded_summary_and_a_valid_chart(key):
	result = run(key, inputs(key))
	strict_json(result)
	assert result["key"] == key and result["kpis"] and result["observations"]
	for item in result["kpis"]:
		assert "label" in item and "value" in item
	summary = summary_for_model(result)
	assert len(json.dumps(summary)) <= 2400
	if result["chart"] is not None:
		go.Figure(result["chart"])  # raises on an invalid figure
	if result["table"]:
		assert len(result["table"]["rows"]) <= 50


def rows_accounted_for(result: dict, given: dict[str, pd.DataFrame]) -> None:
	"""Every row given is either used or counted as dropped with a reason: nothing vanishes silently."""
	for name, frame in given.items():
		dropped = result["dropped"].get(name) or {}
		lost = sum(dropped.values()) if isinstance(dropped, dict) else int(dropped)
		assert result["rows"][name] == len(frame) - lost, f"{name}: {result['rows']} vs {len(frame)} given"


def currency_values(result: dict) -> list[float]:
	return [k["value"] for k in result["kpis"] if k.get("unit") == "currency" and k.get("value") is not None]


@pytest.mark.parametrize("key", KEYS)
def test_empty_input_gives_a_result_not_an_error(key):
	result = run(key, {name: [] for name in catalog.get(key).needs})
	strict_json(result)
	# Nothing is invented from no data: no figures, no chart, and the reason said in words.
	assert result["kpis"] == [] and result["chart"] is None
	assert result["observations"][0].startswith("No ")
	assert result["observations"][0].endswith("in the selected period.")


def _first_needed(key: str, kind: str | None = None) -> tuple[str, str]:
	analysis = catalog.get(key)
	for name, columns in analysis.needs.items():
		for column in columns:
			if kind is None or DATASETS[name].column(column).kind == kind:
				return name, column
	return "", ""


@pytest.mark.parametrize("key", KEYS)
def test_missing_column_is_named(key):
	dataset, column = _first_needed(key)

	def drop(name, frame):
		return frame.drop(columns=[column]) if name == dataset else frame

	with pytest.raises(AnalyticsError, match=f"'{column}'"):
		run(key, inputs(key, drop))


@pytest.mark.parametrize("key", KEYS)
def test_non_numeric_value_is_named(key):
	dataset, column = _first_needed(key, NUMBER)
	if not column:
		dataset, column = _first_needed(key, "date")
	if not column:
		pytest.skip("reads only text columns")

	def spoil(name, frame):
		if name == dataset:
			frame[column] = frame[column].astype(object)
			frame.loc[frame.index[0], column] = "not-a-value"
		return frame

	with pytest.raises(AnalyticsError, match=f"column '{column}'"):
		run(key, inputs(key, spoil))


@pytest.mark.parametrize("key", KEYS)
def test_single_period(key):
	def one_day(name, frame):
		date = DATASETS[name].date
		if date is None or not len(frame):
			return frame
		first = frame[date].dropna().sort_values().iloc[len(frame) // 2]
		return frame[frame[date] == first]

	given = inputs(key, one_day)
	result = run(key, given)
	strict_json(result)
	rows_accounted_for(result, given)
	assert result["kpis"] or result["observations"]


@pytest.mark.parametrize("key", KEYS)
def test_negative_amounts(key):
	def negate(name, frame):
		measure = DATASETS[name].measure
		if measure and measure in frame:
			frame[measure] = -frame[measure]
		return frame

	given = inputs(key, negate)
	result = run(key, given)
	strict_json(result)
	# Negative amounts (returns, credit notes) are data, not errors: no row is dropped for its sign.
	rows_accounted_for(result, given)
	assert all(not reason.startswith("negative") for d in result["dropped"].values() for reason in d)


@pytest.mark.parametrize("key", KEYS)
def test_all_zero_values(key):
	def zero(name, frame):
		for column in DATASETS[name].columns:
			if column.kind == NUMBER and column.name in frame and column.name != "docstatus":
				frame[column.name] = 0.0
		return frame

	result = run(key, inputs(key, zero))
	strict_json(result)
	# With every amount zero, every money figure is zero: nothing is estimated from elsewhere.
	assert all(value == 0 for value in currency_values(result))


@pytest.mark.parametrize("key", KEYS)
def test_duplicate_rows_are_dropped_when_rows_have_ids(key):
	analysis = catalog.get(key)
	with_ids = all(DATASETS[name].id and DATASETS[name].id in data()[name] for name in analysis.needs)

	def double(name, frame):
		return pd.concat([frame, frame], ignore_index=True)

	doubled = run(key, inputs(key, double))
	strict_json(doubled)
	if with_ids:
		assert doubled["kpis"] == run(key, inputs(key))["kpis"]
		assert all(doubled["dropped"][name]["duplicate"] for name in analysis.needs)


def test_unknown_key_suggests_close_ones():
	with pytest.raises(AnalyticsError, match="did you mean sales.monthly_trend"):
		run("sales.monthly_trnd", [])


def test_unknown_parameter_is_named():
	with pytest.raises(AnalyticsError, match="no parameter.*'colour'"):
		run("sales.monthly_trend", [], {"colour": "red"})


def test_bad_parameter_value_is_named():
	with pytest.raises(AnalyticsError, match="'horizon' must be a whole number"):
		run("sales.monthly_trend", [], {"horizon": "soon"})
	with pytest.raises(AnalyticsError, match="'freq' must be one of"):
		run("sales.monthly_trend", [], {"freq": "fortnight"})


def test_multi_dataset_analysis_needs_each_dataset():
	with pytest.raises(AnalyticsError, match="needs dataset 'sales'"):
		run("inventory.turnover", {"stock": data()["stock"]})


def test_start_and_end_keep_the_period_and_report_the_rest():
	result = run("sales.monthly_trend", data()["sales"], {"start": "2023-01-01", "end": "2023-12-31"})
	assert result["series"]["labels"][0] == "2023-01" and result["series"]["labels"][-1] == "2023-12"
	assert result["dropped"]["sales"]["outside period"] > 0


def test_search_finds_analyses_by_words():
	assert catalog.search("receivables ageing buckets")[0]["key"] == "receivables.ageing"
	assert catalog.search("inventory turnover")[0]["key"] == "inventory.turnover"
	assert catalog.search("which customers stopped buying churn")[0]["key"] == "customers.churn"


def test_summary_stays_bounded_at_a_million_rows_of_detail():
	frame = generate.sales(50_000, seed=9)
	result = run("customers.top", frame)
	assert len(json.dumps(summary_for_model(result))) <= 2400
	assert result["table"]["total_rows"] > 50 and len(result["table"]["rows"]) == 50


def test_all_results_are_finite_numbers():
	for key in ("sales.monthly_trend", "margins.by_item", "receivables.dso"):
		text = strict_json(run(key, inputs(key)))
		assert "NaN" not in text and "Infinity" not in text


def test_generated_data_is_deterministic():
	assert generate.sales(500, seed=3).equals(generate.sales(500, seed=3))
	assert not np.array_equal(generate.sales(500, seed=3)["amount"], generate.sales(500, seed=4)["amount"])
