"""A second company for bench_seed, keeping its books in euros: stock trading, payments, a budget, a year-end close.

Called by `bench_seed.py` (see there for how to run it). Everything goes through the documents'
own APIs in date order, so stock is valued by ERPNext as it would be in the desk and no
backdated reposting is needed. What it makes is tagged (company "Seed Europe GmbH", items
SEED-EU-..., customers "Seed EU Customer ...", remarks "bench_seed eur ...", bills
SEED-EU-BILL-...) and a rerun skips what exists.

The year before the current one is closed with a Period Closing Voucher, so profit and loss
over both years shows whether closing entries are left out as ERPNext's own report does.
"""

from __future__ import annotations

import datetime as dt

import frappe
from frappe.utils import add_days, add_months, getdate

COMPANY = "Seed Europe GmbH"
ABBR = "SEU"
CURRENCY = "EUR"
TAG = "bench_seed eur"
SELLING, BUYING = "Seed Selling EUR", "Seed Buying EUR"
# (code, title, group, selling rate, stocked)
ITEMS = (
	("SEED-EU-01", "Espresso Machine", "Products", 890, 1),
	("SEED-EU-02", "Grinder", "Products", 320, 1),
	("SEED-EU-03", "Milk Jug", "Products", 28, 1),
	("SEED-EU-04", "Descaler Pack", "Consumable", 14, 1),
	("SEED-EU-05", "Barista Training", "Services", 450, 0),
)
CUSTOMERS = tuple(f"Seed EU Customer {i:02d}" for i in range(1, 7))
SUPPLIER = "Seed EU Supplier 01"
SALES_COST_CENTER = "Seed Sales"


def account(name: str) -> str:
	return f"{name} - {ABBR}"


def ensure_company(counts) -> None:
	if frappe.db.exists("Company", COMPANY):
		counts.add("Company", created=False)
		return
	frappe.get_doc(
		{
			"doctype": "Company",
			"company_name": COMPANY,
			"abbr": ABBR,
			"default_currency": CURRENCY,
			"country": "Germany",
			"chart_of_accounts": "Standard",
		}
	).insert()
	counts.add("Company")


def ensure_masters(valid_from: dt.date, counts) -> None:
	"""Price lists in euros, stocked and service items, customers, a supplier and a second cost center."""
	for name, selling in ((SELLING, 1), (BUYING, 0)):
		if not frappe.db.exists("Price List", name):
			frappe.get_doc(
				{
					"doctype": "Price List",
					"price_list_name": name,
					"currency": CURRENCY,
					"selling": selling,
					"buying": 1 - selling,
				}
			).insert()
			counts.add("Price List")
	for code, title, group, rate, stocked in ITEMS:
		if not frappe.db.exists("Item", code):
			frappe.get_doc(
				{
					"doctype": "Item",
					"item_code": code,
					"item_name": title,
					"item_group": group,
					"stock_uom": "Nos",
					"is_stock_item": stocked,
				}
			).insert()
			counts.add("Item")
		for price_list, price in ((SELLING, rate), (BUYING, round(rate * 0.55, 2))):
			if not frappe.db.exists("Item Price", {"item_code": code, "price_list": price_list}):
				frappe.get_doc(
					{
						"doctype": "Item Price",
						"item_code": code,
						"price_list": price_list,
						"price_list_rate": price,
						"valid_from": valid_from,
					}
				).insert()
	for name in CUSTOMERS:
		if not frappe.db.exists("Customer", name):
			frappe.get_doc(
				{
					"doctype": "Customer",
					"customer_name": name,
					"customer_group": "Commercial",
					"territory": "Europe",
				}
			).insert()
			counts.add("Customer")
	if not frappe.db.exists("Supplier", SUPPLIER):
		frappe.get_doc({"doctype": "Supplier", "supplier_name": SUPPLIER, "supplier_group": "Local"}).insert()
		counts.add("Supplier")
	if not frappe.db.exists("Cost Center", account(SALES_COST_CENTER)):
		root = frappe.db.get_value(
			"Cost Center", {"company": COMPANY, "is_group": 1, "parent_cost_center": ""}
		)
		root = root or frappe.db.get_value("Cost Center", {"company": COMPANY, "is_group": 1})
		frappe.get_doc(
			{
				"doctype": "Cost Center",
				"cost_center_name": SALES_COST_CENTER,
				"parent_cost_center": root,
				"company": COMPANY,
			}
		).insert()
		counts.add("Cost Center")


