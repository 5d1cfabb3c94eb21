"""Where the level of a series shifted: binary segmentation on Welch t-tests, corrected for the
number of splits tried and for autocorrelation.

- Every split of a segment is scored at once from cumulative sums (O(n)); the best split is
  kept when its p-value, Bonferroni-adjusted for the splits tried, is below alpha; then each
  side is searched again, so several shifts are found, not one best split.
- Autocorrelation: the changes found are then retested, each between its neighbours, with the
  t statistic divided by sqrt((1 + rho) / (1 - rho)), rho being the lag-one autocorrelation of
  what is left around all the segment means; the weakest failing change is dropped and the
  rest retested. A wandering or trending series (rho near 1) then does not count as a run of
  shifts, while a clean step (white noise either side, as the Nile at the 1898 dam) keeps
  its full strength.
- Ends: a segment is at least `min_size` long (by default 5% of the series, at least 3), and
  a split within 10% of an end of the series must pass alpha / 10; a first or last stretch
  shorter than `min_size` (down to 3) only when nothing else holds, at alpha / 100.
- One-period spikes are replaced by the running median before the search (they are
  anomalies, not shifts); a segment that departs and comes back to within a fifth of the
  jump is reported as a temporary change rather than a level shift.
- Each change carries a range of likely positions: the splits whose squared statistic is
  within 2.71 (the chi-square 90% point) of the best one's.

ruptures' PELT (l2 cost, BIC penalty) was run beside it in `benchmarks/realdata.py`: on the
documented shifts it places the same periods where both find one (Nile 1899, seat belts
1983-02, Romania 1967, the 2008 crisis) and finds the Danish 1983 shift this search misses,
but it reports shifts on 38 of 39 real series (it has no correction for autocorrelation, so a
wandering series becomes a staircase) against 24 here, and gives no p-value or range. This
search is kept: fewer false shifts, a p-value and a range, numpy only, and about three times
faster there.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from analytics.series import as_values

MAX_CHANGES = 5
EDGE_SHARE = 0.1
RANGE_DROP = 2.705543454095404  # chi-square(1) 90% point
MAX_RHO = 0.9
END_SIZE = 3


def scores(values: object, min_size: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
	"""Candidate split indexes with their Welch t statistics and degrees of freedom."""
	x = as_values(values)
	n = x.size
	min_size = max(2, int(min_size))
	splits = np.arange(min_size, n - min_size + 1)
	if splits.size == 0:
		return splits, np.array([]), np.array([])
	# Centring keeps the sums of squares well conditioned for large amounts.
	centred = x - x.mean()
	s1 = np.concatenate([[0.0], np.cumsum(centred)])
	s2 = np.concatenate([[0.0], np.cumsum(centred * centred)])
	n1 = splits.astype(float)
	n2 = n - n1
	sum1, sum2 = s1[splits], s1[n] - s1[splits]
	sq1, sq2 = s2[splits], s2[n] - s2[splits]
	mean1, mean2 = sum1 / n1, sum2 / n2
	var1 = np.maximum((sq1 - n1 * mean1**2) / (n1 - 1), 0.0)
	var2 = np.maximum((sq2 - n2 * mean2**2) / (n2 - 1), 0.0)
	a, b = var1 / n1, var2 / n2
	se = np.sqrt(a + b)
	diff = mean2 - mean1
	scale = max(np.abs(x).max(), 1.0)
	flat = se <= 1e-12 * scale
	with np.errstate(divide="ignore", invalid="ignore"):
		t = np.where(flat, np.where(np.abs(diff) > 1e-12 * scale, np.inf * np.sign(diff), 0.0), diff / se)
		df = np.where(flat, n - 2.0, (a + b) ** 2 / (a**2 / (n1 - 1) + b**2 / (n2 - 1)))
	return splits, t, df


def _rho(x: np.ndarray, bounds: list[int]) -> float:
	"""Lag-one autocorrelation of the residuals around the segment means, in [0, MAX_RHO]."""
	residual = np.concatenate([x[a:b] - x[a:b].mean() for a, b in zip(bounds[:-1], bounds[1:], strict=True)])
	denominator = float(residual @ residual)
	if denominator <= 0:
		return 0.0
	return float(np.clip(residual[1:] @ residual[:-1] / denominator, 0.0, MAX_RHO))


def _test(
	x: np.ndarray, offset: int, total: int, min_size: int, alpha: float, inflation: float
) -> dict | None:
	"""The best split of `x` (a segment starting at `offset`) when significant after correction.

	Splits leave `min_size` points either side. Where the segment reaches an end of the series,
	a last (or first) stretch shorter than that, down to END_SIZE points, is tried too when no
	other split holds, at alpha / 100: a real shift in the last few periods is reported, a few
	high or low periods are not.
	"""
	found = _split(x, offset, total, min_size, alpha, inflation, None)
	if found is None and min_size > END_SIZE and (offset == 0 or offset + x.size == total):
		found = _split(x, offset, total, END_SIZE, alpha / 100, inflation, min_size)
	return found


def _short_stretch_scores(x: np.ndarray, splits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
	"""t statistics of a short first or last stretch against the rest, on the rest's variance."""
	t, df = np.zeros(splits.size), np.zeros(splits.size)
	for i, k in enumerate(splits):
		short, long = (x[:k], x[k:]) if k < x.size - k else (x[k:], x[:k])
		spread = long.std(ddof=1)
		sign = 1.0 if k >= x.size - k else -1.0
		diff = (short.mean() - long.mean()) * sign
		se = spread * np.sqrt(1 / short.size + 1 / long.size)
		t[i] = diff / se if se > 0 else (np.inf * np.sign(diff) if diff else 0.0)
		df[i] = long.size - 1
	return t, df


