"""Where the level of a series shifted: a penalised search for every change the data supports, on
the seasonally adjusted series, each change with its size and a confidence.

1. Season: where the series has one, robust STL (statsmodels) takes it out, on logarithms where
   the season multiplies (`seasonality.choose_season`), and the search runs on the seasonally
   adjusted values, so a strong season neither hides a shift nor passes for one. A season counts
   when the forecast's test finds one (`seasonality.has_season`) or when it is most of what the
   trend leaves (STL's seasonal strength, Wang, Smith and Hyndman 2006, at least SEASON_STRENGTH):
   the autocorrelation test is weak on a few cycles of a clean season. Under STL_CYCLES cycles the
   season is one median index per position instead (STL's smoother would follow their noise), and
   under MIN_CYCLES there is no search: a shift cannot be told from the season. One-period spikes
   are then replaced by the running median (`seasonality.clean`): they are anomalies, not shifts.
2. Candidates: binary segmentation with the two-sample statistic of a change in mean (as if the
   noise were white, its scale from the MAD of the differences), and again with the level-shift
   statistic below at the differences' rho (jumps beyond the usual steps), a split kept while its squared
   statistic beats the modified BIC of Zhang and Siegmund (2007): 3 log n per change plus the log
   lengths of the two parts less the whole's (as R's changepoint package applies it). Segments are
   at least `min_size` long (by default 5% of the series, at least 3).
3. Noise: AR(1). Its lag-one autocorrelation rho is the mean of two estimates that err in
   opposite directions: that of the residuals around the segment means, corrected for the
   downward bias of estimated means (Marriott and Pope 1954), which a wandering series cut into
   many segments pulls down, and one from the spreads of the one- and two-period differences
   (Chakar, Lebarbier, Levy-Leduc and Robin 2017), which frequent shifts push up. The
   innovations' scale is the MAD of what decorrelating leaves.
4. Confirmation: in AR(1) noise a level shift of size d at period k shows in the decorrelated
   series x[t] - rho x[t-1] as a jump of d at k followed by a lasting shift of (1 - rho) d (a level
   shift in Chen and Liu's 1993 terms); its t statistic is computed for every split at once from
   cumulative sums. Each candidate is retested so between its neighbours (the best split there,
   Bonferroni-adjusted for the splits tried; within 10% of an end at alpha / 10; a first or last
   stretch down to END_SIZE periods only when nothing else holds, at alpha / 100); the weakest
   that fails is dropped and the rest retested, so every change reported holds at `alpha`, and
   `confidence` is 1 - p. On white noise this is the two-sample test; on a wandering series the
   lasting part fades and only a jump far beyond the usual steps counts, so a random walk is not
   cut into a staircase, while a sharp shift in it (a beaver leaving its lodge) is still found.
5. Range: the splits whose squared statistic is within 2.71 (the chi-square 90% point) of the
   best one's.
6. Size: the level before and after (means of the seasonally adjusted series between neighbouring
   changes, in the series' units), their difference and its share of the level before; a change
   whose next one comes back to within a fifth of the jump is "temporary" rather than a level shift.

`benchmarks/realdata.py` runs it beside ruptures' PELT on real series with documented shifts
(a law, a rule change, a vaccine, a policy...) and counts its false alarms on simulated noise.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from analytics.series import as_values

MAX_CHANGES = 5
EDGE_SHARE = 0.1
RANGE_DROP = 2.705543454095404  # chi-square(1) 90% point
MAX_RHO = 0.98
END_SIZE = 3
MAD_SCALE = 1.482602218505602  # 1 / the standard normal's 75th percentile
MEAN_AD_SCALE = 1.2533141373155001  # sqrt(pi / 2)
# The noise scale, relative to the values, taken for a series of exact steps.
EXACT = 1e-12
SEASON_STRENGTH = 0.5
# STL's seasonal smoother spans this many cycles: the first and last cycles' indices are not
# bent by their own noise.
SEASON_WINDOW = 13
SEASON_DEGREE = 0
STL_CYCLES = 4
MIN_CYCLES = 3


# --- the noise ------------------------------------------------------------------------


def _mad(x: np.ndarray) -> float:
	return float(MAD_SCALE * np.median(np.abs(x - np.median(x)))) if x.size else 0.0


def autocorrelation(x: np.ndarray) -> float:
	"""Lag-one autocorrelation of the noise, in [0, MAX_RHO], from the spreads of the one- and
	two-period differences (Chakar, Lebarbier, Levy-Leduc and Robin 2017): for AR(1) noise their
	variances are 2 s^2 (1 - rho) and 2 s^2 (1 - rho^2), so rho = (spread two / spread one)^2 - 1;
	medians, so a few shifts barely move it."""
	if x.size < 5:
		return 0.0
	one = float(np.median(np.abs(np.diff(x))))
	two = float(np.median(np.abs(x[2:] - x[:-2])))
	if one <= 0:
		return 0.0
	return float(np.clip((two / one) ** 2 - 1, 0.0, MAX_RHO))


def decorrelate(x: np.ndarray, rho: float) -> np.ndarray:
	"""x[t] - rho x[t-1] for t >= 1: the AR(1) noise's innovations plus the level's own changes."""
	return x[1:] - rho * x[:-1]


def innovation_scale(x: np.ndarray, rho: float) -> float:
	"""The innovations' standard deviation: the MAD of the decorrelated series' differences over
	sqrt(2) (a shift moves one difference, a jump two); where more than half of them are equal
	(counts, exact steps) the mean absolute deviation, scaled by sqrt(pi / 2), takes its place; 0
	when the series is exact steps."""
	steps = np.diff(decorrelate(x, rho))
	scale = _mad(steps)
	if scale <= 0 and steps.size:
		scale = MEAN_AD_SCALE * float(np.mean(np.abs(steps - np.median(steps))))
	return scale / np.sqrt(2)


# --- the statistic --------------------------------------------------------------------


def scores(x: np.ndarray, rho: float, sigma: float, min_size: int = 3) -> tuple[np.ndarray, np.ndarray]:
	"""Candidate splits of `x` (the first index of the new level) and the level-shift t statistic
	of each: the regression of the decorrelated series on a constant and z, z being 0 before the
	split, 1 at it and 1 - rho after, in units of the innovations' scale."""
	n = x.size
	min_size = max(2, int(min_size))
	splits = np.arange(min_size, n - min_size + 1)
	if splits.size == 0:
		return splits, np.zeros(0)
	y = decorrelate(x - x.mean(), rho)  # y[j] belongs to period j + 1
	m = y.size
	tail = np.r_[np.cumsum(y[::-1])[::-1], 0.0]  # tail[j] = sum of y[j:]
	j = splits - 1  # position of the split's own period in y
	after = m - j - 1
	lasting = 1 - rho
	zy = y[j] + lasting * tail[j + 1]
	z1 = 1 + lasting * after
	zz = 1 + lasting**2 * after
	sxy = zy - z1 * y.mean()
	sxx = zz - z1**2 / m
	if sigma <= 0:
		# Exact steps: no noise to measure against, the best split is still the one that fits.
		sigma = EXACT * max(float(np.abs(x).max()), 1.0)
	with np.errstate(divide="ignore", invalid="ignore"):
		t = np.where(sxx > 0, sxy / (sigma * np.sqrt(sxx)), 0.0)
	return splits, t


