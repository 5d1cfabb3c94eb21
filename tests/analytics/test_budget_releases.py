"""Budget against actual on both budget shapes: ERPNext 15's yearly account lines and ERPNext 16's
one account per budget, its amount spread evenly over the months between two dates."""

from __future__ import annotations

import pandas as pd
import pytest

from analytics.runner import run

GL = [
	{
		"id": "g1",
		"date": "2026-02-10",
		"account": "Rent",
		"cost_center": "Main",
		"debit": 1000.0,
		"credit": 0.0,
		"fiscal_year": "2026",
	},
	{
		"id": "g2",
		"date": "2026-03-10",
		"account": "Rent",
		"cost_center": "Main",
		"debit": 1500.0,
		"credit": 0.0,
		"fiscal_year": "2026",
	},
]
YEAR = {"fiscal_year": "2026", "start": "2026-01-01", "end": "2026-12-31"}


def budget_of(result) -> dict:
	return {k["label"]: k["value"] for k in result["kpis"]}


def test_a_yearly_budget_line_of_erpnext_15_counts_whole_in_its_year():
	budget = [
		{
			"id": "b1",
			"document": "B1",
			"fiscal_year": "2026",
			"budget_against": "Cost Center",
			"account": "Rent",
			"cost_center": "Main",
			"amount": 12000.0,
		},
		{
			"id": "b2",
			"document": "B2",
			"fiscal_year": "2025",
			"budget_against": "Cost Center",
			"account": "Rent",
			"cost_center": "Main",
			"amount": 9000.0,
		},
	]
	kpis = budget_of(run("finance.expense_vs_budget", {"gl": GL, "budget": budget}, YEAR))
	assert kpis["Budget"] == 12000.0 and kpis["Actual"] == 2500.0


@pytest.mark.parametrize(
	("start", "end", "amount", "in_2026"),
	[
		("2026-01-01", "2026-12-31", 12000.0, 12000.0),  # one yearly distribution row
		("2026-03-01", "2026-03-31", 800.0, 800.0),  # one monthly row inside the year
		("2025-07-01", "2026-06-30", 12000.0, 6000.0),  # half of its months fall in 2026
		("2025-01-01", "2025-12-31", 5000.0, 0.0),  # the year before: nothing
	],
)
def test_a_dated_budget_line_of_erpnext_16_gives_the_year_its_months_share(start, end, amount, in_2026):
	budget = [
		{
			"id": "d1",
			"document": "B1",
			"fiscal_year": "2025",
			"budget_against": "Cost Center",
			"account": "Rent",
			"cost_center": "Main",
			"amount": amount,
			"start": start,
			"end": end,
		}
	]
	result = run("finance.expense_vs_budget", {"gl": GL, "budget": budget}, YEAR)
	if in_2026:
		assert budget_of(result)["Budget"] == pytest.approx(in_2026)
	else:
		assert "No submitted budget" in " ".join(result.get("warnings", []))


def test_monthly_rows_of_one_budget_add_up_to_the_year():
	months = pd.date_range("2026-01-01", periods=12, freq="MS")
	budget = [
		{
			"id": f"d{i}",
			"document": "B1",
			"fiscal_year": "2026",
			"budget_against": "Cost Center",
			"account": "Rent",
			"cost_center": "Main",
			"amount": 1000.0,
			"start": m.date().isoformat(),
			"end": (m + pd.offsets.MonthEnd(0)).date().isoformat(),
		}
		for i, m in enumerate(months)
	]
	assert (
		budget_of(run("finance.expense_vs_budget", {"gl": GL, "budget": budget}, YEAR))["Budget"] == 12000.0
	)
