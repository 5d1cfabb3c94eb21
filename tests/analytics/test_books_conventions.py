"""ERPNext's books, exactly: one company at a time, one currency per figure, and ERPNext's conventions.

Each test is named after the wrong figure it prevents. The data is in memory; the same rules
are checked against ERPNext's own reports on a live site in noviz_agent/tests/test_site_books.py.
"""

from __future__ import annotations

import random

import pytest

from analytics import catalog as analytics_catalog
from analytics.contract import DATASETS
from noviz_agent.connectors import dataset_reader as reader
from noviz_agent.connectors.dataset_map import load_sources
from noviz_agent.connectors.translate import aggregate_query, report_to_canonical
from noviz_agent.engine.errors import ToolError
from noviz_agent.engine.session import Limits, Person, Session
from noviz_agent.engine.tools import Registry
from noviz_agent.tools import analytics as tool_module
from noviz_agent.tools.reports import summarise
from tests.support.memory_connector import MemoryConnector

TODAY = 1743465600.0  # 2025-04-01 00:00 UTC
COMPANIES = [
	{"name": "Acme US", "currency": "USD"},
	{"name": "Acme EU", "currency": "EUR"},
	{"name": "Acme CA", "currency": "USD"},
]
EVERYTHING = {
	"sales_invoice",
	"gl_entry",
	"account",
	"company",
	"stock_ledger_entry",
	"item",
	"budget",
	"fiscal_year",
	"purchase_order",
	"purchase_receipt",
	"stock_balance",
	"warehouse",
}


def invoice(name, company, date, customer, lines, **extra):
	return {
		"name": name,
		"company": company,
		"date": date,
		"due_date": extra.pop("due", date),
		"customer": customer,
		"territory": "T",
		"docstatus": 1,
		"base_total": sum(amount for _item, amount, _qty in lines),
		"outstanding": extra.pop("outstanding", 0.0),
		"items": [
			{"line_id": f"{name}-{i}", "item": item, "item_group": "G", "net_amount": amount, "qty": qty}
			for i, (item, amount, qty) in enumerate(lines)
		],
		**extra,
	}


INVOICES = [
	invoice("US-1", "Acme US", "2025-01-10", "A", [("X", 100.0, 1)]),
	invoice("US-2", "Acme US", "2025-02-10", "B", [("X", 200.0, 2)]),
	invoice("EU-1", "Acme EU", "2025-01-12", "A", [("X", 900.0, 9)]),
	invoice("EU-2", "Acme EU", "2025-02-12", "C", [("Y", 4000.0, 4)]),
	invoice("CA-1", "Acme CA", "2025-02-15", "D", [("X", 50.0, 1)]),
]


def session_for(connector, company="Acme US") -> Session:
	registry = Registry(tool_module.tools())
	return Session(
		person=Person(user=connector.user, company=company),
		connector=connector,
		registry=registry,
		allowed=frozenset(registry.names()),
		limits=Limits(),
		clock=lambda: TODAY,
	)


def books(**data) -> MemoryConnector:
	return MemoryConnector(
		"ana@example.com",
		data={"company": COMPANIES, "sales_invoice": INVOICES, **data},
		permissions={e: {"read"} for e in EVERYTHING},
	)


def kpi(answer: dict, label: str):
	return next(k["value"] for k in answer["kpis"] if k["label"] == label)


def table(session, answer: dict) -> list[list]:
	return session.results.get(answer["result_id"])["result"]["table"]["rows"]


# --- one company at a time ------------------------------------------------------------


def test_sales_of_another_company_are_not_added_to_the_default_companys():
	answer = tool_module.build_tool(session_for(books()), "sales.monthly_trend", {"start": "2025-01-01"})
	assert kpi(answer, "Total revenue") == 300.0
	assert answer["company"] == "Acme US" and answer["currency"] == "USD"


def test_a_named_company_is_read_in_its_own_currency():
	answer = tool_module.build_tool(
		session_for(books()), "sales.monthly_trend", {"start": "2025-01-01"}, company="Acme EU"
	)
	assert kpi(answer, "Total revenue") == 4900.0
	assert (answer["company"], answer["currency"]) == ("Acme EU", "EUR")


