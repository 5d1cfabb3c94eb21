"""Profitability and margins: gross margin over time and by item, customer, group and territory; losses."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import blocks, charts
from analytics.catalog.base import TOP_N, Analysis, Param
from analytics.catalog.rows import MONTHS, breakdown_row, ratio_by_row, ratio_trend_row, recent_windows
from analytics.result import empty_result, kpi, num, plural, rounded, table


def profit(frame: pd.DataFrame) -> np.ndarray:
	return (frame["amount"] - frame["cost"]).to_numpy(dtype=float)


def _profit_kpis(frame: pd.DataFrame) -> list[dict]:
	return [
		kpi("Gross profit", float(profit(frame).sum()), "currency"),
		kpi("Revenue", frame["amount"].sum(), "currency"),
	]


def _by(key: str, by: str, noun: str, words: str) -> Analysis:
	return ratio_by_row(
		key,
		f"Gross margin by {noun}",
		f"Gross margin % (revenue less cost of goods, over revenue) per {noun}, best and worst; {words}",
		"sales",
		by,
		("amount", "cost"),
		profit,
		"amount",
		label="Gross margin",
		noun=noun,
		weight_label="revenue",
		tags=("profitability", "margin %"),
	)


DIMENSIONS = ("item", "party", "item_group", "territory")


def loss_makers(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	by = p["by"]
	if by not in frame.columns:
		from analytics.errors import AnalyticsError

		raise AnalyticsError(f"Dataset 'sales' is missing column {by!r} needed for by={by!r}")
	per = pd.DataFrame(
		{"revenue": frame.groupby(by)["amount"].sum(), "cost": frame.groupby(by)["cost"].sum()}
	)
	per["profit"] = per["revenue"] - per["cost"]
	losing = per[per["profit"] < 0].sort_values("profit")
	loss = float(losing["profit"].sum())
	with np.errstate(divide="ignore", invalid="ignore"):
		margin = np.where(losing["revenue"] != 0, losing["profit"] / losing["revenue"] * 100, np.nan)
	rows = [
		[str(k), rounded(r.revenue), rounded(r.cost), rounded(r.profit), rounded(m)]
		for (k, r), m in zip(losing.iterrows(), margin, strict=True)
	]
	noun = by.replace("_", " ").replace("party", "customer")
	return {
		"kpis": [
			kpi(f"Loss-making {plural(noun)}", len(losing), "count"),
			kpi("Total loss", loss, "currency"),
			kpi("Gross profit overall", per["profit"].sum(), "currency"),
		],
		"observations": [
			f"{len(losing)} of {len(per)} {plural(noun)} sell below cost, losing {num(-loss)} in total."
		]
		+ ([f"Largest loss: {rows[0][0]} ({num(rows[0][3])})."] if rows else []),
		"recommendations": [f"Review prices and costs of the loss-making {plural(noun)}, largest first."]
		if rows
		else [],
		"table": table([noun, "revenue", "cost", "profit", "margin %"], rows),
		"chart": charts.bar(
			f"Loss-making {plural(noun)}",
			[r[0] for r in rows[:20]],
			[r[3] for r in rows[:20]],
			"Profit",
			horizontal=True,
		),
	}


def margin_erosion(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	prior_start, current_start, current_end = recent_windows(frame["date"], p["months"], p.get("end"))
	dates = frame["date"]
	sides = []
	for low, high in ((prior_start, current_start), (current_start, current_end)):
		part = frame[(dates >= low) & (dates < high)]
		sides.append(
			pd.DataFrame(
				{"revenue": part.groupby("item")["amount"].sum(), "cost": part.groupby("item")["cost"].sum()}
			)
		)
	both = sides[0].merge(sides[1], left_index=True, right_index=True, suffixes=("_0", "_1"))
	both = both[(both["revenue_0"] > 0) & (both["revenue_1"] > 0)]
	if not len(both):
		return {**empty_result("items sold in both windows")}
	m0 = (both["revenue_0"] - both["cost_0"]) / both["revenue_0"] * 100
	m1 = (both["revenue_1"] - both["cost_1"]) / both["revenue_1"] * 100
	change = (m1 - m0).sort_values()
	overall0 = (
		(sides[0]["revenue"].sum() - sides[0]["cost"].sum()) / sides[0]["revenue"].sum() * 100
		if sides[0]["revenue"].sum()
		else None
	)
	overall1 = (
		(sides[1]["revenue"].sum() - sides[1]["cost"].sum()) / sides[1]["revenue"].sum() * 100
		if sides[1]["revenue"].sum()
		else None
	)
	rows = [[str(i), rounded(m0[i]), rounded(m1[i]), rounded(change[i])] for i in change.index]
	falling = int((change < 0).sum())
	return {
		"kpis": [
			kpi("Gross margin, current window", overall1, "%", prior=overall0),
			kpi("Items with falling margin", falling, "count"),
			kpi("Items compared", len(both), "count"),
		],
		"observations": [
			f"Gross margin {num(overall0, '%')} → {num(overall1, '%')} (last {p['months']} months against the "
			f"{p['months']} before); {falling} of {len(both)} items lost margin."
		]
		+ (
			[f"Largest drop: {rows[0][0]} ({rows[0][1]:.1f}% → {rows[0][2]:.1f}%)."]
			if rows and rows[0][3] < 0
			else []
		),
		"table": table(["item", "margin % before", "margin % now", "change (points)"], rows),
		"chart": charts.bar(
			"Change in gross margin by item (points)",
			[r[0] for r in rows[:20]],
			[r[3] for r in rows[:20]],
			"Points",
			horizontal=True,
		),
	}


ANALYSES = [
	ratio_trend_row(
		"margins.gross_margin_trend",
		"Gross margin trend",
		"Gross margin % and gross profit per period; is profitability improving?",
		"sales",
		("amount", "cost"),
		profit,
		"amount",
		label="Gross margin",
		extra_kpis=_profit_kpis,
		tags=("profitability", "gross profit"),
	),
	_by("margins.by_item", "item", "item", "which products earn and which do not."),
	_by("margins.by_customer", "party", "customer", "which customers are profitable to serve."),
	_by("margins.by_item_group", "item_group", "item group", "which product lines earn most."),
	_by("margins.by_territory", "territory", "territory", "where the business earns most."),
	Analysis(
		"margins.loss_makers",
		"margins",
		"Loss-making items or customers",
		"Items (or customers, item groups, territories) sold below cost in the period, largest loss first; where money "
		"is lost.",
		{"sales": ("amount", "cost")},
		loss_makers,
		(Param("by", "choice", "item", "what to rank", choices=DIMENSIONS), TOP_N),
		uses={"sales": DIMENSIONS},
		tags=("negative margin", "losses", "below cost"),
	),
	breakdown_row(
		"margins.profit_pareto",
		"Profit concentration",
		"Items ranked by gross profit with cumulative shares (Pareto); which few items make the profit.",
		"sales",
		"item",
		("amount", "cost"),
		profit,
		label="Gross profit",
		unit="currency",
		noun="item",
		tags=("pareto", "contribution"),
	),
	Analysis(
		"margins.margin_erosion",
		"margins",
		"Margin erosion by item",
		"Items whose gross margin % fell most in the last N months (default 3) against the N before.",
		{"sales": ("date", "item", "amount", "cost")},
		margin_erosion,
		(MONTHS,),
		tags=("margin squeeze", "cost increase"),
	),
]

__all__ = ["ANALYSES", "blocks"]
