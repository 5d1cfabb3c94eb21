"""Known answers for purchasing, receivables, payables, cash, finance, HR and projects, on tiny
fixtures worked out by hand (the arithmetic is written next to each expected number)."""

from __future__ import annotations

import statistics

import pytest

from analytics.runner import run
from tests.analytics.helpers import kpi, row, series


def rows(columns: str, *values: tuple) -> list[dict]:
	names = columns.split()
	return [dict(zip(names, v, strict=True)) for v in values]


PURCHASES = rows(
	"id document date party item item_group amount quantity",
	("1", "P1", "2025-01-10", "S1", "M1", "Raw", 100, 10),
	("2", "P2", "2025-01-15", "S2", "M2", "Pack", 50, 5),
	("3", "P3", "2025-02-10", "S1", "M1", "Raw", 120, 10),
	("4", "P4", "2025-02-20", "S1", "M3", "Raw", 30, 3),
	("5", "P5", "2025-03-05", "S2", "M1", "Raw", 66, 6),
	("6", "P6", "2025-03-15", "S2", "M2", "Pack", 60, 5),
)

ORDERS = rows(
	"id document date party item quantity amount expected_date received_date received_quantity",
	("1", "PO1", "2025-01-01", "S1", "M1", 10, 100, "2025-01-10", "2025-01-08", 10),
	("2", "PO2", "2025-01-05", "S1", "M2", 10, 100, "2025-01-15", "2025-01-20", 5),
	("3", "PO3", "2025-01-10", "S2", "M1", 20, 200, "2025-01-20", "2025-01-20", 20),
	("4", "PO4", "2025-02-01", "S2", "M3", 10, 50, "2025-02-10", None, 0),
	("5", "PO5", "2025-03-01", "S1", "M1", 4, 40, "2025-04-01", None, 0),
)

LEDGER = (
	("R1", "A", "North", "2025-01-01", "2025-01-31", 100, 100),
	("R2", "A", "North", "2025-02-15", "2025-03-17", 200, 50),
	("R3", "B", "South", "2024-11-01", "2024-12-01", 300, 300),
	("R4", "C", "South", "2025-03-20", "2025-04-19", 150, 150),
	("R5", "C", "South", "2025-03-01", "2025-03-31", 80, 0),
)
RECEIVABLES = rows("document party territory posting_date due_date amount outstanding", *LEDGER)
PAYABLES = [{k: v for k, v in r.items() if k != "territory"} for r in RECEIVABLES]
AS_OF = {"as_of": "2025-03-31"}

PAYMENTS = rows(
	"document date party party_type direction amount mode",
	("E1", "2025-01-05", "A", "Customer", "in", 100, "Bank"),
	("E2", "2025-01-10", "S1", "Supplier", "out", 40, "Cash"),
	("E3", "2025-02-05", "A", "Customer", "in", 200, "Bank"),
	("E4", "2025-02-07", "S1", "Supplier", "out", 300, "Bank"),
	("E5", "2025-03-01", "B", "Customer", "Receive", 50, "Card"),
	("E6", "2025-03-02", "S2", "Supplier", "Pay", 10, "Cash"),
)

GL = rows(
	"id date account root_type debit credit cost_center voucher_type document",
	("1", "2025-01-05", "Sales", "Income", 0, 1000, "Main", "Sales Invoice", "J1"),
	("2", "2025-01-10", "Rent", "Expense", 300, 0, "Main", "Journal Entry", "J2"),
	("3", "2025-01-20", "Salaries", "Expense", 400, 0, "Ops", "Journal Entry", "J3"),
	("4", "2025-02-05", "Sales", "Income", 0, 800, "Main", "Sales Invoice", "J4"),
	("5", "2025-02-10", "Rent", "Expense", 300, 0, "Main", "Journal Entry", "J5"),
	("6", "2025-02-15", "Rent", "Expense", 0, 50, "Main", "Journal Entry", "J6"),
	("7", "2025-02-20", "Bank", "Asset", 500, 0, "Main", "Journal Entry", "J7"),
	("8", "2025-03-05", "Other", "Income", 0, 100, "Ops", "Journal Entry", "J8"),
	("9", "2025-03-06", "Salaries", "Expense", 900, 0, "Ops", "Journal Entry", "J9"),
)
BUDGET = rows(
	"account cost_center amount", ("Rent", "Main", 600), ("Salaries", "Ops", 1000), ("Travel", "Main", 100)
)