def plan(rng, months: list[dt.date], today: dt.date) -> list[dict]:
	"""Documents in date order: stock bought on the 1st, sold through the month, rent and marketing booked."""
	out = []
	for month in months:
		last = min(getdate(add_days(add_months(month, 1), -1)), today)
		days = (last - month).days + 1
		out.append(
			{
				"kind": "purchase",
				"date": month,
				"bill_no": f"SEED-EU-BILL-{month:%Y-%m}",
				"lines": [(code, rng.randint(15, 30)) for code, *_rest, stocked in ITEMS if stocked],
				"pay": rng.random(),
			}
		)
		for n in range(rng.randint(3, 6)):
			lines = [(code, rng.randint(1, 3)) for code, *_ in rng.sample(ITEMS, rng.randint(1, 3))]
			out.append(
				{
					"kind": "sale",
					"date": getdate(add_days(month, min(days - 1, 1 + rng.randrange(max(days - 1, 1))))),
					"tag": f"{TAG} {month:%Y-%m} #{n + 1:02d}",
					"customer": CUSTOMERS[rng.randrange(len(CUSTOMERS))],
					"lines": lines,
					"pay": rng.random(),
					"pay_after": rng.randint(5, 45),
				}
			)
		for expense, amount, center in (
			("Office Rent", 1800, "Main"),
			("Marketing Expenses", rng.randint(300, 900), SALES_COST_CENTER),
		):
			out.append(
				{
					"kind": "journal",
					"date": last,
					"tag": f"{TAG} {expense} {month:%Y-%m}",
					"account": account(expense),
					"amount": amount,
					"cost_center": account(center),
				}
			)
	return sorted(out, key=lambda r: (r["date"], r["kind"] != "purchase"))


def _common(row: dict) -> dict:
	return {
		"company": COMPANY,
		"currency": CURRENCY,
		"conversion_rate": 1,
		"plc_conversion_rate": 1,
		"set_posting_time": 1,
		"posting_date": row["date"],
		"posting_time": "00:00:01" if row["kind"] == "purchase" else "12:00:00",
		"due_date": add_days(row["date"], 30),
		"update_stock": 1,
	}


def make(row: dict) -> tuple[str, str, bool] | None:
	"""The document of one planned row (made unless it exists): doctype, name and whether it is new."""
	if row["kind"] == "purchase":
		found = frappe.db.get_value("Purchase Invoice", {"bill_no": row["bill_no"], "docstatus": 1})
		if found:
			return "Purchase Invoice", found, False
		doc = frappe.get_doc(
			{
				"doctype": "Purchase Invoice",
				**_common(row),
				"supplier": SUPPLIER,
				"bill_no": row["bill_no"],
				"bill_date": row["date"],
				"buying_price_list": BUYING,
				"set_warehouse": account("Stores"),
				"items": [
					{"item_code": c, "qty": q, "warehouse": account("Stores")} for c, q in row["lines"]
				],
			}
		)
	elif row["kind"] == "sale":
		found = frappe.db.get_value("Sales Invoice", {"remarks": row["tag"], "docstatus": 1})
		if found:
			return "Sales Invoice", found, False
		doc = frappe.get_doc(
			{
				"doctype": "Sales Invoice",
				**_common(row),
				"customer": row["customer"],
				"selling_price_list": SELLING,
				"remarks": row["tag"],
				"cost_center": account(SALES_COST_CENTER),
				"items": [
					{
						"item_code": c,
						"qty": q,
						"warehouse": account("Stores"),
						"cost_center": account(SALES_COST_CENTER),
					}
					for c, q in row["lines"]
				],
			}
		)
	else:
		if frappe.db.exists("Journal Entry", {"user_remark": row["tag"], "docstatus": 1}):
			return None
		doc = frappe.get_doc(
			{
				"doctype": "Journal Entry",
				"company": COMPANY,
				"posting_date": row["date"],
				"user_remark": row["tag"],
				"accounts": [
					{
						"account": row["account"],
						"debit_in_account_currency": row["amount"],
						"cost_center": row["cost_center"],
					},
					{"account": account("Cash"), "credit_in_account_currency": row["amount"]},
				],
			}
		)
		doc.insert()
		doc.submit()
		return None
	doc.insert()
	doc.submit()
	return doc.doctype, doc.name, True