def test_companies_in_two_currencies_are_never_added_together():
	with pytest.raises(ToolError, match="Acme EU keeps its books in EUR"):
		tool_module.build_tool(session_for(books()), "sales.monthly_trend", combine=["Acme US", "Acme EU"])


def test_a_connector_that_keeps_its_companies_is_not_asked_to_list_them_again():
	class Keeping(MemoryConnector):
		def readable_companies(self, limit):
			self.calls.append(("readable_companies", limit))
			return self.list("company", fields=["name", "currency"], order_by="name asc", limit=limit)

	conn = Keeping(
		"ana@example.com",
		data={"company": COMPANIES, "sales_invoice": INVOICES},
		permissions={e: {"read"} for e in EVERYTHING},
	)
	scope = reader.resolve_scope(session_for(conn), "Acme EU")
	assert (scope.companies, scope.currency) == (("Acme EU",), "EUR")
	assert conn.calls[0] == ("readable_companies", reader.MAX_COMPANIES_LISTED)


def test_companies_in_one_currency_are_added_only_when_asked():
	answer = tool_module.build_tool(
		session_for(books()), "sales.monthly_trend", {"start": "2025-01-01"}, combine=["Acme US", "Acme CA"]
	)
	assert kpi(answer, "Total revenue") == 350.0
	assert answer["company"] == "Acme US + Acme CA" and answer["currency"] == "USD"


def test_an_unknown_company_is_refused_with_the_companies_to_choose_from():
	with pytest.raises(ToolError, match=r"No company Acme UK.*Acme EU \(EUR\)"):
		tool_module.build_tool(session_for(books()), "sales.monthly_trend", company="Acme UK")


def test_without_a_default_company_the_person_is_asked_which():
	with pytest.raises(ToolError, match="Which company"):
		tool_module.build_tool(session_for(books(), company=None), "sales.monthly_trend")


def test_aggregate_totals_one_company_and_names_it():
	answer = tool_module.aggregate_tool(
		session_for(books()), "sales_invoice", [{"fn": "sum", "field": "base_total", "as": "revenue"}]
	)
	assert answer["rows"] == [{"revenue": 300.0}]
	assert answer["company"] == "Acme US" and answer["currency"] == "USD"


# --- no document total counted once per line -----------------------------------------


def test_a_document_total_grouped_by_a_line_field_is_refused():
	with pytest.raises(ToolError, match="once per line"):
		tool_module.aggregate_tool(
			session_for(books()),
			"sales_invoice",
			[{"fn": "sum", "field": "base_total"}],
			group_by=["items.item"],
		)


def test_a_document_total_filtered_by_its_lines_counts_each_document_once():
	two_lines = invoice("US-3", "Acme US", "2025-03-01", "A", [("X", 10.0, 1), ("X", 20.0, 1)])
	conn = books(sales_invoice=[*INVOICES, two_lines])
	answer = tool_module.aggregate_tool(
		session_for(conn),
		"sales_invoice",
		[{"fn": "sum", "field": "base_total", "as": "revenue"}],
		filters=[["items.item", "=", "X"]],
	)
	assert answer["rows"] == [{"revenue": 330.0}]  # US-1, US-2 and US-3 once each


def test_the_query_that_would_add_a_document_once_per_line_is_never_built():
	from noviz_agent.connectors.model import load_model

	invoice_entity = load_model().entity("sales_invoice")
	with pytest.raises(ToolError, match="once per line"):
		aggregate_query(
			invoice_entity,
			metrics=[{"fn": "sum", "field": "base_total", "as": "t"}],
			filters=[["items.item", "=", "X"]],
		)
	# Line amounts over the same join are what the join is for.
	kwargs = aggregate_query(
		invoice_entity,
		metrics=[{"fn": "sum", "field": "items.net_amount", "as": "t"}],
		group_by=["items.item"],
	).kwargs
	assert kwargs["group_by"] == "`tabSales Invoice Item`.`item_code`"


# --- ERPNext's conventions --------------------------------------------------------------


def gl(name, date, account, debit, credit, voucher_type="Journal Entry", company="Acme US"):
	return {
		"name": name,
		"date": date,
		"account": account,
		"debit": debit,
		"credit": credit,
		"is_cancelled": 0,
		"company": company,
		"voucher_type": voucher_type,
		"voucher_no": name,
		"cost_center": "Main",
		"fiscal_year": date[:4],
	}


