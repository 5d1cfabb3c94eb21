"""Calendar periods: bucketing dates into weeks, months, quarters and years, vectorised."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.errors import AnalyticsError

FREQS = ("day", "week", "month", "quarter", "year")
# Seasonal cycle length per frequency, for the forecast.
SEASON = {"day": 7, "week": 52, "month": 12, "quarter": 4, "year": None}
NOUN = {"day": "day", "week": "week", "month": "month", "quarter": "quarter", "year": "year"}
DAYS = {"day": 1, "week": 7, "month": 30.4375, "quarter": 91.3125, "year": 365.25}


def check_freq(freq: str) -> str:
	if freq not in FREQS:
		raise AnalyticsError(f"Parameter 'freq' must be one of {', '.join(FREQS)}; got {freq!r}")
	return freq


def start_of(dates: object, freq: str) -> np.ndarray:
	"""The first day of each date's period, as datetime64[D]."""
	check_freq(freq)
	days = np.asarray(dates).astype("datetime64[D]")
	if freq == "day":
		return days
	if freq == "week":
		number = days.astype(np.int64)
		# 1970-01-01 was a Thursday: shifting by 3 makes Monday weekday 0.
		return (number - (number + 3) % 7).astype("datetime64[D]")
	return _per_day(days, lambda d: _calendar_start(d, freq))


def _calendar_start(days: np.ndarray, freq: str) -> np.ndarray:
	months = days.astype("datetime64[M]")
	if freq == "month":
		return months.astype("datetime64[D]")
	if freq == "quarter":
		index = months.astype(np.int64)
		return (index - index % 3).astype("datetime64[M]").astype("datetime64[D]")
	return days.astype("datetime64[Y]").astype("datetime64[D]")


def _per_day(days: np.ndarray, convert) -> np.ndarray:
	"""`convert(days)`, worked out once per day of the range and looked up for each date.

	numpy's calendar conversions (days to months or years) cost ~50 ms per million dates; a
	few years of business data has only a thousand or so distinct days.
	"""
	if days.size < 1_000 or np.isnat(days).any():
		return convert(days)
	number = days.astype(np.int64)
	low, high = int(number.min()), int(number.max())
	if high - low >= days.size:
		return convert(days)
	table = convert(np.arange(low, high + 1).astype("datetime64[D]"))
	return table[number - low]


def span(first: np.datetime64, last: np.datetime64, freq: str) -> np.ndarray:
	"""Every period start from `first` to `last` inclusive (both period starts)."""
	if freq in ("day", "week"):
		step = 1 if freq == "day" else 7
		return np.arange(first, last + np.timedelta64(1, "D"), step).astype("datetime64[D]")
	if freq == "year":
		years = np.arange(first.astype("datetime64[Y]"), last.astype("datetime64[Y]") + 1)
		return years.astype("datetime64[D]")
	months = np.arange(
		first.astype("datetime64[M]"), last.astype("datetime64[M]") + 1, 3 if freq == "quarter" else 1
	)
	return months.astype("datetime64[D]")


def end_of(start: np.datetime64, freq: str) -> np.datetime64:
	"""The last day of the period that begins at `start`."""
	return _next(start, freq) - np.timedelta64(1, "D")


def _next(start: np.datetime64, freq: str) -> np.datetime64:
	if freq == "day":
		return start + np.timedelta64(1, "D")
	if freq == "week":
		return start + np.timedelta64(7, "D")
	if freq == "year":
		return (start.astype("datetime64[Y]") + 1).astype("datetime64[D]")
	step = 3 if freq == "quarter" else 1
	return (start.astype("datetime64[M]") + step).astype("datetime64[D]")


def following(last: np.datetime64, freq: str, count: int) -> np.ndarray:
	out, current = [], last
	for _ in range(count):
		current = _next(current, freq)
		out.append(current)
	return np.array(out, dtype="datetime64[D]")


def label(start: np.datetime64, freq: str) -> str:
	start = np.datetime64(start, "D")
	if freq == "month":
		return str(start.astype("datetime64[M]"))
	if freq == "year":
		return str(start.astype("datetime64[Y]"))
	if freq == "quarter":
		month = int(str(start.astype("datetime64[M]"))[5:7])
		return f"{str(start)[:4]}-Q{(month - 1) // 3 + 1}"
	return str(start)