def _split(
	x: np.ndarray, offset: int, total: int, size: int, alpha: float, inflation: float, short_of: int | None
) -> dict | None:
	splits, t, df = scores(x, size)
	if short_of is not None and splits.size:
		# Only the splits that leave a short stretch at an end of the series, and scored on the
		# long side's spread: three points cannot measure their own.
		near_start = (splits < short_of) & (offset == 0)
		near_end = (x.size - splits < short_of) & (offset + x.size == total)
		splits = splits[near_start | near_end]
		t, df = _short_stretch_scores(x, splits)
	if splits.size == 0:
		return None
	strength = np.abs(t)
	if not np.any(strength > 0):
		return None
	best = int(np.argmax(strength))
	adjusted = strength[best] / inflation
	raw_p = 0.0 if np.isinf(adjusted) else float(2 * stats.t.sf(adjusted, df[best]))
	tried = max(x.size - 2 * size + 1, 1)
	p_value = min(1.0, raw_p * tried)
	at = offset + int(splits[best])
	edge = max(size, int(np.ceil(EDGE_SHARE * total)))
	limit = alpha / 10 if short_of is None and min(at, total - at) < edge else alpha
	if p_value >= limit:
		return None
	finite = np.where(np.isfinite(strength), strength, 1e12) / inflation
	likely = splits[finite**2 >= finite[best] ** 2 - RANGE_DROP]
	return {
		"index": at,
		"range": [offset + int(likely.min()), offset + int(likely.max())],
		"p_value": p_value,
		"raw_p_value": raw_p,
		"t": float(t[best]) if np.isfinite(t[best]) else float(np.sign(t[best]) * 1e9),
	}


def _segment(x: np.ndarray, min_size: int, alpha: float, inflation: float, limit: int) -> list[dict]:
	"""Binary segmentation: split while the best split of a segment is significant."""
	n = x.size
	found: list[dict] = []
	pending = [(0, n)]
	while pending and len(found) < limit:
		start, stop = pending.pop()
		reaches_end = start == 0 or stop == n
		if stop - start < (min_size + END_SIZE if reaches_end else 2 * min_size):
			continue
		change = _test(x[start:stop], start, n, min_size, alpha, inflation)
		if change is None:
			continue
		found.append(change)
		pending += [(start, change["index"]), (change["index"], stop)]
	return sorted(found, key=lambda c: c["index"])


