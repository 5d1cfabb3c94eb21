"""The forecast's seasonal parts: Holt-Winters against statsmodels, a backtest that has not seen the
periods it forecasts, seasonal peaks kept through outlier cleaning, ranges that follow a
multiplicative season, and long horizons on growing seasonal series."""

from __future__ import annotations

import numpy as np
import pytest

from analytics import smoothing
from analytics.forecast import MAX_HORIZON, _Fit, forecast
from analytics.seasonality import Season, clean, clean_around_season, forecast_season


def _growing(n: int, m: int, seed: int = 0) -> np.ndarray:
	"""A season that multiplies a growing level (peaks three times the troughs), with noise."""
	rng = np.random.default_rng(seed)
	t = np.arange(n)
	factor = 1 + 0.5 * np.sin(2 * np.pi * t / m)
	return (100 + 2 * t) * factor * np.exp(rng.normal(0, 0.03, n))


def _peaked(n: int, seed: int = 0) -> np.ndarray:
	"""Monthly sales with a sharp December, twice a normal month, every year."""
	rng = np.random.default_rng(seed)
	t = np.arange(n)
	return 100 + 0.3 * t + 100 * (t % 12 == 11) + rng.normal(0, 3, n)


def test_holt_winters_recursion_matches_statsmodels_exponential_smoothing(monkeypatch):
	# An oracle nobody here wrote: statsmodels' Holt-Winters with the same smoothing parameters and
	# starting states gives the same fit and forecast. Its seasonal parameter is ours times
	# (1 - alpha), its trend parameter ours as is (the error-correction and component forms of
	# ETS(A,Ad,A)).
	holtwinters = pytest.importorskip("statsmodels.tsa.holtwinters")
	alpha, beta, gamma, phi = 0.3, 0.2, 0.4, 0.9
	for name, value in {"HW_ALPHA": alpha, "HW_BETA": beta, "HW_GAMMA": gamma, "HW_PHI": phi}.items():
		monkeypatch.setattr(smoothing, name, np.array([value]))
	y, m = _growing(60, 12, seed=3), 12
	ours = smoothing.SeasonalPaths(y, m).forecast(y.size, 18)
	model = holtwinters.ExponentialSmoothing(
		y,
		trend="add",
		damped_trend=True,
		seasonal="add",
		seasonal_periods=m,
		initialization_method="known",
		initial_level=y[:m].mean(),
		initial_trend=0.0,
		initial_seasonal=y[:m] - y[:m].mean(),
	)
	fitted = model.fit(
		smoothing_level=alpha,
		smoothing_trend=beta,
		smoothing_seasonal=gamma * (1 - alpha),
		damping_trend=phi,
		optimized=False,
	)
	paths = smoothing.SeasonalPaths(y, m)
	assert np.isclose(paths.sse[y.size, 0], fitted.sse, rtol=1e-9)
	theirs = fitted.forecast(18)
	# statsmodels 0.15 takes the previous cycle's seasonal state at whole seasons ahead (its issue
	# 9538, fixed after that release); there the forecast is Hyndman's l + trend + s_T, with s_T
	# statsmodels' own final seasonal state.
	whole = np.arange(1, 19) % m == 0
	assert np.allclose(ours[~whole], theirs[~whole], rtol=1e-9)
	trend = np.cumsum(phi ** np.arange(1, 19))[whole] * fitted.trend[-1]
	assert np.allclose(ours[whole], fitted.level[-1] + trend + fitted.season[-1], rtol=1e-9)


def test_holt_winters_forecast_from_an_origin_has_not_seen_later_periods():
	y = _growing(96, 12, seed=1)
	later = y.copy()
	later[60:] *= 1.5
	first, second = smoothing.SeasonalPaths(y, 12), smoothing.SeasonalPaths(later, 12)
	assert np.allclose(first.forecast(60, 12), second.forecast(60, 12))
	assert not np.allclose(first.forecast(72, 12), second.forecast(72, 12))


def test_forecast_backtest_season_has_not_seen_the_periods_it_forecasts():
	# With the season estimated on the whole series, the backtest's deseasonalised forecasts had
	# already seen the months they forecast: they looked better than they were, the choice favoured
	# them and the range drawn from their errors was too narrow.
	m, n, origin = 12, 120, 100
	y = _peaked(n, seed=2)
	changed = y.copy()
	changed[origin:] += 40 * (np.arange(origin, n) % 12 == 5)  # a June peak appears from the origin on
	fits = []
	for series in (y, changed):
		season = Season(*forecast_season(series, m))
		fits.append(_Fit(series, season.remove(series), season, m, steps=12))
	assert fits[0].first >= 2 * m
	seen_before = [fit.backtest_forecasts(origin, 12) for fit in fits]
	for name in seen_before[0]:
		assert np.allclose(seen_before[0][name], seen_before[1][name]), name
	# The whole-series season has seen the new June peak and moves the forecasts from that origin.
	whole = [fit.candidates(origin, 12) for fit in fits]
	assert not np.allclose(whole[0]["combination"], whole[1]["combination"])


def test_forecast_seasonal_peaks_are_not_taken_for_outliers():
	y = _peaked(60)
	# Far from its neighbours, each December looks like an outlier to a running median ...
	assert clean(y)[1] >= 3
	# ... but not next to the other Decembers.
	assert clean_around_season(y, 12)[1] == 0
	out = forecast(y, 12, 12)
	assert "replaced" not in out["method"]
	december = out["point"][11]
	assert december > 1.6 * np.median(out["point"][:11])


def test_forecast_one_odd_period_is_still_replaced_around_the_season():
	y = _peaked(60)
	y[30] += 150  # a July as large as a December
	cleaned, replaced = clean_around_season(y, 12)
	assert replaced == 1 and abs(cleaned[30] - y[30]) > 100


def test_forecast_range_swells_with_a_multiplicative_season():
	y = _growing(120, 12)
	out = forecast(y, 12, 12)
	assert "multiplicative season of 12" in out["method"] and "backtest errors" in out["method"]
	width = np.subtract(out["upper"], out["lower"])
	point = np.array(out["point"])
	# Peaks three times the troughs: the range follows the season, not a width that only grows
	# with the step.
	peak, trough = int(np.argmax(point)), int(np.argmin(point))
	assert width[peak] > 1.5 * width[trough]
	assert np.any(np.diff(width) < 0)


@pytest.mark.parametrize("m", [4, 12])
def test_forecast_no_overflow_at_the_longest_horizon_on_a_growing_seasonal_series(m):
	out = forecast(_growing(10 * m, m), MAX_HORIZON, m)
	for key in ("point", "lower", "upper"):
		assert np.all(np.isfinite(out[key])) and len(out[key]) == MAX_HORIZON
	assert all(lo <= p <= up for lo, p, up in zip(out["lower"], out["point"], out["upper"], strict=True))


def test_forecast_holt_winters_is_a_candidate_only_where_there_is_a_season():
	seasonal = forecast(_growing(120, 12), 6, 12)["method"]
	flat = forecast(100 + np.random.default_rng(0).normal(0, 5, 120), 6, 12)["method"]
	assert "of 6 on" in seasonal  # five deseasonalised candidates and Holt-Winters
	assert "no season of 12 found" in flat and "of 5 on" in flat and "Holt-Winters" not in flat
