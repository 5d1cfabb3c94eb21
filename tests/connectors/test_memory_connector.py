"""The in-memory connector keeps the contract: permissions, filters, paging, aggregates, writes, reports."""

from __future__ import annotations

import pytest

from noviz_agent.connectors.base import Connector
from noviz_agent.engine.errors import NotFound, PermissionDenied, ToolError, ValidationFailed
from tests.support.memory_connector import MemoryConnector

INVOICES = [
	{
		"name": "SINV-1",
		"customer": "Acme",
		"date": "2024-01-10",
		"status": "Paid",
		"total": 100.0,
		"outstanding": 0,
		"items": [{"item": "Bolt", "qty": 10, "amount": 60.0}, {"item": "Nut", "qty": 5, "amount": 40.0}],
	},
	{
		"name": "SINV-2",
		"customer": "Acme",
		"date": "2024-02-10",
		"status": "Unpaid",
		"total": 250.0,
		"outstanding": 250.0,
		"items": [{"item": "Bolt", "qty": 25, "amount": 250.0}],
	},
	{
		"name": "SINV-3",
		"customer": "Globex",
		"date": "2024-03-01",
		"status": "Overdue",
		"total": 75.5,
		"outstanding": 75.5,
		"items": [{"item": "Nut", "qty": 7, "amount": 75.5}],
	},
	{
		"name": "SINV-4",
		"customer": None,
		"date": "2024-03-05",
		"status": "Draft",
		"total": 10.0,
		"outstanding": 10.0,
		"items": [],
	},
]


@pytest.fixture
def conn():
	return MemoryConnector(
		"ann@example.com",
		{"sales_invoice": INVOICES, "customer": [{"name": "Acme", "customer_name": "Acme Ltd"}]},
		{"sales_invoice": {"read", "create", "write", "submit", "cancel"}, "customer": {"read"}},
		reports={
			"Accounts Receivable": {
				"roles": ["Accounts User"],
				"rows": [{"party": "Acme", "outstanding": 250.0}],
			},
			"Sales Analytics": {
				"roles": ["Sales User"],
				"filters": [{"fieldname": "company", "reqd": 1}],
				"rows": lambda f: [{"company": f["company"], "total": 1.0}],
			},
		},
		roles={"Sales User"},
	)


def test_implements_the_protocol(conn):
	assert isinstance(conn, Connector)


def test_list_filters_sorts_and_pages(conn):
	rows = conn.list(
		"sales_invoice", fields=["customer", "total"], filters=[["total", ">", 50]], order_by="total desc"
	)
	assert [r["name"] for r in rows] == ["SINV-2", "SINV-1", "SINV-3"]
	assert conn.list("sales_invoice", order_by="date", limit=2, offset=1)[0]["name"] == "SINV-2"


def test_not_equal_includes_empty_values_like_sql_ifnull(conn):
	names = {r["name"] for r in conn.list("sales_invoice", filters=[["customer", "!=", "Acme"]])}
	assert names == {"SINV-3", "SINV-4"}


def test_like_is_case_insensitive_and_matches_anywhere(conn):
	assert {r["name"] for r in conn.list("sales_invoice", filters=[["customer", "like", "glob"]])} == {
		"SINV-3"
	}


def test_alias_and_is_set(conn):
	assert conn.count("sales_invoice", {"party": "Acme"}) == 2
	assert conn.count("sales_invoice", [["customer", "is", "not set"]]) == 1


def test_child_filter_needs_one_child_row_matching_all_conditions(conn):
	assert conn.count("sales_invoice", [["items.item", "=", "Nut"], ["items.qty", ">", 6]]) == 1
	assert conn.count("sales_invoice", [["items.item", "=", "Bolt"], ["items.qty", "=", 5]]) == 0


def test_unknown_field_lists_valid_fields(conn):
	with pytest.raises(ToolError, match="Valid fields: .*customer"):
		conn.list("sales_invoice", filters=[["custmer", "=", "Acme"]])


def test_permission_denied_without_read(conn):
	with pytest.raises(PermissionDenied):
		conn.list("quotation")
	with pytest.raises(PermissionDenied):
		conn.create("customer", {"customer_name": "New"})


