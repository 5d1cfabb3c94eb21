"""The analytics tools against the in-memory connector: fetched as the person, computed in code,
a bounded summary back, the full result kept server-side."""

from __future__ import annotations

import json

import pytest

from noviz_agent.connectors import dataset_reader as reader
from noviz_agent.engine.errors import NotFound, PermissionDenied, ToolError
from noviz_agent.engine.gateway import call_tool
from noviz_agent.engine.session import Limits, Person, Session
from noviz_agent.engine.tools import Registry
from noviz_agent.tools import analytics as tool_module
from tests.support.memory_connector import MemoryConnector


def invoice(name, date, customer, territory, lines, docstatus=1, due=None, outstanding=0.0):
	total = sum(line[1] for line in lines)
	return {
		"name": name,
		"date": date,
		"due_date": due or date,
		"customer": customer,
		"territory": territory,
		"docstatus": docstatus,
		"company": "C",
		"base_total": total,
		"outstanding": outstanding,
		"items": [
			{"line_id": f"{name}-{i}", "item": item, "item_group": "Goods", "net_amount": amount, "qty": qty}
			for i, (item, amount, qty) in enumerate(lines)
		],
	}


INVOICES = [
	invoice(
		"SI-1",
		"2025-01-05",
		"A",
		"North",
		[("X", 100.0, 1), ("Y", 50.0, 2)],
		due="2025-02-04",
		outstanding=150.0,
	),
	invoice("SI-2", "2025-01-20", "B", "South", [("X", 200.0, 2)]),
	invoice("SI-3", "2025-02-03", "A", "North", [("Y", 30.0, 1)], due="2025-03-05", outstanding=30.0),
	invoice("SI-4", "2025-02-10", "C", "South", [("X", 400.0, 4)]),
	invoice("SI-5", "2025-02-11", "C", "South", [("X", 999.0, 9)], docstatus=2),  # cancelled
	invoice("SI-6", "2025-03-02", "B", "South", [("Z", 80.0, 1), ("X", 20.0, 1)]),
]

GL = [
	{
		"name": "G1",
		"date": "2025-01-05",
		"account": "Sales - C",
		"debit": 0,
		"credit": 500,
		"is_cancelled": 0,
		"company": "C",
		"voucher_no": "V1",
		"cost_center": "Main",
	},
	{
		"name": "G2",
		"date": "2025-01-06",
		"account": "Rent - C",
		"debit": 200,
		"credit": 0,
		"is_cancelled": 0,
		"company": "C",
		"voucher_no": "V2",
		"cost_center": "Main",
	},
	{
		"name": "G3",
		"date": "2025-02-06",
		"account": "Rent - C",
		"debit": 300,
		"credit": 0,
		"is_cancelled": 1,
		"company": "C",
		"voucher_no": "V3",
		"cost_center": "Main",
	},
]
ACCOUNTS = [
	{"name": "Sales - C", "root_type": "Income"},
	{"name": "Rent - C", "root_type": "Expense"},
]

COMPANIES = [{"name": "C", "currency": "USD"}]
TODAY = 1743465600.0  # 2025-04-01 00:00 UTC


def session_for(connector, enqueue_analysis=None, events=None) -> Session:
	registry = Registry(tool_module.tools())
	return Session(
		person=Person(user=connector.user, company="C"),
		connector=connector,
		registry=registry,
		allowed=frozenset(registry.names()),
		limits=Limits(),
		clock=lambda: TODAY,
		enqueue_analysis=enqueue_analysis,
		progress=(events.append if events is not None else None),
	)


def connector(user="ana@example.com", **perms):
	permissions = {
		"sales_invoice": {"read"},
		"gl_entry": {"read"},
		"account": {"read"},
		"company": {"read"},
		**perms,
	}
	data = {"sales_invoice": INVOICES, "gl_entry": GL, "account": ACCOUNTS, "company": COMPANIES}
	return MemoryConnector(user, data=data, permissions=permissions)


def test_tools_register_with_their_names_and_schemas():
	registry = Registry(tool_module.tools())
	assert set(registry.names()) == {
		"analytics.catalog",
		"analytics.build",
		"analytics.compare_periods",
		"analytics.compare_segments",
		"analytics.aggregate",
		"chart.build",
		"analytics.dashboard",
	}
	assert "sales.monthly_trend" in registry["analytics.build"].parameters["properties"]["key"]["enum"]
	assert registry["analytics.catalog"].prompt_rules


def test_catalog_finds_analyses_by_words():
	session = session_for(connector())
	result = call_tool(session, "analytics.catalog", {"words": "customer ageing overdue"})
	assert result.ok
	assert result.data["analyses"][0]["key"] in ("receivables.ageing", "receivables.overdue_by_customer")
	categories = call_tool(session, "analytics.catalog", {})
	assert len(categories.data["categories"]) == 12