ACCOUNTS = [{"name": "Sales", "root_type": "Income"}, {"name": "Rent", "root_type": "Expense"}]


def test_period_closing_vouchers_do_not_cancel_the_years_profit():
	entries = [
		gl("G1", "2024-06-01", "Sales", 0, 1000),
		gl("G2", "2024-06-02", "Rent", 400, 0),
		# The year-end close moves the profit to equity by reversing income and expense.
		gl("G3", "2024-12-31", "Sales", 1000, 0, "Period Closing Voucher"),
		gl("G4", "2024-12-31", "Rent", 0, 400, "Period Closing Voucher"),
		gl("G5", "2025-01-15", "Sales", 0, 300),
	]
	conn = books(gl_entry=entries, account=ACCOUNTS)
	answer = tool_module.build_tool(
		session_for(conn), "finance.profit_and_loss", {"start": "2024-01-01", "end": "2025-03-31"}
	)
	assert kpi(answer, "Net profit") == 900.0


def test_report_totals_never_count_group_opening_or_closing_rows():
	profit_and_loss = {
		"columns": [
			{"fieldname": "account", "label": "Account", "fieldtype": "Link"},
			{"fieldname": "total", "label": "Total", "fieldtype": "Currency"},
		],
		"result": [
			{"account": "Income", "total": 1000.0, "indent": 0, "is_group": 1},
			{"account": "Sales", "total": 700.0, "indent": 1, "is_group": 0},
			{"account": "Service", "total": 300.0, "indent": 1, "is_group": 0},
			{"account": "'Total Income (Credit)'", "total": 1000.0, "indent": 0},
			{},
			{"account": "'Profit for the year'", "total": 600.0},
		],
	}
	out = report_to_canonical(profit_and_loss)
	summary = summarise(out["columns"], out["rows"], out["kinds"], out.get("total_row"))
	assert summary["totals"] == {"total": 1000.0}
	assert "leaf rows" in summary["totals_from"]
	ledger = {
		"columns": ["Account:Link/Account:180", "Debit:Currency:100", "Credit:Currency:100"],
		"result": [
			{"account": "'Opening'", "debit": 50.0, "credit": 0.0},
			{"account": "Cash", "debit": 20.0, "credit": 5.0},
			{"account": "Cash", "debit": 30.0, "credit": 0.0},
			{"account": "'Total'", "debit": 50.0, "credit": 5.0},
			{"account": "'Closing (Opening + Total)'", "debit": 100.0, "credit": 5.0},
		],
	}
	out = report_to_canonical(ledger)
	assert summarise(out["columns"], out["rows"], out["kinds"])["totals"] == {"debit": 50.0, "credit": 5.0}


def test_a_reports_own_total_row_is_its_total():
	result = {
		"columns": [{"fieldname": "outstanding", "label": "Outstanding", "fieldtype": "Currency"}],
		"result": [[10.0], [15.0], [25.0]],
		"add_total_row": 1,
	}
	out = report_to_canonical(result)
	assert out["rows"] == [{"outstanding": 10.0}, {"outstanding": 15.0}]
	summary = summarise(out["columns"], out["rows"], out["kinds"], out.get("total_row"))
	assert summary["totals"] == {"outstanding": 25.0}
	assert summary["totals_from"] == "the report's own total row"


def test_every_catalogue_analysis_is_served_by_its_datasets_source():
	sources = load_sources()
	assert set(sources) == set(DATASETS)
	for analysis in analytics_catalog.all_analyses():
		for dataset, columns in analysis.needs.items():
			missing = set(columns) - sources[dataset].served()
			assert not missing, f"{analysis.key} needs {sorted(missing)} from {dataset}"
	for name, source in sources.items():
		for column in [*source.lookups, *source.derived, *source.converted]:
			assert DATASETS[name].column(column) or any(
				column in parts for parts in [*source.derived.values()]
			), f"{name}.{column}"


def test_new_customers_are_judged_against_their_whole_history():
	earlier = invoice("US-0", "Acme US", "2024-03-01", "A", [("X", 10.0, 1)])
	answer = tool_module.build_tool(
		session_for(books(sales_invoice=[earlier, *INVOICES])),
		"customers.new_vs_returning",
		{"start": "2025-01-01"},
	)
	assert kpi(answer, "New customers in range") == 1  # B; A bought in 2024 and is returning


