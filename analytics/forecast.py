"""Forecast the next periods of a series, with an 80% range calibrated on the series' own errors.

1. Season: only when the series has one. With a season length and at least two full
   seasons, the autocorrelation at the season lag of the detrended series is tested (90%,
   as in the M3 Theta method); additive or multiplicative indices are chosen by which leaves
   the smaller irregular part. Indices are medians per position over the latest six cycles,
   so one odd month does not bend them and a season that drifts is followed.
2. Outliers: a period more than five typical period-to-period steps from the running median
   of its neighbours is replaced by that median before the season test and the fit, so one
   extreme period, the last included, does not swing the forecast.
3. Methods: simple exponential smoothing, damped Holt, Theta, the mean of the three and the
   mean of damped Holt and Theta (see `analytics.smoothing`). On a long enough series the two
   with the smallest rolling-origin error over the last periods are averaged; otherwise the
   mean of the three is used, and the method string says which and why.
4. Range: the 80% quantile of rolling-origin errors at each step ahead (split conformal: the
   ceil((k+1) 0.8)-th of k errors, wider than the plain 80% quantile when k is small), smoothed
   over the horizon by a power law in the step. The errors are those of the whole procedure,
   selection included: at each backtest origin, the pair that would have been chosen from the
   errors known at that origin (the chosen pair's errors over all origins are the smallest of
   several by construction and would be too narrow). The range is as wide as the series'
   forecasts actually missed by; short series fall back to the in-sample one-step errors and
   say so.
"""

from __future__ import annotations

import numpy as np

from analytics import smoothing
from analytics.errors import AnalyticsError
from analytics.series import as_values

# Two-sided 80% interval: the 90th percentile of the standard normal.
Z80 = 1.2815515655446004
MIN_TREND_POINTS = 4
MIN_SMOOTHING_POINTS = 8
MAX_HORIZON = 520
# Longer histories are fitted on their latest periods: the fit is a loop over periods.
MAX_FIT = 260
# Backtest: at most this many origins, each at least MIN_TRAIN points in.
MAX_ORIGINS = 16
MIN_ORIGINS_FOR_RANGE = 5
MIN_ORIGINS_FOR_SELECTION = 8
OUTLIER_Z = 5.0
SEASON_CYCLES = 6
LAST_WINSORISED = True
# 90% one-sided normal quantile for the seasonality test.
SEASON_TEST_Z = 1.645
CANDIDATES = ("combination", "ses", "damped", "theta", "trended")
TOP = 2


def _acf(x: np.ndarray, lags: int) -> np.ndarray:
	centred = x - x.mean()
	denominator = float(centred @ centred)
	if denominator == 0:
		return np.zeros(lags + 1)
	return np.array([float(centred[k:] @ centred[: x.size - k]) / denominator for k in range(lags + 1)])


def has_season(y: np.ndarray, m: int) -> bool:
	"""Whether the autocorrelation at lag m of the detrended series is significant at 90%."""
	n = y.size
	if m < 2 or n < 2 * m:
		return False
	t = np.arange(n, dtype=float)
	detrended = y - np.polyval(np.polyfit(t, y, 1), t)
	r = _acf(detrended, m)
	limit = SEASON_TEST_Z * np.sqrt((1 + 2 * np.sum(r[1:m] ** 2)) / n)
	return bool(abs(r[m]) > limit)


