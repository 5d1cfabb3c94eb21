"""Rolling-origin backtests of the forecast's candidates, the choice among them, and the 80% range.

- `backtest`: every candidate forecast from each of the latest origins, and what it missed by.
- Choice: the better half of the candidates by mean absolute backtest error, averaged (steadier
  than the single best, which is partly the luck of the last few periods).
- `procedure_errors`: what the whole procedure, choice included, would have missed by at each
  origin - the candidates it would have chosen from the errors known then. The chosen
  candidates' own errors are the smallest of several by construction and would make a range
  too narrow.
- `range_from_errors`: half-widths from those errors, split conformal at each step ahead (the
  ceil((k+1) level)-th of k errors, which covers at least `level` of a new error exchangeable with
  them), smoothed over the horizon by a power law in the step.
- `calibrated_level`: the level, 0.8 or above, at which ranges drawn so from the errors known at
  each past origin of the backtest covered 80% of what followed. Errors are not exchangeable on a
  series whose misses grow (a new trend, a wilder spell); its own backtest shows by how much, and
  the range is drawn at that level: quarterly and calendar-free series covered 0.68 and 0.70 at
  the plain 0.8 on the third set of `benchmarks/realdata.py`. No normal-width floor on top: the
  conformal bound is already valid with as few errors as the range needs (with five to eight it
  is the largest), and the larger of it and a second estimate of the same quantile overshoots
  (on the issue's annual series 0.86 instead of 0.85 or less).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# Two-sided 80% interval: the 90th percentile of the standard normal.
Z80 = 1.2815515655446004
MIN_SMOOTHING_POINTS = 8
MAX_ORIGINS = 16
# The range's backtest reaches further back than the choice's (the latest MAX_ORIGINS).
RANGE_ORIGINS = 24
MIN_ORIGINS_FOR_RANGE = 5
MIN_ORIGINS_FOR_SELECTION = 8
# The non-seasonal candidates (`smoothing.Paths.members`); a seasonal series adds "holt-winters".
CANDIDATES = ("combination", "ses", "damped", "theta", "trended")
# Errors grow with the step at least like a random walk's (h^0.5), at most like a drift that is off (h).
MIN_GROWTH, MAX_GROWTH = 0.5, 1.0
COVERAGE = 0.8
# The conformal levels the range may be drawn at, and how much history the choice needs: ranges
# from at least MIN_KNOWN errors, checked at least MIN_CHECKS times.
LEVELS = np.round(np.arange(0.80, 0.991, 0.01), 2)
MIN_KNOWN = 8
MIN_CHECKS = 20


def top(count: int) -> int:
	"""How many of `count` candidates are averaged: the better half."""
	return max(1, count // 2)


def choose(errors: dict[str, np.ndarray]) -> tuple[str, ...]:
	"""The better half of the candidates by mean absolute error, best first."""
	score = {c: float(np.nanmean(np.abs(e))) for c, e in errors.items()}
	return tuple(sorted(errors, key=score.__getitem__)[: top(len(errors))])


def backtest_origins(n: int, steps: int, count: int = MAX_ORIGINS) -> np.ndarray:
	"""The rolling origins: the latest `count` + steps - 1, none in the first half."""
	first = max(MIN_SMOOTHING_POINTS, n // 2)
	return np.arange(max(first, n - count - steps + 1), n)


def backtest(
	y: np.ndarray,
	forecasts: Callable[[int, int], dict[str, np.ndarray]],
	steps: int,
	count: int = MAX_ORIGINS,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
	"""Rolling-origin errors of each candidate, `{method: array (origins, steps)}`, and the actual
	values they missed, NaN past the end, from the latest `count` + steps - 1 origins.
	`forecasts(origin, ahead)` gives every candidate's forecast from an origin, from what was
	known there."""
	n = y.size
	origins = backtest_origins(n, steps, count)
	out: dict[str, np.ndarray] = {}
	actuals = np.full((origins.size, steps), np.nan)
	for row, origin in enumerate(origins):
		ahead = min(steps, n - origin)
		actual = y[origin : origin + ahead]
		actuals[row, :ahead] = actual
		for method, point in forecasts(origin, ahead).items():
			out.setdefault(method, np.full((origins.size, steps), np.nan))[row, :ahead] = actual - point
	return out, actuals


def procedure_errors(errors: dict[str, np.ndarray], window: int | None = None) -> np.ndarray:
	"""Rolling-origin errors of the whole procedure, choice included: at each origin, the forecast
	that the better-half choice would have made from what was known then (the errors of earlier
	origins whose targets lie before it; the combination while fewer than
	MIN_ORIGINS_FOR_SELECTION origins precede it). The errors of the finally chosen candidates over
	the same origins are the smallest of several by construction, so a range drawn from them would
	be too narrow; these are not. With `window`, each choice sees the errors of at most that many
	origins before it, as the forecast itself does."""
	rows, steps = next(iter(errors.values())).shape
	# known[r_earlier, step] at origin r: the target of step h from origin r' came in by r (r' + h <= r).
	ahead = np.arange(rows)[:, None] + np.arange(1, steps + 1)[None, :]
	out = np.empty((rows, steps))
	for row in range(rows):
		chosen: tuple[str, ...] = ("combination",)
		start = 0 if window is None else max(0, row - window)
		if row - start >= MIN_ORIGINS_FOR_SELECTION:
			known = ahead[start:row] <= row
			chosen = choose({c: e[start:row][known] for c, e in errors.items()})
		out[row] = np.mean([errors[c][row] for c in chosen], axis=0)
	return out


def _conformal(k: int, level: float | np.ndarray) -> float | np.ndarray:
	"""numpy's quantile share for the split-conformal `level` bound from k errors: ceil((k+1) level) / k."""
	return np.minimum(1.0, np.ceil((k + 1) * np.asarray(level)) / k)


