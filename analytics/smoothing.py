"""Exponential smoothing fitted by grid search in numpy: simple, damped Holt, Theta, Holt-Winters.

Each method is fitted to a non-seasonal series by trying a grid of smoothing parameters at
once and keeping the one with the smallest sum of squared one-step errors. One pass over the
series keeps every grid point's state and running error after each period, so the fit on the
first `o` periods - for any origin `o` - is read off that pass: a rolling-origin backtest
costs one pass, not one fit per origin.

- Simple exponential smoothing (SES): a level only, the forecast is flat.
- Damped Holt (Gardner and McKenzie 1985): level and trend, the trend fading by phi per period.
- Theta (Assimakopoulos and Nikolopoulos 2000, as Hyndman and Billah 2003 showed it): SES with
  a drift of half the least-squares slope of the data fitted.
- Holt-Winters with a damped trend and an additive season (ETS(A,Ad,A), Hyndman et al. 2008),
  on a series that still has its season (`SeasonalPaths`).
"""

from __future__ import annotations

import numpy as np

ALPHAS = np.linspace(0.05, 1.0, 20)
_HOLT_ALPHA = np.array([0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0])
_HOLT_BETA = np.array([0.01, 0.05, 0.1, 0.2, 0.35])
_HOLT_PHI = np.array([0.8, 0.88, 0.94, 0.98, 1.0])
HOLT_ALPHA, HOLT_BETA, HOLT_PHI = np.array(
	np.meshgrid(_HOLT_ALPHA, _HOLT_BETA, _HOLT_PHI, indexing="ij")
).reshape(3, -1)
MEMBERS = ("ses", "damped", "theta")


class Paths:
	"""The grid fits of SES, damped Holt and Theta on `x`, readable at any origin."""

	def __init__(self, x: np.ndarray):
		self.x = x
		n = x.size
		self.n = n
		# SES: level[t] is the level after the first t points; sse[t] their squared errors.
		level = np.full(ALPHAS.size, x[: min(n, 3)].mean())
		self.ses_level = np.empty((n + 1, ALPHAS.size))
		self.ses_sse = np.zeros((n + 1, ALPHAS.size))
		sse = np.zeros(ALPHAS.size)
		for t in range(n):
			self.ses_level[t] = level
			self.ses_sse[t] = sse
			error = x[t] - level
			sse = sse + error * error
			level = level + ALPHAS * error
		self.ses_level[n], self.ses_sse[n] = level, sse
		# Damped Holt.
		k = min(n - 1, 4)
		level = np.full(HOLT_ALPHA.size, x[0])
		trend = np.full(HOLT_ALPHA.size, (x[k] - x[0]) / k if k else 0.0)
		self.holt_level = np.empty((n + 1, HOLT_ALPHA.size))
		self.holt_trend = np.empty((n + 1, HOLT_ALPHA.size))
		self.holt_sse = np.zeros((n + 1, HOLT_ALPHA.size))
		sse = np.zeros(HOLT_ALPHA.size)
		alpha_beta = HOLT_ALPHA * HOLT_BETA
		for t in range(n):
			self.holt_level[t], self.holt_trend[t], self.holt_sse[t] = level, trend, sse
			predicted = level + HOLT_PHI * trend
			error = x[t] - predicted
			sse = sse + error * error
			level = predicted + HOLT_ALPHA * error
			trend = HOLT_PHI * trend + alpha_beta * error
		self.holt_level[n], self.holt_trend[n], self.holt_sse[n] = level, trend, sse
		# Running sums for the least-squares slope of the first o points.
		t = np.arange(n, dtype=float)
		self.sum_x = np.r_[0.0, np.cumsum(x)]
		self.sum_tx = np.r_[0.0, np.cumsum(t * x)]

	def ses(self, origin: int, horizon: int) -> np.ndarray:
		best = int(np.argmin(self.ses_sse[origin]))
		return np.full(horizon, self.ses_level[origin, best])

	def damped(self, origin: int, horizon: int) -> np.ndarray:
		best = int(np.argmin(self.holt_sse[origin]))
		steps = np.cumsum(HOLT_PHI[best] ** np.arange(1, horizon + 1))
		return self.holt_level[origin, best] + steps * self.holt_trend[origin, best]

	def slope(self, origin: int) -> float:
		o = float(origin)
		if o < 2:
			return 0.0
		sum_t, sum_tt = o * (o - 1) / 2, (o - 1) * o * (2 * o - 1) / 6
		denominator = o * sum_tt - sum_t**2
		return float((o * self.sum_tx[origin] - sum_t * self.sum_x[origin]) / denominator)

	def theta(self, origin: int, horizon: int) -> np.ndarray:
		best = int(np.argmin(self.ses_sse[origin]))
		alpha = ALPHAS[best]
		drift = 0.5 * self.slope(origin) * (np.arange(horizon) + (1 - (1 - alpha) ** origin) / alpha)
		return self.ses_level[origin, best] + drift

	def members(self, origin: int, horizon: int) -> dict[str, np.ndarray]:
		out = {m: getattr(self, m)(origin, horizon) for m in MEMBERS}
		out["combination"] = (out["ses"] + out["damped"] + out["theta"]) / 3
		out["trended"] = (out["damped"] + out["theta"]) / 2
		return out

	def fitted(self, method: str) -> np.ndarray:
		"""One-step in-sample predictions of the method fitted on the whole series."""
		if method == "ses":
			return self.ses_level[: self.n, int(np.argmin(self.ses_sse[self.n]))]
		if method == "damped":
			best = int(np.argmin(self.holt_sse[self.n]))
			return self.holt_level[: self.n, best] + HOLT_PHI[best] * self.holt_trend[: self.n, best]
		if method == "theta":
			return self.fitted("ses") + 0.5 * self.slope(self.n)
		if method == "trended":
			return (self.fitted("damped") + self.fitted("theta")) / 2
		return (self.fitted("ses") + self.fitted("damped") + self.fitted("theta")) / 3


