"""Known answers for sales, customers, items, margins and inventory, on tiny fixtures worked out by hand.

Each expected number is written out with the arithmetic behind it (or computed by a plain
Python loop over the rows), never by the code under test.
"""

from __future__ import annotations

import datetime as dt
import statistics

import pytest

from analytics.runner import run
from tests.analytics.helpers import kpi, row, series

COLUMNS = ("id", "document", "date", "party", "item", "item_group", "territory", "amount", "quantity", "cost")
SALES = [
	dict(zip(COLUMNS, r, strict=True))
	for r in [
		("1", "D1", "2024-03-10", "A", "X", "G1", "North", 100, 2, 60),
		("2", "D2", "2024-05-02", "B", "Y", "G2", "South", 50, 1, 40),
		("3", "D3", "2025-01-06", "A", "X", "G1", "North", 200, 4, 120),
		("4", "D3", "2025-01-06", "A", "Y", "G2", "North", 80, 2, 64),
		("5", "D4", "2025-01-20", "B", "X", "G1", "South", 150, 3, 90),
		("6", "D5", "2025-02-03", "C", "Z", "G3", "East", 300, 10, 330),
		("7", "D6", "2025-02-17", "A", "X", "G1", "North", 100, 2, 60),
		("8", "D7", "2025-03-03", "B", "Y", "G2", "South", -40, -1, -32),
		("9", "D8", "2025-03-10", "D", "X", "G1", "West", 250, 5, 150),
		("10", "D8", "2025-03-10", "D", "Z", "G3", "West", 120, 4, 132),
		("11", "D9", "2025-03-24", "A", "Y", "G2", "North", 60, 1, 48),
	]
]

STOCK = [
	dict(zip(("item", "item_group", "warehouse", "quantity", "value", "reorder_level"), r, strict=True))
	for r in [
		("X", "G1", "W1", 10, 100, 5),
		("X", "G1", "W2", 5, 50, 10),
		("Y", "G2", "W1", 0, 0, 3),
		("Z", "G3", "W1", 20, 400, 0),
		("Q", "G3", "W2", 8, 80, 0),
	]
]

MOVES = [
	dict(zip(("id", "date", "item", "warehouse", "quantity", "value"), r, strict=True))
	for r in [
		("1", "2024-06-01", "X", "W1", -2, -20),
		("2", "2025-03-01", "X", "W1", -1, -10),
		("3", "2024-12-01", "Z", "W1", -5, -100),
		("4", "2025-01-15", "Q", "W2", 8, 80),
	]
]


def loop_sum(rows, key, value):
	out: dict = {}
	for r in rows:
		out[key(r)] = out.get(key(r), 0) + value(r)
	return out


# --- sales ----------------------------------------------------------------------


def test_sales_monthly_trend():
	result = run("sales.monthly_trend", SALES)
	by_month = loop_sum(SALES, lambda r: r["date"][:7], lambda r: r["amount"])
	values = series(result)
	assert list(values)[0] == "2024-03" and list(values)[-1] == "2025-03" and len(values) == 13
	for month, total in values.items():
		assert total == by_month.get(month, 0)
	assert kpi(result, "Total revenue") == 1370  # 100+50+200+80+150+300+100-40+250+120+60
	assert result["series"]["forecast"]["labels"] == ["2025-04", "2025-05", "2025-06"]


def test_sales_weekly_trend():
	result = run("sales.weekly_trend", SALES)
	values = series(result)
	assert list(values)[0] == "2024-03-04"  # 2024-03-10 is a Sunday; its week starts Monday the 4th
	assert values["2025-01-06"] == 280  # 200 + 80
	assert sum(values.values()) == 1370


def test_sales_quarterly_trend():
	values = series(run("sales.quarterly_trend", SALES))
	assert values["2024-Q1"] == 100 and values["2024-Q2"] == 50 and values["2024-Q3"] == 0
	assert values["2025-Q1"] == 1220  # 200+80+150+300+100-40+250+120+60


def test_sales_invoice_count_trend():
	values = series(run("sales.invoice_count_trend", SALES))
	assert values["2025-01"] == 2  # D3, D4
	assert values["2025-03"] == 3  # D7, D8, D9


def test_sales_average_invoice_value():
	result = run("sales.average_invoice_value", SALES)
	assert kpi(result, "Average invoice value overall") == pytest.approx(1370 / 9, abs=0.01)
	assert series(result)["2025-03"] == pytest.approx(390 / 3, abs=0.01)  # (-40+250+120+60) over D7, D8, D9