def _centred_trend(y: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
	weights = np.r_[0.5, np.ones(m - 1), 0.5] / m if m % 2 == 0 else np.ones(m) / m
	trend = np.convolve(y, weights, mode="valid")
	offset = (len(weights) - 1) // 2
	return trend, np.arange(offset, offset + trend.size)


def _indices(ratios: np.ndarray, positions: np.ndarray, m: int, multiplicative: bool) -> np.ndarray:
	index = np.array([np.median(ratios[positions % m == p]) for p in range(m)])
	return index / index.mean() if multiplicative else index - index.mean()


def seasonal_indices(y: np.ndarray, m: int, multiplicative: bool) -> np.ndarray:
	"""One index per position in the season (classical decomposition, medians per position)."""
	trend, positions = _centred_trend(y, m)
	ratios = y[positions] / trend if multiplicative else y[positions] - trend
	return _indices(ratios, positions, m, multiplicative)


def choose_season(y: np.ndarray, m: int) -> tuple[np.ndarray, bool]:
	"""Seasonal indices and whether they are multiplicative, whichever leaves the smaller irregular part."""
	trend, positions = _centred_trend(y, m)
	if SEASON_CYCLES and positions.size > SEASON_CYCLES * m:
		# A season drifts: the indices come from the latest cycles.
		trend, positions = trend[-SEASON_CYCLES * m :], positions[-SEASON_CYCLES * m :]
	additive = _indices(y[positions] - trend, positions, m, False)
	irregular_add = y[positions] - trend - additive[positions % m]
	if np.all(y > 0) and np.all(trend > 0):
		multiplicative = _indices(y[positions] / trend, positions, m, True)
		irregular_mul = y[positions] - trend * multiplicative[positions % m]
		if np.sum(irregular_mul**2) < np.sum(irregular_add**2):
			return multiplicative, True
	return additive, False


def clean(x: np.ndarray) -> tuple[np.ndarray, int]:
	"""Points far from the running median of five replaced by that median; how many were replaced.

	Far means more than OUTLIER_Z times the typical period-to-period step (1.4826 times the
	median absolute first difference, over sqrt(2)): the step, not the distance from the running
	median, which a smooth series follows so closely that every wiggle would look far.
	"""
	n = x.size
	if n < 5:
		return x, 0
	# Take out the typical step first: a running median lags a trend at the ends, which would
	# make every last point of a growing series look far.
	slope = float(np.median(np.diff(x)))
	drift = slope * np.arange(n)
	flat = x - drift
	padded = np.r_[np.full(2, np.nan), flat, np.full(2, np.nan)]
	windows = np.lib.stride_tricks.sliding_window_view(padded, 5)
	smooth = np.nanmedian(windows, axis=1)
	steps = np.diff(flat)
	spread = 1.4826 * np.median(np.abs(steps - np.median(steps))) / np.sqrt(2)
	if spread <= 0:
		return x, 0
	distance = flat - smooth
	outliers = np.abs(distance) > OUTLIER_Z * spread
	if not outliers.any():
		return x, 0
	replaced = smooth + drift
	if LAST_WINSORISED:
		# The last period may be the start of a new level: it is pulled in to the limit, not replaced.
		replaced[-1] = x[-1] - distance[-1] + np.sign(distance[-1]) * OUTLIER_Z * spread
	return np.where(outliers, replaced, x), int(outliers.sum())


class _Season:
	def __init__(self, index: np.ndarray | None, multiplicative: bool):
		self.index, self.multiplicative = index, multiplicative

	def at(self, start: int, count: int) -> np.ndarray:
		if self.index is None:
			return np.zeros(count) if not self.multiplicative else np.ones(count)
		return self.index[np.arange(start, start + count) % self.index.size]

	def remove(self, y: np.ndarray) -> np.ndarray:
		s = self.at(0, y.size)
		return y / s if self.multiplicative else y - s

	def put_back(self, x: np.ndarray, start: int) -> np.ndarray:
		s = self.at(start, x.size)
		return x * s if self.multiplicative else x + s


def backtest(y: np.ndarray, paths: smoothing.Paths, season: _Season, steps: int) -> dict[str, np.ndarray]:
	"""Rolling-origin errors of each candidate: `{method: array (origins, steps)}`, NaN past the end."""
	n = y.size
	first = max(MIN_SMOOTHING_POINTS, n // 2)
	origins = np.arange(max(first, n - MAX_ORIGINS - steps + 1), n)
	out = {m: np.full((origins.size, steps), np.nan) for m in CANDIDATES}
	for row, origin in enumerate(origins):
		ahead = min(steps, n - origin)
		actual = y[origin : origin + ahead]
		for method, point in paths.members(origin, ahead).items():
			out[method][row, :ahead] = actual - season.put_back(point, origin)
	return out


def procedure_errors(errors: dict[str, np.ndarray]) -> np.ndarray:
	"""Rolling-origin errors of the whole procedure, selection included: at each origin, the
	forecast that the best-`TOP` choice would have made from what was known then (the errors of
	earlier origins whose targets lie before it; the combination while fewer than
	MIN_ORIGINS_FOR_SELECTION origins precede it). The errors of the finally chosen pair over the
	same origins are the smallest of several by construction, so a range drawn from them would be
	too narrow; these are not."""
	rows, steps = next(iter(errors.values())).shape
	# known[r_earlier, step] at origin r: the target of step h from origin r' came in by r (r' + h <= r).
	ahead = np.arange(rows)[:, None] + np.arange(1, steps + 1)[None, :]
	out = np.empty((rows, steps))
	for row in range(rows):
		chosen: tuple[str, ...] = ("combination",)
		if row >= MIN_ORIGINS_FOR_SELECTION:
			known = ahead[:row] <= row
			score = {c: float(np.nanmean(np.abs(errors[c][:row][known]))) for c in CANDIDATES}
			chosen = tuple(sorted(CANDIDATES, key=score.__getitem__)[:TOP])
		out[row] = np.mean([errors[c][row] for c in chosen], axis=0)
	return out


def _range_from_errors(errors: np.ndarray, horizon: int) -> np.ndarray:
	"""Half-widths from backtest errors: the conformal 80% quantile of |error| at each step ahead
	with enough errors, extended to the whole horizon by a power law c * h^k fitted to those
	quantiles (k between 0.5, a random walk, and 1, a drift that is off)."""
	quantiles, steps = [], []
	for h in range(errors.shape[1]):
		column = np.abs(errors[:, h][~np.isnan(errors[:, h])])
		if column.size >= MIN_ORIGINS_FOR_RANGE:
			level = min(1.0, np.ceil((column.size + 1) * 0.8) / column.size)
			quantiles.append(float(np.quantile(column, level)))
			steps.append(h + 1)
	q, h = np.maximum(np.array(quantiles), 1e-12), np.array(steps, dtype=float)
	if h.size >= 3:
		k, log_c = np.polyfit(np.log(h), np.log(q), 1)
		k = float(np.clip(k, 0.5, 1.0))
		log_c = float(np.mean(np.log(q) - k * np.log(h)))
	else:
		k, log_c = 0.5, float(np.mean(np.log(q) - 0.5 * np.log(h)))
	return np.exp(log_c) * np.arange(1, horizon + 1, dtype=float) ** k


def _check(values: object, horizon: object) -> tuple[np.ndarray, int]:
	y = as_values(values, "forecast values")
	try:
		horizon = int(horizon)
	except (TypeError, ValueError, OverflowError):
		raise AnalyticsError(f"forecast: horizon must be a whole number, got {horizon!r}") from None
	if horizon < 1:
		raise AnalyticsError(f"forecast: horizon must be at least 1, got {horizon}")
	if horizon > MAX_HORIZON:
		raise AnalyticsError(f"forecast: horizon must be at most {MAX_HORIZON} periods, got {horizon}")
	if y.size == 0:
		raise AnalyticsError("forecast: no values to forecast from")
	return y, horizon


def _season_length(season_length: object) -> int:
	try:
		m = int(season_length) if season_length else 0
	except (TypeError, ValueError):
		raise AnalyticsError(
			f"forecast: season length must be a whole number, got {season_length!r}"
		) from None
	if m < 0:
		raise AnalyticsError(f"forecast: season length must be positive, got {m}")
	return m


def forecast(values: object, horizon: int, season_length: int | None = None) -> dict:
	"""Forecast `horizon` periods ahead: `{"point", "lower", "upper", "method"}` (80% range).

	Falls back on short series (fewer than 4 points: last value; fewer than 8: a straight
	line blended with the last value) and says so in `method`, as it says which season,
	method and range were used. Non-negative histories get non-negative forecasts.
	"""
	y, horizon = _check(values, horizon)
	m = _season_length(season_length)
	n = y.size
	notes: list[str] = []
	if n < MIN_TREND_POINTS:
		spread = float(np.std(np.diff(y), ddof=0)) if n > 1 else 0.0
		point = np.full(horizon, float(y[-1]))
		width = Z80 * spread * np.sqrt(np.arange(1, horizon + 1))
		method = f"naive: last value ({n} points; a trend needs at least {MIN_TREND_POINTS})"
	elif np.ptp(y) == 0:
		point, width = np.full(horizon, float(y[-1])), np.zeros(horizon)
		method = "flat: the series is constant"
	else:
		if n > MAX_FIT:
			notes.append(f"fitted on the last {MAX_FIT} of {n} periods")
		point, width, method = _smoothed(y[-MAX_FIT:], horizon, m, notes)
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


def _smoothed(y: np.ndarray, horizon: int, m: int, notes: list[str]) -> tuple[np.ndarray, np.ndarray, str]:
	n = y.size
	season = _Season(None, False)
	# Outliers first, so one extreme period neither hides nor invents a season.
	y_clean, replaced = clean(y)
	if m > 1 and n < 2 * m:
		notes.append(f"no seasonality: {n} points, a season of {m} needs {2 * m}")
	elif m > 1 and has_season(y_clean, m):
		season = _Season(*choose_season(y_clean, m))
	elif m > 1:
		notes.append(f"no season of {m} found in the data")
	x, more = clean(season.remove(y_clean))
	replaced += more
	if replaced:
		notes.append(
			f"{replaced} outlying {'period' if replaced == 1 else 'periods'} replaced before fitting"
		)
	if n < MIN_SMOOTHING_POINTS:
		t = np.arange(n, dtype=float)
		slope, intercept = np.polyfit(t, x, 1)
		future = intercept + slope * np.arange(n, n + horizon)
		point = (future + x[-1]) / 2
		fitted = (intercept + slope * t + np.r_[x[0], x[:-1]]) / 2
		method = f"straight line + last value blend (short series: {n} points)"
		chosen = None
	else:
		steps = min(horizon, max(1, n // 4))
		paths = smoothing.Paths(x)
		errors = backtest(y, paths, season, steps)
		origins = next(iter(errors.values())).shape[0]
		chosen = ("combination",)
		if origins >= MIN_ORIGINS_FOR_SELECTION:
			# The two candidates that missed least in the backtest, averaged: steadier than the
			# single best, which is partly the luck of the last few periods.
			chosen = tuple(sorted(CANDIDATES, key=lambda c: float(np.nanmean(np.abs(errors[c]))))[:TOP])
			how = f"the best {TOP} of {len(CANDIDATES)} on {origins} rolling-origin backtests"
		else:
			how = f"short series: {n} points, too few to choose by backtest"
		members = paths.members(n, horizon)
		point = np.mean([members[c] for c in chosen], axis=0)
		fitted = np.mean([paths.fitted(c) for c in chosen], axis=0)
		names = {
			"combination": "mean of simple, damped-trend and Theta exponential smoothing",
			"ses": "simple exponential smoothing",
			"damped": "damped-trend Holt",
			"theta": "Theta method",
			"trended": "mean of damped-trend Holt and Theta",
		}
		method = (
			" and ".join(names[c] for c in chosen) + (", averaged" if len(chosen) > 1 else "") + f" ({how})"
		)
	if chosen is not None and origins >= MIN_ORIGINS_FOR_RANGE + steps - 1:
		# Not the chosen method's own backtest errors: they are the smallest of several by selection,
		# so they understate what it will miss by. The procedure's errors, selection included, do not.
		width = _range_from_errors(procedure_errors(errors), horizon)
		method += f", 80% range from {origins} backtest errors"
	else:
		residual = x - fitted
		spread = float(np.sqrt(np.mean(residual**2))) if n > 2 else 0.0
		width = Z80 * spread * np.sqrt(np.arange(1, horizon + 1))
		if season.index is not None and season.multiplicative:
			width = width * season.at(n, horizon)
		method += ", 80% range from in-sample errors"
	point = season.put_back(point, n)
	if season.index is not None:
		method += f", {'multiplicative' if season.multiplicative else 'additive'} season of {m}"
	return point, width, method