def test_aggregate_groups_and_sums(conn):
	rows = conn.aggregate(
		"sales_invoice",
		metrics=[{"fn": "sum", "field": "total", "as": "amount"}, {"fn": "count", "as": "n"}],
		group_by=["customer"],
	)
	assert rows[0] == {"customer": "Acme", "amount": 350.0, "n": 2}
	by_item = conn.aggregate(
		"sales_invoice",
		metrics=[{"fn": "sum", "field": "items.amount", "as": "amount"}],
		group_by=["items.item"],
	)
	assert {r["items.item"]: r["amount"] for r in by_item} == {"Bolt": 310.0, "Nut": 115.5}


def test_aggregate_over_lines_keeps_only_lines_matching_child_filters(conn):
	# As in the SQL join, a filter on a child field keeps the matching lines, not every line of a
	# matching invoice: SINV-1's Nut line must not count towards Bolt.
	rows = conn.aggregate(
		"sales_invoice",
		metrics=[{"fn": "sum", "field": "items.qty", "as": "qty"}],
		filters=[["items.item", "=", "Bolt"]],
	)
	assert rows == [{"qty": 35.0}]
	listed = conn.list("sales_invoice", fields=["name", "items.item"], filters=[["items.item", "=", "Nut"]])
	assert sorted((r["name"], r["items.item"]) for r in listed) == [("SINV-1", "Nut"), ("SINV-3", "Nut")]


def test_get_returns_children_and_link(conn):
	doc = conn.get("sales_invoice", "SINV-1")
	assert doc["_link"] == "/app/sales-invoice/SINV-1"
	assert [i["item"] for i in doc["items"]] == ["Bolt", "Nut"]
	with pytest.raises(NotFound):
		conn.get("sales_invoice", "nope")


def test_write_lifecycle(conn):
	doc = conn.create("sales_invoice", {"customer": "Acme", "items": [{"item": "Bolt", "qty": 1, "rate": 5}]})
	assert doc["docstatus"] == 0
	conn.update("sales_invoice", doc["name"], {"remarks": "rush"})
	assert conn.submit("sales_invoice", doc["name"])["docstatus"] == 1
	with pytest.raises(ValidationFailed):
		conn.update("sales_invoice", doc["name"], {"remarks": "late"})
	assert conn.cancel("sales_invoice", doc["name"])["docstatus"] == 2


def test_create_rejects_unwritable_and_missing_fields(conn):
	with pytest.raises(ToolError, match="cannot be written"):
		conn.create("sales_invoice", {"customer": "Acme", "outstanding": 0, "items": []})
	with pytest.raises(ToolError, match="also give: items"):
		conn.create("sales_invoice", {"customer": "Acme"})


def test_reports_respect_roles_and_filters(conn):
	assert [r["name"] for r in conn.list_reports()] == ["Sales Analytics"]
	with pytest.raises(PermissionDenied):
		conn.run_report("Accounts Receivable")
	with pytest.raises(ToolError, match="needs these filters: company"):
		conn.run_report("Sales Analytics", {})
	assert conn.run_report("Sales Analytics", {"company": "X"})["rows"] == [{"company": "X", "total": 1.0}]


def test_workflow_actions_follow_roles():
	conn = MemoryConnector(
		"ann@example.com",
		{"sales_order": [{"name": "SO-1", "workflow_state": "Pending"}]},
		{"sales_order": {"read"}, "customer": {"read"}},
		workflows={
			"sales_order": {
				"name": "SO Approval",
				"states": [{"state": "Pending"}, {"state": "Approved"}],
				"transitions": [
					{
						"state": "Pending",
						"action": "Approve",
						"next_state": "Approved",
						"allowed": "Sales Manager",
					}
				],
			}
		},
		roles={"Sales User"},
	)
	assert conn.workflow("sales_order", "SO-1")["actions"] == []
	with pytest.raises(PermissionDenied):
		conn.apply_workflow("sales_order", "SO-1", "Approve")
	conn.roles = frozenset({"Sales Manager"})
	conn.apply_workflow("sales_order", "SO-1", "Approve")
	assert conn.workflow("sales_order", "SO-1")["state"] == "Approved"
	assert conn.workflow("customer") is None
