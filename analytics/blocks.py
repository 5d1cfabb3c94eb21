"""The building blocks most analyses are made of: a trend over periods, a breakdown with its
concentration, a ratio over time or by group, ageing buckets, a classification, a distribution.

Each takes a normalised frame and returns the parts of a result (kpis, observations,
watch_outs, recommendations, table, chart, series, warnings); the catalogue rows choose the
columns and words.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import anomalies, changepoint, charts, insights, periods
from analytics.errors import AnalyticsError
from analytics.forecast import forecast as run_forecast
from analytics.result import empty_result, kpi, num, plural, rounded, table

ADDITIVE = ("sum", "count")


def _values(frame: pd.DataFrame, values: object) -> np.ndarray | None:
	if values is None:
		return None
	if isinstance(values, str):
		return frame[values].to_numpy()
	return np.asarray(values)


def distinct_counts(
	keys: object, values: object, sort: bool = True, factorized: tuple[np.ndarray, object] | None = None
) -> pd.Series:
	"""Distinct non-missing values per key, as `groupby(keys)[values].nunique()` gives them.

	Both are turned into integer codes once and the distinct (key, value) pairs counted; pandas'
	nunique hashes the million strings again on the way and then sorts the pairs. `factorized` is
	the keys' (codes, names) where the caller has them already.
	"""
	key_codes, key_names = factorized or pd.factorize(np.asarray(keys), sort=sort)
	value_codes, _ = pd.factorize(np.asarray(values))
	present = (key_codes >= 0) & (value_codes >= 0)
	width = int(value_codes.max()) + 2 if value_codes.size else 1
	pairs = pd.unique(key_codes[present].astype(np.int64) * width + value_codes[present])
	counts = np.bincount(pairs // width, minlength=len(key_names))
	return pd.Series(counts, index=pd.Index(key_names, dtype=object), copy=False)


def trend(
	frame: pd.DataFrame,
	date: str,
	values: object,
	*,
	freq: str = "month",
	agg: str = "sum",
	label: str = "Value",
	unit: str | None = None,
	horizon: int = 3,
	threshold: float = 3.5,
	forecast: bool = True,
) -> dict:
	"""A measure per period with its forecast, anomalous periods and change point."""
	periods.check_freq(freq)
	if not len(frame):
		return empty_result()
	starts, series = periods.aggregate(frame[date].to_numpy(), _values(frame, values), freq, agg)
	labels = periods.labels(starts, freq)
	noun = periods.NOUN[freq]
	measure = label.lower()
	warnings = []
	last_date = frame[date].max().to_datetime64()
	# A partial last period is never treated as a whole one: it is labelled, and left out of
	# the anomaly and shift searches and of the forecast fit (which forecasts it whole instead).
	partial = bool(series.size > 1 and periods.last_is_partial(last_date, freq))
	if partial:
		warnings.append(
			f"The last {noun} ({labels[-1]}) is incomplete: the data ends on {str(last_date)[:10]}. It is left out "
			f"of the forecast fit and of the search for unusual {plural(noun)} and shifts."
		)
	# Tables, KPIs and sentences show the partial period as such; `series.labels` stay plain periods.
	shown = [*labels[:-1], f"{labels[-1]} (partial)"] if partial else labels
	whole = series[:-1] if partial else series
	known = ~np.isnan(whole)
	clean = whole[known] if not known.all() else whole
	season = periods.SEASON[freq]
	found = anomalies.find(clean, threshold, detrend=clean.size >= 7) if clean.size >= 5 else []
	changes = changepoint.locate_all(clean, season_length=season) if clean.size >= 6 else []
	if not known.all():
		# Periods without a value were left out of the search: index the changes as the periods.
		positions = np.flatnonzero(known)
		for c in changes:
			c["index"], c["range"] = int(positions[c["index"]]), [int(positions[r]) for r in c["range"]]
	shift = min(changes, key=lambda c: (c["p_value"], -abs(c["t"]))) if changes else None
	prediction, future_labels, current = None, [], None
	if forecast and horizon > 0 and clean.size and known.all():
		prediction = run_forecast(clean, horizon + partial, season)
		if partial:
			current = {key: prediction[key][0] for key in ("point", "lower", "upper")}
			prediction = {
				key: value[1:] if isinstance(value, list) else value for key, value in prediction.items()
			}
		future_labels = periods.labels(periods.following(starts[-1], freq, horizon), freq)
	elif forecast and not known.all():
		warnings.append(f"No forecast: some {plural(noun)} have no value.")

	kpis = []
	if agg in ADDITIVE:
		kpis.append(kpi(f"Total {measure}", series.sum(), unit))
	if partial:
		# A period still running is never compared with a whole one: it is shown "so far", and the
		# change is that of the last whole period against the one before.
		kpis.append(kpi(f"{label} {shown[-1]}", series[-1], unit))
		if series.size > 2:
			kpis.append(
				kpi(f"{label} {labels[-2]}", series[-2], unit, prior=series[-3], prior_label=labels[-3])
			)
	else:
		kpis.append(
			kpi(
				f"{label} {labels[-1]}",
				series[-1],
				unit,
				prior=series[-2] if series.size > 1 else None,
				prior_label=labels[-2] if series.size > 1 else None,
			)
		)
	kpis.append(kpi(f"Average per {noun}", np.nanmean(series) if known.any() else None, unit))
	if prediction:
		kpis.append(kpi(f"Forecast {future_labels[0]}", prediction["point"][0], unit))
	# The sentences speak of whole periods; the partial one gets its own below.
	observations, watch_outs, recommendations = insights.trend_sentences(
		measure,
		labels[:-1] if partial else labels,
		clean if known.all() else whole,
		noun,
		unit,
		found,
		changes,
		prediction,
		future_labels,
	)
	if current:
		observations.append(
			f"{shown[-1]} so far: {num(series[-1], unit)}; forecast for the whole {noun}: {num(current['point'], unit)} "
			f"(80% range {num(current['lower'], unit)}–{num(current['upper'], unit)})."
		)
	if agg in ADDITIVE:
		observations.insert(
			0,
			f"{label} totalled {num(series.sum(), unit)} over {series.size} {plural(noun)} ({labels[0]} to {shown[-1]}).",
		)
	rows = []
	for i, (name, value) in enumerate(zip(shown, series, strict=True)):
		prior = series[i - 1] if i else None
		change = (
			(value - prior) / abs(prior) * 100 if prior not in (None, 0) and not np.isnan(prior) else None
		)
		rows.append([name, rounded(value, unit), rounded(change)])
	out = {
		"kpis": kpis,
		"observations": observations,
		"watch_outs": watch_outs,
		"recommendations": recommendations,
		"table": table([noun, measure, "change %"], rows[::-1]),
		"chart": charts.trend(
			f"{label} per {noun}",
			labels,
			[rounded(v) for v in series],
			label,
			prediction,
			future_labels,
			found,
			shift["index"] if shift else None,
		),
		"series": {
			"labels": labels,
			"values": [rounded(v) for v in series],
			"forecast": prediction and {"labels": future_labels, **prediction},
			"anomalies": [{**a, "label": labels[a["index"]]} for a in found],
			"change_point": shift and {**shift, "label": labels[shift["index"]]},
			"change_points": [{**c, "label": labels[c["index"]]} for c in changes],
			"partial": partial and {"label": labels[-1], "value": rounded(series[-1]), **(current or {})},
		},
		"warnings": warnings,
	}
	return out


def breakdown(
	frame: pd.DataFrame,
	by: str,
	values: object,
	*,
	agg: str = "sum",
	label: str = "Value",
	unit: str | None = None,
	noun: str = "group",
	top_n: int = 10,
	chart: str = "pareto",
	extra: dict[str, tuple[object, str]] | None = None,
) -> dict:
	"""Groups ranked by a measure, with shares, the Pareto count and the HHI."""
	if not len(frame):
		return empty_result()
	keys = frame[by].to_numpy()
	# The keys hashed once, in order of appearance (as grouping them unsorted orders the groups),
	# for the totals and for any distinct counts beside them.
	key_codes, key_names = pd.factorize(keys)
	named = key_codes >= 0
	data = pd.Series(np.ones(len(frame)) if values is None else _values(frame, values), copy=False)
	grouped = (data[named] if not named.all() else data).groupby(key_codes[named], sort=False)
	totals = grouped.size().astype(float) if agg == "count" else getattr(grouped, agg)()
	totals.index = pd.Index(np.asarray(key_names, dtype=object)[totals.index.to_numpy()], dtype=object)
	totals = totals.sort_values(ascending=False, kind="stable")
	names = [str(n) for n in totals.index]
	amounts = totals.to_numpy(dtype=float)
	total = float(amounts.sum()) if agg in ADDITIVE else float(np.nansum(amounts))
	measure = label.lower()
	obs, watch, recs, metrics = insights.concentration(names, amounts, total, noun, measure, top_n)
	if agg not in ADDITIVE:
		obs = obs[:1]
	extras = {}
	for name, (column, how) in (extra or {}).items():
		if how == "nunique":
			extras[name] = distinct_counts(keys, _values(frame, column), factorized=(key_codes, key_names))
		else:
			extras[name] = pd.Series(_values(frame, column), copy=False).groupby(keys, sort=False).agg(how)
	positive_total = amounts[amounts > 0].sum()
	rows, running = [], 0.0
	for name, amount in zip(names, amounts, strict=True):
		running += amount
		share = amount / total * 100 if total else None
		cumulative = running / total * 100 if total else None
		row = [name, rounded(amount, unit), rounded(share), rounded(cumulative)]
		row += [rounded(float(extras[e].get(name, np.nan))) for e in extras]
		rows.append(row)
	kpis = [
		kpi(f"Total {measure}" if agg in ADDITIVE else f"Overall {measure}", total, unit),
		kpi(f"{plural(noun).capitalize()}", len(names), "count"),
		kpi(f"Top {min(top_n, len(names))} share", metrics["top_share"], "%"),
	]
	if agg in ADDITIVE:
		kpis.append(kpi("HHI", metrics["hhi"], None))
		kpis.append(kpi(f"{plural(noun).capitalize()} making 80%", metrics["pareto_80_count"], "count"))
	shown_names, shown = names[:top_n], amounts[:top_n]
	title = f"{label} by {noun}"
	if chart == "pie" and len(names) <= 8 and (amounts >= 0).all():
		figure = charts.pie(title, names, [rounded(v) for v in amounts])
	elif chart == "pareto" and agg in ADDITIVE and positive_total > 0:
		figure = charts.pareto(title, shown_names, [rounded(v) for v in shown], positive_total, label)
	else:
		figure = charts.bar(title, shown_names, [rounded(v) for v in shown], label, horizontal=True)
	return {
		"kpis": kpis,
		"observations": obs,
		"watch_outs": watch,
		"recommendations": recs,
		"table": table([noun, measure, "share %", "cumulative %", *extras], rows),
		"chart": figure,
		"metrics": metrics,
	}


def ratio_trend(
	frame: pd.DataFrame,
	date: str,
	numerator: object,
	denominator: object,
	*,
	freq: str = "month",
	label: str = "Ratio",
	unit: str = "%",
	scale: float = 100.0,
	den_agg: str = "sum",
	higher_is_better: bool = True,
) -> dict:
	"""A ratio of two sums per period (e.g. margin %, average invoice value) and overall."""
	periods.check_freq(freq)
	if not len(frame):
		return empty_result()
	dates = frame[date].to_numpy()
	starts, num_series = periods.aggregate(dates, _values(frame, numerator), freq, "sum")
	den_values = _values(frame, denominator)
	if den_agg == "nunique":
		# Hash the (text) values once; distinct counts per period then work on integers.
		den_values, distinct = pd.factorize(den_values)
		den_total = float(len(distinct))
	_, den_series = periods.aggregate(dates, den_values, freq, den_agg)
	with np.errstate(divide="ignore", invalid="ignore"):
		ratios = np.where(den_series != 0, num_series / den_series * scale, np.nan)
	if den_agg != "nunique":
		den_total = float(den_series.sum())
	overall = float(num_series.sum()) / den_total * scale if den_total else None
	labels = periods.labels(starts, freq)
	noun = periods.NOUN[freq]
	known = ~np.isnan(ratios)
	kpis = [kpi(f"{label} overall", overall, unit)]
	last = ratios[-1] if known[-1] else None
	prior = ratios[-2] if ratios.size > 1 and known[-2] else None
	kpis.append(
		kpi(
			f"{label} {labels[-1]}",
			last,
			unit,
			prior=prior,
			prior_label=labels[-2] if prior is not None else None,
		)
	)
	observations = [f"{label} over {len(labels)} {plural(noun)}: {num(overall, unit)}."]
	watch_outs, recommendations = [], []
	if known.sum() >= 2:
		good = ratios[known]
		good_labels = [lab for lab, k in zip(labels, known, strict=True) if k]
		hi, lo = int(np.argmax(good)), int(np.argmin(good))
		observations.append(
			f"Best {noun} {good_labels[hi if higher_is_better else lo]} "
			f"({num(good[hi if higher_is_better else lo], unit)}); worst "
			f"{good_labels[lo if higher_is_better else hi]} ({num(good[lo if higher_is_better else hi], unit)})."
		)
		way, pct = insights.direction(good)
		observations.append(f"{label} trend: {way}.")
		worse = (way == "falling") if higher_is_better else (way == "rising")
		if worse and good.size >= 4:
			watch_outs.append(f"{label} is getting worse over the period ({labels[0]} to {labels[-1]}).")
		if good.size >= 6:
			for change in changepoint.locate_all(good):
				observations.append(insights.shift_sentence(good_labels[change["index"]], change, unit))
	rows = [
		[lab, rounded(n), rounded(d), rounded(r)]
		for lab, n, d, r in zip(labels, num_series, den_series, ratios, strict=True)
	]
	return {
		"kpis": kpis,
		"observations": observations,
		"watch_outs": watch_outs,
		"recommendations": recommendations,
		"table": table([noun, "numerator", "denominator", label], rows[::-1]),
		"chart": charts.line(
			f"{label} per {noun}", labels, {label: [rounded(r) for r in ratios]}, unit or ""
		),
		"series": {"labels": labels, "values": [rounded(r) for r in ratios]},
	}


def ratio_by(
	frame: pd.DataFrame,
	by: str,
	numerator: object,
	denominator: object,
	*,
	label: str = "Ratio",
	unit: str | None = "%",
	scale: float = 100.0,
	noun: str = "group",
	weight_label: str = "base",
	top_n: int = 10,
	higher_is_better: bool = True,
	den_agg: str = "sum",
	min_base: float = 0.0,
) -> dict:
	"""A ratio of two sums per group, ranked, with the best and worst groups named."""
	if not len(frame):
		return empty_result()
	keys = frame[by].to_numpy()
	nums = pd.Series(_values(frame, numerator), copy=False).groupby(keys, sort=False).sum()
	dens = getattr(pd.Series(_values(frame, denominator), copy=False).groupby(keys, sort=False), den_agg)()
	joined = pd.DataFrame({"num": nums, "den": dens.reindex(nums.index)})
	with np.errstate(divide="ignore", invalid="ignore"):
		joined["ratio"] = np.where(joined["den"] != 0, joined["num"] / joined["den"] * scale, np.nan)
	den_total = float(joined["den"].sum())
	overall = float(joined["num"].sum()) / den_total * scale if den_total else None
	ranked = joined[joined["den"].abs() > min_base].dropna(subset=["ratio"])
	ranked = ranked.sort_values(["ratio", "den"], ascending=[not higher_is_better, False], kind="stable")
	names = [str(n) for n in ranked.index]
	observations, watch_outs = (
		[f"{label} overall: {num(overall, unit)} across {len(joined)} {plural(noun)}."],
		[],
	)
	if names:
		best, worst = names[0], names[-1]
		observations.append(f"Best {noun}: {best} ({num(ranked['ratio'].iloc[0], unit)}).")
		if len(names) > 1:
			observations.append(f"Worst {noun}: {worst} ({num(ranked['ratio'].iloc[-1], unit)}).")
			if overall is not None:
				below = ranked["ratio"] < overall if higher_is_better else ranked["ratio"] > overall
				observations.append(
					f"{int(below.sum())} of {len(names)} {plural(noun)} are worse than the overall {num(overall, unit)}."
				)
	rows = [
		[name, rounded(r), rounded(n), rounded(d)]
		for name, r, n, d in zip(names, ranked["ratio"], ranked["num"], ranked["den"], strict=True)
	]
	shown = rows[:top_n] if len(rows) <= top_n * 2 else rows[:top_n] + rows[-top_n:]
	return {
		"kpis": [
			kpi(f"{label} overall", overall, unit),
			kpi(f"{plural(noun).capitalize()}", len(joined), "count"),
		],
		"observations": observations,
		"watch_outs": watch_outs,
		"recommendations": [],
		"table": table([noun, label, "numerator", weight_label], rows),
		"chart": charts.bar(
			f"{label} by {noun}", [r[0] for r in shown], [r[1] for r in shown], label, horizontal=True
		),
		"ranked": ranked,
	}


DEFAULT_BUCKETS = (30, 60, 90)


def bucket_names(edges: tuple[int, ...]) -> list[str]:
	# ERPNext's ageing reports put an amount due today in the first bucket (0-30), not in "not due".
	names = ["Not due"]
	low = 0
	for edge in edges:
		names.append(f"{low}-{edge}")
		low = edge + 1
	names.append(f"{edges[-1]}+")
	return names


def ageing(
	frame: pd.DataFrame,
	as_of: np.datetime64,
	due: str,
	amount: str,
	*,
	by: str | None = "party",
	edges: tuple[int, ...] = DEFAULT_BUCKETS,
	noun: str = "customer",
	label: str = "Outstanding",
) -> dict:
	"""Open amounts in days-overdue buckets ("Not due", 0-30, 31-60, 61-90, 90+), as ERPNext's ageing reports."""
	open_ = frame[frame[amount] != 0]
	if not len(open_):
		return empty_result("open amounts")
	days = (np.datetime64(as_of, "D") - open_[due].to_numpy().astype("datetime64[D]")).astype(int)
	names = bucket_names(edges)
	bins = np.searchsorted(np.asarray(edges), days, side="left") + 1
	bins[days < 0] = 0
	values = open_[amount].to_numpy(dtype=float)
	amounts = np.bincount(bins, weights=values, minlength=len(names))
	counts = np.bincount(bins, minlength=len(names))
	total = float(values.sum())
	overdue = float(values[days > 0].sum())
	oldest = float(amounts[-1])
	share = overdue / total * 100 if total else None
	rows = [
		[name, rounded(a), int(c), rounded(a / total * 100) if total else None]
		for name, a, c in zip(names, amounts, counts, strict=True)
	]
	observations = [
		f"{label} {num(total)} on {len(open_)} open documents as of {str(as_of)[:10]}.",
		f"Overdue: {num(overdue)} ({num(share, '%')}); over {edges[-1]} days: {num(oldest)}.",
	]
	watch_outs, recommendations = [], []
	if total and oldest / total > 0.1:
		watch_outs.append(f"{num(oldest / total * 100, '%')} is more than {edges[-1]} days overdue.")
	if by and overdue > 0:
		late = open_[days > 0]
		per = late.groupby(by)[amount].sum().sort_values(ascending=False)
		top = ", ".join(f"{k} ({num(v)})" for k, v in per.head(3).items())
		observations.append(f"Largest overdue {plural(noun)}: {top}.")
		recommendations.append(
			f"Follow up the largest overdue {plural(noun)} first: {', '.join(map(str, per.head(3).index))}."
		)
	weighted = float(np.sum(np.maximum(days, 0) * values) / total) if total else None
	return {
		"kpis": [
			kpi(f"Total {label.lower()}", total, "currency"),
			kpi("Overdue", overdue, "currency"),
			kpi("Overdue share", share, "%"),
			kpi(f"Over {edges[-1]} days", oldest, "currency"),
			kpi("Average days overdue (amount-weighted)", weighted, "days"),
		],
		"observations": observations,
		"watch_outs": watch_outs,
		"recommendations": recommendations,
		"table": table(["bucket", "amount", "documents", "share %"], rows),
		"chart": charts.bar(f"{label} by age", names, [rounded(a) for a in amounts], label),
		"days": days,
		"open": open_,
	}


