"""Generated entity tools through the gateway: pages, totals, links, refusals and write proposals."""

from __future__ import annotations

import jsonschema
import pytest

from noviz_agent.connectors.model import load_model
from noviz_agent.engine.gateway import call_tool, confirm
from noviz_agent.engine.tools import Registry
from noviz_agent.tools import entities, reports, schema
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

ORDERS = [
	{
		"name": f"SO-{i:03d}",
		"customer": "Acme" if i % 2 else "Globex",
		"date": f"2024-01-{i:02d}",
		"status": "To Deliver and Bill",
		"total": float(i * 10),
		"docstatus": 1,
		"modified": f"2024-02-{i:02d}",
	}
	for i in range(1, 26)
] + [
	{
		"name": "SO-DRAFT",
		"customer": "Acme",
		"date": "2024-03-01",
		"status": "Draft",
		"total": 5.0,
		"docstatus": 0,
	}
]


@pytest.fixture(scope="module")
def registry():
	return Registry(entities.tools() + reports.tools() + schema.tools())


def _session(registry, perms=None, **limits):
	conn = MemoryConnector(
		"sam@example.com",
		{
			"sales_order": ORDERS,
			"customer": [{"name": "Acme", "customer_name": "Acme Ltd", "customer_group": "Commercial"}],
		},
		perms
		if perms is not None
		else {"sales_order": {"read", "create", "write", "submit", "cancel"}, "customer": {"read"}},
		roles={"Sales User"},
	)
	return make_session(conn, registry=registry, **limits)


def test_every_entity_action_becomes_one_tool_with_its_module(registry):
	model = load_model()
	generated = [t for t in registry if t.entity]
	assert len(generated) == sum(len(e.actions) for e in model)
	for tool in generated:
		ent = model.entity(tool.entity)
		assert tool.module == ent.module and tool.name == f"{ent.key}.{tool.action}"
		assert tool.writes == (tool.action in ("create", "update", "submit", "cancel"))
		assert (tool.preview is not None) == tool.writes
	# Checking every schema against the metaschema takes seconds; one entity per module covers each shape.
	sample = {m: next(e.key for e in model if e.module == m) for m in {e.module for e in model}}
	for tool in generated:
		if tool.entity in sample.values() or tool.entity in ("sales_invoice", "journal_entry"):
			jsonschema.Draft202012Validator.check_schema(tool.parameters)
	assert "gl_entry.create" not in registry and "customer.submit" not in registry


def test_list_returns_one_page_total_link_and_result_id(registry):
	session = _session(registry, page_size=10)
	result = call_tool(
		session, "sales_order.list", {"fields": ["customer", "total"], "order_by": "total desc"}
	)
	assert result.ok, result.error
	data = result.data
	assert [c["key"] for c in data["columns"]] == ["name", "customer", "total"]
	assert len(data["rows"]) == 10 and data["total"] == 26
	assert data["rows"][0]["name"] == "SO-025" and data["rows"][0]["_link"] == "/app/sales-order/SO-025"
	assert data["page"] == {"number": 1, "size": 10, "pages": 3, "has_more": True}
	assert "analytics.aggregate" in data["note"] and "sales_order.count" in data["note"]
	stored = session.results.get(data["result_id"])
	assert stored["entity"] == "sales_order" and stored["total"] == 26 and stored["user"] == "sam@example.com"


def test_list_last_page_and_filters(registry):
	session = _session(registry, page_size=10)
	data = call_tool(
		session,
		"sales_order.list",
		{"filters": [{"field": "customer", "op": "=", "value": "Globex"}], "page": 2},
	).data
	assert data["total"] == 12 and len(data["rows"]) == 2 and data["page"]["has_more"] is False


def test_small_list_keeps_no_result_id(registry):
	data = call_tool(
		_session(registry),
		"sales_order.list",
		{"filters": [{"field": "status", "op": "=", "value": "Draft"}]},
	).data
	assert data["total"] == 1 and "result_id" not in data


