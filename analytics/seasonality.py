"""Seasons and outliers of a series: is there a season, its indices, and periods far out of line.

- `has_season`: the autocorrelation at the season lag of the detrended series, tested at 90%
  (as in the M3 Theta method).
- `choose_season` / `forecast_season`: classical decomposition (a centred moving average for the
  trend), one index per position as the median over cycles, additive or multiplicative by which
  leaves the smaller irregular part. The forecast decides that over the whole series (whether
  swings grow with the level shows over many cycles) and takes the indices from the latest
  cycles, so a season that drifts is followed.
- `clean`: a period more than OUTLIER_Z typical period-to-period steps from the running median of
  its neighbours is replaced by that median (the last one pulled in to the limit instead).
  `clean_around_season` does so on what a rough season leaves, so seasonal peaks are not taken
  for outliers.
"""

from __future__ import annotations

import numpy as np

OUTLIER_Z = 5.0
LAST_WINSORISED = True
# 90% one-sided normal quantile for the seasonality test.
SEASON_TEST_Z = 1.645
# The forecast's indices come from the latest cycles; change points deseason with more.
FORECAST_CYCLES = 3
DESEASON_CYCLES = 6


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


def latest_indices(
	y: np.ndarray, m: int, multiplicative: bool, cycles: int | None
) -> tuple[np.ndarray | None, float]:
	"""Indices from the latest `cycles` cycles (all for None) and the irregular part's sum of squares;
	None where the centred trend is not positive there and a season cannot multiply it."""
	trend, positions = _centred_trend(y, m)
	if cycles and positions.size > cycles * m:
		trend, positions = trend[-cycles * m :], positions[-cycles * m :]
	if multiplicative:
		if not np.all(trend > 0):
			return None, np.inf
		index = _indices(y[positions] / trend, positions, m, True)
		irregular = y[positions] - trend * index[positions % m]
	else:
		index = _indices(y[positions] - trend, positions, m, False)
		irregular = y[positions] - trend - index[positions % m]
	return index, float(np.sum(irregular**2))


def choose_season(y: np.ndarray, m: int, cycles: int | None = DESEASON_CYCLES) -> tuple[np.ndarray, bool]:
	"""Seasonal indices over the latest `cycles` cycles and whether they are multiplicative,
	whichever leaves the smaller irregular part there."""
	additive, irregular_add = latest_indices(y, m, False, cycles)
	if np.all(y > 0):
		multiplicative, irregular_mul = latest_indices(y, m, True, cycles)
		if multiplicative is not None and irregular_mul < irregular_add:
			return multiplicative, True
	return additive, False


def forecast_season(y: np.ndarray, m: int) -> tuple[np.ndarray, bool]:
	"""The forecast's season: additive or multiplicative as decided over the whole series, the
	indices from the latest FORECAST_CYCLES cycles."""
	multiplicative = choose_season(y, m, cycles=None)[1]
	index = latest_indices(y, m, multiplicative, FORECAST_CYCLES)[0] if multiplicative else None
	if index is None:
		return latest_indices(y, m, False, FORECAST_CYCLES)[0], False
	return index, True


class Season:
	"""Seasonal indices (or none) applied to and taken off a series from a given period on."""

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


def clean_around_season(y: np.ndarray, m: int) -> tuple[np.ndarray, int]:
	"""`clean` on what a rough season leaves (its indices are medians per position, which one odd
	period does not move): a seasonal peak is near its own position's level though far from its
	neighbours', and only periods out of line with both are replaced."""
	if m < 2 or y.size < 2 * m:
		return clean(y)
	rough = Season(*forecast_season(y, m))
	cleaned, replaced = clean(rough.remove(y))
	if not replaced:
		return y, 0
	return rough.put_back(cleaned, 0), replaced
