"""Rolling-origin backtests of the forecast's candidates, the choice among them, and the 80% range.

- `backtest`: every candidate forecast from each of the latest origins, and what it missed by.
- Choice: the better half of the candidates by mean absolute backtest error, averaged (steadier
  than the single best, which is partly the luck of the last few periods).
- `procedure_errors`: what the whole procedure, choice included, would have missed by at each
  origin - the candidates it would have chosen from the errors known then. The chosen
  candidates' own errors are the smallest of several by construction and would make a range
  too narrow.
- `range_from_errors`: half-widths from those errors, split conformal at each step ahead (the
  ceil((k+1) 0.8)-th of k errors, which covers at least 80% of a new error exchangeable with
  them), smoothed over the horizon by a power law in the step. No normal-width floor on top: the
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
MIN_ORIGINS_FOR_RANGE = 5
MIN_ORIGINS_FOR_SELECTION = 8
# The non-seasonal candidates (`smoothing.Paths.members`); a seasonal series adds "holt-winters".
CANDIDATES = ("combination", "ses", "damped", "theta", "trended")
# Errors grow with the step at least like a random walk's (h^0.5), at most like a drift that is off (h).
MIN_GROWTH, MAX_GROWTH = 0.5, 1.0


def top(count: int) -> int:
	"""How many of `count` candidates are averaged: the better half."""
	return max(1, count // 2)


def choose(errors: dict[str, np.ndarray]) -> tuple[str, ...]:
	"""The better half of the candidates by mean absolute error, best first."""
	score = {c: float(np.nanmean(np.abs(e))) for c, e in errors.items()}
	return tuple(sorted(errors, key=score.__getitem__)[: top(len(errors))])


def backtest_origins(n: int, steps: int) -> np.ndarray:
	"""The rolling origins: the latest MAX_ORIGINS + steps - 1, none in the first half."""
	first = max(MIN_SMOOTHING_POINTS, n // 2)
	return np.arange(max(first, n - MAX_ORIGINS - steps + 1), n)


def backtest(
	y: np.ndarray, forecasts: Callable[[int, int], dict[str, np.ndarray]], steps: int
) -> tuple[dict[str, np.ndarray], np.ndarray]:
	"""Rolling-origin errors of each candidate, `{method: array (origins, steps)}`, and the actual
	values they missed, NaN past the end. `forecasts(origin, ahead)` gives every candidate's
	forecast from an origin, from what was known there."""
	n = y.size
	origins = backtest_origins(n, steps)
	out: dict[str, np.ndarray] = {}
	actuals = np.full((origins.size, steps), np.nan)
	for row, origin in enumerate(origins):
		ahead = min(steps, n - origin)
		actual = y[origin : origin + ahead]
		actuals[row, :ahead] = actual
		for method, point in forecasts(origin, ahead).items():
			out.setdefault(method, np.full((origins.size, steps), np.nan))[row, :ahead] = actual - point
	return out, actuals


def procedure_errors(errors: dict[str, np.ndarray]) -> np.ndarray:
	"""Rolling-origin errors of the whole procedure, choice included: at each origin, the forecast
	that the better-half choice would have made from what was known then (the errors of earlier
	origins whose targets lie before it; the combination while fewer than
	MIN_ORIGINS_FOR_SELECTION origins precede it). The errors of the finally chosen candidates over
	the same origins are the smallest of several by construction, so a range drawn from them would
	be too narrow; these are not."""
	rows, steps = next(iter(errors.values())).shape
	# known[r_earlier, step] at origin r: the target of step h from origin r' came in by r (r' + h <= r).
	ahead = np.arange(rows)[:, None] + np.arange(1, steps + 1)[None, :]
	out = np.empty((rows, steps))
	for row in range(rows):
		chosen: tuple[str, ...] = ("combination",)
		if row >= MIN_ORIGINS_FOR_SELECTION:
			known = ahead[:row] <= row
			chosen = choose({c: e[:row][known] for c, e in errors.items()})
		out[row] = np.mean([errors[c][row] for c in chosen], axis=0)
	return out


def range_from_errors(errors: np.ndarray, horizon: int) -> np.ndarray:
	"""Half-widths from backtest errors: at each step ahead with enough errors, the split-conformal
	80% quantile of |error| (numpy's quantile at the share ceil((k+1) 0.8) / k, never below the
	ceil((k+1) 0.8)-th smallest of the k); extended to the whole horizon by a power
	law c * h^k fitted to those widths (k between MIN_GROWTH and MAX_GROWTH)."""
	widths, steps = [], []
	for h in range(errors.shape[1]):
		column = np.abs(errors[:, h][~np.isnan(errors[:, h])])
		k = column.size
		if k >= MIN_ORIGINS_FOR_RANGE:
			level = min(1.0, np.ceil((k + 1) * 0.8) / k)
			widths.append(float(np.quantile(column, level)))
			steps.append(h + 1)
	q, h = np.maximum(np.array(widths), 1e-12), np.array(steps, dtype=float)
	if h.size >= 3:
		k, _ = np.polyfit(np.log(h), np.log(q), 1)
		k = float(np.clip(k, MIN_GROWTH, MAX_GROWTH))
	else:
		k = MIN_GROWTH
	log_c = float(np.mean(np.log(q) - k * np.log(h)))
	return np.exp(log_c) * np.arange(1, horizon + 1, dtype=float) ** k
