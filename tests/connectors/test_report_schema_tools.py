"""report.find, report.run and schema.describe through the gateway with the in-memory connector."""

from __future__ import annotations

import pytest

from noviz_agent.engine.gateway import call_tool
from noviz_agent.engine.tools import Registry
from noviz_agent.tools import entities, reports, schema
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

AR_ROWS = [
	{"party": f"Customer {i}", "outstanding": float(i), "age": i % 90, "pct": 50.0} for i in range(1, 46)
]
REPORTS = {
	"Accounts Receivable": {
		"module": "Accounts",
		"ref_doctype": "Sales Invoice",
		"roles": ["Accounts User"],
		"filters": [
			{"fieldname": "company", "label": "Company", "fieldtype": "Link", "reqd": 1},
			{
				"fieldname": "report_date",
				"label": "Posting Date",
				"fieldtype": "Date",
				"default": "2024-06-30",
			},
		],
		"columns": [
			{"key": "party", "label": "Party", "type": "Link"},
			{"key": "outstanding", "label": "Outstanding", "type": "Currency"},
			{"key": "age", "label": "Age (Days)", "type": "Int"},
			{"key": "pct", "label": "Share", "type": "Percent"},
		],
		"rows": AR_ROWS,
	},
	"Stock Balance": {
		"module": "Stock",
		"ref_doctype": "Stock Ledger Entry",
		"roles": ["Stock User"],
		"rows": [],
	},
	"Sales Analytics": {
		"module": "Selling",
		"ref_doctype": "Sales Order",
		"roles": ["Sales User"],
		"rows": [],
	},
}


@pytest.fixture(scope="module")
def registry():
	return Registry(entities.tools() + reports.tools() + schema.tools())


def _session(registry, roles=("Accounts User", "Sales User"), **limits):
	conn = MemoryConnector(
		"ann@example.com",
		{},
		{"sales_invoice": {"read"}, "sales_order": {"read", "create"}},
		reports=REPORTS,
		roles=set(roles),
	)
	return make_session(conn, registry=registry, **limits)


def test_find_ranks_by_words_and_lists_only_permitted_reports(registry):
	data = call_tool(_session(registry), "report.find", {"words": "receivable ageing"}).data
	assert data["reports"][0]["name"] == "Accounts Receivable"
	assert data["reports"][0]["filters"][0] == {
		"fieldname": "company",
		"label": "Company",
		"fieldtype": "Link",
		"reqd": 1,
	}
	assert data["available"] == 2
	assert "Stock Balance" not in [r["name"] for r in data["reports"]]


def test_run_keeps_rows_server_side_and_returns_a_page_with_totals(registry):
	session = _session(registry, page_size=20)
	result = call_tool(
		session, "report.run", {"report": "Accounts Receivable", "filters": {"company": "Acme"}}
	)
	assert result.ok, result.error
	data = result.data
	assert len(data["rows"]) == 20 and data["total"] == 45
	assert data["summary"] == {
		"row_count": 45,
		"totals": {"outstanding": float(sum(range(1, 46))), "age": float(sum(i % 90 for i in range(1, 46)))},
		"totals_from": "its leaf rows",
	}
	assert data["filters"] == {"report_date": "2024-06-30", "company": "Acme"}
	page3 = call_tool(session, "report.run", {"result_id": data["result_id"], "page": 3}).data
	assert [r["party"] for r in page3["rows"]] == [f"Customer {i}" for i in range(41, 46)]
	assert session.connector.calls.count(("run_report", "Accounts Receivable")) == 1


def test_run_refused_without_the_role_and_errors_on_bad_filters(registry):
	session = _session(registry, roles=("Sales User",))
	refused = call_tool(session, "report.run", {"report": "Accounts Receivable", "filters": {"company": "A"}})
	assert refused.status == "refused"
	session = _session(registry)
	bad = call_tool(
		session, "report.run", {"report": "Accounts Receivable", "filters": {"company": "A", "x": 1}}
	)
	assert bad.status == "error" and "its filters are" in bad.error


def test_result_ids_are_bound_to_the_person(registry):
	session = _session(registry)
	rid = call_tool(
		session, "report.run", {"report": "Accounts Receivable", "filters": {"company": "A"}}
	).data["result_id"]
	other = _session(registry)
	other.results = session.results
	other.person = type(session.person)(user="eve@example.com")
	assert call_tool(other, "report.run", {"result_id": rid}).status == "error"


def test_schema_describe_gives_types_links_and_choices(registry):
	data = call_tool(_session(registry), "schema.describe", {"entity": "sales_invoice"}).data
	fields = {f["key"]: f for f in data["fields"]}
	assert fields["customer"]["link"] == "Customer"
	assert "Overdue" in fields["status"]["options"]
	assert fields["total"]["type"] == "Currency"
	assert "item" in {f["key"] for f in data["children"]["items"]["fields"]}
	assert data["actions"] == ["sales_invoice.list", "sales_invoice.get", "sales_invoice.count"]


def test_schema_describe_refuses_an_unreadable_entity_and_unknown_keys(registry):
	session = _session(registry)
	assert call_tool(session, "schema.describe", {"entity": "gl_entry"}).status == "refused"
	assert call_tool(session, "schema.describe", {"entity": "spaceship"}).status == "error"