def test_budget_compares_one_fiscal_year_per_cost_center_like_budget_variance():
	years = [
		{"name": "2024", "year": "2024", "start_date": "2024-01-01", "end_date": "2024-12-31"},
		{"name": "2025", "year": "2025", "start_date": "2025-01-01", "end_date": "2025-12-31"},
	]
	budgets = [
		{
			"name": f"B-{year}-{center}",
			"company": "Acme US",
			"fiscal_year": year,
			"budget_against": "Cost Center",
			"cost_center": center,
			"docstatus": 1,
			"accounts": [{"line_id": f"L-{year}-{center}", "account": "Rent", "budget_amount": amount}],
		}
		for year, center, amount in (("2024", "Main", 5000), ("2025", "Main", 1200), ("2025", "Shop", 300))
	]
	entries = [
		gl("G1", "2024-05-01", "Rent", 4000, 0),
		gl("G2", "2025-02-01", "Rent", 500, 0),
		{**gl("G3", "2025-02-02", "Rent", 350, 0), "cost_center": "Shop"},
		gl("G4", "2025-02-03", "Rent", 0, 100),
	]
	session = session_for(books(budget=budgets, gl_entry=entries, account=ACCOUNTS, fiscal_year=years))
	answer = tool_module.build_tool(session, "finance.expense_vs_budget")
	lines = {(r[0], r[1]): r[2:5] for r in table(session, answer)}
	assert lines == {("Main", "Rent"): [1200, 400, 800], ("Shop", "Rent"): [300, 350, -50]}
	assert answer["company"] == "Acme US"


def test_cost_of_goods_sold_comes_from_the_stock_ledger_not_the_item_master():
	sold = [
		invoice("EU-1", "Acme EU", "2025-01-12", "A", [("X", 900.0, 9), ("SVC", 100.0, 1)]),
		invoice("EU-2", "Acme EU", "2025-02-12", "C", [("X", 400.0, 4)]),
	]
	ledger = [  # the goods left stock at 60 and then 70 a unit
		{"name": "S1", "voucher_line": "EU-1-0", "value_change": -540.0, "qty_change": -9, "is_cancelled": 0},
		{"name": "S2", "voucher_line": "EU-2-0", "value_change": -280.0, "qty_change": -4, "is_cancelled": 0},
	]
	items = [{"name": "X", "valuation_rate": 999.0}]
	conn = books(sales_invoice=sold, stock_ledger_entry=ledger, item=items)
	answer = tool_module.build_tool(
		session_for(conn), "margins.gross_margin_trend", {"start": "2025-01-01"}, company="Acme EU"
	)
	assert kpi(answer, "Revenue") == 1300.0 and kpi(answer, "Gross profit") == 480.0
	assert any("no stock ledger cost" in w for w in answer["warnings"])
	with pytest.raises(ToolError, match="not estimated from item master"):
		tool_module.build_tool(
			session_for(books(item=items)), "margins.gross_margin_trend", {"start": "2025-01-01"}
		)


def test_amounts_owed_in_a_party_currency_are_brought_to_the_companys():
	owed = [
		invoice(
			"EU-9",
			"Acme EU",
			"2025-03-01",
			"A",
			[("X", 90.0, 1)],
			due="2025-03-20",
			outstanding=100.0,
			party_account_currency="USD",
			conversion_rate=0.9,
		),
		invoice(
			"EU-8",
			"Acme EU",
			"2025-03-01",
			"C",
			[("X", 50.0, 1)],
			due="2025-03-20",
			outstanding=50.0,
			party_account_currency="EUR",
			conversion_rate=1.0,
		),
	]
	session = session_for(books(sales_invoice=owed), company="Acme EU")
	rows, notes = reader.fetch(
		session,
		"receivables",
		["document", "outstanding"],
		{},
		scope=reader.resolve_scope(session, "Acme EU"),
	)
	assert {r["document"]: r["outstanding"] for r in rows} == {"EU-9": 90.0, "EU-8": 50.0}
	assert any("converted to EUR" in n for n in notes)