def ensure_budget(year: str, counts) -> None:
	"""This year's budget for rent at Main and marketing at the sales cost center, above what the seed
	spends by then (ERPNext 16 refuses a new budget already exceeded).

	ERPNext 15 keeps one fiscal year and a table of accounts per Budget; ERPNext 16 one account, a
	range of fiscal years and the amount spread over periods: the Budget's own fields tell which."""
	per_account = not frappe.get_meta("Budget").has_field("accounts")
	for center, lines in (
		("Main", [("Office Rent", 30000)]),
		(SALES_COST_CENTER, [("Marketing Expenses", 9000)]),
	):
		common = {
			"doctype": "Budget",
			"budget_against": "Cost Center",
			"cost_center": account(center),
			"company": COMPANY,
			"applicable_on_booking_actual_expenses": 1,
			"action_if_annual_budget_exceeded": "Warn",
			"action_if_accumulated_monthly_budget_exceeded": "Ignore",
		}
		if per_account:
			docs = [
				{
					**common,
					"account": account(a),
					"budget_amount": amount,
					"from_fiscal_year": year,
					"to_fiscal_year": year,
					"distribution_frequency": "Monthly",
				}
				for a, amount in lines
			]
			found = {
				"cost_center": account(center),
				"from_fiscal_year": year,
				"docstatus": 1,
				"company": COMPANY,
			}
		else:
			docs = [
				{
					**common,
					"fiscal_year": year,
					"accounts": [{"account": account(a), "budget_amount": amount} for a, amount in lines],
				}
			]
			found = {"cost_center": account(center), "fiscal_year": year, "docstatus": 1, "company": COMPANY}
		if frappe.db.exists("Budget", found):
			continue
		for values in docs:
			doc = frappe.get_doc(values)
			doc.insert()
			doc.submit()
			counts.add("Budget")


def close_year(year_start: dt.date, counts) -> None:
	"""A Period Closing Voucher for the fiscal year starting `year_start`, posted synchronously."""
	fiscal_year = frappe.db.get_value(
		"Fiscal Year", {"year_start_date": ("<=", year_start), "year_end_date": (">=", year_start)}
	)
	if frappe.db.exists(
		"Period Closing Voucher", {"company": COMPANY, "fiscal_year": fiscal_year, "docstatus": 1}
	):
		return
	start, end = frappe.db.get_value("Fiscal Year", fiscal_year, ["year_start_date", "year_end_date"])
	# The newer controller hands the closing to a background process; a seed has no worker to wait for.
	frappe.db.set_single_value("Accounts Settings", "use_legacy_controller_for_pcv", 1)
	doc = frappe.get_doc(
		{
			"doctype": "Period Closing Voucher",
			"company": COMPANY,
			"fiscal_year": fiscal_year,
			"period_start_date": start,
			"period_end_date": end,
			"transaction_date": end,
			"closing_account_head": account("Retained Earnings"),
			"remarks": f"{TAG} close {fiscal_year}",
		}
	)
	doc.insert()
	doc.submit()
	counts.add("Period Closing Voucher")


def seed(rng, months: list[dt.date], today: dt.date, counts) -> None:
	from bench_seed import pay

	ensure_company(counts)
	ensure_masters(getdate(add_days(months[0], -1)), counts)
	frappe.db.commit()
	for i, row in enumerate(plan(rng, months, today), 1):
		made = make(row)
		if made:
			counts.add(f"{made[0]} ({COMPANY})", created=made[2])
			when = getdate(add_days(row["date"], row.get("pay_after", 20)))
			outstanding = frappe.db.get_value(made[0], made[1], "outstanding_amount")
			if row["pay"] < 0.7 and when <= today and outstanding > 0:
				if not frappe.db.exists(
					"Payment Entry", {"reference_no": f"SEED-PAY-{made[1]}", "docstatus": 1}
				):
					pay(made[0], made[1], when, None)
					counts.add(f"Payment Entry ({COMPANY})")
		if i % 25 == 0:
			frappe.db.commit()
	frappe.db.commit()
	current = frappe.db.get_value(
		"Fiscal Year", {"year_start_date": ("<=", today), "year_end_date": (">=", today)}, "name"
	)
	ensure_budget(current, counts)
	start = frappe.db.get_value("Fiscal Year", current, "year_start_date")
	if getdate(add_days(start, -1)) >= months[0]:
		close_year(getdate(add_days(start, -365)), counts)
	frappe.db.commit()