@pytest.mark.parametrize(
	"args",
	[
		{"fields": ["grand_total"]},
		{"filters": [{"field": "total", "op": "~", "value": 3}]},
		{"filters": [{"field": "bogus", "op": "=", "value": 3}]},
		{"order_by": "total; drop table x"},
		{"page": 0},
		{"limit": 1000},
	],
)
def test_schema_rejects_nonsense_before_the_connector_is_called(registry, args):
	session = _session(registry)
	result = call_tool(session, "sales_order.list", args)
	assert result.status == "error" and "do not fit its parameters" in result.error
	assert session.connector.calls == []


def test_count_and_get(registry):
	session = _session(registry)
	assert (
		call_tool(
			session, "sales_order.count", {"filters": [{"field": "total", "op": ">", "value": 200}]}
		).data["count"]
		== 5
	)
	record = call_tool(session, "sales_order.get", {"name": "SO-003"}).data
	assert record["fields"]["total"] == 30.0 and record["_link"] == "/app/sales-order/SO-003"
	missing = call_tool(session, "sales_order.get", {"name": "SO-999"})
	assert missing.status == "error" and "not found" in missing.error


def test_tools_without_site_permission_are_not_allowed(registry):
	session = _session(registry, perms={"sales_order": {"read"}})
	assert session.may_use("sales_order.list") and not session.may_use("sales_order.create")
	assert not session.may_use("sales_invoice.list")
	assert call_tool(session, "sales_invoice.list", {}).status == "error"


def test_create_is_a_proposal_with_exact_values_then_writes_on_confirm(registry):
	session = _session(registry)
	values = {
		"customer": "Acme",
		"delivery_date": "2024-06-01",
		"items": [{"item": "Bolt", "qty": 3, "rate": 2.5}],
	}
	result = call_tool(session, "sales_order.create", {"values": values})
	assert result.status == "proposal"
	proposal = result.proposal
	assert proposal["action"] == "create" and proposal["doctype"] == "Sales Order"
	assert {f["key"]: f["value"] for f in proposal["fields"]} == {
		"customer": "Acme",
		"delivery_date": "2024-06-01",
	}
	assert proposal["tables"]["items"]["rows"] == [{"item": "Bolt", "qty": 3, "rate": 2.5}]
	assert {c["key"]: c["label"] for c in proposal["tables"]["items"]["columns"]} == {
		"item": "Item Code",
		"qty": "Quantity",
		"rate": "Rate",
	}
	link = next(f for f in proposal["fields"] if f["key"] == "customer")
	assert (link["label"], link["type"], link["options"], link["required"]) == (
		"Customer",
		"Link",
		"Customer",
		True,
	)
	assert (
		proposal["effect"].startswith("Creates sales order with customer Acme")
		and "(1 row)" in proposal["effect"]
	)
	assert proposal["missing"] == []
	assert ("create", "sales_order") not in session.connector.calls
	done = confirm(session, proposal["token"])
	assert done.ok and done.data["message"].startswith("Created Sales Order")
	assert session.connector.count("sales_order") == 27


def test_create_schema_requires_the_map_required_fields(registry):
	result = call_tool(_session(registry), "sales_order.create", {"values": {"customer": "Acme"}})
	assert result.status == "error" and "required" in result.error


def test_update_preview_shows_before_and_after(registry):
	session = _session(registry)
	result = call_tool(session, "sales_order.update", {"name": "SO-DRAFT", "values": {"po_no": "PO-77"}})
	assert result.status == "proposal"
	assert result.proposal["fields"] == [
		{
			"key": "po_no",
			"label": "Customer's Purchase Order",
			"value": "PO-77",
			"type": "Data",
			"before": None,
		}
	]
	assert (
		result.proposal["effect"]
		== "Changes sales order SO-DRAFT: customer's purchase order from (empty) to PO-77."
	)
	assert result.proposal["missing"] == []