EMPLOYEES = rows(
	"employee department joining_date relieving_date status",
	("E1", "Sales", "2020-01-01", None, "Active"),
	("E2", "Sales", "2024-07-15", "2025-03-31", "Left"),
	("E3", "Ops", "2023-01-10", None, "Active"),
	("E4", "Ops", "2025-02-01", None, "Active"),
	("E5", "IT", "2019-06-01", "2024-12-31", "Left"),
)
HR_AS_OF = {"as_of": "2025-06-30"}

ATTENDANCE = rows(
	"id employee department date status",
	("1", "E1", "Sales", "2025-01-06", "Present"),
	("2", "E1", "Sales", "2025-01-07", "Absent"),
	("3", "E2", "Sales", "2025-01-06", "Half Day"),
	("4", "E3", "Ops", "2025-01-06", "Present"),
	("5", "E3", "Ops", "2025-02-03", "Absent"),
	("6", "E3", "Ops", "2025-02-04", "On Leave"),
)

LEAVE = rows(
	"id employee department leave_type from_date to_date days status",
	("1", "E1", "Sales", "Casual", "2025-01-06", "2025-01-07", 2, "Approved"),
	("2", "E2", "Sales", "Sick", "2025-02-01", "2025-02-01", 1, "Approved"),
	("3", "E3", "Ops", "Casual", "2025-03-01", "2025-03-03", 3, "Approved"),
	("4", "E3", "Ops", "Sick", "2025-04-01", "2025-04-04", 4, "Rejected"),
)

PROJECTS = rows(
	"project status start_date end_date budget actual_cost progress",
	("P1", "Open", "2025-01-01", "2025-05-31", 1000, 1200, 80),
	("P2", "Open", "2025-02-01", "2025-12-31", 2000, 1500, 50),
	("P3", "Completed", "2024-01-01", "2024-06-30", 500, 400, 100),
	("P4", "Open", "2025-03-01", "2025-06-01", 0, 100, 10),
)

TIMESHEETS = rows(
	"id date employee project activity hours billable",
	("1", "2025-01-06", "E1", "P1", "Dev", 8, True),
	("2", "2025-01-07", "E1", "P1", "Meet", 2, False),
	("3", "2025-01-08", "E2", "P2", "Dev", 6, True),
	("4", "2025-02-03", "E2", "P2", "Test", 4, False),
	("5", "2025-02-04", "E1", "P2", "Dev", 5, True),
)

ISSUES = rows(
	"document opened resolved status priority party",
	("I1", "2025-01-02", "2025-01-04", "Resolved", "High", "A"),
	("I2", "2025-01-10", "2025-01-20", "Resolved", "Low", "B"),
	("I3", "2025-02-01", "2025-02-02", "Resolved", "High", "A"),
	("I4", "2025-02-15", None, "Open", "Low", "C"),
	("I5", "2025-03-01", "2025-03-05", "Resolved", "Low", "B"),
)


# --- purchasing -----------------------------------------------------------------


def test_purchasing_spend_trend():
	assert series(run("purchasing.spend_trend", PURCHASES)) == {
		"2025-01": 150,
		"2025-02": 150,
		"2025-03": 126,
	}


def test_purchasing_top_suppliers():
	result = run("purchasing.top_suppliers", PURCHASES)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"S1": 250, "S2": 176}


