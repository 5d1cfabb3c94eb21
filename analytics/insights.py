"""The insight layer: concentration and trend measures turned into short sentences with their numbers.

Findings are split into observations (what the numbers say), watch-outs (what could hurt)
and recommendations (what to look at next). The thresholds are the usual rules of thumb,
named here so they can be read and changed in one place.
"""

from __future__ import annotations

import numpy as np

from analytics.result import num, plural, signed_pct

# Herfindahl–Hirschman index on shares (0..1): below 0.15 unconcentrated, above 0.25 highly concentrated.
HHI_MODERATE = 0.15
HHI_HIGH = 0.25
TOP_ONE_RISK = 0.25
PARETO_SHARE = 0.8
# A slope smaller than this share of the mean per period is "flat".
FLAT_SLOPE = 0.005
FORECAST_DROP = 0.10


def hhi(values: np.ndarray) -> float:
	"""Herfindahl–Hirschman index of the positive values' shares (0 when there is nothing positive)."""
	positive = np.asarray(values, dtype=float)
	positive = positive[positive > 0]
	total = positive.sum()
	if total <= 0:
		return 0.0
	shares = positive / total
	return float(np.sum(shares * shares))


def pareto_count(sorted_desc: np.ndarray, share: float = PARETO_SHARE) -> int:
	"""How many of the largest positive values make `share` of their total."""
	positive = np.asarray(sorted_desc, dtype=float)
	positive = positive[positive > 0]
	total = positive.sum()
	if total <= 0:
		return 0
	return int(np.searchsorted(np.cumsum(positive) / total, share - 1e-12) + 1)


def hhi_word(value: float) -> str:
	if value >= HHI_HIGH:
		return "highly concentrated"
	if value >= HHI_MODERATE:
		return "moderately concentrated"
	return "unconcentrated"


def concentration(
	names: list[str], values: np.ndarray, total: float, noun: str, measure: str, top_n: int
) -> tuple[list[str], list[str], list[str], dict]:
	"""Observations, watch-outs and recommendations on how concentrated a breakdown is."""
	observations, watch_outs, recommendations = [], [], []
	values = np.asarray(values, dtype=float)
	count = len(names)
	index = hhi(values)
	needed = pareto_count(values)
	positive_total = values[values > 0].sum()
	top_share = values[:top_n][values[:top_n] > 0].sum() / positive_total if positive_total > 0 else 0.0
	first_share = values[0] / positive_total if positive_total > 0 and values[0] > 0 else 0.0
	if count:
		observations.append(
			f"Largest {noun}: {names[0]} with {num(values[0])} ({first_share * 100:.1f}% of {measure})."
		)
	if count > top_n:
		observations.append(
			f"The top {top_n} of {count} {plural(noun)} make {top_share * 100:.1f}% of {measure}."
		)
	if needed:
		observations.append(
			f"{needed} of {count} {plural(noun)} ({needed / count * 100:.0f}%) make 80% of {measure}; "
			f"HHI {index:.3f} ({hhi_word(index)})."
		)
	if first_share >= TOP_ONE_RISK and count > 1:
		watch_outs.append(
			f"{names[0]} alone is {first_share * 100:.1f}% of {measure}: losing it would hurt; spread the risk."
		)
	elif index >= HHI_HIGH and count > 1:
		watch_outs.append(f"{measure.capitalize()} is highly concentrated (HHI {index:.3f}).")
	negatives = int((values < 0).sum())
	if negatives:
		watch_outs.append(
			f"{negatives} {noun}(s) have a negative {measure} (returns or credit notes exceed sales)."
		)
	metrics = {
		"hhi": round(index, 4),
		"pareto_80_count": needed,
		"top_share": round(top_share * 100, 1),
		"total": total,
	}
	return observations, watch_outs, recommendations, metrics


def slope_per_period(values: np.ndarray) -> float:
	values = np.asarray(values, dtype=float)
	if values.size < 2:
		return 0.0
	return float(np.polyfit(np.arange(values.size, dtype=float), values, 1)[0])