def test_build_fetches_as_the_person_and_returns_a_bounded_summary():
	conn = connector()
	session = session_for(conn)
	result = call_tool(
		session, "analytics.build", {"key": "sales.monthly_trend", "params": {"start": "2025-01-01"}}
	)
	assert result.ok, result.error
	data = result.data
	total = next(k for k in data["kpis"] if k["label"] == "Total revenue")
	assert total["value"] == 150 + 200 + 30 + 400 + 100  # the cancelled SI-5 is not fetched
	without_chart = {k: v for k, v in data.items() if k != "chart"}
	assert len(json.dumps(without_chart)) <= 2500
	assert data["chart"]["data"]
	assert ("list", "sales_invoice") in conn.calls
	stored = session.results.get(data["result_id"])
	assert stored["user"] == conn.user and stored["result"]["series"]["labels"] == [
		"2025-01",
		"2025-02",
		"2025-03",
	]


def test_build_passes_today_as_the_default_as_of():
	session = session_for(connector())
	result = call_tool(session, "analytics.build", {"key": "receivables.ageing"})
	assert result.ok, result.error
	buckets = {r[0]: r[1] for r in session.results.get(result.data["result_id"])["result"]["table"]["rows"]}
	# On 2025-04-01 SI-1 (due 4 Feb) is 56 days late and SI-3 (due 5 Mar) 27 days late.
	assert buckets["31-60"] == 150 and buckets["0-30"] == 30


def test_build_refuses_what_the_person_cannot_read():
	conn = MemoryConnector("sam@example.com", data={"sales_invoice": INVOICES}, permissions={})
	session = session_for(conn)
	with pytest.raises(PermissionDenied):
		tool_module.build_tool(session, "sales.monthly_trend")
	assert call_tool(session, "analytics.build", {"key": "sales.monthly_trend"}).status == "refused"


def test_unknown_analysis_is_a_tool_error_with_a_hint():
	with pytest.raises(ToolError, match="did you mean sales.monthly_trend"):
		tool_module.build_tool(session_for(connector()), "sales.monthly_trnd")


def test_bad_parameter_is_a_tool_error():
	with pytest.raises(ToolError, match="'horizon'"):
		tool_module.build_tool(session_for(connector()), "sales.monthly_trend", {"horizon": "soon"})


def test_gl_entries_get_their_root_type_from_the_account():
	session = session_for(connector())
	result = call_tool(
		session, "analytics.build", {"key": "finance.profit_and_loss", "params": {"start": "2025-01-01"}}
	)
	assert result.ok, result.error
	kpis = {k["label"]: k["value"] for k in result.data["kpis"]}
	assert kpis["Income"] == 500 and kpis["Expenses"] == 200  # G3 is cancelled


def test_compare_periods_names_the_drivers():
	session = session_for(connector())
	result = call_tool(
		session,
		"analytics.compare_periods",
		{
			"key": "sales.by_territory",
			"period_a": ["2025-01-01", "2025-01-31"],
			"period_b": ["2025-02-01", "2025-02-28"],
		},
	)
	assert result.ok, result.error
	# January 350, February 430: C +400 (new), B -200, A -120
	assert result.data["kpis"][0]["value"] == 80
	assert result.data["drivers"]["party"]["up"][0]["name"] == "C"
	assert len(json.dumps({k: v for k, v in result.data.items() if k != "chart"})) < 3000


def test_compare_segments():
	session = session_for(connector())
	result = call_tool(
		session,
		"analytics.compare_segments",
		{
			"key": "customers.top",
			"column": "territory",
			"segment_a": "North",
			"segment_b": "South",
			"params": {"start": "2025-01-01"},
		},
	)
	assert result.ok, result.error
	assert result.data["kpis"][0]["value"] == 700 - 180  # South 200+400+100 against North 150+30


def test_aggregate_uses_the_connector_and_bounds_rows():
	conn = connector()
	session = session_for(conn)
	result = call_tool(
		session,
		"analytics.aggregate",
		{
			"entity": "sales_invoice",
			"metrics": [{"fn": "sum", "field": "base_total", "as": "revenue"}],
			"group_by": ["customer"],
			"filters": [{"field": "docstatus", "op": "=", "value": 1}],
		},
	)
	assert result.ok, result.error
	assert {r["customer"]: r["revenue"] for r in result.data["rows"]} == {"A": 180, "B": 300, "C": 400}
	assert result.data["chart"]["data"]
	assert ("aggregate", "sales_invoice") in conn.calls


def test_aggregate_rejects_bad_metrics():
	with pytest.raises(ToolError, match="needs a field"):
		tool_module.aggregate_tool(session_for(connector()), "sales_invoice", [{"fn": "sum"}])