def test_sales_by_territory():
	result = run("sales.by_territory", SALES)
	assert row(result, "North")[1] == 540  # 100+200+80+100+60
	assert row(result, "North")[2] == pytest.approx(540 / 1370 * 100, abs=0.01)
	assert kpi(result, "Territories") == 4


def test_sales_by_item_group():
	result = run("sales.by_item_group", SALES)
	assert row(result, "G1")[1] == 800  # 100+200+150+100+250
	assert row(result, "G3")[1] == 420
	assert kpi(result, "Total revenue") == 1370


def test_sales_territory_by_month():
	result = run("sales.territory_by_month", SALES)
	columns = result["table"]["columns"]
	march = row(result, "2025-03")
	values = dict(zip(columns[1:], march[1:], strict=True))
	assert values == {"North": 60, "West": 370, "East": 0, "South": -40}


def test_sales_year_over_year():
	result = run("sales.year_over_year", SALES)
	assert kpi(result, "Revenue 2025 to date") == 1220
	assert kpi(result, "Revenue 2024 same months") == 100  # only March 2024 falls in Jan-Mar
	assert row(result, "Jan")[1:3] == [280 + 150, 0]


def test_sales_weekday_pattern():
	result = run("sales.weekday_pattern", SALES)
	mondays = 0
	day = dt.date(2024, 3, 10)
	while day <= dt.date(2025, 3, 24):
		mondays += day.weekday() == 0
		day += dt.timedelta(days=1)
	monday_total = 280 + 150 + 300 + 100 - 40 + 370 + 60
	assert row(result, "Monday")[1] == monday_total
	assert row(result, "Monday")[2] == pytest.approx(monday_total / mondays, abs=0.01)
	assert kpi(result, "Best weekday") == "Monday"


def test_sales_returns():
	result = run("sales.returns", SALES)
	assert kpi(result, "Returns") == 40
	assert kpi(result, "Gross sales") == 1410
	assert kpi(result, "Returns rate overall") == pytest.approx(40 / 1410 * 100, abs=0.01)


# --- customers ------------------------------------------------------------------


def test_customers_top_with_pareto_and_hhi():
	result = run("customers.top", SALES)
	assert [r[0] for r in result["table"]["rows"]] == ["A", "D", "C", "B"]  # 540, 370, 300, 160
	assert kpi(result, "HHI") == pytest.approx((540**2 + 370**2 + 300**2 + 160**2) / 1370**2, abs=1e-4)
	assert kpi(result, "Customers making 80%") == 3  # 39.4%, 66.4%, 88.3%
	assert row(result, "A")[4] == 4  # invoices D1, D3, D6, D9


def test_customers_active_trend():
	values = series(run("customers.active_trend", SALES))
	assert values["2025-01"] == 2 and values["2025-03"] == 3 and values["2024-04"] == 0


def test_customers_new_vs_returning():
	result = run("customers.new_vs_returning", SALES)
	assert row(result, "2025-03")[1:] == [3, 1, 2]  # B, D, A active; D new
	assert row(result, "2025-02")[1:] == [2, 1, 1]  # C new, A returning


def test_customers_churn():
	result = run("customers.churn", SALES, {"window_months": 1})
	# as of 2025-03-24: current 2025-02-25..03-24 (A, B, D); prior 2025-01-25..02-24 (C, A)
	assert kpi(result, "Customers lost") == 1
	assert kpi(result, "Churn rate") == 50.0
	assert kpi(result, "Customers gained") == 2
	assert kpi(result, "Prior revenue of lost customers") == 300


def test_customers_retention_cohorts():
	result = run("customers.retention_cohorts", SALES)
	retention = result["series"]["retention"]
	assert retention[0] == 100.0
	assert retention[1] == 0.0  # nobody bought in the month after their first
	assert retention[10] == 100.0  # A (2024-03 -> 2025-01) and B (2024-05 -> 2025-03)
	assert kpi(result, "Cohorts") == 4


def test_customers_rfm():
	result = run("customers.rfm", SALES)
	# as of 2025-03-24: A 0 days/4 invoices, B 21/3 -> Loyal; C 49/1 -> Needs attention; D 14/1 -> New
	assert kpi(result, "Loyal customers") == 2
	assert kpi(result, "New customers") == 1
	assert kpi(result, "Champions customers") == 0
	assert row(result, "C")[1] == "Needs attention"


def test_customers_dormant():
	result = run("customers.dormant", SALES, {"days": 30})
	assert kpi(result, "Dormant customers") == 1  # C, 49 days since 2025-02-03
	assert row(result, "C")[2:] == [49, 300]


