"""Purchasing and suppliers: spend, supplier concentration, lead time, on-time rate, fill rate, prices."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import charts
from analytics.catalog.base import AS_OF, TOP_N, Analysis
from analytics.catalog.rows import (
	MONTHS,
	as_of,
	as_of_note,
	breakdown_row,
	ratio_by_row,
	recent_windows,
	trend_row,
)
from analytics.result import empty_result, kpi, num, rounded, table


def _days(later: pd.Series, earlier: pd.Series) -> np.ndarray:
	return (later.to_numpy().astype("datetime64[D]") - earlier.to_numpy().astype("datetime64[D]")).astype(
		float
	)


def _received(frame: pd.DataFrame, p: dict) -> tuple[pd.DataFrame, list[str]]:
	done = frame[frame["received_date"].notna()].copy()
	done["lead_days"] = _days(done["received_date"], done["date"])
	done["one"] = 1.0
	skipped = len(frame) - len(done)
	return done, [f"{skipped} order line(s) not yet received are left out."] if skipped else []


def _on_time(frame: pd.DataFrame, p: dict) -> tuple[pd.DataFrame, list[str]]:
	done = frame[frame["received_date"].notna() & frame["expected_date"].notna()].copy()
	done["on_time"] = (done["received_date"] <= done["expected_date"]).astype(float)
	done["one"] = 1.0
	skipped = len(frame) - len(done)
	return done, [f"{skipped} line(s) without a receipt or promised date are left out."] if skipped else []


def _due(frame: pd.DataFrame, p: dict) -> tuple[pd.DataFrame, list[str]]:
	when = as_of(frame, p, "date", "expected_date", "received_date")
	due = frame[frame["expected_date"].notna() & (frame["expected_date"] <= pd.Timestamp(when))]
	return due, [f"Lines due by {str(when)[:10]} only."] + as_of_note(p, when)


def price_changes(data: dict, p: dict) -> dict:
	frame = data["purchases"]
	if not len(frame):
		return empty_result()
	prior_start, current_start, current_end = recent_windows(frame["date"], p["months"], p.get("end"))
	dates = frame["date"]
	a = frame[(dates >= prior_start) & (dates < current_start)].groupby("item")[["amount", "quantity"]].sum()
	b = frame[(dates >= current_start) & (dates < current_end)].groupby("item")[["amount", "quantity"]].sum()
	both = a.merge(b, left_index=True, right_index=True, suffixes=("_0", "_1"))
	both = both[(both["quantity_0"] > 0) & (both["quantity_1"] > 0)]
	if not len(both):
		return {
			**empty_result("items bought in both windows"),
			"warnings": ["No item was bought in both windows."],
		}
	p0 = both["amount_0"] / both["quantity_0"]
	p1 = both["amount_1"] / both["quantity_1"]
	impact = (p1 - p0) * both["quantity_1"]
	change = (p1 / p0 - 1) * 100
	inflation = (both["amount_1"].sum() / (p0 * both["quantity_1"]).sum() - 1) * 100
	order = impact.sort_values(ascending=False).index
	rows = [[str(i), rounded(p0[i]), rounded(p1[i]), rounded(change[i]), rounded(impact[i])] for i in order]
	up = int((change > 0).sum())
	return {
		"kpis": [
			kpi("Purchase price inflation (weighted)", inflation, "%"),
			kpi("Items dearer", up, "count"),
			kpi("Items cheaper", int((change < 0).sum()), "count"),
			kpi("Extra cost from price changes", impact.sum(), "currency"),
		],
		"observations": [
			f"Prices paid moved {inflation:+.1f}% (weighted by current quantities) on {len(both)} items bought in both "
			f"{p['months']}-month windows; the change cost {num(impact.sum())}."
		],
		"watch_outs": [f"Largest price rise by cost: {rows[0][0]} ({rows[0][3]:+.1f}%)."]
		if rows and rows[0][4] > 0
		else [],
		"table": table(["item", "price before", "price now", "change %", "cost impact"], rows),
		"chart": charts.bar(
			"Cost impact of price changes",
			[r[0] for r in rows[:15]],
			[r[4] for r in rows[:15]],
			"Impact",
			horizontal=True,
		),
	}


def single_source(data: dict, p: dict) -> dict:
	frame = data["purchases"]
	if not len(frame):
		return empty_result()
	per = frame.groupby("item").agg(
		suppliers=("party", "nunique"), supplier=("party", "first"), spend=("amount", "sum")
	)
	single = per[per["suppliers"] == 1].sort_values("spend", ascending=False)
	total = float(per["spend"].sum())
	share = float(single["spend"].sum()) / total * 100 if total else None
	rows = [[str(i), r.supplier, rounded(r.spend)] for i, r in single.iterrows()]
	return {
		"kpis": [
			kpi("Single-source items", len(single), "count"),
			kpi("Items bought", len(per), "count"),
			kpi("Spend on single-source items", single["spend"].sum(), "currency"),
			kpi("Share of spend", share, "%"),
		],
		"observations": [
			f"{len(single)} of {len(per)} items come from one supplier only ({num(share, '%')} of spend)."
		],
		"watch_outs": [f"Largest single-source item: {rows[0][0]} from {rows[0][1]} ({num(rows[0][2])})."]
		if rows
		else [],
		"recommendations": ["Qualify a second supplier for the largest single-source items."] if rows else [],
		"table": table(["item", "supplier", "spend"], rows),
		"chart": charts.bar(
			"Spend on single-source items",
			[r[0] for r in rows[:15]],
			[r[2] for r in rows[:15]],
			"Spend",
			horizontal=True,
		),
	}


def open_orders(data: dict, p: dict) -> dict:
	frame = data["purchase_orders"]
	if not len(frame):
		return empty_result()
	when = as_of(frame, p, "date", "expected_date")
	received = frame["received_quantity"].fillna(0.0) if "received_quantity" in frame else 0.0
	pending = frame[frame["quantity"] > received].copy()
	if not len(pending):
		return {**empty_result("open order lines"), "warnings": as_of_note(p, when)}
	pending["open_quantity"] = pending["quantity"] - pending["received_quantity"]
	pending["open_value"] = pending["amount"] * pending["open_quantity"] / pending["quantity"]
	pending["overdue"] = pending["expected_date"].notna() & (pending["expected_date"] < pd.Timestamp(when))
	pending["overdue_value"] = pending["open_value"].where(pending["overdue"], 0.0)
	per = pending.groupby("party").agg(
		open_value=("open_value", "sum"), lines=("open_value", "size"), overdue_value=("overdue_value", "sum")
	)
	per = per.sort_values("open_value", ascending=False)
	overdue = float(pending.loc[pending["overdue"], "open_value"].sum())
	rows = [
		[str(k), rounded(r.open_value), int(r.lines), rounded(r.overdue_value)] for k, r in per.iterrows()
	]
	return {
		"kpis": [
			kpi("Open order value", pending["open_value"].sum(), "currency"),
			kpi("Overdue value", overdue, "currency"),
			kpi("Open lines", len(pending), "count"),
			kpi("Overdue lines", int(pending["overdue"].sum()), "count"),
		],
		"observations": [
			f"{len(pending)} order lines worth {num(pending['open_value'].sum())} are not fully received; "
			f"{int(pending['overdue'].sum())} ({num(overdue)}) are past their promised date."
		],
		"recommendations": [f"Chase {rows[0][0]} first: {num(rows[0][3])} overdue."]
		if overdue and rows
		else [],
		"table": table(["supplier", "open value", "open lines", "overdue value"], rows),
		"chart": charts.grouped(
			"Open purchase orders by supplier",
			[r[0] for r in rows[:15]],
			{"Open": [r[1] for r in rows[:15]], "Overdue": [r[3] for r in rows[:15]]},
			"Value",
		),
		"warnings": as_of_note(p, when),
	}


ANALYSES = [
	trend_row(
		"purchasing.spend_trend",
		"Purchase spend trend",
		"Purchase invoice spend per period with a forecast, unusual periods and shifts.",
		"purchases",
		("amount",),
		"amount",
		label="Spend",
		unit="currency",
		tags=("spend", "buying", "costs"),
	),
	breakdown_row(
		"purchasing.top_suppliers",
		"Top suppliers and concentration",
		"Suppliers ranked by spend with shares, Pareto count and HHI; dependence on a few suppliers.",
		"purchases",
		"party",
		("amount",),
		"amount",
		label="Spend",
		unit="currency",
		noun="supplier",
		tags=("vendors", "pareto", "hhi"),
	),
	breakdown_row(
		"purchasing.spend_by_item_group",
		"Spend by item group",
		"Purchase spend per item group with shares; what the money is spent on.",
		"purchases",
		"item_group",
		("amount",),
		"amount",
		label="Spend",
		unit="currency",
		noun="item group",
		chart="pie",
		tags=("category spend",),
	),
	ratio_by_row(
		"purchasing.lead_time",
		"Supplier lead time",
		"Average days from purchase order to receipt, per supplier; who delivers fast or slow.",
		"purchase_orders",
		"party",
		("date", "received_date"),
		"lead_days",
		"one",
		label="Lead time",
		noun="supplier",
		unit="days",
		scale=1.0,
		weight_label="lines received",
		higher_is_better=False,
		prepare=_received,
		tags=("delivery time", "vendors"),
	),
	ratio_by_row(
		"purchasing.on_time_rate",
		"Supplier on-time delivery",
		"Share of received order lines that arrived by the promised date, per supplier.",
		"purchase_orders",
		"party",
		("expected_date", "received_date"),
		"on_time",
		"one",
		label="On-time rate",
		noun="supplier",
		weight_label="lines received",
		prepare=_on_time,
		tags=("otif", "delivery performance", "late deliveries"),
	),
	ratio_by_row(
		"purchasing.fill_rate",
		"Supplier fill rate",
		"Quantity received as a share of quantity ordered, for order lines already due, per supplier.",
		"purchase_orders",
		"party",
		("quantity", "received_quantity", "expected_date", "date"),
		"received_quantity",
		"quantity",
		label="Fill rate",
		noun="supplier",
		weight_label="quantity ordered",
		prepare=_due,
		extra_params=(AS_OF,),
		tags=("short deliveries", "completeness"),
	),
	Analysis(
		"purchasing.price_changes",
		"purchasing",
		"Purchase price changes",
		"Unit price paid per item in the last N months against the N before, the weighted price inflation and its "
		"cost.",
		{"purchases": ("date", "item", "amount", "quantity")},
		price_changes,
		(MONTHS,),
		tags=("inflation", "unit cost", "price increase"),
	),
	Analysis(
		"purchasing.single_source_items",
		"purchasing",
		"Single-source items",
		"Items bought from only one supplier, with their spend; supply risk.",
		{"purchases": ("item", "party", "amount")},
		single_source,
		(TOP_N,),
		tags=("supply risk", "dependency"),
	),
	Analysis(
		"purchasing.open_orders",
		"purchasing",
		"Open and overdue purchase orders",
		"Purchase order lines not fully received, by supplier, and those past their promised date.",
		{"purchase_orders": ("date", "party", "quantity", "amount", "received_quantity", "expected_date")},
		open_orders,
		(AS_OF,),
		tags=("pending orders", "backorders", "late"),
	),
]
