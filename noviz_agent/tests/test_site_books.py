"""The agent's figures against ERPNext's own reports, for the same company and period, as the same person.

Needs a site with a second company keeping its books in another currency, with sales, purchases,
payments, stock, a budget and a closed fiscal year (`benchmarks/bench_seed.py` makes one:
"Seed Europe GmbH", in EUR). Each test first asserts that the data it compares exists, so
nothing passes on an empty site. Run with
`bench --site S run-tests --app noviz_agent --module noviz_agent.tests.test_site_books`.
"""

from __future__ import annotations

import datetime as dt

import frappe
from frappe.desk.query_report import run as run_report
from frappe.utils import add_months, get_first_day, get_last_day, getdate, nowdate

from noviz_agent.edge import frappe_session
from noviz_agent.engine.gateway import call_tool
from noviz_agent.tests.utils import SiteTestCase
from noviz_agent.tools import analytics

COMPANY = "Seed Europe GmbH"
PERSON = "books.user@noviz.test"
ROLES = (
	"Accounts Manager",
	"Accounts User",
	"Stock Manager",
	"Stock User",
	"Sales Manager",
	"Purchase Manager",
)
PLACES = 2
PROFIT = "'Profit for the year'"


def ensure_person() -> None:
	"""A desk user who may run the finance, stock and sales reports, with the euro company as default."""
	if not frappe.db.exists("User", PERSON):
		user = frappe.get_doc(
			{"doctype": "User", "email": PERSON, "first_name": "Books", "send_welcome_email": 0}
		)
		for role in ROLES:
			user.append("roles", {"role": role})
		user.insert(ignore_permissions=True)
	# The desk keeps the default company under "company" (the session defaults); "Company" is read as a permission.
	frappe.defaults.set_user_default("company", COMPANY, user=PERSON)