def test_customers_purchase_frequency():
	result = run("customers.purchase_frequency", SALES)
	counts = [4, 3, 1, 1]  # A, B, C, D invoices
	assert kpi(result, "Median invoices per customer") == statistics.median(counts)
	assert kpi(result, "Average invoices per customer") == statistics.mean(counts)
	assert kpi(result, "One-time buyers") == 50.0


# --- items ----------------------------------------------------------------------


def test_items_top():
	result = run("items.top", SALES)
	assert [r[0] for r in result["table"]["rows"]] == ["X", "Z", "Y"]
	assert row(result, "X")[1] == 800 and row(result, "X")[4] == 16  # quantity 2+4+3+2+5


def test_items_abc():
	result = run("items.abc", SALES)
	# X 800 (share before 0) A; Z 420 (before 58.4%) A; Y 150 (before 89.1%) B
	assert {r[0]: r[2] for r in result["table"]["rows"]} == {"X": "A", "Z": "A", "Y": "B"}
	assert kpi(result, "Class A share of revenue") == pytest.approx(1220 / 1370 * 100, abs=0.01)


def test_items_xyz():
	result = run("items.xyz", SALES)
	months = [f"2024-{m:02d}" for m in range(3, 13)] + ["2025-01", "2025-02", "2025-03"]
	quantity = loop_sum(
		[r for r in SALES if r["item"] == "X"], lambda r: r["date"][:7], lambda r: r["quantity"]
	)
	values = [quantity.get(m, 0) for m in months]
	cv = statistics.pstdev(values) / statistics.mean(values)
	assert row(result, "X")[2] == pytest.approx(cv, abs=0.01)
	assert row(result, "X")[3] == ("X" if cv <= 0.5 else "Y" if cv <= 1 else "Z")


def test_items_quantity_trend():
	assert series(run("items.quantity_trend", SALES))["2025-01"] == 9  # 4 + 2 + 3


def test_items_price_trend_overall_and_for_one_item():
	assert kpi(run("items.price_trend", SALES), "Average price overall") == pytest.approx(1370 / 33, abs=0.01)
	assert kpi(run("items.price_trend", SALES, {"item": "X"}), "Average price overall") == 50.0  # 800 / 16


def test_items_movers():
	result = run("items.movers", SALES, {"months": 1})
	# February: X 100, Z 300; March: X 250, Z 120, Y 20
	assert row(result, "Z")[1:] == [300, 120, -180]
	assert row(result, "X")[1:] == [100, 250, 150]
	assert kpi(result, "Items rising") == 2 and kpi(result, "Items falling") == 1


def test_items_bought_together():
	result = run("items.bought_together", SALES, {"min_count": 1})
	# D3 holds X and Y, D8 holds X and Z; X on 5 of 9 invoices, Y on 4: lift (1/9) / (5/9 * 4/9) = 0.45
	assert row(result, "X + Y")[1] == 1
	assert row(result, "X + Y")[3] == pytest.approx(0.45, abs=0.001)
	assert kpi(result, "Frequent pairs") == 2


def test_items_price_volume():
	result = run("items.price_volume", SALES, {"months": 1})
	# X: 2 @ 50 -> 5 @ 50: volume +150; Z: 10 @ 30 -> 4 @ 30: volume -180; Y new +20
	assert kpi(result, "Price effect") == 0
	assert kpi(result, "Volume effect") == -30
	assert kpi(result, "New items") == 20
	assert kpi(result, "Revenue change") == -10  # 390 - 400


# --- margins --------------------------------------------------------------------

PROFIT = {"X": 320, "Y": 30, "Z": -42}  # amount less cost per item, summed by hand


def test_margins_gross_margin_trend():
	result = run("margins.gross_margin_trend", SALES)
	assert kpi(result, "Gross profit") == 308
	assert kpi(result, "Gross margin overall") == pytest.approx(308 / 1370 * 100, abs=0.01)
	assert series(result)["2025-03"] == pytest.approx(92 / 390 * 100, abs=0.01)


@pytest.mark.parametrize(
	("key", "name", "margin"),
	[
		("margins.by_item", "X", 320 / 800 * 100),
		("margins.by_item", "Z", -42 / 420 * 100),
		("margins.by_customer", "A", 188 / 540 * 100),
		("margins.by_customer", "B", 62 / 160 * 100),
		("margins.by_item_group", "G2", 30 / 150 * 100),
		("margins.by_territory", "West", 88 / 370 * 100),
	],
)
def test_margins_by_dimension(key, name, margin):
	result = run(key, SALES)
	assert row(result, name)[1] == pytest.approx(margin, abs=0.01)
	assert kpi(result, "Gross margin overall") == pytest.approx(308 / 1370 * 100, abs=0.01)