def stacked(
	frame: pd.DataFrame,
	date: str,
	by: str,
	values: object,
	*,
	freq: str = "month",
	label: str = "Value",
	top_n: int = 6,
) -> dict:
	"""A measure per period split by the top groups (the rest as 'Others')."""
	periods.check_freq(freq)
	if not len(frame):
		return empty_result()
	data = pd.DataFrame(
		{
			"period": periods.start_of(frame[date].to_numpy(), freq),
			"group": frame[by].to_numpy(),
			"value": np.ones(len(frame)) if values is None else _values(frame, values),
		}
	)
	totals = data.groupby("group")["value"].sum().sort_values(ascending=False)
	keep = set(totals.index[:top_n])
	if len(totals) > top_n:
		data["group"] = np.where(data["group"].isin(keep), data["group"], "Others")
	pivot = data.pivot_table(index="period", columns="group", values="value", aggfunc="sum", fill_value=0.0)
	full = periods.span(pivot.index.min().to_datetime64(), pivot.index.max().to_datetime64(), freq)
	pivot.index = pivot.index.to_numpy().astype("datetime64[D]")
	pivot = pivot.reindex(full, fill_value=0.0)
	order = [g for g in totals.index if g in pivot.columns][:top_n] + (
		["Others"] if "Others" in pivot.columns else []
	)
	pivot = pivot[order]
	labels = periods.labels(full, freq)
	series = {str(g): [rounded(v) for v in pivot[g].to_numpy()] for g in order}
	first, last = pivot.iloc[0], pivot.iloc[-1]
	observations = [
		f"{label} of {len(totals)} {by.replace('_', ' ')}s over {len(labels)} {periods.NOUN[freq]}s."
	]
	if len(labels) >= 2:
		delta = (last - pivot.iloc[-2]).sort_values()
		observations.append(
			f"In {labels[-1]} vs {labels[-2]}: biggest rise {delta.index[-1]} ({delta.iloc[-1]:+,.0f}), "
			f"biggest fall {delta.index[0]} ({delta.iloc[0]:+,.0f})."
		)
	del first
	rows = [[lab, *[rounded(v) for v in row]] for lab, row in zip(labels, pivot.to_numpy(), strict=True)]
	return {
		"kpis": [
			kpi(f"Total {label.lower()}", float(pivot.to_numpy().sum()), None),
			kpi("Groups", len(totals), "count"),
		],
		"observations": observations,
		"watch_outs": [],
		"recommendations": [],
		"table": table([periods.NOUN[freq], *map(str, order)], rows[::-1]),
		"chart": charts.stacked(
			f"{label} per {periods.NOUN[freq]} by {by.replace('_', ' ')}", labels, series, label
		),
	}