def labels(starts: np.ndarray, freq: str) -> list[str]:
	if freq == "month":
		return [str(m) for m in np.asarray(starts).astype("datetime64[M]")]
	return [label(s, freq) for s in starts]


def aggregate(
	dates: object,
	values: object | None,
	freq: str,
	agg: str = "sum",
	fill: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
	"""Per-period aggregate of `values` (sum, mean, count, nunique, max, min) over every period in range.

	Empty periods are 0 for sum/count/nunique and NaN for the others.
	"""
	starts = start_of(dates, freq)
	if starts.size == 0:
		return starts, np.array([], dtype=float)
	if agg == "nunique":
		return _distinct_per_period(starts, values, freq, fill)
	series = pd.Series(np.ones(starts.size) if values is None else values, copy=False)
	grouped = series.groupby(starts, sort=True)
	if agg == "sum":
		out = grouped.sum()
	elif agg == "count":
		out = grouped.size()
	elif agg == "nunique":
		out = grouped.nunique()
	elif agg in ("mean", "max", "min", "median"):
		out = getattr(grouped, agg)()
	else:
		raise AnalyticsError(f"Unknown aggregate {agg!r}")
	index = out.index.to_numpy().astype("datetime64[D]")
	result = out.to_numpy(dtype=float)
	if not fill:
		return index, result
	full = span(index[0], index[-1], freq)
	zero = agg in ("sum", "count", "nunique")
	filled = np.full(full.size, 0.0 if zero else np.nan)
	filled[np.searchsorted(full, index)] = result
	return full, filled


def _codes(values: object) -> tuple[np.ndarray, int]:
	"""Integer codes of the values (-1 for missing) and how many distinct there are; integer codes
	that a caller made already are taken as they are, not hashed again."""
	array = np.asarray(values)
	if array.dtype.kind in "iu" and array.size and array.min() >= -1 and array.max() < 2**31:
		return array.astype(np.int64, copy=False), int(array.max()) + 1
	codes, uniques = pd.factorize(array, use_na_sentinel=True)
	return codes, len(uniques)


def _period_codes(starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
	"""Each period start's rank among the distinct starts, and those starts in order: from the day
	numbers (a few thousand at most), with no hashing of a million dates."""
	days = starts.astype("datetime64[D]").astype(np.int64)
	first = int(days.min())
	offsets = days - first
	present = np.bincount(offsets) > 0
	rank = np.cumsum(present) - 1
	return rank[offsets], (np.flatnonzero(present) + first).astype("datetime64[D]")


def _distinct_per_period(
	starts: np.ndarray, values: object, freq: str, fill: bool
) -> tuple[np.ndarray, np.ndarray]:
	"""Distinct values per period from integer codes: hashing the strings once, not once per period."""
	codes, distinct = _codes(values)
	period_codes, index = _period_codes(starts)
	width = distinct + 1
	known = codes >= 0
	# pandas' hash table: numpy's unique on a million ints is several times slower.
	keys = pd.unique(period_codes[known] * width + codes[known])
	counts = np.bincount(keys // width, minlength=index.size).astype(float)
	if not fill:
		return index, counts
	full = span(index[0], index[-1], freq)
	filled = np.zeros(full.size)
	filled[np.searchsorted(full, index)] = counts
	return full, filled


def last_is_partial(last_date: np.datetime64, freq: str) -> bool:
	"""Whether the data stops well before the end of its last period (more than a tenth of it missing)."""
	start = start_of(np.array([last_date]), freq)[0]
	end = _next(start, freq)
	missing_days = (end - np.datetime64(last_date, "D")).astype(int) - 1
	return missing_days > max(1, DAYS[freq] / 10)


def to_date(value: object, name: str) -> np.datetime64 | None:
	"""A parameter date (YYYY-MM-DD) or None; AnalyticsError naming the parameter otherwise."""
	if value in (None, ""):
		return None
	try:
		stamp = pd.Timestamp(value)
	except (ValueError, TypeError):
		raise AnalyticsError(f"Parameter {name!r} must be a date like 2025-01-31; got {value!r}") from None
	if stamp is pd.NaT:
		raise AnalyticsError(f"Parameter {name!r} must be a date like 2025-01-31; got {value!r}")
	return np.datetime64(stamp.date(), "D")
