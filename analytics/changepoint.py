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
2. Noise: six kinds, each with the same prior weight: white noise about a level, AR(1) (rho on a
   grid from 0.2 to 0.95), a random walk with drift, a local level with drift (ARIMA(0,1,1), a
   random walk seen through white noise; theta on a grid from 0.2 to 0.9), and white or AR(1)
   noise about a straight line (a trend-stationary series, the alternative to a random walk with
   drift in Perron's 1989 sense; its slope priced log n, as the BIC prices a coefficient). All are
   (1 - phi B) x[t] = c [+ b t] + (1 - theta B) a[t]; a level shift of size d at k shows in the
   decorrelated series as d at k, then (1 - phi) d every period after, through 1 / (1 - theta B)
   (a level shift in Chen and Liu's 1993 terms). Its t statistic is computed for every split at
   once from cumulative sums, the innovations' scale from the MAD of what decorrelating leaves.
   Without the trend kinds a steady rise was cut into steps: 11% of straight lines with AR(1)
   noise in `benchmarks/realdata.py` got a change.
3. Candidates and weights: for each noise model, binary segmentation with that model's statistic
   proposes changes while the squared statistic beats the modified BIC of Zhang and Siegmund (2007)
   as R's changepoint package applies it (3 log n per change plus the log lengths of the two parts
   less the whole's); backward elimination keeps the subset with the lowest criterion, -2
   log-likelihood plus Zhang and Siegmund's price of the changes (3 log n each and the log of each
   segment's share). Each model's weight is its prior times exp(-criterion / 2), normalised (the
   BIC's approximation of a posterior probability, Raftery 1995). The noise and the shifts are so
   chosen together: a shift cannot make the noise look more wandering than it is (the previous
   rounds' rho estimates could be inflated by it), and wandering noise cannot pass for shifts (they
   cost more than the autocorrelation that explains them). Segments are at least `min_size` long
   (by default 5% of the series, at least 3).
4. Confirmation: each candidate (those proposed by the models of weight at least 1%) is retested
   between its neighbours under every model, by the best split within `min_size` of it,
   Bonferroni-adjusted for the splits of the window (within 10% of an end at alpha / 10; a first or
   last stretch down to END_SIZE periods only when nothing else holds, at alpha / 100); its p-value
   is the models' average by their weights (Bayesian model averaging, Hoeting, Madigan, Raftery and
   Volinsky 1999), so a shift that a plausible wandering noise explains does not hold. The weakest
   that fails is dropped and the rest retested, so every change reported holds at `alpha`, and
   `confidence` is 1 - p. On white noise this is the two-sample test; on a random walk only a jump
   far beyond the usual steps counts, so a random walk is not cut into a staircase, while a sharp
   shift in it (a beaver leaving its lodge, the end of the coffee export quotas) is still found.
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
from scipy.signal import lfilter

from analytics.series import as_values

MAX_CHANGES = 5
EDGE_SHARE = 0.1
RANGE_DROP = 2.705543454095404  # chi-square(1) 90% point
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

# The noise models, as (phi, theta, trend) of (1 - phi B) x[t] = c + b t + (1 - theta B) a[t] with
# a white and b = 0 unless trend: white noise about a level (0, 0, False); AR(1) (rho, 0, False);
# a random walk with drift (1, 0, False); a local level with drift, ARIMA(0,1,1), a random walk
# seen through white noise (1, theta, False); white noise (0, 0, True) or AR(1) (rho, 0, True)
# about a straight line. Each kind has the same prior weight, shared evenly by its grid's values.
AR_RHOS = (0.2, 0.4, 0.6, 0.8, 0.9, 0.95)
LOCAL_THETAS = (0.2, 0.4, 0.6, 0.8, 0.9)
NOISE_MODELS = (
	(0.0, 0.0, False),
	*((rho, 0.0, False) for rho in AR_RHOS),
	(1.0, 0.0, False),
	*((1.0, theta, False) for theta in LOCAL_THETAS),
	(0.0, 0.0, True),
	*((rho, 0.0, True) for rho in AR_RHOS),
)
# Changes are proposed by the models of at least this weight.
CANDIDATE_WEIGHT = 0.01
# Models below this weight are left out of the averages.
NEGLIGIBLE = 1e-4


def noise_name(phi: float, theta: float, trend: bool = False) -> str:
	if trend:
		return "trend + white noise" if phi == 0 else "trend + AR(1)"
	if phi == 0:
		return "white noise"
	if phi < 1:
		return "AR(1)"
	return "random walk" if theta == 0 else "local level"


def _mad(x: np.ndarray) -> float:
	return float(MAD_SCALE * np.median(np.abs(x - np.median(x)))) if x.size else 0.0


def _smooth(u: np.ndarray, theta: float) -> np.ndarray:
	"""The inverse of the moving average, 1 / (1 - theta B), along the first axis."""
	return lfilter([1.0], [1.0, -theta], u, axis=0) if theta else u


def decorrelate(x: np.ndarray, rho: float, theta: float = 0.0) -> np.ndarray:
	"""The noise's innovations plus the level's own changes: x[t] - rho x[t-1] for t >= 1, then
	the moving average undone."""
	return _smooth(x[1:] - rho * x[:-1], theta)


def innovation_scale(x: np.ndarray, rho: float, theta: float = 0.0) -> float:
	"""The innovations' standard deviation: the MAD of the decorrelated series' differences over
	sqrt(2) (a shift moves one difference, a jump two); where more than half of them are equal
	(counts, exact steps) the mean absolute deviation, scaled by sqrt(pi / 2), takes its place; 0
	when the series is exact steps."""
	steps = np.diff(decorrelate(x, rho, theta))
	scale = _mad(steps)
	if scale <= 0 and steps.size:
		scale = MEAN_AD_SCALE * float(np.mean(np.abs(steps - np.median(steps))))
	return scale / np.sqrt(2)


def _response(m: int, phi: float, theta: float) -> np.ndarray:
	"""How a level shift shows in the decorrelated series, from its own period on: 1, then
	1 - phi every period after, through the inverse moving average."""
	r = np.full(m, 1.0 - phi)
	r[0] = 1.0
	return _smooth(r, theta)


def _tails(u: np.ndarray, phi: float, theta: float) -> np.ndarray:
	"""For every j, the sum over t >= j of response[t - j] * u[t] (backwards in one pass)."""
	after = np.r_[np.cumsum(u[::-1])[::-1][1:], 0.0]
	return _smooth((u + (1.0 - phi) * after)[::-1], theta)[::-1]


# --- the statistic --------------------------------------------------------------------


def _basis(n: int, phi: float, theta: float, trend: bool) -> np.ndarray:
	"""What the noise model fits besides the shifts, in the decorrelated series (periods 1..n-1):
	the constant, and with a trend the straight line (centred, so the two are well apart)."""
	columns = [_smooth(np.ones(n - 1), theta)]
	if trend:
		columns.append(decorrelate(np.arange(n) - (n - 1) / 2, phi, theta))
	return np.column_stack(columns)


def scores(
	x: np.ndarray, rho: float, sigma: float, min_size: int = 3, theta: float = 0.0, trend: bool = False
) -> tuple[np.ndarray, np.ndarray]:
	"""Candidate splits of `x` (the first index of the new level) and the level-shift t statistic
	of each: the regression of the decorrelated series on a constant (and with `trend` a straight
	line) and z, the shift's response (0 before the split, 1 at it and 1 - rho after, through the
	inverse moving average), in units of the innovations' scale; every split at once from
	cumulative sums (Chen and Liu 1993)."""
	n = x.size
	min_size = max(2, int(min_size))
	splits = np.arange(min_size, n - min_size + 1)
	if splits.size == 0:
		return splits, np.zeros(0)
	y = decorrelate(x - x.mean(), rho, theta)  # y[j] belongs to period j + 1
	m = y.size
	basis = _basis(n, rho, theta, trend)
	j = splits - 1  # position of the split's own period in y
	zy = _tails(y, rho, theta)[j]
	zb = np.column_stack([_tails(column, rho, theta)[j] for column in basis.T])
	zz = np.cumsum(_response(m, rho, theta) ** 2)[m - 1 - j]
	inverse = np.linalg.inv(basis.T @ basis)
	sxy = zy - zb @ (inverse @ (basis.T @ y))
	sxx = zz - np.einsum("ij,jk,ik->i", zb, inverse, zb)
	if sigma <= 0:
		# Exact steps: no noise to measure against, the best split is still the one that fits.
		sigma = EXACT * max(float(np.abs(x).max()), 1.0)
	with np.errstate(divide="ignore", invalid="ignore"):
		t = np.where(sxx > 1e-12 * zz, sxy / (sigma * np.sqrt(sxx)), 0.0)
	return splits, t


# --- the search -----------------------------------------------------------------------


def _args(noise: tuple[float, float, bool], sigma: float, min_size: int) -> tuple:
	"""`scores`' arguments after the series for a noise model."""
	phi, theta, trend = noise
	return phi, sigma, min_size, theta, trend


def _penalty(n: int, left: int, right: int) -> float:
	"""The modified BIC's price of one more change: 3 log n and the log lengths of the two parts
	less the whole's."""
	return float(3 * np.log(n) + np.log(left) + np.log(right) - np.log(left + right))


def _segment(x: np.ndarray, noise: tuple[float, float], min_size: int, limit: int) -> list[int]:
	"""Binary segmentation: a segment is split where the statistic is largest, while its square
	beats the penalty."""
	n = x.size
	sigma = innovation_scale(x, *noise[:2])
	found: list[int] = []
	pending = [(0, n)]
	while pending and len(found) < limit:
		start, stop = pending.pop()
		if stop - start < 2 * min_size:
			continue
		splits, t = scores(x[start:stop], *_args(noise, sigma, min_size))
		if not splits.size:
			continue
		best = int(np.argmax(np.abs(t)))
		k = int(splits[best])
		if t[best] ** 2 <= _penalty(n, k, stop - start - k):
			continue
		found.append(start + k)
		pending += [(start, start + k), (start + k, stop)]
	return sorted(found)


# --- the noise model and the changes, chosen together ---------------------------------


def _columns(n: int, noise: tuple[float, float, bool], changes: list[int]) -> np.ndarray:
	"""The regressors in the decorrelated series (periods 1..n-1): the noise model's own (the
	constant, and the line with a trend) and each change's response from its own period on."""
	phi, theta, trend = noise
	t = np.arange(1, n)[:, None]
	at = np.asarray(changes, dtype=float)[None, :]
	z = np.where(t < at, 0.0, np.where(t == at, 1.0, 1.0 - phi))
	return np.column_stack([_basis(n, phi, theta, trend), _smooth(z, theta)])


def _criteria(
	x: np.ndarray, noise: tuple[float, float, bool], candidates: list[int]
) -> tuple[float, list[int]]:
	"""Backward elimination among the candidates by the criterion: -2 log-likelihood (given the
	first value, the innovations' variance profiled out) plus the modified BIC's price of the
	changes (Zhang and Siegmund 2007: 3 log n each and the log of each segment's share of the
	series) and, with a trend, log n for its slope (the BIC's price of a coefficient). The best
	subset and its criterion."""
	n = x.size
	y = decorrelate(x, *noise[:2])
	design = _columns(n, noise, candidates)
	gram, cross, total = design.T @ design, design.T @ y, float(y @ y)
	floor = (EXACT * max(float(np.abs(x).max()), 1.0)) ** 2 * (n - 1)
	own = 2 if noise[2] else 1

	def value(keep: list[int]) -> float:
		columns = list(range(own)) + [own + candidates.index(k) for k in keep]
		g, b = gram[np.ix_(columns, columns)], cross[columns]
		rss = max(total - float(b @ np.linalg.lstsq(g, b, rcond=None)[0]), floor)
		shares = np.diff([0, *keep, n]) / n
		price = 3 * len(keep) * np.log(n) + float(np.log(shares).sum()) + (own - 1) * np.log(n)
		return (n - 1) * np.log(rss / (n - 1)) + price

	current = list(candidates)
	best = (value(current), list(current))
	while current:
		trial, drop = min((value(current[:i] + current[i + 1 :]), i) for i in range(len(current)))
		current = current[:drop] + current[drop + 1 :]
		if trial < best[0]:
			best = (trial, list(current))
	return best


def _prior(noise: tuple[float, float, bool]) -> float:
	"""Each kind of noise has the same prior weight, shared evenly by its grid's values (a uniform
	prior on its parameter: the grid stands for the integral that the BIC's log n approximates)."""
	kinds = [noise_name(*m) for m in NOISE_MODELS]
	return 1.0 / (len(set(kinds)) * kinds.count(noise_name(*noise)))


def select(x: np.ndarray, min_size: int) -> tuple[list[int], dict[tuple[float, float, bool], float]]:
	"""The candidate changes and the weight of each noise model. For each of NOISE_MODELS, binary
	segmentation with that model's level-shift statistic proposes changes and backward elimination
	keeps the subset with the lowest criterion; the model's weight is its prior times
	exp(-criterion / 2), normalised (the BIC's approximation of its posterior probability, Raftery
	1995), with the changes it keeps: a shift cannot make the noise look more wandering than it is,
	nor can wandering noise pass for shifts. The candidates are the changes proposed by the models
	of weight at least CANDIDATE_WEIGHT."""
	values, proposed = {}, {}
	for noise in NOISE_MODELS:
		proposed[noise] = _apart(_segment(x, noise, min_size, 2 * MAX_CHANGES), x, min_size)
		values[noise] = _criteria(x, noise, proposed[noise])[0]
	low = min(values.values())
	weights = {noise: _prior(noise) * float(np.exp(-(v - low) / 2)) for noise, v in values.items()}
	total = sum(weights.values())
	weights = {noise: w / total for noise, w in weights.items() if w / total > NEGLIGIBLE}
	candidates = sorted({k for noise, w in weights.items() if w >= CANDIDATE_WEIGHT for k in proposed[noise]})
	return _apart(candidates, x, min_size), weights


# --- the confirmation -----------------------------------------------------------------


def _split(
	x: np.ndarray,
	offset: int,
	total: int,
	size: int,
	alpha: float,
	noise: tuple[float, float, bool],
	sigma: float,
	short_of: int | None,
	keep: bool = False,
	near: int | None = None,
) -> dict | None:
	"""The best split of `x` (a window starting at `offset` of a series of `total`) when it holds
	(or whether or not it holds, with `keep`); with `near`, the best within `size` periods of it
	(still adjusted for every split of the window)."""
	splits, t = scores(x, *_args(noise, sigma, size))
	tried = max(x.size - 2 * size + 1, 1)
	if short_of is not None and splits.size:
		# Only the splits that leave a short stretch at an end of the series.
		near_start = (splits < short_of) & (offset == 0)
		near_end = (x.size - splits < short_of) & (offset + x.size == total)
		t, splits = t[near_start | near_end], splits[near_start | near_end]
	if near is not None and splits.size:
		close = np.abs(offset + splits - near) <= size
		t, splits = t[close], splits[close]
	if splits.size == 0:
		return None
	strength = np.abs(t)
	best = int(np.argmax(strength))
	if strength[best] <= 0:
		return None
	df = max(x.size - 3 - int(noise[2]), 1)
	raw_p = float(2 * stats.t.sf(strength[best], df))
	p_value = min(1.0, raw_p * tried)
	at = offset + int(splits[best])
	edge = max(size, int(np.ceil(EDGE_SHARE * total)))
	limit = alpha / 10 if short_of is None and min(at, total - at) < edge else alpha
	if p_value >= limit and not keep:
		return None
	likely = splits[strength**2 >= strength[best] ** 2 - RANGE_DROP]
	return {
		"index": at,
		"range": [offset + int(likely.min()), offset + int(likely.max())],
		"p_value": p_value,
		"raw_p_value": raw_p,
		"t": float(t[best]),
		"limit": limit,
	}


def _test(
	x: np.ndarray,
	offset: int,
	total: int,
	min_size: int,
	alpha: float,
	noise: tuple[float, float, bool],
	sigma: float,
	keep: bool = False,
	near: int | None = None,
) -> dict | None:
	"""The best split of a window when significant; where the window reaches an end of the series,
	a last (or first) stretch shorter than `min_size`, down to END_SIZE points, is tried too when
	no other split holds, at alpha / 100: a real shift in the last few periods is reported, a few
	high or low periods are not."""
	found = _split(x, offset, total, min_size, alpha, noise, sigma, None, keep, near)
	if (
		(found is None or found["p_value"] >= found["limit"])
		and min_size > END_SIZE
		and (offset == 0 or offset + x.size == total)
	):
		short = _split(x, offset, total, END_SIZE, alpha / 100, noise, sigma, min_size, keep, near)
		if short is not None and (found is None or short["p_value"] < short["limit"]):
			found = short
	return found


def _confirm(x: np.ndarray, found: list[int], min_size: int, alpha: float, weights: dict) -> list[dict]:
	"""Each change retested between its neighbours in every noise model, its p-value the average
	of the models' weighted by their weights (Bayesian model averaging, Hoeting, Madigan, Raftery
	and Volinsky 1999): a shift that a plausible wandering noise explains does not hold. The
	weakest that fails is dropped and the rest retested, until all hold."""
	n = x.size
	scales = {noise: innovation_scale(x, *noise[:2]) for noise in weights}
	while found:
		bounds = [0, *found, n]
		exact = _exact(x, bounds)
		retested = []
		for i, at in enumerate(found):
			a, b = bounds[i], bounds[i + 2]
			tests = []
			for noise, weight in weights.items():
				sigma = 0.0 if exact else scales[noise]
				tests.append((weight, _test(x[a:b], a, n, min_size, alpha, noise, sigma, keep=True, near=at)))
			p_value = sum(w * (c["p_value"] if c else 1.0) for w, c in tests)
			limit = sum(w * (c["limit"] if c else alpha) for w, c in tests)
			main = max(tests, key=lambda wc: wc[0])[1]
			if main is not None and p_value < limit:
				retested.append({**main, "p_value": p_value})
			else:
				retested.append(None)
		if all(retested):
			return retested
		failed = [i for i, c in enumerate(retested) if c is None]
		best = max(weights, key=weights.get)
		sigma = 0.0 if exact else scales[best]
		weakest = min(failed, key=lambda i: _strength(x, bounds[i], found[i], bounds[i + 2], best, sigma))
		found = found[:weakest] + found[weakest + 1 :]
	return []


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


def _strength(
	x: np.ndarray, a: int, at: int, b: int, noise: tuple[float, float, bool], sigma: float
) -> float:
	splits, t = scores(x[a:b], *_args(noise, sigma, 1))
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
	"temporary"; `noise` names the likeliest noise model ("white noise", "AR(1)", "random walk",
	"local level", "trend + white noise" or "trend + AR(1)"), `rho` and `theta` its parameters and
	`trend` whether it has a straight line.
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
	chosen, weights = select(x, min_size)
	noise = max(weights, key=weights.get)
	found = _confirm(x, chosen, min_size, alpha, weights)
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
			rho=noise[0],
			theta=noise[1],
			trend=noise[2],
			noise=noise_name(*noise),
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