def classify_abc(values: np.ndarray, a: float = 0.8, b: float = 0.95) -> np.ndarray:
	"""ABC class of each value (sorted descending): A up to `a` of the cumulative total, B up to `b`."""
	values = np.asarray(values, dtype=float)
	positive = np.where(values > 0, values, 0.0)
	total = positive.sum()
	if total <= 0:
		return np.array(["C"] * values.size)
	before = (np.cumsum(positive) - positive) / total
	# A class is decided by the share before the item, so the item that crosses 80% is still A.
	return np.where(before < a - 1e-12, "A", np.where(before < b - 1e-12, "B", "C"))


def abc(
	frame: pd.DataFrame,
	by: str,
	values: object,
	*,
	label: str = "Value",
	noun: str = "item",
	a: float = 0.8,
	b: float = 0.95,
) -> dict:
	if not len(frame):
		return empty_result()
	totals = pd.Series(_values(frame, values), copy=False).groupby(frame[by].to_numpy()).sum()
	totals = totals.sort_values(ascending=False, kind="stable")
	classes = classify_abc(totals.to_numpy(), a, b)
	total = float(totals.sum())
	summary = []
	observations = []
	for cls in "ABC":
		mask = classes == cls
		value = float(totals.to_numpy()[mask].sum())
		summary.append((cls, int(mask.sum()), value))
		observations.append(
			f"Class {cls}: {int(mask.sum())} {plural(noun)} ({mask.mean() * 100:.0f}% of {plural(noun)}), "
			f"{num(value)} ({value / total * 100 if total else 0:.1f}% of {label.lower()})."
		)
	rows = [[str(n), rounded(v), c] for n, v, c in zip(totals.index, totals.to_numpy(), classes, strict=True)]
	return {
		"kpis": [kpi(f"Class {c} {plural(noun)}", count, "count") for c, count, _ in summary]
		+ [kpi(f"Class A share of {label.lower()}", summary[0][2] / total * 100 if total else None, "%")],
		"observations": observations,
		"watch_outs": [],
		"recommendations": [
			f"Review class A {plural(noun)} most often: they carry {a * 100:.0f}% of {label.lower()}."
		],
		"table": table([noun, label.lower(), "class"], rows),
		"chart": charts.pie(
			f"{label} by ABC class",
			[f"Class {c}" for c, _, _ in summary],
			[rounded(v) for _, _, v in summary],
		),
		"classes": dict(zip(map(str, totals.index), classes, strict=True)),
	}


