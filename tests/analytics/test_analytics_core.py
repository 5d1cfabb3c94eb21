"""Forecast, anomalies, change point, periods, the data contract and the bounded summary."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from analytics import anomalies, changepoint, periods
from analytics.contract import NOT_SET, normalise
from analytics.errors import AnalyticsError
from analytics.forecast import forecast
from analytics.result import kpi, summary_for_model

# --- forecast -------------------------------------------------------------------


def test_forecast_returns_point_and_80_percent_range_of_horizon_length():
	rng = np.random.default_rng(0)
	values = 100 + np.arange(30) * 2 + rng.normal(0, 3, 30)
	out = forecast(values, 4)
	assert set(out) == {"point", "lower", "upper", "method"}
	assert len(out["point"]) == len(out["lower"]) == len(out["upper"]) == 4
	assert all(lo <= p <= up for lo, p, up in zip(out["lower"], out["point"], out["upper"], strict=True))
	assert "backtest" in out["method"]
	# Widths grow with the horizon.
	widths = [u - lo for lo, u in zip(out["lower"], out["upper"], strict=True)]
	assert widths == sorted(widths)


def test_forecast_continues_a_clean_line():
	values = [1 + 2 * t for t in range(24)]  # next value by hand: 1 + 2*24 = 49
	out = forecast(values, 1)
	assert out["point"][0] == pytest.approx(49, rel=0.02)


def test_forecast_of_constant_series_is_flat_with_no_spread():
	out = forecast([7.0] * 12, 3)
	assert out["point"] == [7.0, 7.0, 7.0]
	assert out["lower"] == out["upper"] == [7.0, 7.0, 7.0]
	assert "constant" in out["method"]


def test_forecast_of_all_zero_series_is_zero():
	assert forecast([0, 0, 0, 0, 0], 2)["point"] == [0.0, 0.0]


@pytest.mark.parametrize("values", [[5.0], [5.0, 9.0], [3.0, 4.0, 8.0]])
def test_forecast_falls_back_to_last_value_below_four_points_and_says_so(values):
	out = forecast(values, 2)
	assert out["point"] == [values[-1]] * 2
	assert out["method"].startswith("naive")


def test_forecast_short_series_uses_regression_and_last_value_and_says_so():
	values = [10, 12, 14, 16, 18, 20]  # line: next 22; last value 20; blend (22+20)/2 = 21
	out = forecast(values, 1)
	assert out["point"][0] == pytest.approx(21.0)
	assert "short series" in out["method"]


def test_forecast_seasonal_series_repeats_the_season():
	season = np.array([10, 12, 15, 20, 30, 40, 45, 40, 30, 20, 15, 12], dtype=float)
	values = np.tile(season, 4)
	out = forecast(values, 12, season_length=12)
	assert np.allclose(out["point"], season, rtol=0.05)
	assert "season of 12" in out["method"]


def test_forecast_says_when_series_is_too_short_for_its_season():
	out = forecast(np.arange(1, 16, dtype=float), 2, season_length=12)
	assert "needs 24" in out["method"]


def test_forecast_never_negative_for_non_negative_history():
	out = forecast([50, 40, 30, 20, 10, 5, 2, 1, 0.5, 0.2, 0.1, 0.05], 6)
	assert min(out["point"]) >= 0 and min(out["lower"]) >= 0


@pytest.mark.parametrize(
	("values", "horizon", "message"),
	[
		([], 3, "no values"),
		([1, 2, "x"], 3, "entry 2"),
		([1, 2, float("nan")], 3, "entry 2"),
		([1, 2, 3], 0, "at least 1"),
	],
)
def test_forecast_bad_input_is_a_named_error(values, horizon, message):
	with pytest.raises(AnalyticsError, match=message):
		forecast(values, horizon)


# --- anomalies ------------------------------------------------------------------


def test_anomaly_robust_z_matches_hand_computation():
	values = [10, 11, 9, 10, 12, 10, 11, 100]
	# median 10.5; absolute deviations sorted 0.5 x5, 1.5 x2, 89.5 -> MAD 0.5; z = 0.6745 * 89.5 / 0.5
	found = anomalies.find(values)
	assert [a["index"] for a in found] == [7]
	assert found[0]["z"] == pytest.approx(0.6745 * 89.5 / 0.5, rel=1e-3)


def test_anomaly_with_zero_mad_uses_mean_absolute_deviation():
	# median 5, MAD 0; mean absolute deviation 95/5 = 19; z = 95 / (1.253314 * 19)
	found = anomalies.find([5, 5, 5, 5, 100])
	assert [a["index"] for a in found] == [4]
	assert found[0]["z"] == pytest.approx(95 / (1.253314 * 19), rel=1e-3)


def test_anomaly_low_point_has_negative_z():
	found = anomalies.find([100, 101, 99, 100, 102, 1, 100])
	assert [a["index"] for a in found] == [5] and found[0]["z"] < 0


@pytest.mark.parametrize("values", [[], [1], [0, 0, 0, 0], [3, 3, 3, 3, 3]])
def test_anomaly_none_in_empty_short_or_constant_series(values):
	assert anomalies.find(values) == []


def test_anomaly_threshold_is_respected():
	values = [10, 11, 9, 10, 12, 10, 11, 14]
	z = anomalies.robust_z(values)
	assert anomalies.find(values, threshold=float(abs(z).max()) + 0.01) == []


def test_anomaly_detrended_does_not_flag_a_steady_trend():
	values = np.arange(1, 25, dtype=float) * 10
	assert anomalies.find(values, detrend=True) == []


# --- change point ---------------------------------------------------------------


def test_changepoint_level_shift_statistic_matches_a_loop_of_ols_regressions():
	# The statistic of every split at once from cumulative sums is the t of z in the OLS regression
	# of the decorrelated series on a constant and z (0 before the split, 1 at it, 1 - rho after).
	import statsmodels.api as sm

	rng = np.random.default_rng(3)
	values = np.r_[rng.normal(100, 5, 14), rng.normal(130, 5, 10)]
	rho, sigma = 0.4, 2.0
	splits, t = changepoint.scores(values, rho, sigma, 3)
	y = values[1:] - rho * values[:-1]
	for k, statistic in zip(splits, t, strict=True):
		z = np.r_[np.zeros(k - 1), 1.0, np.full(y.size - k, 1 - rho)]
		fit = sm.OLS(y, sm.add_constant(z)).fit()
		assert statistic * sigma == pytest.approx(fit.params[1] / np.sqrt(fit.normalized_cov_params[1, 1]))
	found = changepoint.locate(values)
	assert found["index"] == 14
	# The p-value averages the noise models' (each Bonferroni-adjusted) by their weights.
	assert found["raw_p_value"] < found["p_value"] < 0.05
	assert found["confidence"] == pytest.approx(1 - found["p_value"])
	assert found["before_mean"] == pytest.approx(values[:14].mean())
	assert found["shift"] == pytest.approx(values[14:].mean() - values[:14].mean())


def test_changepoint_local_level_statistic_matches_a_loop_of_ols_regressions():
	# Through the moving average (a local level, theta > 0): the t of z in the OLS regression of
	# the filtered differences on the filtered constant and the filtered shift, for every split.
	import statsmodels.api as sm
	from scipy.signal import lfilter

	rng = np.random.default_rng(4)
	values = np.r_[rng.normal(100, 5, 15), rng.normal(125, 5, 12)] + np.cumsum(rng.normal(0, 1, 27))
	theta, sigma = 0.6, 3.0
	splits, t = changepoint.scores(values, 1.0, sigma, 3, theta)
	y = lfilter([1.0], [1.0, -theta], np.diff(values))
	constant = lfilter([1.0], [1.0, -theta], np.ones(y.size))
	for k, statistic in zip(splits, t, strict=True):
		z = lfilter([1.0], [1.0, -theta], np.r_[np.zeros(k - 1), 1.0, np.zeros(y.size - k)])
		fit = sm.OLS(y, np.column_stack([constant, z])).fit()
		assert statistic * sigma == pytest.approx(fit.params[1] / np.sqrt(fit.normalized_cov_params[1, 1]))


def test_changepoint_trend_statistic_matches_a_loop_of_ols_regressions():
	# About a straight line (trend-stationary noise): the t of z in the OLS regression of the
	# decorrelated series on a constant, the decorrelated line and z, for every split.
	import statsmodels.api as sm

	rng = np.random.default_rng(5)
	values = 50 + 0.8 * np.arange(30) + np.r_[np.zeros(17), np.full(13, 9.0)] + rng.normal(0, 2, 30)
	rho, sigma = 0.3, 2.0
	splits, t = changepoint.scores(values, rho, sigma, 3, trend=True)
	y = values[1:] - rho * values[:-1]
	line = np.arange(1, 30) - rho * np.arange(29)
	for k, statistic in zip(splits, t, strict=True):
		z = np.r_[np.zeros(k - 1), 1.0, np.full(y.size - k, 1 - rho)]
		fit = sm.OLS(y, sm.add_constant(np.column_stack([line, z]))).fit()
		assert statistic * sigma == pytest.approx(fit.params[2] / np.sqrt(fit.normalized_cov_params[2, 2]))


def test_changepoint_perfect_step_is_certain():
	found = changepoint.locate([1, 1, 1, 1, 5, 5, 5, 5])
	assert found["index"] == 4 and found["p_value"] < 1e-12 and found["confidence"] == 1.0
	assert found["shift"] == 4.0 and found["relative"] == 4.0


@pytest.mark.parametrize("values", [[], [1, 2, 3, 4, 5], [4.0] * 20, [0.0] * 12])
def test_changepoint_none_when_too_short_or_flat(values):
	assert changepoint.locate(values) is None


def test_changepoint_none_for_pure_noise():
	rng = np.random.default_rng(11)
	assert changepoint.locate(rng.normal(50, 5, 36)) is None


def test_changepoint_respects_min_size():
	values = [9, 1, 1, 1, 1, 1, 1, 1, 1, 1]
	found = changepoint.locate(values, min_size=2)
	assert found is None or found["index"] >= 2


# --- periods --------------------------------------------------------------------


def test_period_starts_and_labels():
	dates = np.array(["2025-01-01", "2025-02-15", "2024-12-29"], dtype="datetime64[ns]")
	assert [str(d) for d in periods.start_of(dates, "week")] == ["2024-12-30", "2025-02-10", "2024-12-23"]
	assert periods.labels(periods.start_of(dates, "quarter"), "quarter") == ["2025-Q1", "2025-Q1", "2024-Q4"]
	assert periods.labels(periods.start_of(dates, "month"), "month") == ["2025-01", "2025-02", "2024-12"]


def test_period_aggregate_fills_missing_months_with_zero():
	dates = np.array(["2025-01-05", "2025-03-10", "2025-03-11"], dtype="datetime64[ns]")
	starts, values = periods.aggregate(dates, np.array([1.0, 2.0, 3.0]), "month")
	assert periods.labels(starts, "month") == ["2025-01", "2025-02", "2025-03"]
	assert values.tolist() == [1.0, 0.0, 5.0]


def test_unknown_frequency_is_a_named_error():
	with pytest.raises(AnalyticsError, match="freq"):
		periods.start_of(np.array(["2025-01-01"], dtype="datetime64[ns]"), "fortnight")


# --- contract -------------------------------------------------------------------


def _rows():
	return [
		{"id": "1", "date": "2025-01-02", "party": "A", "amount": 10, "docstatus": 1},
		{"id": "2", "date": "2025-01-03", "party": "B", "amount": "20.5", "docstatus": 1},
		{"id": "3", "date": "2025-01-04", "party": "C", "amount": 5, "docstatus": 2},
		{"id": "4", "date": "2025-01-05", "party": "", "amount": 7, "docstatus": 0},
		{"id": "2", "date": "2025-01-03", "party": "B", "amount": 20.5, "docstatus": 1},
		{"id": "5", "date": None, "party": "D", "amount": 1, "docstatus": 1},
		{"id": "6", "date": "2025-01-06", "party": None, "amount": -3, "docstatus": 1},
	]


def test_normalise_drops_by_rule_and_reports_why():
	out = normalise("sales", _rows(), ["date", "amount"])
	assert out.dropped == {"cancelled": 1, "draft": 1, "duplicate": 1, "missing date": 1}
	assert out.frame["amount"].tolist() == [10.0, 20.5, -3.0]
	assert out.frame["party"].tolist() == ["A", "B", NOT_SET]
	assert str(out.frame["date"].dtype) == "datetime64[ns]"


def test_normalise_drops_rows_by_status_text():
	rows = [
		{
			"document": "X",
			"posting_date": "2025-01-01",
			"due_date": "2025-02-01",
			"amount": 1,
			"outstanding": 1,
			"status": "Cancelled",
		},
		{
			"document": "Y",
			"posting_date": "2025-01-01",
			"due_date": "2025-02-01",
			"amount": 1,
			"outstanding": 1,
			"status": "Draft",
		},
		{
			"document": "Z",
			"posting_date": "2025-01-01",
			"due_date": "2025-02-01",
			"amount": 1,
			"outstanding": 1,
			"status": "Overdue",
		},
	]
	out = normalise("receivables", rows, ["outstanding"])
	assert out.frame["document"].tolist() == ["Z"]
	assert out.dropped == {"cancelled": 1, "draft": 1}


def test_non_numeric_amount_names_the_column_and_row():
	rows = [{"date": "2025-01-01", "amount": 1}, {"date": "2025-01-02", "amount": "ten"}]
	with pytest.raises(AnalyticsError, match=r"column 'amount'.*not numbers.*'ten' in row 1"):
		normalise("sales", rows, ["date", "amount"])


def test_missing_column_names_the_column():
	with pytest.raises(AnalyticsError, match=r"missing column\(s\) 'amount'"):
		normalise("sales", [{"date": "2025-01-01"}], ["date", "amount"])


def test_bad_date_names_the_column():
	with pytest.raises(AnalyticsError, match=r"column 'date'.*not dates"):
		normalise("sales", [{"date": "31/31/2025", "amount": 1}], ["date", "amount"])


def test_infinite_amount_is_rejected():
	with pytest.raises(AnalyticsError, match="infinite"):
		normalise("sales", pd.DataFrame({"date": ["2025-01-01"], "amount": [math.inf]}), ["date", "amount"])


def test_rows_must_be_objects():
	with pytest.raises(AnalyticsError, match="row 0 is list"):
		normalise("sales", [[1, 2]], ["amount"])


def test_unknown_dataset_is_a_named_error():
	with pytest.raises(AnalyticsError, match="Unknown dataset"):
		normalise("widgets", [], [])


def test_empty_input_gives_typed_empty_frame():
	out = normalise("sales", [], ["date", "amount"])
	assert len(out.frame) == 0 and str(out.frame["date"].dtype) == "datetime64[ns]"


def test_billable_flags_parse_yes_no():
	rows = [{"date": "2025-01-01", "hours": 1, "billable": v} for v in (1, 0, "Yes", "false", True)]
	assert normalise("timesheets", rows, ["billable"]).frame["billable"].tolist() == [
		True,
		False,
		True,
		False,
		True,
	]


def test_empty_required_numbers_count_as_zero_with_a_warning():
	out = normalise(
		"sales",
		[{"date": "2025-01-01", "amount": None}, {"date": "2025-01-02", "amount": 3}],
		["date", "amount"],
	)
	assert out.frame["amount"].tolist() == [0.0, 3.0]
	assert any("counted as 0" in w for w in out.warnings)


# --- results and the model summary ------------------------------------------------


def test_kpi_change_is_percent_against_prior_and_points_for_percentages():
	assert kpi("Revenue", 110, "currency", prior=100)["change"] == 10.0
	assert kpi("Margin", 30.0, "%", prior=25.0)["change_points"] == 5.0
	assert (
		"change" not in kpi("New", 5, "count", prior=0) or kpi("New", 5, "count", prior=0)["change"] is None
	)


def test_summary_for_model_is_bounded_whatever_the_size():
	huge = {
		"key": "sales.monthly_trend",
		"title": "T",
		"kpis": [
			{"label": f"KPI number {i} " + "x" * 50, "value": i * 1.5, "unit": "currency", "change": 3.2}
			for i in range(200)
		],
		"observations": ["A long sentence with many numbers 1,234,567 " * 20 for _ in range(100)],
		"watch_outs": ["Careful " * 100] * 20,
		"recommendations": ["Do this " * 100] * 20,
		"warnings": ["w" * 500] * 20,
		"table": {
			"columns": [f"c{i}" for i in range(30)],
			"rows": [["y" * 200] * 30 for _ in range(10_000)],
			"total_rows": 10_000,
		},
		"dropped": {"sales": {"cancelled": 5}},
		"chart": {"data": [{"type": "scatter", "x": list(range(10_000)), "y": list(range(10_000))}]},
	}
	summary = summary_for_model(huge)
	assert len(json.dumps(summary)) <= 2400
	assert summary["chart"] is True and summary["kpis"]


def test_normalise_keeps_rows_of_a_filtered_frame():
	frame = pd.DataFrame({"date": ["2025-01-01", "2025-02-01", "2025-03-01"], "amount": [1.0, 2.0, 3.0]})
	out = normalise("sales", frame[frame["amount"] > 1], ["date", "amount"])
	assert out.frame["amount"].tolist() == [2.0, 3.0] and not out.dropped