def test_purchasing_spend_by_item_group():
	result = run("purchasing.spend_by_item_group", PURCHASES)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"Raw": 316, "Pack": 110}


def test_purchasing_lead_time():
	result = run("purchasing.lead_time", ORDERS)
	assert row(result, "S1")[1] == 11.0  # (7 + 15) / 2 days
	assert row(result, "S2")[1] == 10.0
	assert kpi(result, "Lead time overall") == pytest.approx(32 / 3, abs=0.01)


def test_purchasing_on_time_rate():
	result = run("purchasing.on_time_rate", ORDERS)
	assert row(result, "S1")[1] == 50.0  # PO1 early, PO2 five days late
	assert row(result, "S2")[1] == 100.0
	assert kpi(result, "On-time rate overall") == pytest.approx(200 / 3, abs=0.01)


def test_purchasing_fill_rate():
	result = run("purchasing.fill_rate", ORDERS, {"as_of": "2025-03-15"})
	# due by 15 March: PO1-PO4; S1 received 15 of 20, S2 20 of 30
	assert row(result, "S1")[1] == 75.0
	assert row(result, "S2")[1] == pytest.approx(200 / 3, abs=0.01)
	assert kpi(result, "Fill rate overall") == 70.0


def test_purchasing_price_changes():
	result = run("purchasing.price_changes", PURCHASES, {"months": 1})
	# M1: 12.00 in February, 11.00 in March on 6 units
	assert row(result, "M1")[1:] == [12.0, 11.0, pytest.approx(-8.33, abs=0.01), -6.0]
	assert kpi(result, "Purchase price inflation (weighted)") == pytest.approx((66 / 72 - 1) * 100, abs=0.01)


def test_purchasing_single_source_items():
	result = run("purchasing.single_source_items", PURCHASES)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"M2": "S2", "M3": "S1"}
	assert kpi(result, "Share of spend") == pytest.approx(140 / 426 * 100, abs=0.01)


def test_purchasing_open_orders():
	result = run("purchasing.open_orders", ORDERS, {"as_of": "2025-03-15"})
	# PO2 5 of 10 open (50), PO4 10 of 10 (50), both past due; PO5 (40) due in April
	assert kpi(result, "Open order value") == 140
	assert kpi(result, "Overdue value") == 100
	assert kpi(result, "Overdue lines") == 2


# --- receivables and payables ---------------------------------------------------


@pytest.mark.parametrize(
	("key", "data"), [("receivables.ageing", RECEIVABLES), ("payables.ageing", PAYABLES)]
)
def test_ageing_buckets(key, data):
	result = run(key, data, AS_OF)
	buckets = {r[0]: r[1] for r in result["table"]["rows"]}
	# R4 not due; R2 14 days late; R1 59 days; R3 120 days; R5 paid
	assert buckets == {"Not due": 150, "0-30": 50, "31-60": 100, "61-90": 0, "90+": 300}
	assert kpi(result, "Overdue share") == 75.0
	assert kpi(result, "Average days overdue (amount-weighted)") == 71.0  # (14*50 + 59*100 + 120*300) / 600


def test_ageing_custom_buckets():
	buckets = {
		r[0]: r[1]
		for r in run("receivables.ageing", RECEIVABLES, {**AS_OF, "buckets": "60"})["table"]["rows"]
	}
	assert buckets == {"Not due": 150, "0-60": 150, "60+": 300}


@pytest.mark.parametrize(
	("key", "label", "data"), [("receivables.dso", "DSO", RECEIVABLES), ("payables.dpo", "DPO", PAYABLES)]
)
def test_days_outstanding(key, label, data):
	result = run(key, data, AS_OF)
	# 600 outstanding; invoiced in the 90 days to 31 March: R1, R2, R4, R5 = 530
	assert kpi(result, label) == pytest.approx(600 / 530 * 90, abs=0.01)


