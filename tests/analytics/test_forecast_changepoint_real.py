"""Forecasts at every horizon and frequency, outliers, short series, seasonality, change points
(spike versus shift, shifts near the end, the Nile dam) and partial last periods."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analytics import anomalies, blocks, changepoint, periods
from analytics.catalog.base import HORIZON
from analytics.errors import AnalyticsError
from analytics.forecast import MAX_HORIZON, forecast, has_season

SEASONS = sorted({m for m in periods.SEASON.values()}, key=lambda m: m or 0)


def _seasonal(n: int, m: int | None, seed: int = 0) -> np.ndarray:
	rng = np.random.default_rng(seed)
	t = np.arange(n)
	season = 20 * np.sin(2 * np.pi * t / m) if m else 0
	return 200 + 0.5 * t + season + rng.normal(0, 4, n)


# --- the forecast ------------------------------------------------------------------


@pytest.mark.parametrize("m", SEASONS)
@pytest.mark.parametrize("n", [5, 9, 30, 120])
def test_forecast_no_broadcast_crash_at_any_horizon_the_tool_allows(m, n):
	# The seasonal indices used to stop at one season: horizons past it raised a broadcast error.
	values = _seasonal(n, m)
	for horizon in range(1, HORIZON.maximum + 1):
		out = forecast(values, horizon, m)
		assert len(out["point"]) == len(out["lower"]) == len(out["upper"]) == horizon
		assert np.all(np.isfinite(out["point"]))
		assert all(lo <= p <= up for lo, p, up in zip(out["lower"], out["point"], out["upper"], strict=True))


@pytest.mark.parametrize(
	("horizon", "season", "message"),
	[
		(MAX_HORIZON + 1, None, "at most"),
		("soon", None, "whole number"),
		(3, "yearly", "season length"),
		(3, -4, "positive"),
	],
)
def test_forecast_invalid_parameters_are_named_errors_not_tracebacks(horizon, season, message):
	with pytest.raises(AnalyticsError, match=message):
		forecast(_seasonal(30, 12), horizon, season)


def test_forecast_one_extreme_last_period_does_not_swing_it():
	values = _seasonal(48, 12, seed=1)
	base = forecast(values, 3, 12)
	spiked = values.copy()
	spiked[-1] *= 2.5  # the month that made a live forecast double
	out = forecast(spiked, 3, 12)
	assert "replaced" in out["method"]
	assert np.allclose(out["point"], base["point"], rtol=0.05)


def test_forecast_series_shorter_than_two_seasons_falls_back_and_says_so():
	values = _seasonal(20, 12)
	out = forecast(values, 24, 12)
	assert "season of 12 needs 24" in out["method"]
	assert len(out["point"]) == 24 and np.all(np.isfinite(out["point"]))


def test_forecast_fits_no_season_where_the_data_has_none():
	rng = np.random.default_rng(4)
	values = 100 + np.cumsum(rng.normal(0, 1, 60))  # a random walk: no 12-month cycle
	assert not has_season(values, 12)
	assert "no season of 12 found" in forecast(values, 6, 12)["method"]


def test_forecast_season_multiplicative_when_swings_grow_with_the_level_additive_when_not():
	t = np.arange(72)
	cycle = np.sin(2 * np.pi * t / 12)
	level = 100 + 5 * t
	growing = level * (1 + 0.3 * cycle)
	steady = level + 30 * cycle
	assert "multiplicative season of 12" in forecast(growing, 12, 12)["method"]
	assert "additive season of 12" in forecast(steady, 12, 12)["method"]


def test_forecast_range_comes_from_backtest_errors_on_a_long_series():
	out = forecast(_seasonal(120, 12), 12, 12)
	assert "backtest errors" in out["method"]
	widths = np.subtract(out["upper"], out["lower"])
	assert np.all(np.diff(widths) >= -1e-9)


# --- change points -------------------------------------------------------------------


def _noise(n: int, seed: int) -> np.ndarray:
	return np.random.default_rng(seed).normal(100, 5, n)


def test_changepoint_one_period_spike_is_an_anomaly_not_a_shift():
	values = _noise(48, 2)
	values[24] = 200
	assert changepoint.locate_all(values) == []
	assert [a["index"] for a in anomalies.find(values)] == [24]


def test_changepoint_level_shift_found_with_its_range():
	values = _noise(48, 3)
	values[20:] += 25
	found = changepoint.locate_all(values)
	assert [c["index"] for c in found] == [20]
	assert found[0]["kind"] == "level shift" and found[0]["range"][0] <= 20 <= found[0]["range"][1]


def test_changepoint_several_shifts_and_a_temporary_one():
	values = _noise(90, 5)
	values[30:50] += 30  # up for 20 periods, then back
	values[70:] -= 30  # a lasting drop
	found = changepoint.locate_all(values)
	assert [c["index"] for c in found] == [30, 50, 70]
	assert [c["kind"] for c in found] == ["temporary", "level shift", "level shift"]


def test_changepoint_real_shift_near_the_end_is_found():
	values = _noise(48, 6)
	values[-5:] += 40
	assert [c["index"] for c in changepoint.locate_all(values)] == [43]


def test_changepoint_not_drawn_to_the_end_by_a_last_few_noisy_points():
	values = _noise(48, 7)
	values[-2:] += 12  # two high months: within the noise of a short stretch
	assert changepoint.locate_all(values) == []


def test_changepoint_trending_series_is_not_cut_into_steps():
	rng = np.random.default_rng(8)
	values = 100 + np.cumsum(rng.normal(0.5, 1, 120))  # a wandering, growing series
	assert len(changepoint.locate_all(values)) <= 1


def test_changepoint_finds_the_nile_dam_of_1898():
	# Cobb (1978): the Aswan dam, begun 1898, lowered the Nile's flow; statsmodels ships the series.
	import statsmodels.api as sm

	nile = sm.datasets.nile.load_pandas().data
	found = changepoint.locate_all(nile["volume"].to_numpy())
	years = nile["year"].astype(int).to_numpy()
	assert len(found) == 1
	assert abs(years[found[0]["index"]] - 1898) <= 1


# --- partial last period -------------------------------------------------------------


def _sales(last_day: str) -> pd.DataFrame:
	dates = pd.date_range("2022-01-01", last_day, freq="D")
	rng = np.random.default_rng(9)
	return pd.DataFrame({"date": dates, "amount": rng.normal(100, 10, dates.size)})


def test_partial_last_month_left_out_of_anomalies_and_fit_and_labelled():
	frame = _sales("2024-06-05")  # five days of June: a tiny month that would look anomalous
	out = blocks.trend(frame, "date", "amount", freq="month", horizon=3)
	starts, series = periods.aggregate(frame["date"].to_numpy(), frame["amount"].to_numpy(), "month")
	assert out["series"]["partial"]["label"] == "2024-06"
	assert "2024-06" not in [a["label"] for a in out["series"]["anomalies"]]
	assert anomalies.find(series, 3.5, detrend=True)[-1]["index"] == series.size - 1  # it would be flagged
	whole = forecast(series[:-1], 4, 12)
	assert out["series"]["forecast"]["point"] == whole["point"][1:]
	assert out["series"]["partial"]["point"] == whole["point"][0]
	assert out["table"]["rows"][0][0] == "2024-06 (partial)"
	assert any("incomplete" in w for w in out["warnings"])
	# Sentences compare whole months; the partial one is named as such, "so far" with its forecast.
	mentions = [o for o in out["observations"] if "2024-06" in o]
	assert mentions and all("2024-06 (partial)" in o for o in mentions)
	assert any(o.startswith("2024-06 (partial) so far") for o in mentions)


def test_complete_last_month_is_not_marked_partial():
	out = blocks.trend(_sales("2024-06-30"), "date", "amount", freq="month", horizon=3)
	assert out["series"]["partial"] is False
	assert out["table"]["rows"][0][0] == "2024-06"
