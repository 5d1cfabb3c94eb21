"""Finance and the general ledger: profit and loss, income and expense breakdowns, budget, unusual entries."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import anomalies, charts, periods
from analytics.catalog.base import THRESHOLD, Analysis, Param
from analytics.catalog.rows import breakdown_row, freq_param, ratio_trend_row, trend_row
from analytics.result import TABLE_MAX_ROWS, empty_result, kpi, num, rounded, table


def _root(frame: pd.DataFrame, name: str) -> np.ndarray:
	# Compare the few distinct root types, not a million strings.
	codes, uniques = pd.factorize(frame["root_type"])
	hits = np.array([str(u).strip().lower() == name for u in uniques] + [False])
	return hits[codes]


def income(frame: pd.DataFrame) -> np.ndarray:
	"""Income as a positive number: credit less debit on income accounts, 0 elsewhere."""
	return np.where(_root(frame, "income"), (frame["credit"] - frame["debit"]).to_numpy(dtype=float), 0.0)


def expense(frame: pd.DataFrame) -> np.ndarray:
	"""Expense as a positive number: debit less credit on expense accounts, 0 elsewhere."""
	return np.where(_root(frame, "expense"), (frame["debit"] - frame["credit"]).to_numpy(dtype=float), 0.0)


def is_income(frame: pd.DataFrame) -> np.ndarray:
	return _root(frame, "income")


def is_expense(frame: pd.DataFrame) -> np.ndarray:
	return _root(frame, "expense")


def net(frame: pd.DataFrame) -> np.ndarray:
	return income(frame) - expense(frame)


def profit_and_loss(data: dict, p: dict) -> dict:
	frame = data["gl"]
	frame = frame[is_income(frame) | is_expense(frame)]
	if not len(frame):
		return empty_result("income or expense entries")
	dates = frame["date"].to_numpy()
	starts, inc = periods.aggregate(dates, income(frame), p["freq"])
	_, exp = periods.aggregate(dates, expense(frame), p["freq"])
	labels = periods.labels(starts, p["freq"])
	profit = inc - exp
	total_income, total_expense = float(inc.sum()), float(exp.sum())
	margin = (total_income - total_expense) / total_income * 100 if total_income else None
	losses = [lab for lab, v in zip(labels, profit, strict=True) if v < 0]
	rows = [
		[lab, rounded(i), rounded(e), rounded(n)]
		for lab, i, e, n in zip(labels, inc, exp, profit, strict=True)
	]
	figure = charts.grouped(
		"Income and expenses",
		labels,
		{"Income": [rounded(v) for v in inc], "Expenses": [rounded(v) for v in exp]},
		"Amount",
	)
	return {
		"kpis": [
			kpi("Income", total_income, "currency"),
			kpi("Expenses", total_expense, "currency"),
			kpi("Net profit", total_income - total_expense, "currency"),
			kpi("Net margin", margin, "%"),
			kpi(
				f"Net profit {labels[-1]}",
				profit[-1],
				"currency",
				prior=profit[-2] if len(profit) > 1 else None,
			),
		],
		"observations": [
			f"Income {num(total_income)}, expenses {num(total_expense)}, net profit {num(total_income - total_expense)} "
			f"({num(margin, '%')}) over {len(labels)} {periods.NOUN[p['freq']]}s."
		]
		+ (
			[f"Loss in {len(losses)} {periods.NOUN[p['freq']]}(s): {', '.join(losses[:6])}."]
			if losses
			else []
		),
		"watch_outs": [f"Expenses exceeded income in {losses[-1]}."] if losses else [],
		"table": table([periods.NOUN[p["freq"]], "income", "expenses", "net profit"], rows[::-1]),
		"chart": charts.with_line(figure, "Net profit", labels, [rounded(v) for v in profit]),
	}


def _budget_year(budget: pd.DataFrame, p: dict) -> str | None:
	"""The fiscal year compared: the one asked for, else the latest one budgeted."""
	if p.get("fiscal_year"):
		return str(p["fiscal_year"])
	if "fiscal_year" in budget and len(budget):
		years = sorted(str(y) for y in budget["fiscal_year"].dropna().unique())
		return years[-1] if years else None
	return None


def _months(start, end) -> list:
	"""The month starts ERPNext 16 spreads a budget line over: its first day, then a month later,
	while still on or before its last day (Budget Variance's get_months_in_range)."""
	months, current = [], pd.Timestamp(start)
	while current <= pd.Timestamp(end):
		months.append(current)
		current = current + pd.DateOffset(months=1)
	return months


def _in_year(budget: pd.DataFrame, year: str | None, p: dict) -> pd.DataFrame:
	"""The budget lines of one fiscal year with the amount they give it. A yearly line (ERPNext 15)
	belongs to its fiscal year whole; a dated line (ERPNext 16) gives the year the share of its
	months that fall inside the year's dates, its amount spread evenly over its months."""
	dated = "start" in budget and budget["start"].notna().any()
	if not dated:
		if len(budget) and year and "fiscal_year" in budget:
			return budget[budget["fiscal_year"].astype(str) == year]
		return budget
	start, end = p.get("start"), p.get("end")
	if not (start and end):
		return budget.iloc[0:0]
	low, high = pd.Timestamp(start), pd.Timestamp(end)
	shares = []
	for row in budget.itertuples(index=False):
		months = _months(row.start, row.end) if pd.notna(row.start) and pd.notna(row.end) else []
		inside = sum(1 for m in months if low <= m <= high)
		shares.append(inside / len(months) if months else 0.0)
	kept = budget.assign(amount=budget["amount"].to_numpy(dtype=float) * np.array(shares, dtype=float))
	return kept[np.array(shares) > 0]


def expense_vs_budget(data: dict, p: dict) -> dict:
	"""Budget and actual per cost center (or project) and account for one fiscal year, as ERPNext's
	Budget Variance report computes them: actual is debit less credit on the budgeted account booked
	to exactly that cost center (or project) in the year."""
	gl, budget = data["gl"], data["budget"]
	against = p.get("budget_against") or "cost_center"
	year = _budget_year(budget, p)
	budget = _in_year(budget, year, p)
	if len(budget) and "budget_against" in budget:
		kind = "Cost Center" if against == "cost_center" else "Project"
		budget = budget[budget["budget_against"].astype(str) == kind]
	if not len(budget):
		return {
			**empty_result("budget rows"),
			"warnings": [f"No submitted budget for {year or 'the period'}."],
		}
	if len(gl) and year and "fiscal_year" in gl:
		gl = gl[gl["fiscal_year"].astype(str) == year]
	if against not in budget or against not in gl:
		return {
			**empty_result(f"{against} values"),
			"warnings": [f"The data has no {against} to compare by."],
		}
	planned = budget.groupby([against, "account"])["amount"].sum()
	if len(gl):
		amounts = (gl["debit"] - gl["credit"]).to_numpy(dtype=float)
		actual = pd.Series(amounts, index=gl.index).groupby([gl[against], gl["account"]]).sum()
	else:
		actual = pd.Series(dtype=float)
	per = pd.DataFrame({"budget": planned})
	per["actual"] = actual.reindex(per.index).fillna(0.0) if len(actual) else 0.0
	per["variance"] = per["budget"] - per["actual"]
	with np.errstate(divide="ignore", invalid="ignore"):
		per["used"] = np.where(per["budget"] != 0, per["actual"] / per["budget"] * 100, np.nan)
	per = per.sort_values("variance")
	over = per[per["variance"] < 0]
	total_budget, total_actual = float(per["budget"].sum()), float(per["actual"].sum())
	rows = [
		[str(k[0]), str(k[1]), rounded(r.budget), rounded(r.actual), rounded(r.variance), rounded(r.used)]
		for k, r in per.iterrows()
	]
	noun = "cost center" if against == "cost_center" else "project"
	return {
		"kpis": [
			kpi("Budget", total_budget, "currency"),
			kpi("Actual", total_actual, "currency"),
			kpi("Variance", total_budget - total_actual, "currency"),
			kpi("Budget used", total_actual / total_budget * 100 if total_budget else None, "%"),
			kpi("Lines over budget", len(over), "count"),
		],
		"observations": [
			f"Fiscal year {year}: actual {num(total_actual)} against a budget of {num(total_budget)} "
			f"({num(total_actual / total_budget * 100 if total_budget else None, '%')} used); "
			f"{len(over)} {noun} and account lines over budget."
		]
		+ ([f"Most over: {rows[0][1]} at {rows[0][0]} by {num(-rows[0][4])}."] if len(over) else []),
		"watch_outs": [
			f"{k[1]} at {k[0]} is {num(-r.variance)} over budget." for k, r in over.head(3).iterrows()
		],
		"table": table([noun, "account", "budget", "actual", "variance", "used %"], rows),
		"chart": charts.grouped(
			f"Budget and actual, fiscal year {year}",
			[f"{r[0]} · {r[1]}" for r in rows[:15]],
			{"Budget": [r[2] for r in rows[:15]], "Actual": [r[3] for r in rows[:15]]},
			"Amount",
		),
	}


def unusual_entries(data: dict, p: dict) -> dict:
	gl = data["gl"]
	if not len(gl):
		return empty_result()
	# Group on integer codes in order of appearance: hashing (or sorting) a million voucher
	# names per aggregate is most of the cost. Only the flagged vouchers are put in name order,
	# the order grouping by name gave, before ranking them.
	codes, names = pd.factorize(gl["document"])
	named = codes >= 0
	grouped = gl[["debit", "date", "account"]][named].groupby(codes[named])
	vouchers = grouped.agg(amount=("debit", "sum"), date=("date", "min"), account=("account", "first"))
	vouchers.index = pd.Index(np.asarray(names)[vouchers.index.to_numpy()], name="document")
	if len(vouchers) < 3:
		return empty_result("vouchers to compare")
	z = anomalies.robust_z(vouchers["amount"].to_numpy(dtype=float))
	flagged = vouchers[z > p["threshold"]].assign(z=z[z > p["threshold"]]).sort_index(kind="stable")
	found = flagged.sort_values("amount", ascending=False)
	# Rows only for what the table keeps (the count covers them all), from column lists.
	shown = found.head(TABLE_MAX_ROWS)
	days = np.datetime_as_string(shown["date"].to_numpy().astype("datetime64[D]"), unit="D")
	rows = [
		[str(k), str(d), a, rounded(amount), rounded(z)]
		for k, d, a, amount, z in zip(
			shown.index,
			days,
			shown["account"].tolist(),
			shown["amount"].tolist(),
			shown["z"].tolist(),
			strict=True,
		)
	]
	return {
		"kpis": [
			kpi("Unusually large vouchers", len(found), "count"),
			kpi("Vouchers checked", len(vouchers), "count"),
		],
		"observations": [
			f"{len(found)} of {len(vouchers)} vouchers are unusually large (robust z above {p['threshold']})."
			+ (f" Largest: {rows[0][0]} for {num(rows[0][3])} on {rows[0][1]}." if rows else "")
		],
		"recommendations": ["Check the unusual vouchers' approvals and supporting documents."]
		if rows
		else [],
		"table": table(
			["voucher", "date", "first account", "total debit", "robust z"], rows, total_rows=len(found)
		),
		"chart": charts.bar(
			"Unusually large vouchers",
			[r[0] for r in rows[:20]],
			[r[3] for r in rows[:20]],
			"Debit",
			horizontal=True,
		),
	}


ANALYSES = [
	Analysis(
		"finance.profit_and_loss",
		"finance",
		"Profit and loss per month",
		"Income, expenses and net profit per period from the general ledger, with net margin.",
		{"gl": ("date", "root_type", "debit", "credit")},
		profit_and_loss,
		(freq_param("month"),),
		tags=("p&l", "income statement", "net profit"),
	),
	breakdown_row(
		"finance.expense_breakdown",
		"Expenses by account",
		"Expenses per GL account with shares; where the money goes.",
		"gl",
		"account",
		("root_type", "debit", "credit"),
		expense,
		label="Expenses",
		unit="currency",
		noun="account",
		where=is_expense,
		tags=("costs", "overheads", "spending"),
	),
	Analysis(
		"finance.expense_vs_budget",
		"finance",
		"Budget against actual",
		"Budget and actual per cost center (or project) and account for one fiscal year, as ERPNext's "
		"Budget Variance report: variance and share used.",
		{"gl": ("account", "cost_center", "debit", "credit"), "budget": ("account", "cost_center", "amount")},
		expense_vs_budget,
		(
			Param("fiscal_year", "str", None, "fiscal year, e.g. 2025 (default: the one containing today)"),
			Param(
				"budget_against",
				"choice",
				"cost_center",
				"compare per cost center or per project",
				choices=("cost_center", "project"),
			),
		),
		tags=("budget variance", "overspend"),
		uses={
			"gl": ("project", "fiscal_year"),
			"budget": ("fiscal_year", "budget_against", "project", "start", "end"),
		},
	),
	breakdown_row(
		"finance.income_breakdown",
		"Income by account",
		"Income per GL account with shares; where the income comes from.",
		"gl",
		"account",
		("root_type", "debit", "credit"),
		income,
		label="Income",
		unit="currency",
		noun="account",
		where=is_income,
		chart="pie",
		tags=("revenue streams",),
	),
	trend_row(
		"finance.expense_trend",
		"Expense trend",
		"Total expenses per period with a forecast, unusual periods and shifts.",
		"gl",
		("root_type", "debit", "credit"),
		expense,
		label="Expenses",
		unit="currency",
		where=is_expense,
		tags=("costs",),
	),
	breakdown_row(
		"finance.cost_center_expenses",
		"Expenses by cost center",
		"Expenses per cost center with shares.",
		"gl",
		"cost_center",
		("root_type", "debit", "credit"),
		expense,
		label="Expenses",
		unit="currency",
		noun="cost center",
		where=is_expense,
		tags=("departments", "cost centre"),
	),
	ratio_trend_row(
		"finance.net_margin_trend",
		"Net margin trend",
		"Net profit as a percent of income per period from the general ledger.",
		"gl",
		("root_type", "debit", "credit"),
		net,
		income,
		label="Net margin",
		tags=("profitability", "net profit"),
	),
	Analysis(
		"finance.unusual_entries",
		"finance",
		"Unusually large vouchers",
		"Vouchers whose total debit is far above the usual (robust z-score); for audit and review.",
		{"gl": ("date", "document", "account", "debit")},
		unusual_entries,
		(THRESHOLD,),
		tags=("audit", "outliers", "journal entries", "anomalies"),
	),
]
