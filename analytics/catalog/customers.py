"""Customers: who buys, how concentrated, who is new, who left, cohorts, RFM segments, dormancy."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import blocks, charts, periods
from analytics.catalog.base import AS_OF, TOP_N, Analysis, Param
from analytics.catalog.rows import as_of, as_of_note, breakdown_row, freq_param, trend_row
from analytics.result import TABLE_MAX_ROWS, empty_result, kpi, num, rounded, table


def _display(frame: pd.DataFrame, p: dict, column: str = "date") -> np.ndarray:
	"""Rows inside start/end; the analysis itself reads the whole history for first purchases."""
	mask = np.ones(len(frame), dtype=bool)
	if p.get("start"):
		mask &= (frame[column] >= pd.Timestamp(p["start"])).to_numpy()
	if p.get("end"):
		mask &= (frame[column] <= pd.Timestamp(p["end"])).to_numpy()
	return mask


def new_vs_returning(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	freq = p["freq"]
	period = periods.start_of(frame["date"].to_numpy(), freq)
	first = pd.Series(period).groupby(frame["party"].to_numpy()).min()
	pairs = pd.DataFrame({"party": frame["party"].to_numpy(), "period": period})[_display(frame, p)]
	pairs = pairs.drop_duplicates()
	if not len(pairs):
		return empty_result()
	pairs["new"] = pairs["period"].to_numpy() == first.reindex(pairs["party"]).to_numpy()
	per = pairs.groupby("period")["new"].agg(["size", "sum"])
	full = periods.span(per.index.min().to_datetime64(), per.index.max().to_datetime64(), freq)
	per.index = per.index.to_numpy().astype("datetime64[D]")
	per = per.reindex(full, fill_value=0)
	labels = periods.labels(full, freq)
	active, new = per["size"].to_numpy(float), per["sum"].to_numpy(float)
	returning = active - new
	rows = [
		[lab, int(a), int(n), int(r)] for lab, a, n, r in zip(labels, active, new, returning, strict=True)
	]
	observations = [
		f"{labels[-1]}: {int(active[-1])} active customers, {int(new[-1])} new, {int(returning[-1])} returning."
	]
	warnings = []
	if not p.get("start"):
		warnings.append(
			f"Every customer counts as new in the first {periods.NOUN[freq]} of the data ({labels[0]})."
		)
	return {
		"kpis": [
			kpi(f"New customers {labels[-1]}", new[-1], "count", prior=new[-2] if len(new) > 1 else None),
			kpi(f"Returning customers {labels[-1]}", returning[-1], "count"),
			kpi("New customers in range", new.sum(), "count"),
		],
		"observations": observations,
		"table": table([periods.NOUN[freq], "active", "new", "returning"], rows[::-1]),
		"chart": charts.stacked(
			"New and returning customers",
			labels,
			{"Returning": list(returning), "New": list(new)},
			"Customers",
		),
		"warnings": warnings,
	}


def churn(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	when = pd.Timestamp(as_of(frame, p, "date"))
	window = p["window_months"]
	current_start = when + pd.Timedelta(days=1) - pd.DateOffset(months=window)
	prior_start = current_start - pd.DateOffset(months=window)
	dates = frame["date"]
	current = frame[(dates >= current_start) & (dates <= when)]
	prior = frame[(dates >= prior_start) & (dates < current_start)]
	before, now = set(prior["party"]), set(current["party"])
	lost = before - now
	gained = now - before
	rate = len(lost) / len(before) * 100 if before else None
	lost_revenue = (
		prior[prior["party"].isin(lost)].groupby("party")["amount"].sum().sort_values(ascending=False)
	)
	span_text = f"{current_start.date()} to {when.date()} against {prior_start.date()} to {(current_start - pd.Timedelta(days=1)).date()}"
	observations = [
		f"{len(lost)} of {len(before)} customers of the prior {window} months did not buy in the last {window} "
		f"({num(rate, '%')} churn); {len(gained)} new or returning customers bought."
	]
	watch_outs = []
	if len(lost_revenue):
		top = ", ".join(f"{k} ({num(v)})" for k, v in lost_revenue.head(3).items())
		observations.append(f"Largest lost customers by prior revenue: {top}.")
		watch_outs.append(f"Lost customers brought {num(lost_revenue.sum())} in the prior window.")
	return {
		"kpis": [
			kpi("Churn rate", rate, "%"),
			kpi("Customers lost", len(lost), "count"),
			kpi("Customers gained", len(gained), "count"),
			kpi("Retained customers", len(before & now), "count"),
			kpi("Prior revenue of lost customers", lost_revenue.sum(), "currency"),
		],
		"observations": observations,
		"watch_outs": watch_outs,
		"recommendations": ["Contact the largest lost customers and ask why they stopped buying."]
		if len(lost)
		else [],
		"table": table(["customer", "prior revenue"], [[k, rounded(v)] for k, v in lost_revenue.items()]),
		"chart": charts.bar(
			"Revenue of lost customers (prior window)",
			list(lost_revenue.index[:15]),
			[rounded(v) for v in lost_revenue.to_numpy()[:15]],
			"Revenue",
			horizontal=True,
		),
		"warnings": [f"Windows: {span_text}."] + as_of_note(p, np.datetime64(when.date())),
	}


def retention_cohorts(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	month = frame["date"].to_numpy().astype("datetime64[M]").astype(np.int64)
	pairs = pd.DataFrame({"party": frame["party"].to_numpy(), "month": month}).drop_duplicates()
	first = pairs.groupby("party")["month"].min()
	pairs["cohort"] = first.reindex(pairs["party"]).to_numpy()
	pairs["age"] = pairs["month"] - pairs["cohort"]
	last = int(month.max())
	max_age = p["max_age"]
	sizes = pairs[pairs["age"] == 0].groupby("cohort")["party"].nunique()
	active = pairs[pairs["age"] <= max_age].groupby(["cohort", "age"])["party"].nunique()
	cohorts = list(sizes.index)
	matrix, weighted = [], []
	for age in range(max_age + 1):
		eligible = [c for c in cohorts if c + age <= last]
		if not eligible:
			break
		kept = sum(int(active.get((c, age), 0)) for c in eligible)
		weighted.append(kept / sum(int(sizes[c]) for c in eligible) * 100)
	for cohort in cohorts:
		row = []
		for age in range(len(weighted)):
			if cohort + age > last:
				row.append(None)
			else:
				row.append(rounded(active.get((cohort, age), 0) / sizes[cohort] * 100))
		matrix.append(row)
	labels = [str(np.datetime64(int(c), "M")) for c in cohorts]
	kpis = [kpi("Cohorts", len(cohorts), "count")]
	for age in (1, 3, 6):
		if age < len(weighted):
			kpis.append(kpi(f"Month-{age} retention", weighted[age], "%"))
	observations = [
		f"{len(cohorts)} monthly cohorts; "
		+ ", ".join(f"month {a}: {weighted[a]:.1f}%" for a in (1, 3, 6) if a < len(weighted))
		+ " of customers buy again (all cohorts, weighted by size)."
	]
	rows = [[lab, int(sizes[c]), *row] for lab, c, row in zip(labels, cohorts, matrix, strict=True)]
	return {
		"kpis": kpis,
		"observations": observations,
		"table": table(["cohort", "customers", *[f"m{a}" for a in range(len(weighted))]], rows[::-1]),
		"chart": charts.heatmap(
			"Customer retention by cohort (%)", [f"m{a}" for a in range(len(weighted))], labels, matrix, "%"
		),
		"series": {"retention": [rounded(w) for w in weighted]},
	}


RFM_SEGMENTS = ("Champions", "Loyal", "New", "At risk", "Lost", "Needs attention")


def rfm_segment(r: int, f: int) -> str:
	if r == 3 and f == 3:
		return "Champions"
	if r >= 2 and f >= 2:
		return "Loyal"
	if r == 3 and f == 1:
		return "New"
	if r == 1 and f >= 2:
		return "At risk"
	if r == 1 and f == 1:
		return "Lost"
	return "Needs attention"


def rfm(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	when = as_of(frame, p, "date")
	per = frame.groupby("party").agg(last=("date", "max"), monetary=("amount", "sum"))
	per.insert(1, "frequency", blocks.distinct_counts(frame["party"], frame["document"]).reindex(per.index))
	recency = (np.datetime64(when, "D") - per["last"].to_numpy().astype("datetime64[D]")).astype(int)
	r = np.where(recency <= p["recent_days"], 3, np.where(recency <= p["lapsed_days"], 2, 1))
	f = np.where(per["frequency"] >= p["frequent"], 3, np.where(per["frequency"] >= 2, 2, 1))
	per["recency_days"], per["r"], per["f"] = recency, r, f
	per["segment"] = [rfm_segment(a, b) for a, b in zip(r, f, strict=True)]
	summary = per.groupby("segment").agg(customers=("segment", "size"), revenue=("monetary", "sum"))
	summary = summary.reindex(RFM_SEGMENTS, fill_value=0)
	total = float(per["monetary"].sum())
	at_risk = per[per["segment"] == "At risk"].sort_values("monetary", ascending=False)
	observations = [
		f"{int(summary.loc[s, 'customers'])} {s.lower()} customers ({num(summary.loc[s, 'revenue'])})"
		for s in RFM_SEGMENTS
		if summary.loc[s, "customers"]
	]
	observations = ["Segments: " + "; ".join(observations) + "."]
	watch_outs = []
	if len(at_risk):
		watch_outs.append(
			f"{len(at_risk)} once-regular customers have not bought for over {p['lapsed_days']} days "
			f"(lifetime {num(at_risk['monetary'].sum())}): {', '.join(map(str, at_risk.index[:3]))}."
		)
	ranked = per.sort_values("monetary", ascending=False)
	# The table shows the first rows only; the rest would be built to be thrown away.
	rows = [
		[str(name), row.segment, int(row.recency_days), int(row.frequency), rounded(row.monetary)]
		for name, row in ranked.head(TABLE_MAX_ROWS).iterrows()
	]
	return {
		"kpis": [kpi(f"{s} customers", summary.loc[s, "customers"], "count") for s in RFM_SEGMENTS[:5]]
		+ [
			kpi(
				"Champions share of revenue",
				summary.loc["Champions", "revenue"] / total * 100 if total else None,
				"%",
			)
		],
		"observations": observations,
		"watch_outs": watch_outs,
		"recommendations": ["Win back 'At risk' customers before they become 'Lost'."]
		if len(at_risk)
		else [],
		"table": table(
			["customer", "segment", "days since last", "invoices", "revenue"], rows, total_rows=len(ranked)
		),
		"chart": charts.bar(
			"Customers by RFM segment",
			list(RFM_SEGMENTS),
			[int(v) for v in summary["customers"]],
			"Customers",
		),
		"warnings": as_of_note(p, when),
	}


def dormant(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	when = as_of(frame, p, "date")
	per = frame.groupby("party").agg(last=("date", "max"), revenue=("amount", "sum"))
	per["days"] = (np.datetime64(when, "D") - per["last"].to_numpy().astype("datetime64[D]")).astype(int)
	asleep = per[per["days"] > p["days"]].sort_values("revenue", ascending=False)
	share = len(asleep) / len(per) * 100
	rows = [
		[str(k), str(r["last"].date()), int(r["days"]), rounded(r["revenue"])] for k, r in asleep.iterrows()
	]
	observations = [
		f"{len(asleep)} of {len(per)} customers ({share:.1f}%) have not bought for more than {p['days']} days."
	]
	if len(asleep):
		observations.append(
			"Most valuable dormant customers: "
			+ ", ".join(f"{k} ({num(v)})" for k, v in asleep["revenue"].head(3).items())
			+ "."
		)
	return {
		"kpis": [
			kpi("Dormant customers", len(asleep), "count"),
			kpi("Share of customers", share, "%"),
			kpi("Lifetime revenue of dormant customers", asleep["revenue"].sum(), "currency"),
		],
		"observations": observations,
		"recommendations": ["Reach out to the most valuable dormant customers first."] if len(asleep) else [],
		"table": table(["customer", "last purchase", "days since", "lifetime revenue"], rows),
		"chart": charts.bar(
			"Dormant customers by lifetime revenue",
			list(asleep.index[:15]),
			[rounded(v) for v in asleep["revenue"].to_numpy()[:15]],
			"Revenue",
			horizontal=True,
		),
		"warnings": as_of_note(p, when),
	}


def purchase_frequency(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	counts = blocks.distinct_counts(frame["party"], frame["document"]).to_numpy(dtype=float)
	out = blocks.distribution(counts, label="Invoices per customer", noun="customer", bins=10)
	once = float((counts == 1).mean() * 100)
	out["kpis"].append(kpi("One-time buyers", once, "%"))
	out["observations"].append(f"{once:.1f}% of customers bought only once.")
	return out


ANALYSES = [
	breakdown_row(
		"customers.top",
		"Top customers and concentration",
		"Customers ranked by revenue with shares, the number making 80% of revenue (Pareto) and the HHI; "
		"dependence on a few customers.",
		"sales",
		"party",
		("amount", "document"),
		"amount",
		label="Revenue",
		unit="currency",
		noun="customer",
		extra={"invoices": ("document", "nunique")},
		tags=("pareto", "hhi", "concentration", "best customers"),
	),
	trend_row(
		"customers.active_trend",
		"Active customers per month",
		"Distinct customers buying per period with a forecast; is the customer base growing?",
		"sales",
		("party",),
		"party",
		label="Active customers",
		unit="count",
		agg="nunique",
		tags=("customer base",),
	),
	Analysis(
		"customers.new_vs_returning",
		"customers",
		"New and returning customers",
		"Per period, customers buying for the first time against those who bought before.",
		{"sales": ("date", "party")},
		new_vs_returning,
		(freq_param("month"),),
		tags=("acquisition", "first purchase"),
		period_filter=False,
	),
	Analysis(
		"customers.churn",
		"customers",
		"Customer churn",
		"Customers who bought in the prior window but not in the latest one (default 3 months each), "
		"their churn rate and the revenue they brought.",
		{"sales": ("date", "party", "amount")},
		churn,
		(Param("window_months", "int", 3, "length of each window in months", minimum=1, maximum=24), AS_OF),
		tags=("lost customers", "attrition", "retention"),
	),
	Analysis(
		"customers.retention_cohorts",
		"customers",
		"Retention cohorts",
		"Customers grouped by the month of their first purchase, and the share still buying 1, 2, 3... months later "
		"(heatmap).",
		{"sales": ("date", "party")},
		retention_cohorts,
		(Param("max_age", "int", 12, "months after the first purchase to follow", minimum=1, maximum=36),),
		tags=("cohort", "repeat purchase", "loyalty"),
	),
	Analysis(
		"customers.rfm",
		"customers",
		"RFM segmentation",
		"Customers segmented by recency, frequency and value into Champions, Loyal, New, At risk, Lost and Needs "
		"attention.",
		{"sales": ("date", "party", "document", "amount")},
		rfm,
		(
			Param("recent_days", "int", 30, "bought within this many days: recent", minimum=1),
			Param("lapsed_days", "int", 90, "no purchase for more than this: lapsed", minimum=1),
			Param("frequent", "int", 5, "this many invoices or more: frequent", minimum=2),
			AS_OF,
		),
		tags=("segments", "recency", "frequency", "monetary"),
	),
	Analysis(
		"customers.dormant",
		"customers",
		"Dormant customers",
		"Customers with no purchase for more than N days (default 90), ranked by lifetime revenue; who to win back.",
		{"sales": ("date", "party", "amount")},
		dormant,
		(Param("days", "int", 90, "days without a purchase", minimum=1), AS_OF),
		tags=("inactive", "win back"),
	),
	Analysis(
		"customers.purchase_frequency",
		"customers",
		"Purchase frequency",
		"How many invoices each customer had in the period: distribution, median and share of one-time buyers.",
		{"sales": ("party", "document")},
		purchase_frequency,
		(TOP_N,),
		tags=("repeat", "orders per customer"),
	),
]
