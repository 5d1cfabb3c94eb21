"""Turning a list of values into a clean float array, shared by forecast, anomalies and change points."""

from __future__ import annotations

import numpy as np

from analytics.errors import AnalyticsError


def as_values(values: object, what: str = "values") -> np.ndarray:
	"""A 1-D float array with no missing or infinite entries, or AnalyticsError saying which entry is bad."""
	try:
		array = np.asarray(values, dtype=float)
	except (TypeError, ValueError):
		items = list(values) if not isinstance(values, str | bytes) else [values]
		for index, item in enumerate(items):
			try:
				float(item)
			except (TypeError, ValueError):
				raise AnalyticsError(f"{what}: entry {index} ({item!r}) is not a number") from None
		raise AnalyticsError(f"{what}: expected a list of numbers") from None
	if array.ndim != 1:
		raise AnalyticsError(f"{what}: expected a flat list of numbers, got shape {array.shape}")
	bad = ~np.isfinite(array)
	if bad.any():
		index = int(np.flatnonzero(bad)[0])
		raise AnalyticsError(
			f"{what}: entry {index} is {array[index]!r}; every entry must be a finite number"
		)
	return array