@pytest.mark.parametrize(
	("key", "data"), [("receivables.top_debtors", RECEIVABLES), ("payables.top_creditors", PAYABLES)]
)
def test_largest_balances(key, data):
	result = run(key, data)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"B": 300, "A": 150, "C": 150}


@pytest.mark.parametrize(
	("key", "data"),
	[("receivables.overdue_by_customer", RECEIVABLES), ("payables.overdue_by_supplier", PAYABLES)],
)
def test_overdue_by_party(key, data):
	result = run(key, data, AS_OF)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"B": 300, "A": 150}
	assert row(result, "B")[5] == 120  # oldest days overdue


@pytest.mark.parametrize(
	("key", "data"), [("receivables.due_schedule", RECEIVABLES), ("payables.due_schedule", PAYABLES)]
)
def test_due_schedule(key, data):
	result = run(key, data, {**AS_OF, "freq": "month"})
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"Overdue": 450, "2025-04": 150}
	assert kpi(result, "Due in the next 30 days") == 150


@pytest.mark.parametrize(
	("key", "label", "data"),
	[
		("receivables.collection_rate", "Collected share", RECEIVABLES),
		("payables.payment_rate", "Paid share", PAYABLES),
	],
)
def test_settled_share(key, label, data):
	result = run(key, data)
	values = series(result)
	assert values["2025-02"] == 75.0  # 150 of 200 settled
	assert values["2025-03"] == pytest.approx(80 / 230 * 100, abs=0.01)
	assert kpi(result, f"{label} overall") == pytest.approx(230 / 830 * 100, abs=0.01)


@pytest.mark.parametrize(
	("key", "data"), [("receivables.slow_payers", RECEIVABLES), ("payables.slow_paid", PAYABLES)]
)
def test_slow_payers(key, data):
	result = run(key, data, AS_OF)
	assert row(result, "A")[1] == 44.0  # (59*100 + 14*50) / 150
	assert row(result, "B")[1] == 120.0


def test_receivables_by_territory():
	result = run("receivables.by_territory", RECEIVABLES)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"South": 450, "North": 150}


def test_payables_due_soon():
	result = run("payables.due_soon", PAYABLES, {**AS_OF, "days": 20})
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"C": 150}  # R4 due 19 April


# --- cash -----------------------------------------------------------------------


def test_cash_net_flow_trend():
	assert series(run("cash.net_flow_trend", PAYMENTS)) == {"2025-01": 60, "2025-02": -100, "2025-03": 40}


def test_cash_receipts_and_payments_trends():
	assert series(run("cash.receipts_trend", PAYMENTS)) == {"2025-01": 100, "2025-02": 200, "2025-03": 50}
	assert series(run("cash.payments_trend", PAYMENTS)) == {"2025-01": 40, "2025-02": 300, "2025-03": 10}


def test_cash_by_mode():
	result = run("cash.by_mode", PAYMENTS)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"Bank": 600, "Cash": 50, "Card": 50}


def test_cash_top_payers_and_payees():
	assert {r[0]: r[1] for r in run("cash.top_payers", PAYMENTS)["table"]["rows"]} == {"A": 300, "B": 50}
	assert {r[0]: r[1] for r in run("cash.top_payees", PAYMENTS)["table"]["rows"]} == {"S1": 340, "S2": 10}


def test_cash_running_balance():
	result = run("cash.running_balance", PAYMENTS, {"opening_balance": 1000})
	assert {r[0]: r[2] for r in result["table"]["rows"]} == {"2025-01": 1060, "2025-02": 960, "2025-03": 1000}
	assert kpi(result, "Lowest balance") == 960


def test_cash_large_payments():
	result = run("cash.large_payments", PAYMENTS, {"threshold": 1.0})
	# in: 100, 200, 50 -> median 100, MAD 50, z(200) = 0.6745 * 100 / 50 = 1.35
	# out: 40, 300, 10 -> median 40, MAD 30, z(300) = 0.6745 * 260 / 30 = 5.85
	assert sorted(r[0] for r in result["table"]["rows"]) == ["E3", "E4"]
	assert row(result, "E4")[5] == pytest.approx(0.6745 * 260 / 30, abs=0.01)
	assert kpi(result, "Their total") == 500


