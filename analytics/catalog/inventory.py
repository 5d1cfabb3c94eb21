"""Inventory: where the stock value sits, ABC, turnover, slow and dead stock, cover, movements, re-order."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import blocks, charts, periods
from analytics.catalog.base import AS_OF, Analysis, Param
from analytics.catalog.rows import as_of, as_of_note, breakdown_row, freq_param
from analytics.result import empty_result, kpi, num, rounded, table


def abc_stock(data: dict, p: dict) -> dict:
	out = blocks.abc(data["stock"], "item", "value", label="Stock value", noun="item")
	out.pop("classes", None)
	return out


def _sales_days(sales: pd.DataFrame, p: dict) -> int:
	first = pd.Timestamp(p["start"]) if p.get("start") else sales["date"].min()
	last = pd.Timestamp(p["end"]) if p.get("end") else sales["date"].max()
	return max(1, int((last - first).days) + 1)


def turnover(data: dict, p: dict) -> dict:
	stock, sales = data["stock"], data["sales"]
	if not len(stock):
		return empty_result("stock")
	value = stock.groupby("item")["value"].sum()
	cogs = sales.groupby("item")["cost"].sum() if len(sales) else pd.Series(dtype=float)
	days = _sales_days(sales, p) if len(sales) else 0
	per = pd.DataFrame({"value": value, "cogs": cogs}).fillna(0.0)
	per = per[per["value"] > 0]
	with np.errstate(divide="ignore", invalid="ignore"):
		per["turns"] = np.where(per["value"] > 0, per["cogs"] / per["value"], np.nan)
		per["days"] = np.where(per["cogs"] > 0, per["value"] / per["cogs"] * days, np.nan)
	total_value, total_cogs = float(per["value"].sum()), float(per["cogs"].sum())
	turns = total_cogs / total_value if total_value else None
	doi = total_value / total_cogs * days if total_cogs else None
	idle = per[per["cogs"] <= 0]
	per = per.sort_values("turns", kind="stable")
	rows = [
		[str(k), rounded(r.value), rounded(r.cogs), rounded(r.turns), rounded(r.days)]
		for k, r in per.iterrows()
	]
	return {
		"kpis": [
			kpi("Inventory turnover", turns, "times"),
			kpi("Days of inventory", doi, "days"),
			kpi("Stock value", total_value, "currency"),
			kpi("Cost of goods sold", total_cogs, "currency"),
			kpi("Items in stock with no sales", len(idle), "count"),
		],
		"observations": [
			f"Over {days} days, cost of goods sold {num(total_cogs)} against stock of {num(total_value)}: "
			f"{num(turns)} turns, about {num(doi, 'days')} of inventory.",
			f"{len(idle)} stocked items ({num(idle['value'].sum())}) did not sell in the period.",
		],
		"watch_outs": [f"Slowest turning: {', '.join(r[0] for r in rows[:3])}."] if rows else [],
		"table": table(["item", "stock value", "cost of sales", "turns", "days of inventory"], rows),
		"chart": charts.bar(
			"Turnover by item (slowest first)",
			[r[0] for r in rows[:20]],
			[r[3] for r in rows[:20]],
			"Turns",
			horizontal=True,
		),
		"warnings": ["Turnover uses today's stock value as the average inventory."],
	}


def slow_dead(data: dict, p: dict) -> dict:
	stock, moves = data["stock"], data["stock_moves"]
	held = stock[stock["quantity"] > 0].groupby("item")[["quantity", "value"]].sum()
	if not len(held):
		return empty_result("stock")
	when = as_of(moves, p, "date") if len(moves) else (np.datetime64(p["as_of"]) if p.get("as_of") else None)
	out_moves = moves[moves["quantity"] < 0]
	last_out = out_moves.groupby("item")["date"].max()
	held["last_out"] = last_out.reindex(held.index)
	if when is None:
		held["days"] = np.nan
	else:
		held["days"] = (
			(np.datetime64(when, "D") - held["last_out"].to_numpy().astype("datetime64[D]"))
			.astype("timedelta64[D]")
			.astype(float)
		)
	never = held["last_out"].isna()
	held["class"] = np.where(
		never | (held["days"] > p["dead_days"]),
		"dead",
		np.where(held["days"] > p["slow_days"], "slow", "moving"),
	)
	total = float(held["value"].sum())
	dead_value = float(held.loc[held["class"] == "dead", "value"].sum())
	slow_value = float(held.loc[held["class"] == "slow", "value"].sum())
	flagged = held[held["class"] != "moving"].sort_values("value", ascending=False)
	rows = [
		[
			str(k),
			r["class"],
			rounded(r.value),
			None if pd.isna(r.last_out) else str(r.last_out.date()),
			None if pd.isna(r.days) else int(r.days),
		]
		for k, r in flagged.iterrows()
	]
	return {
		"kpis": [
			kpi("Dead stock value", dead_value, "currency"),
			kpi("Slow stock value", slow_value, "currency"),
			kpi(
				"Dead and slow share of stock",
				(dead_value + slow_value) / total * 100 if total else None,
				"%",
			),
			kpi("Dead items", int((held["class"] == "dead").sum()), "count"),
			kpi("Slow items", int((held["class"] == "slow").sum()), "count"),
		],
		"observations": [
			f"{num(dead_value)} of {num(total)} stock has not moved out for over {p['dead_days']} days (or never); "
			f"{num(slow_value)} more is slow (over {p['slow_days']} days)."
		],
		"recommendations": ["Discount, return or write off the largest dead items; stop re-ordering them."]
		if rows
		else [],
		"table": table(["item", "class", "stock value", "last issue", "days since"], rows),
		"chart": charts.pie(
			"Stock value by movement",
			["moving", "slow", "dead"],
			[rounded(total - dead_value - slow_value), rounded(slow_value), rounded(dead_value)],
		),
		"warnings": as_of_note(p, when)
		if when is not None
		else ["No stock movements: every stocked item counts as dead."],
	}


def days_of_cover(data: dict, p: dict) -> dict:
	stock, sales = data["stock"], data["sales"]
	on_hand = stock.groupby("item")["quantity"].sum()
	if not len(on_hand):
		return empty_result("stock")
	when = pd.Timestamp(as_of(sales, p, "date")) if len(sales) else None
	if when is not None:
		recent = sales[(sales["date"] > when - pd.Timedelta(days=p["days"])) & (sales["date"] <= when)]
		daily = recent.groupby("item")["quantity"].sum() / p["days"]
	else:
		daily = pd.Series(dtype=float)
	per = pd.DataFrame({"on_hand": on_hand, "daily": daily.reindex(on_hand.index)}).fillna(0.0)
	with np.errstate(divide="ignore", invalid="ignore"):
		per["cover"] = np.where(per["daily"] > 0, per["on_hand"] / per["daily"], np.inf)
	selling = per[np.isfinite(per["cover"])].sort_values("cover")
	risk = selling[selling["cover"] < p["min_days"]]
	rows = [[str(k), rounded(r.on_hand), rounded(r.daily), rounded(r.cover)] for k, r in selling.iterrows()]
	unsold = int((~np.isfinite(per["cover"])).sum())
	return {
		"kpis": [
			kpi("Items at risk of running out", len(risk), "count"),
			kpi("Median days of cover", float(selling["cover"].median()) if len(selling) else None, "days"),
			kpi("Items with stock but no recent sales", unsold, "count"),
		],
		"observations": [
			f"{len(risk)} selling items have less than {p['min_days']} days of stock at the last {p['days']} days' rate."
			+ (f" Lowest: {', '.join(f'{r[0]} ({r[3]:.1f} days)' for r in rows[:3])}." if rows else "")
		],
		"recommendations": ["Re-order the items with the least cover first."] if len(risk) else [],
		"table": table(["item", "on hand", "sold per day", "days of cover"], rows),
		"chart": charts.bar(
			"Days of cover (lowest first)",
			[r[0] for r in rows[:20]],
			[r[3] for r in rows[:20]],
			"Days",
			horizontal=True,
		),
		"warnings": as_of_note(p, np.datetime64(when.date()))
		if when is not None
		else ["No sales: cover cannot be computed."],
	}


def movement_trend(data: dict, p: dict) -> dict:
	moves = data["stock_moves"]
	if not len(moves):
		return empty_result()
	dates = moves["date"].to_numpy()
	value = moves["value"].to_numpy(dtype=float)
	starts, incoming = periods.aggregate(dates, np.where(value > 0, value, 0.0), p["freq"])
	_, outgoing = periods.aggregate(dates, np.where(value < 0, -value, 0.0), p["freq"])
	labels = periods.labels(starts, p["freq"])
	net = incoming - outgoing
	rows = [
		[lab, rounded(i), rounded(o), rounded(n)]
		for lab, i, o, n in zip(labels, incoming, outgoing, net, strict=True)
	]
	figure = charts.grouped(
		"Stock in and out",
		labels,
		{"In": [rounded(v) for v in incoming], "Out": [rounded(v) for v in outgoing]},
		"Value",
	)
	return {
		"kpis": [
			kpi("Value received", incoming.sum(), "currency"),
			kpi("Value issued", outgoing.sum(), "currency"),
			kpi("Net change in stock value", net.sum(), "currency"),
		],
		"observations": [
			f"Stock value rose by {num(net.sum())} over {len(labels)} {periods.NOUN[p['freq']]}s "
			f"({num(incoming.sum())} in, {num(outgoing.sum())} out)."
			if net.sum() >= 0
			else f"Stock value fell by {num(-net.sum())} over {len(labels)} {periods.NOUN[p['freq']]}s "
			f"({num(incoming.sum())} in, {num(outgoing.sum())} out)."
		],
		"table": table([periods.NOUN[p["freq"]], "in", "out", "net"], rows[::-1]),
		"chart": charts.with_line(figure, "Net", labels, [rounded(v) for v in net]),
	}


def below_reorder(data: dict, p: dict) -> dict:
	stock = data["stock"]
	levels = stock[stock["reorder_level"] > 0]
	if not len(levels):
		return {**empty_result("items with a re-order level"), "warnings": ["No re-order levels are set."]}
	short = levels[levels["quantity"] < levels["reorder_level"]].copy()
	short["shortfall"] = short["reorder_level"] - short["quantity"]
	short = short.sort_values("shortfall", ascending=False)
	rows = [
		[r.item, r.warehouse, rounded(r.quantity), rounded(r.reorder_level), rounded(r.shortfall)]
		for r in short.itertuples()
	]
	return {
		"kpis": [
			kpi("Item-warehouses below re-order level", len(short), "count"),
			kpi("With a re-order level", len(levels), "count"),
			kpi("Out of stock", int((short["quantity"] <= 0).sum()), "count"),
		],
		"observations": [
			f"{len(short)} of {len(levels)} item-warehouse pairs with a re-order level are below it."
		],
		"recommendations": ["Raise material requests for the items below their re-order level."]
		if len(short)
		else [],
		"table": table(["item", "warehouse", "on hand", "re-order level", "shortfall"], rows),
		"chart": charts.bar(
			"Shortfall below re-order level",
			[f"{r[0]} @ {r[1]}" for r in rows[:20]],
			[r[4] for r in rows[:20]],
			"Shortfall",
			horizontal=True,
		),
	}


ANALYSES = [
	breakdown_row(
		"inventory.value_by_warehouse",
		"Stock value by warehouse",
		"Current stock value per warehouse with shares.",
		"stock",
		"warehouse",
		("value",),
		"value",
		label="Stock value",
		unit="currency",
		noun="warehouse",
		chart="pie",
		tags=("stock", "locations"),
	),
	breakdown_row(
		"inventory.value_by_item_group",
		"Stock value by item group",
		"Current stock value per item group with shares and concentration.",
		"stock",
		"item_group",
		("value",),
		"value",
		label="Stock value",
		unit="currency",
		noun="item group",
		tags=("stock", "category"),
	),
	Analysis(
		"inventory.abc",
		"inventory",
		"ABC classification of stock",
		"Items classed A, B, C by their share of the current stock value; where the money in stock sits.",
		{"stock": ("item", "value")},
		abc_stock,
		tags=("pareto", "stock value"),
	),
	Analysis(
		"inventory.turnover",
		"inventory",
		"Inventory turnover",
		"Cost of goods sold over the period divided by stock value, per item and overall, with days of inventory.",
		{"stock": ("item", "value"), "sales": ("date", "item", "cost")},
		turnover,
		tags=("stock turns", "days of inventory", "dio"),
	),
	Analysis(
		"inventory.slow_dead",
		"inventory",
		"Slow-moving and dead stock",
		"Stocked items with no issue for over N days (dead, default 180) or M days (slow, default 90), with their value.",
		{"stock": ("item", "quantity", "value"), "stock_moves": ("date", "item", "quantity")},
		slow_dead,
		(
			Param("slow_days", "int", 90, "days without an issue: slow", minimum=1),
			Param("dead_days", "int", 180, "days without an issue: dead", minimum=1),
			AS_OF,
		),
		tags=("obsolete", "non-moving", "aged stock"),
	),
	Analysis(
		"inventory.days_of_cover",
		"inventory",
		"Days of stock cover",
		"Stock on hand divided by the recent daily sales rate per item; what runs out first.",
		{"stock": ("item", "quantity"), "sales": ("date", "item", "quantity")},
		days_of_cover,
		(
			Param("days", "int", 90, "days of sales that set the daily rate", minimum=1),
			Param("min_days", "int", 14, "cover below this is a stock-out risk", minimum=1),
			AS_OF,
		),
		tags=("stock-out", "runway", "replenishment"),
	),
	Analysis(
		"inventory.movement_trend",
		"inventory",
		"Stock in and out per month",
		"Value received into and issued from stock per period, and the net change.",
		{"stock_moves": ("date", "value")},
		movement_trend,
		(freq_param("month"),),
		tags=("stock ledger", "receipts", "issues"),
	),
	Analysis(
		"inventory.below_reorder",
		"inventory",
		"Items below re-order level",
		"Item-warehouse pairs whose stock is below their re-order level, by shortfall.",
		{"stock": ("item", "warehouse", "quantity", "reorder_level")},
		below_reorder,
		tags=("replenishment", "shortage"),
	),
]