def _confirm(x: np.ndarray, found: list[dict], min_size: int, alpha: float) -> tuple[list[dict], float]:
	"""Each change retested between its neighbours with the residual autocorrelation of the whole
	segmentation; the weakest that fails is dropped and the rest retested, until all hold."""
	n = x.size
	while True:
		bounds = [0] + [c["index"] for c in found] + [n]
		rho = _rho(x, bounds)
		inflation = float(np.sqrt((1 + rho) / (1 - rho)))
		retested = []
		for i in range(len(found)):
			a, b = bounds[i], bounds[i + 2]
			change = _test(x[a:b], a, n, min_size, alpha, inflation)
			retested.append(
				change if change and abs(change["index"] - found[i]["index"]) <= min_size else None
			)
		if all(retested):
			for change in retested:
				change["rho"] = round(rho, 3)
			return retested, rho
		weakest = max((i for i, c in enumerate(retested) if c is None), key=lambda i: found[i]["p_value"])
		found = found[:weakest] + found[weakest + 1 :]


def _despike(x: np.ndarray) -> np.ndarray:
	from analytics.forecast import clean

	return clean(x)[0]


def _deseason(x: np.ndarray, season_length: int | None) -> np.ndarray:
	from analytics.forecast import choose_season, has_season

	m = int(season_length or 0)
	if m < 2 or not has_season(x, m):
		return x
	index, multiplicative = choose_season(x, m)
	s = index[np.arange(x.size) % m]
	return x / s if multiplicative else x - s


def default_min_size(n: int) -> int:
	return max(3, int(np.ceil(0.05 * n)))


def locate_all(
	values: object, min_size: int | None = None, alpha: float = 0.05, season_length: int | None = None
) -> list[dict]:
	"""Every significant shift, in order: `[{"index", "range", "kind", "p_value", "before_mean", "after_mean", ...}]`.

	`index` is the first period of the new level; `kind` is "level shift" or "temporary" (the
	level came back); means are of the original values between neighbouring changes.
	"""
	original = as_values(values)
	n = original.size
	if n < 6 or np.ptp(original) == 0:
		return []
	min_size = default_min_size(n) if min_size is None else max(2, int(min_size))
	x = _despike(_deseason(original, season_length))
	found, _ = _confirm(x, _segment(x, min_size, alpha, 1.0, 2 * MAX_CHANGES), min_size, alpha)
	found = sorted(found, key=lambda c: c["p_value"])[:MAX_CHANGES]
	found.sort(key=lambda c: c["index"])
	bounds = [0] + [c["index"] for c in found] + [n]
	for i, change in enumerate(found):
		before = original[bounds[i] : bounds[i + 1]].mean()
		after = original[bounds[i + 1] : bounds[i + 2]].mean()
		change["before_mean"], change["after_mean"] = float(before), float(after)
		change["kind"] = "level shift"
	for i in range(len(found) - 1):
		jump = found[i]["after_mean"] - found[i]["before_mean"]
		back = found[i + 1]["after_mean"] - found[i]["before_mean"]
		if jump and np.sign(found[i + 1]["after_mean"] - found[i + 1]["before_mean"]) != np.sign(jump):
			if abs(back) <= 0.2 * abs(jump):
				found[i]["kind"] = "temporary"
	return found


def locate(
	values: object, min_size: int | None = None, alpha: float = 0.05, season_length: int | None = None
) -> dict | None:
	"""The most significant shift (see `locate_all`), or None when there is none."""
	found = locate_all(values, min_size, alpha, season_length)
	if not found:
		return None
	return min(found, key=lambda c: (c["p_value"], -abs(c["t"])))