def distribution(
	values: np.ndarray, *, label: str, unit: str | None = None, bins: int = 10, noun: str = "value"
) -> dict:
	values = np.asarray(values, dtype=float)
	if not values.size:
		return empty_result()
	low, high = float(values.min()), float(values.max())
	if low == high:
		edges = np.array([low, high + 1])
		counts = np.array([values.size])
	else:
		counts, edges = np.histogram(values, bins=min(bins, max(1, np.unique(values).size)))
	median = float(np.median(values))
	mean = float(values.mean())
	p90 = float(np.percentile(values, 90))
	rows = [[f"{edges[i]:,.2f}–{edges[i + 1]:,.2f}", int(c)] for i, c in enumerate(counts)]
	return {
		"kpis": [
			kpi(f"Median {label.lower()}", median, unit),
			kpi(f"Average {label.lower()}", mean, unit),
			kpi(f"90th percentile {label.lower()}", p90, unit),
			kpi(f"{plural(noun).capitalize()}", values.size, "count"),
		],
		"observations": [
			f"{values.size} {plural(noun)}: median {num(median, unit)}, average {num(mean, unit)}, "
			f"90% at or below {num(p90, unit)}; range {num(low, unit)}–{num(high, unit)}."
		],
		"watch_outs": [],
		"recommendations": [],
		"table": table(["range", "count"], rows),
		"chart": charts.histogram(
			f"Distribution of {label.lower()}", list(edges), [int(c) for c in counts], label
		),
	}


def require_positive(value: object, name: str) -> None:
	if value is not None and value <= 0:
		raise AnalyticsError(f"Parameter {name!r} must be positive; got {value!r}")
