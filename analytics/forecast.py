"""Forecast the next periods of a series, with an 80% range calibrated on the series' own errors.

1. Outliers: a period far out of line (`seasonality.clean`, around a rough season where there is
   one, so seasonal peaks are kept) is replaced before the season test and the fit, so one
   extreme period, the last included, does not swing the forecast.
2. Season: only when the series has one (`seasonality.has_season`, a 90% test of the
   autocorrelation at the season lag, as in the M3 Theta method); additive or multiplicative by
   which leaves the smaller irregular part over the whole series, the indices from the latest
   cycles.
3. Candidates: simple exponential smoothing, damped Holt, Theta, the mean of the three and the
   mean of damped Holt and Theta on the deseasonalised series (`analytics.smoothing`); with a
   season also Holt-Winters with a damped trend on the series itself (on its logarithms when the
   season multiplies). On a long enough series the better half by rolling-origin error is
   averaged (`analytics.backtest`); otherwise the mean of the three, and the method string says
   which and why.
4. The backtest is honest about the season: its forecasts put back the seasonal indices as
   estimated from the periods before their origin (re-estimated every cycle, or every third of
   the backtest where that is longer; from the whole series where fewer than two cycles precede
   the first origin), not indices that have seen the periods being forecast, which would favour
   the deseasonalised candidates and make the range too narrow.
5. Range: from the rolling-origin errors of the whole procedure, choice included
   (`backtest.procedure_errors`, `backtest.range_from_errors`), over a longer backtest than the
   choice's (RANGE_ORIGINS origins), at the conformal level at which ranges drawn the same way from
   the errors known at each past origin covered 80% of what followed (`backtest.calibrated_level`):
   the series' own history says how far its misses outgrow the past ones. Relative to the forecast
   when the season multiplies, so it swells with the level and the season, and for another positive
   series when that would have scored better over its backtest. Short series fall back to the
   in-sample one-step errors and say so.
"""

from __future__ import annotations

import numpy as np

from analytics import smoothing
from analytics.backtest import (
	CANDIDATES,
	MAX_ORIGINS,
	MIN_ORIGINS_FOR_RANGE,
	MIN_ORIGINS_FOR_SELECTION,
	MIN_SMOOTHING_POINTS,
	RANGE_ORIGINS,
	Z80,
	backtest,
	backtest_origins,
	calibrated_level,
	choose,
	procedure_errors,
	range_from_errors,
	top,
)
from analytics.errors import AnalyticsError
from analytics.seasonality import (
	FORECAST_CYCLES,
	Season,
	choose_season,
	clean,
	clean_around_season,
	forecast_season,
	has_season,
	latest_indices,
)
from analytics.series import as_values

__all__ = [
	"CANDIDATES",
	"MAX_HORIZON",
	"MIN_ORIGINS_FOR_SELECTION",
	"choose_season",
	"clean",
	"forecast",
	"has_season",
	"procedure_errors",
	"top",
]

MIN_TREND_POINTS = 4
MAX_HORIZON = 520
# Longer histories are fitted on their latest periods: the fit is a loop over periods.
MAX_FIT = 260
# The backtest's season is re-estimated every cycle, or every third of the backtest if longer.
SEASON_REFITS = 3
NAMES = {
	"combination": "mean of simple, damped-trend and Theta exponential smoothing",
	"ses": "simple exponential smoothing",
	"damped": "damped-trend Holt",
	"theta": "Theta method",
	"trended": "mean of damped-trend Holt and Theta",
	"holt-winters": "Holt-Winters with a damped trend",
}


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