# --- the search -----------------------------------------------------------------------


def _penalty(n: int, left: int, right: int) -> float:
	"""The modified BIC's price of one more change: 3 log n and the log lengths of the two parts
	less the whole's."""
	return float(3 * np.log(n) + np.log(left) + np.log(right) - np.log(left + right))


def _segment(x: np.ndarray, rho: float, sigma: float, min_size: int, limit: int) -> list[int]:
	"""Binary segmentation: a segment is split where the statistic is largest, while its square
	beats the penalty."""
	n = x.size
	found: list[int] = []
	pending = [(0, n)]
	while pending and len(found) < limit:
		start, stop = pending.pop()
		if stop - start < 2 * min_size:
			continue
		splits, t = scores(x[start:stop], rho, sigma, min_size)
		if not splits.size:
			continue
		best = int(np.argmax(np.abs(t)))
		k = int(splits[best])
		if t[best] ** 2 <= _penalty(n, k, stop - start - k):
			continue
		found.append(start + k)
		pending += [(start, start + k), (start + k, stop)]
	return sorted(found)


def residual_rho(x: np.ndarray, found: list[int]) -> float:
	"""Lag-one autocorrelation of the residuals around the segment means, in [0, MAX_RHO], corrected
	for the downward bias of estimating each segment's mean (about (1 + 3 rho) / n per segment,
	Marriott and Pope 1954): short segments would otherwise make autocorrelated noise look white."""
	n = x.size
	bounds = [0, *found, n]
	residual = np.concatenate([x[i:j] - x[i:j].mean() for i, j in zip(bounds[:-1], bounds[1:], strict=True)])
	lagged = float(residual[:-1] @ residual[:-1])
	if lagged <= 0:
		return 0.0
	rho = float(residual[1:] @ residual[:-1]) / lagged
	return float(np.clip(rho + (1 + 3 * rho) * (len(found) + 1) / n, 0.0, MAX_RHO))


# --- the confirmation -----------------------------------------------------------------