def calibrated_level(
	errors: np.ndarray, window: int | None = None, scale: np.ndarray | None = None
) -> tuple[float, float]:
	"""The conformal level at which ranges drawn as the forecast draws them, from the errors known
	at each past origin, covered COVERAGE of what followed (COVERAGE where too few such checks),
	and the mean interval score of those ranges at that level, in the units of `errors * scale`.

	Split conformal promises COVERAGE only for errors exchangeable with the backtest's; a series
	whose misses grow (a new trend, a wilder spell) breaks that, and its own history shows by how
	much: at each origin of the backtest and each step, the range from the errors whose targets
	were known by then either held the actual value or not. The
	smallest level in LEVELS whose ranges held COVERAGE of them is used for the forecast.
	"""
	size = np.abs(errors)
	scale = np.ones_like(size) if scale is None else np.abs(scale)
	rows, steps = size.shape
	hits, score, checks = np.zeros(LEVELS.size), np.zeros(LEVELS.size), 0
	for row in range(rows):
		for h in range(steps):
			if np.isnan(size[row, h]):
				continue
			known = size[: max(0, row - h), h]
			known = known[~np.isnan(known)]
			if known.size < MIN_KNOWN:
				continue
			width = np.quantile(known, _conformal(known.size, LEVELS))
			hits += size[row, h] <= width
			miss = np.maximum(size[row, h] - width, 0.0)
			score += (2 * width + 2 / (1 - COVERAGE) * miss) * scale[row, h]
			checks += 1
	if checks < MIN_CHECKS:
		return COVERAGE, np.nan
	held = np.flatnonzero(hits / checks >= COVERAGE)
	chosen = held[0] if held.size else LEVELS.size - 1
	return float(LEVELS[chosen]), float(score[chosen] / checks)


def range_from_errors(errors: np.ndarray, horizon: int, level: float = COVERAGE) -> np.ndarray:
	"""Half-widths from backtest errors: at each step ahead with enough errors, the split-conformal
	`level` quantile of |error| (numpy's quantile at the share ceil((k+1) level) / k, never below the
	ceil((k+1) level)-th smallest of the k); extended to the whole horizon by a power
	law c * h^k fitted to those widths (k between MIN_GROWTH and MAX_GROWTH)."""
	widths, steps = [], []
	for h in range(errors.shape[1]):
		column = np.abs(errors[:, h][~np.isnan(errors[:, h])])
		k = column.size
		if k >= MIN_ORIGINS_FOR_RANGE:
			widths.append(float(np.quantile(column, _conformal(k, level))))
			steps.append(h + 1)
	q, h = np.maximum(np.array(widths), 1e-12), np.array(steps, dtype=float)
	if h.size >= 3:
		k, _ = np.polyfit(np.log(h), np.log(q), 1)
		k = float(np.clip(k, MIN_GROWTH, MAX_GROWTH))
	else:
		k = MIN_GROWTH
	log_c = float(np.mean(np.log(q) - k * np.log(h)))
	return np.exp(log_c) * np.arange(1, horizon + 1, dtype=float) ** k