class _Fit:
	"""The candidates fitted to one series: their forecasts from the end, and the backtest's from
	each origin as they would have been made there."""

	def __init__(self, y_clean: np.ndarray, x: np.ndarray, season: Season, m: int, steps: int):
		self.y_clean, self.season, self.m = y_clean, season, m
		self.paths = smoothing.Paths(x)
		# A season that multiplies adds on logarithms: Holt-Winters is fitted there.
		self.logged = season.multiplicative and bool(np.all(y_clean > 0))
		self.seasonal = None
		if season.index is not None:
			self.seasonal = smoothing.SeasonalPaths(np.log(y_clean) if self.logged else y_clean, m)
		origins = backtest_origins(y_clean.size, steps)
		self.first = int(origins[0]) if origins.size else y_clean.size
		self.block = max(m, -(-origins.size // SEASON_REFITS))
		self.known: dict[int, tuple[smoothing.Paths, Season]] = {}

	def candidates(
		self, origin: int, horizon: int, paths: smoothing.Paths | None = None, season: Season | None = None
	) -> dict[str, np.ndarray]:
		"""Every candidate's forecast from `origin`, in the series' own units."""
		paths, season = paths or self.paths, season or self.season
		out = {c: season.put_back(point, origin) for c, point in paths.members(origin, horizon).items()}
		if self.seasonal is not None:
			point = self.seasonal.forecast(origin, horizon)
			out["holt-winters"] = np.exp(point) if self.logged else point
		return out

	def backtest_forecasts(self, origin: int, ahead: int) -> dict[str, np.ndarray]:
		"""`candidates` from a backtest origin, the season estimated on the periods before the
		start of the origin's block only (where two cycles precede the first origin)."""
		if self.season.index is None or self.first < 2 * self.m:
			return self.candidates(origin, ahead)
		start = self.first + (origin - self.first) // self.block * self.block
		if start < 2 * self.m:
			# An origin of the range's longer backtest with fewer than two cycles before its block:
			# no season can be estimated from them, and none is borrowed from later periods.
			return {c: np.full(ahead, np.nan) for c in self.candidates(origin, ahead)}
		if start not in self.known:
			multiplicative = self.season.multiplicative
			index = latest_indices(self.y_clean[:start], self.m, multiplicative, FORECAST_CYCLES)[0]
			if index is None:
				self.known[start] = self.paths, self.season
			else:
				past = Season(index, multiplicative)
				self.known[start] = smoothing.Paths(clean(past.remove(self.y_clean))[0]), past
		return self.candidates(origin, ahead, *self.known[start])


def _season(y_clean: np.ndarray, m: int, notes: list[str]) -> Season:
	n = y_clean.size
	if m > 1 and n < 2 * m:
		notes.append(f"no seasonality: {n} points, a season of {m} needs {2 * m}")
	elif m > 1 and has_season(y_clean, m):
		return Season(*forecast_season(y_clean, m))
	elif m > 1:
		notes.append(f"no season of {m} found in the data")
	return Season(None, False)


def _short(x: np.ndarray, horizon: int) -> tuple[np.ndarray, np.ndarray, str]:
	"""A straight line blended with the last value, and its in-sample one-step predictions."""
	n = x.size
	t = np.arange(n, dtype=float)
	slope, intercept = np.polyfit(t, x, 1)
	point = (intercept + slope * np.arange(n, n + horizon) + x[-1]) / 2
	fitted = (intercept + slope * t + np.r_[x[0], x[:-1]]) / 2
	return point, fitted, f"straight line + last value blend (short series: {n} points)"


def _smoothed(y: np.ndarray, horizon: int, m: int, notes: list[str]) -> tuple[np.ndarray, np.ndarray, str]:
	n = y.size
	# Outliers first, so one extreme period neither hides nor invents a season.
	y_clean, replaced = clean_around_season(y, m)
	season = _season(y_clean, m, notes)
	x, more = clean(season.remove(y_clean))
	replaced += more
	if replaced:
		notes.append(
			f"{replaced} outlying {'period' if replaced == 1 else 'periods'} replaced before fitting"
		)
	if n < MIN_SMOOTHING_POINTS:
		point, fitted, method = _short(x, horizon)
		return _in_sample_range(season.put_back(point, n), x - fitted, season, horizon, method, m)
	steps = min(horizon, max(1, n // 4))
	fit = _Fit(y_clean, x, season, m, steps)
	# One backtest from the range's origins; the choice reads its latest MAX_ORIGINS + steps - 1.
	every, actuals = backtest(y, fit.backtest_forecasts, steps, RANGE_ORIGINS)
	latest = min(next(iter(every.values())).shape[0], MAX_ORIGINS + steps - 1)
	errors = {c: e[-latest:] for c, e in every.items()}
	origins = latest
	chosen: tuple[str, ...] = ("combination",)
	how = f"short series: {n} points, too few to choose by backtest"
	if origins >= MIN_ORIGINS_FOR_SELECTION:
		chosen = choose(errors)
		how = f"the best {len(chosen)} of {len(errors)} on {origins} rolling-origin backtests"
	members = fit.candidates(n, horizon)
	point = np.mean([members[c] for c in chosen], axis=0)
	method = " and ".join(NAMES[c] for c in chosen) + (", averaged" if len(chosen) > 1 else "") + f" ({how})"
	if origins < MIN_ORIGINS_FOR_RANGE + steps - 1:
		in_sample = [c for c in chosen if c != "holt-winters"] or ["combination"]
		fitted = np.mean([fit.paths.fitted(c) for c in in_sample], axis=0)
		return _in_sample_range(point, x - fitted, season, horizon, method, m)
	# Not the chosen candidates' own backtest errors: they are the smallest of several by selection,
	# so they understate what the forecast will miss by. The procedure's errors, choice included, do not.
	missed = procedure_errors(every, window=MAX_ORIGINS + steps - 1)
	width, relative = _range(missed, actuals, point, horizon, fit.logged)
	method += f", 80% range from {missed.shape[0]} backtest errors" + _season_note(season, m)
	return point, width, method


def _range(
	missed: np.ndarray, actuals: np.ndarray, point: np.ndarray, horizon: int, logged: bool
) -> tuple[np.ndarray, bool]:
	"""Half-widths of the 80% range from the procedure's backtest errors, at the conformal level
	the series' own history calibrates (`backtest.calibrated_level`), and whether they are relative
	to the forecast.

	A season that multiplies makes misses grow with the level and the season: the range is drawn
	from them relative to the forecast and put back in proportion to it. Another positive series
	is drawn so too when ranges drawn that way would have scored better (interval score) over its
	backtest than ranges in its own units: a series growing fast misses in proportion.
	"""
	made = actuals - missed
	positive = bool(np.all(made[~np.isnan(made)] > 0))
	absolute = calibrated_level(missed)
	if positive:
		relative_errors = np.where(made > 0, missed / np.where(made > 0, made, 1.0), np.nan)
		relative = calibrated_level(relative_errors, scale=made)
		if logged or (np.isfinite(relative[1]) and relative[1] < absolute[1]):
			return range_from_errors(relative_errors, horizon, relative[0]) * np.abs(point), True
	return range_from_errors(missed, horizon, absolute[0]), False


def _in_sample_range(
	point: np.ndarray, residual: np.ndarray, season: Season, horizon: int, method: str, m: int
) -> tuple[np.ndarray, np.ndarray, str]:
	spread = float(np.sqrt(np.mean(residual**2))) if residual.size > 2 else 0.0
	width = Z80 * spread * np.sqrt(np.arange(1, horizon + 1))
	if season.index is not None and season.multiplicative:
		width = width * season.at(residual.size, horizon)
	return point, width, method + ", 80% range from in-sample errors" + _season_note(season, m)


def _season_note(season: Season, m: int) -> str:
	if season.index is None:
		return ""
	return f", {'multiplicative' if season.multiplicative else 'additive'} season of {m}"
