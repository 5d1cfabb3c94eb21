"""Forecast the next periods of a series: damped-trend Holt blended with a linear regression.

The damped trend stops a recent run from being extrapolated for ever; the regression
anchors the forecast to the long-run slope; averaging the two is steadier than either
(forecast combination). With a season length and at least two full seasons the series is
seasonally adjusted first (classical decomposition) and the season put back afterwards.
The 80% range comes from the spread of the blend's in-sample errors, widening with the
horizon. Short series fall back to simpler methods and the method string says so.
"""

from __future__ import annotations

import warnings

import numpy as np

from analytics.errors import AnalyticsError
from analytics.series import as_values

# Two-sided 80% interval: the 90th percentile of the standard normal.
Z80 = 1.2815515655446004
MIN_TREND_POINTS = 4
MIN_HOLT_POINTS = 10


def seasonal_indices(y: np.ndarray, m: int, multiplicative: bool) -> np.ndarray:
	"""One index per position in the season, from a centred moving average (classical decomposition)."""
	n = y.size
	if m % 2 == 0:
		weights = np.r_[0.5, np.ones(m - 1), 0.5] / m
	else:
		weights = np.ones(m) / m
	trend = np.convolve(y, weights, mode="valid")
	offset = (len(weights) - 1) // 2
	positions = np.arange(offset, offset + trend.size)
	detrended = y[positions] / trend if multiplicative else y[positions] - trend
	sums = np.bincount(positions % m, weights=detrended, minlength=m)
	counts = np.bincount(positions % m, minlength=m)
	index = sums / np.maximum(counts, 1)
	if multiplicative:
		index = index / index.mean()
	else:
		index = index - index.mean()
	return index[np.arange(n + m) % m] if n else index


def _holt(y: np.ndarray, horizon: int) -> tuple[np.ndarray, np.ndarray]:
	from statsmodels.tsa.holtwinters import ExponentialSmoothing

	with warnings.catch_warnings():
		warnings.simplefilter("ignore")
		fit = ExponentialSmoothing(y, trend="add", damped_trend=True, initialization_method="estimated").fit()
	return np.asarray(fit.forecast(horizon)), np.asarray(fit.fittedvalues)


def _linear(y: np.ndarray, horizon: int) -> tuple[np.ndarray, np.ndarray]:
	t = np.arange(y.size, dtype=float)
	slope, intercept = np.polyfit(t, y, 1)
	future = np.arange(y.size, y.size + horizon, dtype=float)
	return intercept + slope * future, intercept + slope * t


def _flat(value: float, horizon: int, spread: float) -> tuple[np.ndarray, np.ndarray]:
	point = np.full(horizon, value)
	width = Z80 * spread * np.sqrt(np.arange(1, horizon + 1))
	return point, width


def forecast(values: object, horizon: int, season_length: int | None = None) -> dict:
	"""Forecast `horizon` periods ahead: `{"point", "lower", "upper", "method"}` (80% range).

	Falls back on short series (fewer than 4 points: last value; fewer than 10: regression
	blended with the last value; fewer than two seasons: no seasonality) and says so in `method`.
	Non-negative histories get non-negative forecasts.
	"""
	y = as_values(values, "forecast values")
	try:
		horizon = int(horizon)
	except (TypeError, ValueError):
		raise AnalyticsError(f"forecast: horizon must be a whole number, got {horizon!r}") from None
	if horizon < 1:
		raise AnalyticsError(f"forecast: horizon must be at least 1, got {horizon}")
	n = y.size
	if n == 0:
		raise AnalyticsError("forecast: no values to forecast from")
	notes: list[str] = []

	if n < MIN_TREND_POINTS:
		spread = float(np.std(np.diff(y), ddof=0)) if n > 1 else 0.0
		point, width = _flat(float(y[-1]), horizon, spread)
		method = f"naive: last value ({n} points; a trend needs at least {MIN_TREND_POINTS})"
	elif np.ptp(y) == 0:
		point, width = _flat(float(y[-1]), horizon, 0.0)
		method = "flat: the series is constant"
	else:
		m = int(season_length) if season_length else 0
		season = None
		if m > 1 and n >= 2 * m:
			multiplicative = bool(np.all(y > 0))
			season = seasonal_indices(y, m, multiplicative)
			adjusted = y / season[:n] if multiplicative else y - season[:n]
		else:
			if m > 1:
				notes.append(f"no seasonality: {n} points, a season of {m} needs {2 * m}")
			multiplicative = False
			adjusted = y
		if n >= MIN_HOLT_POINTS:
			holt, holt_fit = _holt(adjusted, horizon)
			linear, linear_fit = _linear(adjusted, horizon)
			point = (holt + linear) / 2
			fitted = (holt_fit + linear_fit) / 2
			method = "damped Holt + linear regression blend"
		else:
			linear, linear_fit = _linear(adjusted, horizon)
			point = (linear + adjusted[-1]) / 2
			fitted = (linear_fit + np.r_[adjusted[0], adjusted[:-1]]) / 2
			method = f"linear regression + last value blend (short series: {n} points)"
		residual = adjusted - fitted
		spread = float(np.sqrt(np.mean(residual**2))) if n > 2 else 0.0
		width = Z80 * spread * np.sqrt(np.arange(1, horizon + 1))
		if season is not None:
			future = season[n : n + horizon]
			if multiplicative:
				point, width = point * future, width * future
			else:
				point = point + future
			method += f", {'multiplicative' if multiplicative else 'additive'} season of {m}"
	lower, upper = point - width, point + width
	if np.all(y >= 0):
		point, lower, upper = np.maximum(point, 0), np.maximum(lower, 0), np.maximum(upper, 0)
	if notes:
		method += " (" + "; ".join(notes) + ")"
	return {
		"point": [float(v) for v in point],
		"lower": [float(v) for v in lower],
		"upper": [float(v) for v in upper],
		"method": method,
	}
