"""Receivables and payables: the same eight analyses over what customers owe us and what we owe suppliers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import blocks, charts, periods
from analytics.catalog.base import AS_OF, TOP_N, Analysis, Param
from analytics.catalog.rows import as_of, as_of_note, breakdown_row, freq_param, ratio_by_row, ratio_trend_row
from analytics.result import empty_result, kpi, num, rounded, table

BUCKETS = Param("buckets", "str", "30,60,90", "upper day limits of the ageing buckets, comma separated")


def _edges(text: str) -> tuple[int, ...]:
	from analytics.errors import AnalyticsError

	try:
		edges = tuple(int(x) for x in str(text).split(",") if x.strip())
	except ValueError:
		raise AnalyticsError(
			f"Parameter 'buckets' must be whole numbers separated by commas; got {text!r}"
		) from None
	if not edges or any(b <= a for a, b in zip(edges, edges[1:], strict=False)) or edges[0] <= 0:
		raise AnalyticsError(f"Parameter 'buckets' must be increasing positive day counts; got {text!r}")
	return edges


def _open(frame: pd.DataFrame) -> pd.DataFrame:
	return frame[frame["outstanding"] != 0]


def make(dataset: str, party: str, word: str) -> list[Analysis]:
	"""The analyses of one side; `word` is 'receivables' or 'payables', `party` 'customer' or 'supplier'."""
	owed = "owed by customers" if party == "customer" else "owed to suppliers"
	days_metric = "DSO" if party == "customer" else "DPO"

	def ageing(data: dict, p: dict) -> dict:
		frame = data[dataset]
		if not len(frame):
			return empty_result()
		when = as_of(frame, p, "posting_date", "due_date")
		out = blocks.ageing(frame, when, "due_date", "outstanding", edges=_edges(p["buckets"]), noun=party)
		out.pop("days", None)
		out.pop("open", None)
		out["warnings"] = as_of_note(p, when)
		return out

	def days_outstanding(data: dict, p: dict) -> dict:
		frame = data[dataset]
		if not len(frame):
			return empty_result()
		when = pd.Timestamp(as_of(frame, p, "posting_date"))
		window = p["days"]
		recent = frame[
			(frame["posting_date"] > when - pd.Timedelta(days=window)) & (frame["posting_date"] <= when)
		]
		billed = float(recent["amount"].sum())
		owed_now = float(frame["outstanding"].sum())
		value = owed_now / billed * window if billed else None
		per = pd.DataFrame(
			{
				"owed": frame.groupby("party")["outstanding"].sum(),
				"billed": recent.groupby("party")["amount"].sum(),
			}
		).fillna(0.0)
		with np.errstate(divide="ignore", invalid="ignore"):
			per["days"] = np.where(per["billed"] > 0, per["owed"] / per["billed"] * window, np.nan)
		per = per[per["owed"] != 0].sort_values("owed", ascending=False)
		rows = [[str(k), rounded(r.owed), rounded(r.billed), rounded(r.days)] for k, r in per.iterrows()]
		return {
			"kpis": [
				kpi(days_metric, value, "days"),
				kpi(f"Outstanding {word}", owed_now, "currency"),
				kpi(f"Invoiced in the last {window} days", billed, "currency"),
			],
			"observations": [
				f"{days_metric} {num(value, 'days')}: {num(owed_now)} outstanding against {num(billed)} invoiced in the "
				f"{window} days to {when.date()}."
			],
			"table": table([party, "outstanding", f"invoiced last {window} days", days_metric], rows),
			"chart": charts.bar(
				f"{days_metric} by {party}",
				[r[0] for r in rows[:15]],
				[r[3] for r in rows[:15]],
				"Days",
				horizontal=True,
			),
			"warnings": as_of_note(p, np.datetime64(when.date())),
		}

	def overdue_by_party(data: dict, p: dict) -> dict:
		frame = data[dataset]
		if not len(frame):
			return empty_result()
		when = as_of(frame, p, "posting_date", "due_date")
		late = _open(frame)
		late = late[late["due_date"] < pd.Timestamp(when)].copy()
		late["days_overdue"] = (
			np.datetime64(when, "D") - late["due_date"].to_numpy().astype("datetime64[D]")
		).astype(float)
		out = blocks.breakdown(
			late,
			"party",
			"outstanding",
			label="Overdue",
			unit="currency",
			noun=party,
			top_n=p["top_n"],
			extra={
				"documents": (late["document"].to_numpy(), "count"),
				"oldest days": (late["days_overdue"].to_numpy(), "max"),
			},
		)
		out.pop("metrics", None)
		out["warnings"] = as_of_note(p, when)
		return out

	def due_schedule(data: dict, p: dict) -> dict:
		frame = _open(data[dataset])
		if not len(frame):
			return empty_result("open amounts")
		when = as_of(data[dataset], p, "posting_date", "due_date")
		freq = p["freq"]
		due = frame["due_date"].to_numpy().astype("datetime64[D]")
		overdue = due < when
		future = frame[~overdue]
		rows = [["Overdue", rounded(frame.loc[overdue, "outstanding"].sum()), int(overdue.sum())]]
		if len(future):
			starts, amounts = periods.aggregate(
				future["due_date"].to_numpy(), future["outstanding"].to_numpy(), freq
			)
			_, counts = periods.aggregate(future["due_date"].to_numpy(), None, freq, "count")
			rows += [
				[lab, rounded(a), int(c)]
				for lab, a, c in zip(periods.labels(starts, freq), amounts, counts, strict=True)
			]
		soon = frame[(due >= when) & (due <= when + np.timedelta64(30, "D"))]["outstanding"].sum()
		return {
			"kpis": [
				kpi("Overdue now", rows[0][1], "currency"),
				kpi("Due in the next 30 days", soon, "currency"),
				kpi("Due later", future["outstanding"].sum() - soon, "currency"),
			],
			"observations": [
				f"{num(rows[0][1])} is already overdue; {num(soon)} falls due in the 30 days after {str(when)[:10]}."
			],
			"table": table([f"due {periods.NOUN[freq]}", "amount", "documents"], rows),
			"chart": charts.bar(
				f"{word.capitalize()} by due date", [r[0] for r in rows], [r[1] for r in rows], "Amount"
			),
			"warnings": as_of_note(p, when),
		}

	def _days_late(frame: pd.DataFrame, p: dict) -> tuple[pd.DataFrame, list[str]]:
		when = as_of(frame, p, "posting_date", "due_date")
		late = _open(frame)
		late = late[late["due_date"] < pd.Timestamp(when)].copy()
		days = (np.datetime64(when, "D") - late["due_date"].to_numpy().astype("datetime64[D]")).astype(float)
		late["weighted_days"] = days * late["outstanding"].to_numpy()
		return late, as_of_note(p, when)

	settled = "Collected share" if party == "customer" else "Paid share"
	prefix = word

	analyses = [
		Analysis(
			f"{prefix}.ageing",
			prefix,
			f"{word.capitalize()} ageing",
			f"Amounts {owed} in buckets of days overdue (not due, 0-30, 31-60, 61-90, 90+, as ERPNext) with the largest late "
			f"{party}s.",
			{dataset: ("party", "due_date", "outstanding", "posting_date")},
			ageing,
			(AS_OF, BUCKETS),
			tags=("aging", "overdue", "buckets"),
		),
		Analysis(
			f"{prefix}.{days_metric.lower()}",
			prefix,
			f"Days {'sales' if party == 'customer' else 'payable'} outstanding ({days_metric})",
			f"Outstanding {word} divided by the amount invoiced in the last N days (default 90), times N; "
			f"how many days of billing are {owed}.",
			{dataset: ("party", "posting_date", "amount", "outstanding")},
			days_outstanding,
			(Param("days", "int", 90, "days of invoicing to compare with", minimum=1), AS_OF),
			tags=("collection period" if party == "customer" else "payment period", days_metric.lower()),
		),
		breakdown_row(
			f"{prefix}.top_{'debtors' if party == 'customer' else 'creditors'}",
			f"Largest {'debtors' if party == 'customer' else 'creditors'}",
			f"{party.capitalize()}s ranked by amount outstanding with shares and concentration.",
			dataset,
			"party",
			("outstanding", "document"),
			"outstanding",
			label="Outstanding",
			unit="currency",
			noun=party,
			where=lambda f: (f["outstanding"] != 0).to_numpy(),
			extra={"documents": ("document", "count")},
			tags=("balances", "concentration"),
		),
		Analysis(
			f"{prefix}.overdue_by_{party}",
			prefix,
			f"Overdue by {party}",
			f"Overdue amounts {owed} per {party}, with the number of documents and the oldest days overdue.",
			{dataset: ("party", "document", "due_date", "outstanding", "posting_date")},
			overdue_by_party,
			(TOP_N, AS_OF),
			tags=("late", "collections" if party == "customer" else "late payments"),
		),
		Analysis(
			f"{prefix}.due_schedule",
			prefix,
			f"{word.capitalize()} due schedule",
			f"Open amounts by the week or month they fall due, with what is already overdue; expected cash "
			f"{'in' if party == 'customer' else 'out'}.",
			{dataset: ("due_date", "outstanding", "posting_date")},
			due_schedule,
			(freq_param("week"), AS_OF),
			tags=("cash forecast", "upcoming"),
		),
		ratio_trend_row(
			f"{prefix}.{'collection' if party == 'customer' else 'payment'}_rate",
			f"{settled} by invoice month",
			f"Share of each month's invoices already {'collected' if party == 'customer' else 'paid'}; recent months "
			f"are naturally lower.",
			dataset,
			("amount", "outstanding"),
			lambda f: (f["amount"] - f["outstanding"]).to_numpy(),
			"amount",
			label=settled,
			tags=("settled", "paid"),
		),
		ratio_by_row(
			f"{prefix}.slow_{'payers' if party == 'customer' else 'paid'}",
			f"{'Slow-paying customers' if party == 'customer' else 'Suppliers we pay late'}",
			f"Average days overdue per {party}, weighted by the overdue amount.",
			dataset,
			"party",
			("due_date", "outstanding", "posting_date"),
			"weighted_days",
			"outstanding",
			label="Average days overdue",
			noun=party,
			unit="days",
			scale=1.0,
			weight_label="overdue amount",
			higher_is_better=False,
			prepare=_days_late,
			extra_params=(AS_OF,),
			tags=("late", "days late"),
		),
	]
	return analyses


def due_soon(data: dict, p: dict) -> dict:
	frame = _open(data["payables"])
	if not len(frame):
		return empty_result("open amounts")
	when = as_of(data["payables"], p, "posting_date", "due_date")
	due = frame["due_date"].to_numpy().astype("datetime64[D]")
	soon = frame[(due >= when) & (due <= when + np.timedelta64(p["days"], "D"))]
	out = blocks.breakdown(
		soon, "party", "outstanding", label="Due soon", unit="currency", noun="supplier", top_n=p["top_n"]
	)
	out.pop("metrics", None)
	if len(soon):
		out["observations"].insert(
			0,
			f"{num(soon['outstanding'].sum())} falls due to {soon['party'].nunique()} suppliers in the {p['days']} days after {str(when)[:10]}.",
		)
	out["warnings"] = as_of_note(p, when)
	return out


def by_territory() -> Analysis:
	return breakdown_row(
		"receivables.by_territory",
		"Receivables by territory",
		"Amounts outstanding per territory with shares.",
		"receivables",
		"territory",
		("outstanding",),
		"outstanding",
		label="Outstanding",
		unit="currency",
		noun="territory",
		chart="pie",
		where=lambda f: (f["outstanding"] != 0).to_numpy(),
		tags=("region",),
	)


RECEIVABLES = [*make("receivables", "customer", "receivables"), by_territory()]
PAYABLES = [
	*make("payables", "supplier", "payables"),
	Analysis(
		"payables.due_soon",
		"payables",
		"Payables due soon",
		"Supplier invoices falling due in the next N days (default 14), by supplier; what must be paid shortly.",
		{"payables": ("party", "due_date", "outstanding", "posting_date")},
		due_soon,
		(Param("days", "int", 14, "days ahead", minimum=1), TOP_N, AS_OF),
		tags=("upcoming payments", "cash out"),
	),
]