def test_chart_build_from_a_stored_result_and_only_for_its_owner():
	session = session_for(connector())
	built = call_tool(session, "analytics.build", {"key": "customers.top", "params": {"start": "2025-01-01"}})
	chart = call_tool(
		session,
		"chart.build",
		{"result_id": built.data["result_id"], "kind": "pie", "x": "customer", "y": ["revenue"]},
	)
	assert chart.ok, chart.error
	assert chart.data["chart"]["data"][0]["type"] == "pie"
	own = call_tool(session, "chart.build", {"result_id": built.data["result_id"]})
	assert own.data["chart"] == built.data["chart"]
	other = session_for(connector(user="eve@example.com"))
	other.results = session.results
	with pytest.raises(NotFound):
		tool_module.chart_tool(other, built.data["result_id"])


def test_dashboard_and_its_pdf():
	session = session_for(connector())
	ids = [
		call_tool(session, "analytics.build", {"key": key, "params": {"start": "2025-01-01"}}).data[
			"result_id"
		]
		for key in ("sales.monthly_trend", "customers.top")
	]
	board = call_tool(session, "analytics.dashboard", {"result_ids": ids, "title": "Q1"})
	assert board.ok, board.error
	assert len(board.data["panels"]) == 2
	assert tool_module.dashboard_pdf(session, board.data["result_id"]).startswith(b"%PDF")


def test_large_analyses_go_to_a_background_job(monkeypatch):
	jobs = []
	events = []

	def enqueue_analysis(key: str, params: dict, companies: list[str]) -> str:
		jobs.append((key, params, companies))
		return "job-1"

	monkeypatch.setattr(tool_module, "IN_TURN_ROWS", 2)
	session = session_for(connector(), enqueue_analysis=enqueue_analysis, events=events)
	answer = tool_module.build_tool(session, "sales.monthly_trend", {"start": "2025-01-01"})
	assert answer["status"] == "running" and answer["job"] == "job-1"
	assert answer["company"] == "C" and answer["currency"] == "USD"
	assert jobs == [("sales.monthly_trend", {"start": "2025-01-01"}, ["C"])]
	done = tool_module.background_build(session, *jobs[0])
	assert done["result_id"] and events[-1]["event"] == "analytics_ready"


def test_fetch_pages_through_every_row(monkeypatch):
	monkeypatch.setattr(reader, "PAGE_ROWS", 2)
	conn = connector()
	session = session_for(conn)
	rows, notes = reader.fetch(session, "sales", ["date", "amount", "document"], {"start": "2025-01-01"})
	assert len(rows) == 7 and not notes  # lines of the five submitted invoices
	assert sum(1 for call in conn.calls if call == ("list", "sales_invoice")) == 4  # 2, 2, 2, 1


def test_fetch_reads_every_row_when_the_connector_caps_its_pages():
	"""A connector serving fewer rows than asked (the frappe one stops at 500) must not cut the data."""
	conn = connector()
	real = conn.list

	def capped(entity, *, limit=20, **kwargs):
		return real(entity, limit=min(limit, 3), **kwargs)

	conn.list = capped
	session = session_for(conn)
	rows, _ = reader.fetch(session, "sales", ["date", "amount", "document"], {"start": "2025-01-01"})
	assert len(rows) == 7  # 3, 3, 1
	result = tool_module.build_tool(session, "sales.monthly_trend", {"start": "2025-01-01"})
	assert next(k for k in result["kpis"] if k["label"] == "Total revenue")["value"] == 880


def test_stock_takes_item_groups_from_the_item():
	conn = MemoryConnector(
		"ana@example.com",
		data={
			"stock_ledger_entry": [
				{
					"name": "S1",
					"item": "X",
					"warehouse": "W1",
					"qty_change": 5,
					"value_change": 50,
					"company": "C",
				},
				{
					"name": "S2",
					"item": "Y",
					"warehouse": "W1",
					"qty_change": 2,
					"value_change": 30,
					"company": "C",
				},
				{
					"name": "S3",
					"item": "X",
					"warehouse": "W2",
					"qty_change": 1,
					"value_change": 10,
					"company": "C",
				},
			],
			"item": [{"name": "X", "item_group": "Raw"}, {"name": "Y", "item_group": "Packing"}],
			"company": COMPANIES,
		},
		permissions={"stock_ledger_entry": {"read"}, "item": {"read"}, "company": {"read"}},
	)
	session = session_for(conn)
	result = call_tool(session, "analytics.build", {"key": "inventory.value_by_item_group"})
	assert result.ok, result.error
	table = session.results.get(result.data["result_id"])["result"]["table"]
	assert {r[0]: r[1] for r in table["rows"]} == {"Raw": 60, "Packing": 30}