def test_submit_preview_refuses_a_submitted_document(registry):
	session = _session(registry)
	assert call_tool(session, "sales_order.submit", {"name": "SO-DRAFT"}).status == "proposal"
	result = call_tool(session, "sales_order.submit", {"name": "SO-001"})
	assert result.status == "error" and "not a draft" in result.error
	assert call_tool(session, "sales_order.cancel", {"name": "SO-001"}).status == "proposal"


def test_write_without_permission_is_refused_at_preview(registry):
	session = _session(registry, perms={"sales_order": {"read"}})
	session.allowed = session.allowed | {
		"sales_order.create"
	}  # as if a policy granted more than the site does
	result = call_tool(
		session,
		"sales_order.create",
		{"values": {"customer": "A", "delivery_date": "2024-01-01", "items": [{"item": "B", "qty": 1}]}},
	)
	assert result.status == "refused" and "permission to create Sales Order" in result.error


# -- strict function calling: every property is sent, the optional ones as null --------------------


def _strict_args(registry, name: str, given: dict) -> dict:
	"""Arguments as a strict-mode model sends them: every property present, null where not given."""
	from noviz_agent.engine.provider.schemas import strict_schema

	def fill(schema: dict, values: dict) -> dict:
		out = {}
		for key, sub in schema.get("properties", {}).items():
			value = values.get(key)
			if isinstance(value, dict) and "properties" in _branch(sub):
				value = fill(_branch(sub), value)
			out[key] = value
		return out

	return fill(strict_schema(registry[name].parameters), given)


def _branch(schema: dict) -> dict:
	return next((b for b in schema.get("anyOf", []) if "properties" in b), schema)


def test_strict_nulls_do_not_fail_the_schema_or_reach_the_connector(registry):
	session = _session(registry, page_size=10)
	args = _strict_args(registry, "sales_order.list", {"page": 2})
	assert args == {"fields": None, "filters": None, "order_by": None, "page": 2}
	result = call_tool(session, "sales_order.list", args)
	assert result.ok and result.data["page"]["number"] == 2 and len(result.data["rows"]) == 10
	assert result.args == {"page": 2}


def test_strict_nulls_in_an_update_leave_the_other_fields_unchanged(registry):
	session = _session(registry)
	args = _strict_args(registry, "sales_order.update", {"name": "SO-DRAFT", "values": {"po_no": "PO-77"}})
	assert args["values"]["po_no"] == "PO-77" and args["values"]["customer"] is None
	result = call_tool(session, "sales_order.update", args)
	assert result.status == "proposal"
	assert [f["key"] for f in result.proposal["fields"]] == ["po_no"]
	done = confirm(session, result.proposal["token"])
	assert done.ok and done.data["fields"]["customer"] == "Acme"


def test_short_first_page_is_counted_from_its_rows_without_a_count_query(registry):
	session = _session(registry, page_size=10)
	data = call_tool(
		session, "sales_order.list", {"filters": [{"field": "status", "op": "=", "value": "Draft"}]}
	).data
	assert data["total"] == 1 and data["page"]["pages"] == 1
	assert ("count", "sales_order") not in session.connector.calls


def test_full_or_later_pages_still_ask_for_the_count(registry):
	session = _session(registry, page_size=10)
	first = call_tool(session, "sales_order.list", {}).data
	assert first["total"] == 26 and session.connector.calls.count(("count", "sales_order")) == 1
	# Past the last page no row says how many there are: the count is asked again.
	past = call_tool(session, "sales_order.list", {"page": 4}).data
	assert past["rows"] == [] and past["total"] == 26
	assert session.connector.calls.count(("count", "sales_order")) == 2


def test_rows_repeated_by_a_child_table_join_are_counted_once():
	ent = load_model().entity("sales_order")
	rows = [{"name": "SO-1"}, {"name": "SO-1"}, {"name": "SO-2"}]

	class NoCount:
		def count(self, *a, **k):
			raise AssertionError("a short first page needs no count")

	assert entities._total(NoCount(), ent, None, rows, 10, 0) == 2
