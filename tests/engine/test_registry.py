"""Tool definitions and the registry."""

from __future__ import annotations

from typing import Literal

import pytest

from noviz_agent.engine.tools import DuplicateToolError, Registry, Tool, from_wire_name, function_tool

OBJ = {"type": "object", "properties": {}}


def _tool(name="a.list", module="selling"):
	return Tool(name, "Lists a.", module, OBJ, lambda args, session: None)


def test_duplicate_names_are_rejected():
	registry = Registry([_tool()])
	with pytest.raises(DuplicateToolError, match="a.list"):
		registry.register(_tool())


@pytest.mark.parametrize(
	"name",
	["list", "Sales.list", "a.b.c.d", "a-b.list", "a.", ".list", "a_.a", "a__b.list", "a.b_", "A.b.list"],
)
def test_malformed_names_are_rejected(name):
	with pytest.raises(ValueError):
		_tool(name)


def test_parameters_must_be_an_object_schema():
	with pytest.raises(ValueError, match="object"):
		Tool("a.list", "x", "selling", {"type": "array"}, lambda a, s: None)


def test_wire_names_round_trip():
	tool = _tool("sales_invoice.list")
	assert tool.schema()["function"]["name"] == "sales_invoice__list"
	assert from_wire_name("sales_invoice__list") == "sales_invoice.list"
	assert from_wire_name("sales_invoice.list") == "sales_invoice.list"


def test_registry_keeps_order_and_groups_by_module():
	registry = Registry([_tool("b.list", "buying"), _tool("a.list"), _tool("c.get", "buying")])
	assert registry.names() == ["b.list", "a.list", "c.get"]
	assert [t.name for t in registry.by_module("buying")] == ["b.list", "c.get"]
	assert registry.modules() == ["buying", "selling"]


def test_function_tool_builds_schema_from_signature_and_docstring():
	@function_tool("report.find", "reports")
	def find(session, query: str, limit: int = 10, kind: Literal["query", "script"] | None = None):
		"""Find reports this person may run.

		Args:
			query: words describing the report
			limit: how many to return
		"""
		return {"query": query, "limit": limit, "kind": kind}

	params = find.parameters
	assert find.description == "Find reports this person may run."
	assert params["required"] == ["query"]
	assert params["properties"]["query"] == {"type": "string", "description": "words describing the report"}
	assert params["properties"]["limit"]["default"] == 10
	assert params["properties"]["kind"] == {"enum": ["query", "script"]}
	assert find.handler({"query": "ageing"}, None) == {"query": "ageing", "limit": 10, "kind": None}


def test_every_valid_name_survives_the_wire():
	for name in ("sales_invoice.list", "bom.get", "a1.b2_c3", "tools.search"):
		assert from_wire_name(_tool(name).wire_name) == name


def test_another_systems_tools_carry_its_name_and_survive_the_wire():
	tool = _tool("helpdesk.ticket.list")
	assert tool.wire_name == "helpdesk__ticket__list"
	assert from_wire_name(tool.wire_name) == "helpdesk.ticket.list"