def direction(values: np.ndarray) -> tuple[str, float]:
	"""'rising', 'falling' or 'flat', with the fitted slope as a percent of the mean per period."""
	values = np.asarray(values, dtype=float)
	mean = abs(values.mean()) if values.size else 0.0
	if values.size < 3 or mean == 0:
		return "flat", 0.0
	relative = slope_per_period(values) / mean
	if abs(relative) < FLAT_SLOPE:
		return "flat", relative * 100
	return ("rising" if relative > 0 else "falling"), relative * 100


def shift_sentence(label: str, change: dict, unit: str | None) -> str:
	"""One change point as a person reads it: when, the level before and after, the size and the
	confidence (`changepoint.locate_all`'s fields)."""
	level = "seasonally adjusted level" if change.get("season") else "average"
	size = num(change["shift"], unit)
	if change["shift"] > 0:
		size = "+" + size
	relative = f", {signed_pct(change['relative'] * 100)}" if change.get("relative") is not None else ""
	kind = " (temporary: the level came back)" if change.get("kind") == "temporary" else ""
	return (
		f"Shift from {label}: {level} {num(change['before'], unit)} before, {num(change['after'], unit)} after "
		f"({size}{relative}; confidence {change['confidence'] * 100:.0f}%){kind}."
	)


def trend_sentences(
	measure: str,
	labels: list[str],
	values: np.ndarray,
	noun: str,
	unit: str | None,
	anomalies: list[dict],
	changes: list[dict],
	forecast: dict | None,
	forecast_labels: list[str],
) -> tuple[list[str], list[str], list[str]]:
	observations, watch_outs, recommendations = [], [], []
	n = len(values)
	if n >= 2:
		last, prior = values[-1], values[-2]
		change_pct = (last - prior) / abs(prior) * 100 if prior else None
		observations.append(
			f"{labels[-1]}: {num(last, unit)}, {signed_pct(change_pct)} on {labels[-2]} ({num(prior, unit)})."
		)
		high, low = int(np.argmax(values)), int(np.argmin(values))
		observations.append(
			f"Highest {noun} {labels[high]} ({num(values[high], unit)}); lowest {labels[low]} ({num(values[low], unit)})."
		)
	way, pct = direction(values)
	if n >= 3:
		observations.append(f"Trend over {n} {plural(noun)}: {way} ({pct:+.1f}% of the average per {noun}).")
	for a in anomalies[:3]:
		kind = "high" if a["z"] > 0 else "low"
		observations.append(
			f"Unusually {kind}: {labels[a['index']]} at {num(a['value'], unit)} (robust z {a['z']:+.1f})."
		)
	if any(a["z"] < 0 for a in anomalies):
		recommendations.append(
			"Compare the unusually low period with the one before to see which parties or items moved."
		)
	for change in changes:
		observations.append(shift_sentence(labels[change["index"]], change, unit))
	lasting = [c for c in changes if c.get("kind") != "temporary"]
	if lasting and lasting[-1]["shift"] < 0:
		latest = lasting[-1]
		watch_outs.append(
			f"{measure.capitalize()} stepped down from {labels[latest['index']]} "
			f"({num(latest['before'], unit)} → {num(latest['after'], unit)} per {noun})."
		)
	if forecast and forecast_labels:
		points = forecast["point"]
		observations.append(
			f"Forecast {forecast_labels[0]}: {num(points[0], unit)} "
			f"(80% range {num(forecast['lower'][0], unit)}–{num(forecast['upper'][0], unit)})"
			+ (f"; {forecast_labels[-1]}: {num(points[-1], unit)}." if len(points) > 1 else ".")
		)
		recent = float(np.mean(values[-len(points) :])) if n else 0.0
		ahead = float(np.mean(points))
		if recent > 0 and ahead < recent * (1 - FORECAST_DROP):
			watch_outs.append(
				f"The forecast averages {num(ahead, unit)} per {noun}, {(1 - ahead / recent) * 100:.0f}% below "
				f"the last {len(points)} {plural(noun)}."
			)
	if way == "falling" and n >= 6:
		recommendations.append(
			f"{measure.capitalize()} is falling; find the drivers with a period comparison."
		)
	return observations, watch_outs, recommendations
