"""Anomalous points by robust z-score on the median absolute deviation (Iglewicz and Hoaglin).

The median and MAD ignore the outliers they are looking for, so one bad month cannot hide
itself by inflating the spread, as it would with a mean and standard deviation.
"""

from __future__ import annotations

import numpy as np

from analytics.series import as_values

# 0.6745 is the 75th percentile of the standard normal: it makes the MAD comparable to a standard deviation.
MAD_SCALE = 0.6745
# When more than half the points are equal the MAD is 0; the mean absolute deviation scaled
# by sqrt(pi/2) takes its place (as IBM SPSS Modeler does).
MEAN_AD_SCALE = 1.253314


def robust_z(values: object) -> np.ndarray:
	"""The robust z-score of every point (0 for all points of a constant series)."""
	x = as_values(values)
	if x.size == 0:
		return x
	median = np.median(x)
	deviation = np.abs(x - median)
	mad = np.median(deviation)
	if mad > 0:
		return MAD_SCALE * (x - median) / mad
	mean_ad = deviation.mean()
	if mean_ad > 0:
		return (x - median) / (MEAN_AD_SCALE * mean_ad)
	return np.zeros_like(x)


def residuals(values: object) -> np.ndarray:
	"""Values less their least-squares line, so a steady trend is not mistaken for anomalies.

	A straight line rather than a rolling median: a rolling median fits most points exactly,
	shrinking the MAD until ordinary seasonal swings look anomalous.
	"""
	x = as_values(values)
	if x.size < 3:
		return x - np.median(x) if x.size else x
	t = np.arange(x.size, dtype=float)
	slope, intercept = np.polyfit(t, x, 1)
	return x - (intercept + slope * t)


def find(values: object, threshold: float = 3.5, detrend: bool = False) -> list[dict]:
	"""Indexes of anomalous points with their robust z-scores: `[{"index", "value", "z"}]`.

	A point is anomalous when |z| > threshold (3.5 is the usual cut-off). With `detrend`, the
	score is computed on the distance from the series' straight-line trend instead of the raw values.
	"""
	x = as_values(values)
	if x.size < 3:
		return []
	z = robust_z(residuals(x) if detrend else x)
	hits = np.flatnonzero(np.abs(z) > threshold)
	return [{"index": int(i), "value": float(x[i]), "z": round(float(z[i]), 3)} for i in hits]