def test_margins_loss_makers():
	by_item = run("margins.loss_makers", SALES)
	assert [r[0] for r in by_item["table"]["rows"]] == ["Z"] and kpi(by_item, "Total loss") == -42
	by_customer = run("margins.loss_makers", SALES, {"by": "party"})
	assert [r[0] for r in by_customer["table"]["rows"]] == ["C"] and kpi(by_customer, "Total loss") == -30


def test_margins_profit_pareto():
	result = run("margins.profit_pareto", SALES)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == PROFIT
	assert kpi(result, "Total gross profit") == 308


def test_margins_margin_erosion():
	result = run("margins.margin_erosion", SALES, {"months": 1})
	# February: (400 - 390) / 400 = 2.5%; March: (390 - 298) / 390 = 23.59%; X and Z keep their margins
	assert kpi(result, "Gross margin, current window") == pytest.approx(92 / 390 * 100, abs=0.01)
	assert kpi(result, "Items with falling margin") == 0
	assert row(result, "Z")[1:3] == [-10.0, -10.0]


# --- inventory ------------------------------------------------------------------


def test_inventory_value_by_warehouse():
	result = run("inventory.value_by_warehouse", STOCK)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"W1": 500, "W2": 130}


def test_inventory_value_by_item_group():
	result = run("inventory.value_by_item_group", STOCK)
	assert {r[0]: r[1] for r in result["table"]["rows"]} == {"G3": 480, "G1": 150, "G2": 0}


def test_inventory_abc():
	result = run("inventory.abc", STOCK)
	# Z 400 (before 0) A; X 150 (before 63.5%) A; Q 80 (before 87.3%) B; Y 0 C
	assert {r[0]: r[2] for r in result["table"]["rows"]} == {"Z": "A", "X": "A", "Q": "B", "Y": "C"}


def test_inventory_turnover():
	result = run("inventory.turnover", {"stock": STOCK, "sales": SALES})
	# cost of sales of stocked items: X 60+120+90+60+150 = 480, Z 330+132 = 462, Q 0; stock 630
	days = (dt.date(2025, 3, 24) - dt.date(2024, 3, 10)).days + 1
	assert kpi(result, "Inventory turnover") == pytest.approx(942 / 630, abs=0.01)
	assert kpi(result, "Days of inventory") == pytest.approx(630 / 942 * days, abs=0.01)
	assert kpi(result, "Items in stock with no sales") == 1
	assert row(result, "X")[3] == pytest.approx(480 / 150, abs=0.01)


def test_inventory_slow_dead():
	result = run("inventory.slow_dead", {"stock": STOCK, "stock_moves": MOVES}, {"as_of": "2025-03-31"})
	# X last issued 2025-03-01 (30 days): moving; Z 2024-12-01 (120 days): slow; Q never issued: dead
	assert kpi(result, "Dead stock value") == 80
	assert kpi(result, "Slow stock value") == 400
	assert row(result, "Z")[1] == "slow" and row(result, "Z")[4] == 120


def test_inventory_days_of_cover():
	result = run("inventory.days_of_cover", {"stock": STOCK, "sales": SALES}, {"days": 30, "min_days": 100})
	# last 30 days to 2025-03-24: X sold 5, Z 4; on hand X 15, Z 20
	assert row(result, "X")[3] == pytest.approx(15 / (5 / 30), abs=0.01)
	assert row(result, "Z")[3] == pytest.approx(20 / (4 / 30), abs=0.01)
	assert kpi(result, "Items at risk of running out") == 1
	assert kpi(result, "Items with stock but no recent sales") == 2  # Y (net 0 sold) and Q


def test_inventory_movement_trend():
	result = run("inventory.movement_trend", MOVES)
	assert kpi(result, "Value received") == 80
	assert kpi(result, "Value issued") == 130  # 20 + 10 + 100
	assert kpi(result, "Net change in stock value") == -50


def test_inventory_below_reorder():
	result = run("inventory.below_reorder", STOCK)
	assert kpi(result, "Item-warehouses below re-order level") == 2  # X@W2 5<10, Y@W1 0<3
	assert kpi(result, "With a re-order level") == 3
	assert kpi(result, "Out of stock") == 1
	assert row(result, "X")[1:] == ["W2", 5, 10, 5]