# --- finance --------------------------------------------------------------------


def test_finance_profit_and_loss():
	result = run("finance.profit_and_loss", GL)
	assert {r[0]: r[1:] for r in result["table"]["rows"]} == {
		"2025-01": [1000, 700, 300],
		"2025-02": [800, 250, 550],  # rent 300 less a 50 credit; the bank entry is not P&L
		"2025-03": [100, 900, -800],
	}
	assert kpi(result, "Net profit") == 50
	assert kpi(result, "Net margin") == pytest.approx(50 / 1900 * 100, abs=0.01)


def test_finance_expense_breakdown():
	result = run("finance.expense_breakdown", GL)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"Salaries": 1300, "Rent": 550}


def test_finance_expense_vs_budget():
	"""Budget Variance's rule: actual is debit less credit on the budgeted account at exactly that cost center."""
	result = run("finance.expense_vs_budget", {"gl": GL, "budget": BUDGET})
	lines = {(r[0], r[1]): r[2:5] for r in result["table"]["rows"]}
	assert lines == {
		("Ops", "Salaries"): [1000, 1300, -300],
		("Main", "Rent"): [600, 550, 50],
		("Main", "Travel"): [100, 0, 100],
	}
	assert kpi(result, "Lines over budget") == 1
	assert kpi(result, "Variance") == -150  # 1700 budgeted less 1850 spent


def test_finance_income_breakdown():
	result = run("finance.income_breakdown", GL)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"Sales": 1800, "Other": 100}


def test_finance_expense_trend():
	assert series(run("finance.expense_trend", GL)) == {"2025-01": 700, "2025-02": 250, "2025-03": 900}


def test_finance_cost_center_expenses():
	result = run("finance.cost_center_expenses", GL)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"Ops": 1300, "Main": 550}


def test_finance_net_margin_trend():
	result = run("finance.net_margin_trend", GL)
	assert series(result) == {"2025-01": 30.0, "2025-02": 68.75, "2025-03": -800.0}
	assert kpi(result, "Net margin overall") == pytest.approx(50 / 1900 * 100, abs=0.01)


def test_finance_unusual_entries():
	result = run("finance.unusual_entries", GL, {"threshold": 1.2})
	# voucher debits 0,300,400,0,300,0,500,0,900: median 300, MAD 300, z(900) = 0.6745 * 600 / 300
	assert [r[0] for r in result["table"]["rows"]] == ["J9"]
	assert row(result, "J9")[4] == pytest.approx(0.6745 * 2, abs=0.01)


# --- people ---------------------------------------------------------------------


def test_hr_headcount_trend():
	result = run("hr.headcount_trend", EMPLOYEES, {**HR_AS_OF, "months": 6})
	# month ends Jan-Jun 2025: E1 E2 E3 | +E4 | E2's last day 31 Mar | E2 gone | | -> 3 4 4 3 3 3
	assert series(result) == {
		"2025-01": 3,
		"2025-02": 4,
		"2025-03": 4,
		"2025-04": 3,
		"2025-05": 3,
		"2025-06": 3,
	}
	assert kpi(result, "Headcount now") == 3 and kpi(result, "Peak headcount") == 4


def test_hr_attrition():
	result = run("hr.attrition", EMPLOYEES, {**HR_AS_OF, "months": 6})
	average = statistics.mean([3, 4, 4, 3, 3, 3])
	assert kpi(result, "Leavers") == 1  # E2; E5 left in December, before the window
	assert kpi(result, "Attrition rate") == pytest.approx(1 / average * 100, abs=0.01)
	assert kpi(result, "Annualised attrition") == pytest.approx(2 / average * 100, abs=0.01)