def _split(
	x: np.ndarray,
	offset: int,
	total: int,
	size: int,
	alpha: float,
	rho: float,
	sigma: float,
	short_of: int | None,
) -> dict | None:
	"""The best split of `x` (a window starting at `offset` of a series of `total`) when it holds."""
	splits, t = scores(x, rho, sigma, size)
	if short_of is not None and splits.size:
		# Only the splits that leave a short stretch at an end of the series.
		near_start = (splits < short_of) & (offset == 0)
		near_end = (x.size - splits < short_of) & (offset + x.size == total)
		t, splits = t[near_start | near_end], splits[near_start | near_end]
	if splits.size == 0:
		return None
	strength = np.abs(t)
	best = int(np.argmax(strength))
	if strength[best] <= 0:
		return None
	df = max(x.size - 3, 1)
	raw_p = float(2 * stats.t.sf(strength[best], df))
	tried = max(x.size - 2 * size + 1, 1)
	p_value = min(1.0, raw_p * tried)
	at = offset + int(splits[best])
	edge = max(size, int(np.ceil(EDGE_SHARE * total)))
	limit = alpha / 10 if short_of is None and min(at, total - at) < edge else alpha
	if p_value >= limit:
		return None
	likely = splits[strength**2 >= strength[best] ** 2 - RANGE_DROP]
	return {
		"index": at,
		"range": [offset + int(likely.min()), offset + int(likely.max())],
		"p_value": p_value,
		"raw_p_value": raw_p,
		"t": float(t[best]),
	}


def _test(
	x: np.ndarray, offset: int, total: int, min_size: int, alpha: float, rho: float, sigma: float
) -> dict | None:
	"""The best split of a window when significant; where the window reaches an end of the series,
	a last (or first) stretch shorter than `min_size`, down to END_SIZE points, is tried too when
	no other split holds, at alpha / 100: a real shift in the last few periods is reported, a few
	high or low periods are not."""
	found = _split(x, offset, total, min_size, alpha, rho, sigma, None)
	if found is None and min_size > END_SIZE and (offset == 0 or offset + x.size == total):
		found = _split(x, offset, total, END_SIZE, alpha / 100, rho, sigma, min_size)
	return found


def _confirm(x: np.ndarray, found: list[int], min_size: int, alpha: float) -> tuple[list[dict], float]:
	"""Each change retested between its neighbours in AR(1) noise with the autocorrelation the whole
	segmentation leaves (`residual_rho`); the weakest that fails is dropped and the rest retested,
	until all hold. The changes and the rho they were tested with."""
	n = x.size
	local = autocorrelation(x)
	while found:
		bounds = [0, *found, n]
		# The residuals of a wandering series cut into many segments look nearly white, and the
		# differences of a series with frequent shifts look like a random walk's: the two
		# estimates err in opposite directions, and their mean is taken.
		rho = (residual_rho(x, found) + local) / 2
		sigma = 0.0 if _exact(x, bounds) else innovation_scale(x, rho)
		retested = []
		for i, at in enumerate(found):
			a, b = bounds[i], bounds[i + 2]
			change = _test(x[a:b], a, n, min_size, alpha, rho, sigma)
			retested.append(change if change and abs(change["index"] - at) <= min_size else None)
		if all(retested):
			return retested, rho
		failed = [i for i, c in enumerate(retested) if c is None]
		weakest = min(failed, key=lambda i: _strength(x, bounds[i], found[i], bounds[i + 2], rho, sigma))
		found = found[:weakest] + found[weakest + 1 :]
	return [], 0.0


def _apart(candidates: list[int], x: np.ndarray, min_size: int) -> list[int]:
	"""Candidates at least `min_size` apart: of two closer ones, the one splitting their span better."""
	kept: list[int] = []
	for at in candidates:
		if kept and at - kept[-1] < min_size:
			a = kept[-2] if len(kept) > 1 else 0
			if _gain(x, a, at) > _gain(x, a, kept[-1]):
				kept[-1] = at
			continue
		kept.append(at)
	return [k for k in kept if min_size <= k <= x.size - min_size]


def _gain(x: np.ndarray, a: int, at: int) -> float:
	left, right, both = x[a:at], x[at:], x[a:]
	return float(both.var() * both.size - left.var() * left.size - right.var() * right.size)


def _exact(x: np.ndarray, bounds: list[int]) -> bool:
	"""Whether the series is exactly constant between the changes: no noise to test against."""
	scale = max(float(np.abs(x).max()), 1.0)
	return all(np.ptp(x[a:b]) <= 1e-12 * scale for a, b in zip(bounds[:-1], bounds[1:], strict=True))


def _strength(x: np.ndarray, a: int, at: int, b: int, rho: float, sigma: float) -> float:
	splits, t = scores(x[a:b], rho, sigma, 1)
	hit = np.flatnonzero(splits == at - a)
	return float(abs(t[hit[0]])) if hit.size else 0.0


