"""Sales: revenue over time, by territory and group, year on year, weekdays, returns."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import charts
from analytics.catalog.base import Analysis
from analytics.catalog.rows import breakdown_row, ratio_trend_row, stacked_row, trend_row
from analytics.result import empty_result, kpi, num, pct_change, rounded, table

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def year_over_year(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	dates = frame["date"]
	year = int(dates.max().year)
	last_month = int(dates[dates.dt.year == year].max().month)
	current = frame[dates.dt.year == year]
	prior = frame[dates.dt.year == year - 1]
	now = current.groupby(current["date"].dt.month)["amount"].sum().reindex(range(1, 13), fill_value=0.0)
	before = prior.groupby(prior["date"].dt.month)["amount"].sum().reindex(range(1, 13), fill_value=0.0)
	months = range(1, last_month + 1)
	ytd, ytd_prior = float(now[list(months)].sum()), float(before[list(months)].sum())
	rows = [
		[MONTH_NAMES[m - 1], rounded(now[m]), rounded(before[m]), pct_change(now[m], before[m])]
		for m in months
	]
	observations = [
		f"{year} to {MONTH_NAMES[last_month - 1]}: {num(ytd)} against {num(ytd_prior)} in {year - 1} "
		f"({pct_change(ytd, ytd_prior) if ytd_prior else 'n/a'}% change)."
	]
	watch_outs = []
	if not len(prior):
		watch_outs.append(f"No sales in {year - 1} to compare with.")
	else:
		down = [MONTH_NAMES[m - 1] for m in months if now[m] < before[m]]
		if down:
			observations.append(f"Below last year in {len(down)} of {last_month} months: {', '.join(down)}.")
	return {
		"kpis": [
			kpi(f"Revenue {year} to date", ytd, "currency", prior=ytd_prior),
			kpi(f"Revenue {year - 1} same months", ytd_prior, "currency"),
		],
		"observations": observations,
		"watch_outs": watch_outs,
		"table": table(["month", str(year), str(year - 1), "change %"], rows),
		"chart": charts.grouped(
			"Revenue by month, year on year",
			[MONTH_NAMES[m - 1] for m in months],
			{
				str(year - 1): [rounded(before[m]) for m in months],
				str(year): [rounded(now[m]) for m in months],
			},
			"Revenue",
		),
	}


def weekday_pattern(data: dict, p: dict) -> dict:
	frame = data["sales"]
	if not len(frame):
		return empty_result()
	weekday = frame["date"].dt.day_of_week
	totals = frame.groupby(weekday)["amount"].sum().reindex(range(7), fill_value=0.0)
	# Averages are per calendar weekday in the range, so a weekday that occurs more often does not win by count.
	days = pd.date_range(frame["date"].min(), frame["date"].max(), freq="D")
	occurrences = pd.Series(days.day_of_week).value_counts().reindex(range(7), fill_value=0)
	average = totals / occurrences.replace(0, np.nan)
	total = float(totals.sum())
	best = int(np.nanargmax(average.to_numpy())) if average.notna().any() else 0
	worst = int(np.nanargmin(average.to_numpy())) if average.notna().any() else 0
	rows = [
		[
			WEEKDAYS[d],
			rounded(totals[d]),
			rounded(average[d]),
			rounded(totals[d] / total * 100) if total else None,
		]
		for d in range(7)
	]
	return {
		"kpis": [
			kpi("Best weekday", None) | {"value": WEEKDAYS[best]},
			kpi(f"Average {WEEKDAYS[best]} revenue", average[best], "currency"),
			kpi(f"Average {WEEKDAYS[worst]} revenue", average[worst], "currency"),
		],
		"observations": [
			f"{WEEKDAYS[best]} is the strongest day (average {num(average[best])}); "
			f"{WEEKDAYS[worst]} the weakest ({num(average[worst])})."
		],
		"table": table(["weekday", "revenue", "average per day", "share %"], rows),
		"chart": charts.bar("Average revenue by weekday", WEEKDAYS, [rounded(v) for v in average], "Revenue"),
	}


def _returns_kpis(frame: pd.DataFrame) -> list[dict]:
	returns = -frame["amount"].clip(upper=0).sum()
	return [
		kpi("Returns", returns, "currency"),
		kpi("Gross sales", frame["amount"].clip(lower=0).sum(), "currency"),
	]


ANALYSES = [
	trend_row(
		"sales.monthly_trend",
		"Monthly revenue trend",
		"Revenue per month with a forecast of the next months, unusual months and the month the level shifted. "
		"Use for 'how are sales going', growth, seasonality and what next quarter looks like.",
		"sales",
		("amount",),
		"amount",
		label="Revenue",
		unit="currency",
		tags=("revenue", "growth", "sales"),
	),
	trend_row(
		"sales.weekly_trend",
		"Weekly revenue trend",
		"Revenue per week (Monday start) with a forecast of the next weeks; for recent momentum and short-term dips.",
		"sales",
		("amount",),
		"amount",
		label="Revenue",
		unit="currency",
		freq="week",
		horizon=4,
		tags=("revenue",),
	),
	trend_row(
		"sales.quarterly_trend",
		"Quarterly revenue trend",
		"Revenue per quarter with a forecast of the next quarters; for board-level growth and next quarter's outlook.",
		"sales",
		("amount",),
		"amount",
		label="Revenue",
		unit="currency",
		freq="quarter",
		horizon=2,
		tags=("revenue", "outlook"),
	),
	trend_row(
		"sales.invoice_count_trend",
		"Number of invoices per month",
		"How many distinct sales invoices were issued per period, with forecast; separates volume from value.",
		"sales",
		("document",),
		"document",
		label="Invoices",
		unit="count",
		agg="nunique",
		tags=("orders", "volume"),
	),
	ratio_trend_row(
		"sales.average_invoice_value",
		"Average invoice value",
		"Revenue divided by the number of invoices per period: are customers buying more or less per invoice?",
		"sales",
		("amount", "document"),
		"amount",
		"document",
		label="Average invoice value",
		unit="currency",
		scale=1.0,
		den_agg="nunique",
		tags=("basket", "order value", "aov"),
	),
	breakdown_row(
		"sales.by_territory",
		"Revenue by territory",
		"Revenue per territory with shares and concentration; where the business sells.",
		"sales",
		"territory",
		("amount",),
		"amount",
		label="Revenue",
		unit="currency",
		noun="territory",
		chart="pie",
		tags=("region", "geography"),
	),
	breakdown_row(
		"sales.by_item_group",
		"Revenue by item group",
		"Revenue per item group (product line) with shares; which product lines carry the business.",
		"sales",
		"item_group",
		("amount",),
		"amount",
		label="Revenue",
		unit="currency",
		noun="item group",
		chart="pie",
		tags=("product line", "category"),
	),
	stacked_row(
		"sales.territory_by_month",
		"Revenue per month by territory",
		"Monthly revenue split by the largest territories (stacked); which regions drive the monthly movements.",
		"sales",
		"territory",
		("amount",),
		"amount",
		label="Revenue",
	),
	Analysis(
		"sales.year_over_year",
		"sales",
		"Revenue year on year",
		"Each month of the latest year against the same month a year earlier, and year-to-date against last year.",
		{"sales": ("date", "amount")},
		year_over_year,
		tags=("yoy", "last year", "ytd"),
	),
	Analysis(
		"sales.weekday_pattern",
		"sales",
		"Revenue by weekday",
		"Average revenue per weekday over the range; which days are strong or weak.",
		{"sales": ("date", "amount")},
		weekday_pattern,
		tags=("day of week", "pattern"),
	),
	ratio_trend_row(
		"sales.returns",
		"Returns rate",
		"Returns (negative sales lines) as a percent of gross sales per month; quality or fit problems show here.",
		"sales",
		("amount",),
		lambda f: -np.minimum(f["amount"].to_numpy(), 0.0),
		lambda f: np.maximum(f["amount"].to_numpy(), 0.0),
		label="Returns rate",
		higher_is_better=False,
		extra_kpis=_returns_kpis,
		tags=("credit notes", "refunds"),
	),
]