def test_hr_headcount_by_department():
	result = run("hr.headcount_by_department", EMPLOYEES, HR_AS_OF)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"Ops": 2, "Sales": 1}


def test_hr_tenure():
	result = run("hr.tenure", EMPLOYEES, HR_AS_OF)
	# active on 30 June 2025: E1 2007 days, E3 902, E4 149
	assert kpi(result, "Median tenure in years") == pytest.approx(902 / 365.25, abs=0.01)
	assert kpi(result, "Under one year") == pytest.approx(100 / 3, abs=0.01)


def test_hr_new_hires_trend():
	result = run("hr.new_hires_trend", EMPLOYEES)
	assert series(result)["2025-02"] == 1 and kpi(result, "Total new hires") == 5


def test_hr_absence_rate():
	result = run("hr.absence_rate", ATTENDANCE)
	assert series(result) == {"2025-01": 37.5, "2025-02": 50.0}  # (1 + 0.5) / 4, 1 / 2
	assert kpi(result, "Absence rate overall") == pytest.approx(2.5 / 6 * 100, abs=0.01)


def test_hr_absence_by_department():
	result = run("hr.absence_by_department", ATTENDANCE)
	assert row(result, "Sales")[1] == 50.0  # 1.5 of 3
	assert row(result, "Ops")[1] == pytest.approx(100 / 3, abs=0.01)


def test_hr_leave_by_type():
	result = run("hr.leave_by_type", LEAVE)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {
		"Casual": 5,
		"Sick": 1,
	}  # rejected 4 days left out


# --- projects and operations ----------------------------------------------------


def test_projects_budget_vs_actual():
	result = run("projects.budget_vs_actual", PROJECTS)
	assert kpi(result, "Budget") == 3500 and kpi(result, "Actual cost") == 3100  # P4 has no budget
	assert kpi(result, "Projects over budget") == 1  # P1
	assert kpi(result, "Projects spending ahead of progress") == 1  # P2: 75% used at 50% done
	assert row(result, "P1")[3:5] == [200, 120.0]


def test_projects_overdue():
	result = run("projects.overdue", PROJECTS, HR_AS_OF)
	assert {r[0]: r[2] for r in result["table"]["rows"]} == {"P1": 30, "P4": 29}
	assert kpi(result, "Open projects") == 3


def test_projects_hours_by_project():
	result = run("projects.hours_by_project", TIMESHEETS)
	assert {r[0]: (r[1], r[4]) for r in result["table"]["rows"]} == {"P2": (15, 11), "P1": (10, 8)}


def test_projects_utilisation():
	result = run("projects.utilisation", TIMESHEETS)
	assert row(result, "E1")[1] == pytest.approx(13 / 15 * 100, abs=0.01)
	assert row(result, "E2")[1] == 60.0
	assert kpi(result, "Billable utilisation overall") == 76.0


def test_projects_billable_trend():
	assert series(run("projects.billable_trend", TIMESHEETS)) == {
		"2025-01": 87.5,
		"2025-02": pytest.approx(500 / 9, abs=0.01),
	}


def test_projects_hours_by_activity():
	result = run("projects.hours_by_activity", TIMESHEETS)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"Dev": 19, "Test": 4, "Meet": 2}


def test_projects_issue_resolution():
	result = run("projects.issue_resolution", ISSUES)
	days = [2, 10, 1, 4]
	assert kpi(result, "Median days to resolve") == statistics.median(days)
	assert kpi(result, "Average days to resolve") == statistics.mean(days)
	assert kpi(result, "Resolved within 3 days") == 50.0
	assert row(result, "Low")[2] == 7.0  # (10 + 4) / 2


def test_projects_issue_backlog():
	result = run("projects.issue_backlog", ISSUES)
	assert {r[0]: r[1:] for r in result["table"]["rows"]} == {
		"2025-01": [2, 2, 0],
		"2025-02": [2, 1, 1],
		"2025-03": [1, 1, 1],
	}