class BooksCase(SiteTestCase):
	"""Runs as the person; rolled back after each test."""

	def setUp(self):
		frappe.set_user("Administrator")
		self.assertTrue(frappe.db.exists("Company", COMPANY), "seed the site with benchmarks/bench_seed.py")
		self.assertGreater(len(frappe.get_all("Company")), 1, "the site must hold at least two companies")
		self.currency = frappe.db.get_value("Company", COMPANY, "default_currency")
		self.assertNotEqual(
			self.currency,
			frappe.db.get_value(
				"Company",
				frappe.db.get_single_value("Global Defaults", "default_company"),
				"default_currency",
			),
		)
		ensure_person()
		self.today = getdate(nowdate())
		frappe.set_user(PERSON)
		self.session = frappe_session.build_session(frappe_session.load_settings())
		self.assertEqual(self.session.person.company, COMPANY)

	def tearDown(self):
		frappe.set_user("Administrator")
		frappe.db.rollback()

	def report(self, name: str, filters: dict) -> list:
		"""ERPNext's report as the person: its rows as the desk receives them."""
		return run_report(name, filters=filters, user=PERSON, ignore_prepared_report=True)["result"]

	def build(self, key: str, params: dict | None = None) -> dict:
		answer = analytics.build_tool(self.session, key, params or {})
		self.assertEqual((answer["company"], answer["currency"]), (COMPANY, self.currency))
		return answer

	def table(self, answer: dict) -> list[list]:
		return self.session.results.get(answer["result_id"])["result"]["table"]["rows"]

	@staticmethod
	def kpi(answer: dict, label: str) -> float:
		return next(k["value"] for k in answer["kpis"] if k["label"] == label)

	def closed_year(self) -> frappe._dict:
		closing = frappe.get_all(
			"Period Closing Voucher",
			filters={"company": COMPANY, "docstatus": 1},
			fields=["fiscal_year", "period_start_date", "period_end_date"],
			order_by="period_end_date desc",
			limit=1,
		)
		self.assertTrue(closing, "the euro company needs a fiscal year closed with a Period Closing Voucher")
		return closing[0]

	# --- profit and loss -------------------------------------------------------------

	def test_profit_and_loss_over_a_closed_year_equals_erpnexts(self):
		closed = self.closed_year()
		start, end = closed.period_start_date, get_last_day(add_months(closed.period_end_date, 12))
		self.assertTrue(
			frappe.db.exists(
				"GL Entry",
				{"company": COMPANY, "voucher_type": "Period Closing Voucher", "is_cancelled": 0},
			)
		)
		years = [
			closed.fiscal_year,
			frappe.db.get_value("Fiscal Year", {"year_start_date": add_months(start, 12)}),
		]
		rows = self.report(
			"Profit and Loss Statement",
			{
				"company": COMPANY,
				"filter_based_on": "Date Range",
				"period_start_date": str(start),
				"period_end_date": str(end),
				"from_fiscal_year": years[0],
				"to_fiscal_year": years[1] or years[0],
				"periodicity": "Yearly",
				"accumulated_values": 0,
			},
		)
		theirs = {r["account"]: r.get("total") for r in rows if isinstance(r, dict) and r.get("account")}
		income, expense = theirs["'Total Income (Credit)'"], theirs["'Total Expense (Debit)'"]
		self.assertGreater(income, 0)
		ours = self.build("finance.profit_and_loss", {"start": str(start), "end": str(end), "freq": "year"})
		print(
			f"\nP&L {start}..{end}: income ours {self.kpi(ours, 'Income')} ERPNext {income}; expense ours "
			f"{self.kpi(ours, 'Expenses')} ERPNext {expense}; net profit ours {self.kpi(ours, 'Net profit')} "
			f"ERPNext {theirs[PROFIT]}"
		)
		self.assertAlmostEqual(self.kpi(ours, "Income"), income, PLACES)
		self.assertAlmostEqual(self.kpi(ours, "Expenses"), expense, PLACES)
		self.assertAlmostEqual(self.kpi(ours, "Net profit"), theirs[PROFIT], PLACES)

	# --- receivables and payables --------------------------------------------------------

	def _ageing_matches(self, report: str, key: str, party_type: str):
		rows = self.report(
			report,
			{
				"company": COMPANY,
				"report_date": str(self.today),
				"ageing_based_on": "Due Date",
				"range": "30, 60, 90, 120",
				"party_type": party_type,
			},
		)
		lines = [r for r in rows if isinstance(r, dict) and r.get("voucher_no")]
		self.assertTrue(lines, f"{report} of {COMPANY} has nothing outstanding")
		outstanding = sum(r["outstanding"] for r in lines)
		ranges = [sum(r.get(f"range{i}") or 0 for r in lines) for i in range(1, 6)]
		answer = self.build(key, {"as_of": str(self.today), "buckets": "30,60,90,120"})
		buckets = {r[0]: r[1] for r in self.table(answer)}
		print(f"\n{report}: outstanding ours {self.kpi(answer, 'Total outstanding')} ERPNext {outstanding}")
		print(f"  buckets ours {buckets} ERPNext ranges {ranges}")
		self.assertAlmostEqual(self.kpi(answer, "Total outstanding"), outstanding, PLACES)
		for name, theirs in zip(("0-30", "31-60", "61-90", "91-120", "120+"), ranges, strict=True):
			self.assertAlmostEqual(buckets.get(name, 0.0), theirs, PLACES, name)
		self.assertAlmostEqual(buckets.get("Not due", 0.0), outstanding - sum(ranges), PLACES)

	def test_receivables_ageing_equals_accounts_receivable(self):
		self._ageing_matches("Accounts Receivable", "receivables.ageing", "Customer")

	def test_payables_ageing_equals_accounts_payable(self):
		self._ageing_matches("Accounts Payable", "payables.ageing", "Supplier")

	# --- general ledger --------------------------------------------------------------------

	def test_an_accounts_closing_balance_equals_the_general_ledgers(self):
		account = frappe.db.get_value("Account", {"company": COMPANY, "account_type": "Cash", "is_group": 0})
		self.assertTrue(frappe.db.count("GL Entry", {"account": account, "is_cancelled": 0}))
		start = get_first_day(add_months(self.today, -6))
		rows = self.report(
			"General Ledger",
			{
				"company": COMPANY,
				"from_date": str(start),
				"to_date": str(self.today),
				"account": [account],
				"group_by": "Group by Voucher (Consolidated)",
			},
		)
		closing = next(
			r for r in rows if isinstance(r, dict) and r.get("account") == "'Closing (Opening + Total)'"
		)
		theirs = closing["debit"] - closing["credit"]
		answer = analytics.aggregate_tool(
			self.session,
			"gl_entry",
			[
				{"fn": "sum", "field": "debit", "as": "debit"},
				{"fn": "sum", "field": "credit", "as": "credit"},
			],
			filters=[["account", "=", account], ["date", "<=", str(self.today)], ["is_cancelled", "=", 0]],
		)
		ours = answer["rows"][0]["debit"] - answer["rows"][0]["credit"]
		print(f"\nGeneral Ledger {account} closing: ours {ours} ERPNext {theirs}")
		self.assertEqual(answer["company"], COMPANY)
		self.assertAlmostEqual(ours, theirs, PLACES)

	# --- stock -----------------------------------------------------------------------------

	def test_stock_value_per_warehouse_equals_stock_balance(self):
		rows = self.report(
			"Stock Balance",
			{"company": COMPANY, "from_date": str(add_months(self.today, -1)), "to_date": str(self.today)},
		)
		theirs: dict[str, float] = {}
		for r in rows:
			if isinstance(r, dict) and r.get("warehouse"):
				theirs[r["warehouse"]] = theirs.get(r["warehouse"], 0.0) + (r.get("bal_val") or 0.0)
		theirs = {w: v for w, v in theirs.items() if round(v, PLACES)}
		self.assertTrue(theirs, f"{COMPANY} holds no stock")
		answer = self.build("inventory.value_by_warehouse")
		ours = {r[0]: r[1] for r in self.table(answer)}
		print(f"\nStock Balance per warehouse: ours {ours} ERPNext {theirs}")
		self.assertEqual(set(ours), set(theirs))
		for warehouse, value in theirs.items():
			self.assertAlmostEqual(ours[warehouse], value, PLACES, warehouse)

	def test_margins_use_the_stock_ledgers_cost(self):
		start = str(get_first_day(add_months(self.today, -3)))
		answer = self.build("margins.gross_margin_trend", {"start": start})
		delivered = frappe.db.sql(
			"""select sum(-sle.stock_value_difference) from `tabStock Ledger Entry` sle
			join `tabSales Invoice` si on si.name = sle.voucher_no
			where si.company = %s and si.docstatus = 1 and sle.is_cancelled = 0 and si.posting_date >= %s""",
			(COMPANY, start),
		)[0][0]
		self.assertGreater(delivered or 0, 0)
		cost = self.kpi(answer, "Revenue") - self.kpi(answer, "Gross profit")
		print(f"\nCost of goods sold since {start}: ours {cost} stock ledger {delivered}")
		self.assertAlmostEqual(cost, float(delivered), PLACES)
		self.assertTrue(any("no stock ledger cost" in w for w in answer["warnings"]))  # the service lines

	# --- sales analytics -------------------------------------------------------------------

	def _months(self, count: int) -> list[dt.date]:
		first = get_first_day(self.today)
		return [getdate(add_months(first, -i)) for i in range(count)][::-1]

	def test_revenue_per_customer_and_item_group_per_month_equals_sales_analytics(self):
		months = self._months(6)
		filters = {
			"doc_type": "Sales Invoice",
			"value_quantity": "Value",
			"company": COMPANY,
			"from_date": str(months[0]),
			"to_date": str(get_last_day(months[-1])),
			"range": "Monthly",
		}
		compared = 0
		for tree, key in (("Customer", "customers.top"), ("Item Group", "sales.by_item_group")):
			rows = self.report("Sales Analytics", {**filters, "tree_type": tree})
			for month in months:
				column = frappe.scrub(f"{month:%b} {month.year}")
				theirs = {r["entity"]: r.get(column) or 0.0 for r in rows if isinstance(r, dict)}
				answer = self.build(key, {"start": str(month), "end": str(get_last_day(month)), "top_n": 100})
				ours = {r[0]: r[1] for r in self.table(answer) if isinstance(r[1], int | float)}
				if month == months[-2]:
					print(f"\nSales Analytics {tree} {column}: ours {ours} ERPNext {theirs}")
				for name, value in ours.items():
					self.assertAlmostEqual(value, theirs.get(name, 0.0), PLACES, f"{tree} {name} {month}")
					compared += 1
				leaves = {n: v for n, v in theirs.items() if v and (tree == "Customer" or n in ours)}
				self.assertAlmostEqual(sum(ours.values()), sum(leaves.values()), PLACES, f"{tree} {month}")
		print(f"\nSales Analytics: {compared} customer/item-group month figures equal")
		self.assertGreater(compared, 6)

	# --- budget ----------------------------------------------------------------------------

	def test_budget_and_actual_per_cost_center_equal_budget_variance(self):
		year = frappe.db.get_value(
			"Fiscal Year", {"year_start_date": ("<=", self.today), "year_end_date": (">=", self.today)}
		)
		self.assertTrue(
			frappe.get_list("Budget", filters={"company": COMPANY, "docstatus": 1}, limit_page_length=1),
			"precondition: a submitted budget of the euro company (benchmarks/bench_seed.py)",
		)
		rows = self.report(
			"Budget Variance Report",
			{
				"from_fiscal_year": year,
				"to_fiscal_year": year,
				"period": "Yearly",
				"company": COMPANY,
				"budget_against": "Cost Center",
			},
		)
		theirs = {
			# The report's account column: "Account" on ERPNext 15, "account" on 16.
			(r["budget_against"], r.get("account") or r.get("Account")): (
				r[frappe.scrub(f"Budget {year}")],
				r[frappe.scrub(f"Actual {year}")],
			)
			for r in rows
			if isinstance(r, dict) and r.get("budget_against")
		}
		self.assertTrue(theirs)
		answer = self.build("finance.expense_vs_budget", {"fiscal_year": year})
		ours = {(r[0], r[1]): (r[2], r[3]) for r in self.table(answer)}
		print(f"\nBudget Variance {year}: ours {ours} ERPNext {theirs}")
		self.assertEqual(set(ours), set(theirs))
		for line, (budget, actual) in theirs.items():
			self.assertAlmostEqual(ours[line][0], budget, PLACES, line)
			self.assertAlmostEqual(ours[line][1], actual, PLACES, line)

	# --- what the person sees ----------------------------------------------------------------

	def test_how_are_sales_going_names_the_company_and_counts_only_its_sales(self):
		result = call_tool(self.session, "analytics.build", {"key": "sales.monthly_trend", "params": {}})
		self.assertTrue(result.ok, result.error)
		answer = result.data
		start = self.session.results.get(answer["result_id"])["result"]["series"]["labels"][0]
		total = frappe.db.sql(
			"""select sum(base_net_total) from `tabSales Invoice`
			where company = %s and docstatus = 1 and posting_date >= %s""",
			(COMPANY, f"{start}-01"),
		)[0][0]
		print(f"\nHow are sales going ({answer['company']}, {answer['currency']}): {answer['kpis']}")
		print(f"  observations: {answer.get('observations')}")
		self.assertAlmostEqual(self.kpi(answer, "Total revenue"), float(total), PLACES)
		self.assertEqual(answer["company"], COMPANY)

	def test_another_company_is_read_when_named_and_two_currencies_are_never_added(self):
		# A company with sales that keeps its books in another currency than the one under test.
		sold = set(frappe.get_list("Sales Invoice", filters={"docstatus": 1}, pluck="company", distinct=True))
		others = [
			c
			for c in sorted(sold - {COMPANY})
			if frappe.db.get_value("Company", c, "default_currency") != self.currency
		]
		self.assertTrue(others, "precondition: sales in a company keeping its books in another currency")
		other = others[0]
		other_currency = frappe.db.get_value("Company", other, "default_currency")
		answer = analytics.build_tool(self.session, "sales.monthly_trend", {}, company=other)
		self.assertEqual((answer["company"], answer["currency"]), (other, other_currency))
		start = self.session.results.get(answer["result_id"])["result"]["series"]["labels"][0]
		total = frappe.db.sql(
			"""select sum(base_net_total) from `tabSales Invoice`
			where company = %s and docstatus = 1 and posting_date >= %s""",
			(other, f"{start}-01"),
		)[0][0]
		print(f"\nHow are sales going at {other} ({other_currency}): {answer['kpis'][:2]}")
		self.assertAlmostEqual(self.kpi(answer, "Total revenue"), float(total), PLACES)
		refused = call_tool(
			self.session,
			"analytics.build",
			{"key": "sales.monthly_trend", "params": {}, "combine": [COMPANY, other]},
		)
		print(f"Both together: {refused.status}: {refused.error}")
		self.assertEqual(refused.status, "error")
		self.assertIn("different currencies", refused.error)
