"""The change point of a series: the split with the strongest Welch t-test between before and after.

All candidate splits are scored at once from cumulative sums (O(n)); the series is an
aggregated one (months, weeks), never raw rows. Because the best of many splits is chosen,
its p-value is Bonferroni-adjusted for the number of splits tried, so a noisy series without
a real shift does not report one.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from analytics.series import as_values


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


def locate(values: object, min_size: int = 3, alpha: float = 0.05) -> dict | None:
	"""The first index of the new regime and its adjusted p-value, or None when no split is significant.

	Returns `{"index", "p_value", "raw_p_value", "t", "before_mean", "after_mean"}`.
	"""
	x = as_values(values)
	splits, t, df = scores(x, min_size)
	if splits.size == 0:
		return None
	strength = np.abs(t)
	if not np.any(strength > 0):
		return None
	best = int(np.argmax(strength))
	raw_p = 0.0 if np.isinf(strength[best]) else float(2 * stats.t.sf(strength[best], df[best]))
	p_value = min(1.0, raw_p * splits.size)
	if p_value >= alpha:
		return None
	index = int(splits[best])
	return {
		"index": index,
		"p_value": p_value,
		"raw_p_value": raw_p,
		"t": float(t[best]) if np.isfinite(t[best]) else float(np.sign(t[best]) * 1e9),
		"before_mean": float(x[:index].mean()),
		"after_mean": float(x[index:].mean()),
	}