# --- the series -----------------------------------------------------------------------


def _despike(x: np.ndarray) -> np.ndarray:
	from analytics.seasonality import clean

	return clean(x)[0]


def adjust(x: np.ndarray, season_length: int | None) -> tuple[np.ndarray | None, str | None]:
	"""The seasonally adjusted series and how the season was taken out ("additive" or
	"multiplicative"), or the series itself and None where it has no season of that length, or
	None and "too few cycles" where it has one but fewer than MIN_CYCLES cycles.

	Robust STL from STL_CYCLES cycles on; on fewer, one index per position (the median over the
	cycles, `seasonality.choose_season`): a smoother over two or three cycles follows their noise.
	"""
	from statsmodels.tsa.seasonal import STL

	from analytics.seasonality import choose_season, has_season

	m = int(season_length or 0)
	if m < 2 or x.size < 2 * m:
		return x, None
	index, multiplicative = choose_season(x, m, cycles=None)
	multiplicative = multiplicative and bool(np.all(x > 0))
	y = np.log(x) if multiplicative else x
	fit = STL(y, period=m, seasonal=SEASON_WINDOW, seasonal_deg=SEASON_DEGREE, robust=True).fit()
	seasonal, remainder = np.asarray(fit.seasonal), np.asarray(fit.resid)
	strength = 1 - np.var(remainder) / max(float(np.var(remainder + seasonal)), 1e-300)
	if strength < SEASON_STRENGTH and not has_season(x, m):
		return x, None
	if x.size < MIN_CYCLES * m:
		# Two cycles: each position's index is the mean of two values, half the noise; a shift
		# cannot be told from the season.
		return None, "too few cycles"
	if x.size < STL_CYCLES * m:
		seasonal = np.log(index) if multiplicative else index
		seasonal = seasonal[np.arange(x.size) % m]
	return (x / np.exp(seasonal), "multiplicative") if multiplicative else (x - seasonal, "additive")


def default_min_size(n: int) -> int:
	return max(3, int(np.ceil(0.05 * n)))


def locate_all(
	values: object, min_size: int | None = None, alpha: float = 0.05, season_length: int | None = None
) -> list[dict]:
	"""Every shift the data supports, in order:
	`[{"index", "range", "kind", "before", "after", "shift", "relative", "p_value", "confidence", ...}]`.

	`index` is the first period of the new level; `before` and `after` (also `before_mean` and
	`after_mean`) are the levels between neighbouring changes in the series' units, seasonally
	adjusted where `season` names how a season was taken out; `shift` is after - before and
	`relative` its share of `before` (None where `before` is 0); `kind` is "level shift" or
	"temporary"; `rho` is the noise's autocorrelation the search allowed for.
	"""
	original = as_values(values)
	n = original.size
	if n < 6 or np.ptp(original) == 0:
		return []
	min_size = default_min_size(n) if min_size is None else max(2, int(min_size))
	adjusted, season = adjust(original, season_length)
	if adjusted is None:
		return []
	x = _despike(adjusted)
	# Candidates as if the noise were white (the two-sample statistic), which over-splits a
	# wandering series; the confirmation, which allows for the autocorrelation, prunes them.
	candidates = set(_segment(x, 0.0, innovation_scale(x, 0.0), min_size, 2 * MAX_CHANGES))
	# And as jumps beyond the usual steps where the noise wanders (the statistic at the robust rho).
	local = autocorrelation(x)
	if local > 0:
		candidates |= set(_segment(x, local, innovation_scale(x, local), min_size, 2 * MAX_CHANGES))
	found, rho = _confirm(x, _apart(sorted(candidates), x, min_size), min_size, alpha)
	found = sorted(found, key=lambda c: c["p_value"])[:MAX_CHANGES]
	found.sort(key=lambda c: c["index"])
	bounds = [0] + [c["index"] for c in found] + [n]
	for i, change in enumerate(found):
		before = float(adjusted[bounds[i] : bounds[i + 1]].mean())
		after = float(adjusted[bounds[i + 1] : bounds[i + 2]].mean())
		change.update(
			before=before,
			after=after,
			before_mean=before,
			after_mean=after,
			shift=after - before,
			relative=(after - before) / abs(before) if before else None,
			confidence=1.0 - change["p_value"],
			season=season,
			rho=round(rho, 3),
			kind="level shift",
		)
	for i in range(len(found) - 1):
		jump = found[i]["shift"]
		back = found[i + 1]["after"] - found[i]["before"]
		if jump and np.sign(found[i + 1]["shift"]) != np.sign(jump) and abs(back) <= 0.2 * abs(jump):
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