class TieShuffling(MemoryConnector):
	"""Returns rows in a different order on every call wherever the requested order leaves ties, as SQL may."""

	def list(self, entity, *, limit=20, offset=0, order_by=None, **kwargs):
		if entity != "sales_invoice":
			return super().list(entity, limit=limit, offset=offset, order_by=order_by, **kwargs)
		rows = super().list(entity, limit=10_000, offset=0, order_by=order_by, **kwargs)
		keys = [c.split()[0] for c in (order_by or "").split(",") if c.strip()]
		groups: dict = {}
		for row in rows:
			groups.setdefault(tuple(str(row.get(k)) for k in keys), []).append(row)
		shuffled = []
		for group in groups.values():
			random.shuffle(group)
			shuffled.extend(group)
		return shuffled[offset : offset + min(limit, 2)]


def test_paging_reads_every_line_once_whatever_order_ties_come_in():
	many = [
		invoice(f"US-{n}", "Acme US", "2025-01-10", "A", [("X", 1.0, 1)] * 3)  # identical lines
		for n in range(4)
	]
	conn = TieShuffling("ana@example.com", data={"company": COMPANIES, "sales_invoice": many})
	conn.perms = {e: {"read"} for e in EVERYTHING}
	session = session_for(conn)
	rows, _ = reader.fetch(
		session, "sales", ["id", "amount"], {}, scope=reader.resolve_scope(session), today=None
	)
	assert sorted(r["id"] for r in rows) == sorted(f"US-{n}-{i}" for n in range(4) for i in range(3))
	assert reader.estimate_rows(session, "sales", {}, reader.resolve_scope(session), _day()) == 12


def _day():
	import datetime as dt

	return dt.date(2025, 4, 1)


def test_stock_balances_are_the_stock_ledgers_sums_for_one_company():
	"""Stock Balance sums the stock ledger; a cached balance (Bin) can drift from it, so it is not read."""
	ledger = [
		{
			"name": "S1",
			"item": "X",
			"warehouse": "W1",
			"qty_change": 4,
			"value_change": 40.0,
			"company": "Acme US",
		},
		{
			"name": "S2",
			"item": "X",
			"warehouse": "W1",
			"qty_change": -1,
			"value_change": -10.0,
			"company": "Acme US",
		},
		{
			"name": "S3",
			"item": "Y",
			"warehouse": "W2",
			"qty_change": 2,
			"value_change": 8.0,
			"company": "Acme US",
		},
		{
			"name": "S4",
			"item": "Y",
			"warehouse": "W2",
			"qty_change": -2,
			"value_change": -8.0,
			"company": "Acme US",
		},
		{
			"name": "S5",
			"item": "X",
			"warehouse": "EU",
			"qty_change": 9,
			"value_change": 900.0,
			"company": "Acme EU",
		},
		{
			"name": "S6",
			"item": "X",
			"warehouse": "W1",
			"qty_change": 9,
			"value_change": 90.0,
			"company": "Acme US",
			"is_cancelled": 1,
		},
	]
	session = session_for(books(stock_ledger_entry=ledger))
	rows, _ = reader.fetch(
		session, "stock", ["item", "warehouse", "quantity", "value"], {}, scope=reader.resolve_scope(session)
	)
	assert rows == [{"item": "X", "warehouse": "W1", "quantity": 3.0, "value": 30.0}]


def test_reorder_levels_and_receipt_dates_come_from_their_own_records():
	ledger = [
		{
			"name": f"S{i}",
			"item": "X",
			"warehouse": "W1",
			"qty_change": q,
			"value_change": 10.0 * q,
			"company": "Acme US",
		}
		for i, q in enumerate((4, -2))
	]
	items = [{"name": "X", "reorder_levels": [{"line_id": "R1", "warehouse": "W1", "level": 5, "qty": 10}]}]
	session = session_for(books(stock_ledger_entry=ledger, item=items))
	answer = tool_module.build_tool(session, "inventory.below_reorder")
	assert kpi(answer, "Item-warehouses below re-order level") == 1
	orders = [
		{
			"name": "PO-1",
			"company": "Acme US",
			"date": "2025-01-02",
			"supplier": "S",
			"docstatus": 1,
			"items": [
				{"line_id": "POL-1", "item": "X", "qty": 5, "required_by": "2025-01-10", "received_qty": 5}
			],
		}
	]
	receipts = [
		{
			"name": "PR-1",
			"date": "2025-01-09",
			"docstatus": 1,
			"items": [{"line_id": "PRL-1", "purchase_order_line": "POL-1"}],
		}
	]
	session = session_for(books(purchase_order=orders, purchase_receipt=receipts))
	rows, notes = reader.fetch(
		session,
		"purchase_orders",
		["id", "received_date"],
		{},
		scope=reader.resolve_scope(session),
		today=_day(),
	)
	assert rows == [{"id": "POL-1", "received_date": "2025-01-09"}] and not notes