_HW_ALPHA = np.array([0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9])
_HW_BETA = np.array([0.02, 0.08, 0.2])
_HW_GAMMA = np.array([0.02, 0.08, 0.2, 0.4])
_HW_PHI = np.array([0.0, 0.9, 0.98])
HW_ALPHA, HW_BETA, HW_GAMMA, HW_PHI = np.array(
	np.meshgrid(_HW_ALPHA, _HW_BETA, _HW_GAMMA, _HW_PHI, indexing="ij")
).reshape(4, -1)


class SeasonalPaths:
	"""Additive Holt-Winters with a damped trend (ETS(A,Ad,A)) on `y` with a season of `m`, fitted
	by grid search like `Paths`, readable at any origin.

	The states start from the first cycle only (level its mean, trend none, season its deviations
	from the mean), so a fit read off at any origin past the first cycle has seen nothing later.
	phi = 0 in the grid is the same model with no trend.
	"""

	def __init__(self, y: np.ndarray, m: int):
		n, grid = y.size, HW_ALPHA.size
		self.n, self.m = n, m
		level = np.full(grid, y[:m].mean())
		trend = np.zeros(grid)
		season = np.tile(y[:m] - y[:m].mean(), (grid, 1))
		self.first_season = season.copy()
		self.level = np.empty((n + 1, grid))
		self.trend = np.empty((n + 1, grid))
		# The season's state changes one position per period: updated[t] is position t % m after t.
		self.updated = np.empty((n, grid))
		self.sse = np.zeros((n + 1, grid))
		sse = np.zeros(grid)
		alpha_beta = HW_ALPHA * HW_BETA
		gamma = HW_GAMMA * (1 - HW_ALPHA)
		for t in range(n):
			self.level[t], self.trend[t], self.sse[t] = level, trend, sse
			p = t % m
			base = level + HW_PHI * trend
			error = y[t] - base - season[:, p]
			sse = sse + error * error
			level = base + HW_ALPHA * error
			trend = HW_PHI * trend + alpha_beta * error
			season[:, p] += gamma * error
			self.updated[t] = season[:, p]
		self.level[n], self.trend[n], self.sse[n] = level, trend, sse

	def season_at(self, origin: int, best: int) -> np.ndarray:
		"""The m seasonal states after the first `origin` periods, by position in the season."""
		out = self.first_season[best].copy()
		for p in range(self.m):
			last = origin - 1 - (origin - 1 - p) % self.m
			if last >= 0:
				out[p] = self.updated[last, best]
		return out

	def forecast(self, origin: int, horizon: int) -> np.ndarray:
		best = int(np.argmin(self.sse[origin]))
		phi = HW_PHI[best]
		steps = np.cumsum(phi ** np.arange(1, horizon + 1))
		positions = np.arange(origin, origin + horizon) % self.m
		season = self.season_at(origin, best)
		return self.level[origin, best] + steps * self.trend[origin, best] + season[positions]