def test_record_lists_and_counts_cover_every_company_like_the_desk_unless_one_is_named():
	"""A count silently limited to the default company gave 5 where the person's list showed 597."""
	from noviz_agent.connectors.model import load_model
	from noviz_agent.engine.gateway import call_tool
	from noviz_agent.tools.entities import entity_tools

	conn = books()
	session = session_for(conn)
	session.registry = Registry(entity_tools(load_model().entity("sales_invoice")))
	session.allowed = frozenset(session.registry.names())
	listed = call_tool(session, "sales_invoice.list", {"fields": ["customer"]})
	assert listed.ok, listed.error
	assert sorted(r["name"] for r in listed.data["rows"]) == ["CA-1", "EU-1", "EU-2", "US-1", "US-2"]
	assert listed.data["company"] is None and listed.data["companies"] == ["Acme CA", "Acme EU", "Acme US"]
	assert "every company" in listed.data["scope_note"]
	everything = call_tool(session, "sales_invoice.count", {})
	assert everything.data["count"] == 5 and everything.data["companies"] == ["Acme CA", "Acme EU", "Acme US"]
	counted = call_tool(
		session, "sales_invoice.count", {"filters": [{"field": "company", "op": "=", "value": "Acme EU"}]}
	)
	assert counted.data["count"] == 2 and counted.data["company"] == "Acme EU"
	assert counted.data["other_companies"] == ["Acme CA", "Acme US"]
	assert "Only Acme EU" in counted.data["scope_note"]


def test_money_stays_one_company_and_names_the_companies_left_out():
	answer = tool_module.aggregate_tool(
		session_for(books()), "sales_invoice", [{"fn": "sum", "field": "base_total", "as": "revenue"}]
	)
	assert answer["rows"] == [{"revenue": 300.0}] and answer["company"] == "Acme US"
	assert answer["other_companies"] == ["Acme CA", "Acme EU"]
	counted = tool_module.aggregate_tool(
		session_for(books()), "sales_invoice", [{"fn": "count", "as": "invoices"}], group_by=["customer"]
	)
	assert sum(r["invoices"] for r in counted["rows"]) == 5


def test_an_amount_due_today_is_aged_in_the_first_bucket_as_erpnext_does():
	from analytics.runner import run

	owed = [
		{
			"document": "D1",
			"party": "A",
			"posting_date": "2025-03-01",
			"due_date": "2025-04-01",
			"outstanding": 10.0,
		},
		{
			"document": "D2",
			"party": "A",
			"posting_date": "2025-03-01",
			"due_date": "2025-04-02",
			"outstanding": 5.0,
		},
	]
	result = run("receivables.ageing", {"receivables": owed}, {"as_of": "2025-04-01"})
	buckets = {r[0]: r[1] for r in result["table"]["rows"]}
	assert buckets["0-30"] == 10.0 and buckets["Not due"] == 5.0
	assert next(k["value"] for k in result["kpis"] if k["label"] == "Overdue") == 0.0


def test_a_report_that_takes_a_company_runs_for_the_persons_default():
	from noviz_agent.tools.reports import _run

	seen = []

	def rows(filters):
		seen.append(filters)
		return [{"outstanding": 5.0}]

	conn = MemoryConnector(
		"ana@example.com",
		reports={
			"Accounts Receivable": {
				"filters": [{"fieldname": "company"}, {"fieldname": "report_date"}],
				"columns": [{"key": "outstanding", "label": "Outstanding", "type": "Currency"}],
				"rows": rows,
			}
		},
	)
	session = session_for(conn)
	answer = _run(session, "Accounts Receivable", {"report_date": "2025-04-01"})
	assert seen[-1] == {"report_date": "2025-04-01", "company": "Acme US"}
	assert answer["filters"]["company"] == "Acme US"
	_run(session, "Accounts Receivable", {"company": "Acme EU"})
	assert seen[-1]["company"] == "Acme EU"  # a company the person names is kept
