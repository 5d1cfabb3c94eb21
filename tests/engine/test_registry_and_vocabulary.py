"""One registry per process, and what the engine learns from it instead of importing the model.

The engine imports neither tools nor connectors (tests/packaging/test_boundaries.py): the
registry's builder hands it the entities' words (routing), this site's entities (tables) and each
tool's permission (policy). These tests check that what is handed over is what is used.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from noviz_agent import tools as tool_modules
from noviz_agent.engine import responses
from noviz_agent.engine.policy import allowed_tools
from noviz_agent.engine.routing import router_for
from noviz_agent.engine.tools import EntityWords, FrozenRegistryError, Registry, Tool, Vocabulary
from noviz_agent.evaluation.harness import memory_runner

ROOT = Path(__file__).resolve().parents[2]
OBJECT = {"type": "object", "properties": {}}


def _tool(name: str, module: str = "manufacturing", **kw) -> Tool:
	return Tool(name, f"The {name} tool.", module, OBJECT, lambda args, session: {}, **kw)


def test_the_process_builds_the_registry_once():
	assert tool_modules.registry() is tool_modules.registry()
	assert len(tool_modules.registry()) >= 300


def test_the_shared_registry_refuses_a_tool_added_by_a_turn():
	shared = tool_modules.registry()
	before = shared.names()
	with pytest.raises(FrozenRegistryError, match="shared by every turn"):
		shared.register(_tool("gizmo.list"))
	assert shared.names() == before
	# A registry of one's own still takes tools.
	own = Registry([_tool("gizmo.list")])
	own.register(_tool("gizmo.get"))
	assert own.names() == ["gizmo.list", "gizmo.get"]


def test_the_evaluation_runs_on_the_process_registry():
	runner, _ = memory_runner(lambda question: None)
	assert runner.registry is tool_modules.registry()


def test_no_product_code_builds_a_registry_of_its_own():
	"""Every caller (edge session, procedures, doctor, console script, evaluation) uses `tools.registry()`."""
	builders = []
	for path in sorted((ROOT / "noviz_agent").rglob("*.py")):
		rel = path.relative_to(ROOT).as_posix()
		if "/tests/" in rel or rel == "noviz_agent/tools/__init__.py":
			continue
		for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
			if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == (
				"build_registry"
			):
				builders.append(f"{rel}:{node.lineno}")
	assert builders == [], f"build a registry once per process (noviz_agent.tools.registry()): {builders}"


def test_submit_and_create_are_not_offered_to_a_person_who_may_only_write():
	registry = tool_modules.registry()
	allowed = allowed_tools(registry, {"sales_invoice": {"read", "write"}}, {"Accounts User"})
	assert {"sales_invoice.list", "sales_invoice.get", "sales_invoice.update"} <= allowed
	assert not {"sales_invoice.create", "sales_invoice.submit", "sales_invoice.cancel"} & allowed
	allowed = allowed_tools(registry, {"sales_invoice": {"read", "submit"}}, {"Accounts User"})
	assert "sales_invoice.submit" in allowed and "sales_invoice.update" not in allowed


def test_a_tool_without_a_declared_permission_needs_write_to_write_and_read_to_read():
	registry = Registry(
		[_tool("gizmo.list", entity="gizmo", action="list"), _tool("gizmo.fix", entity="gizmo", writes=True)]
	)
	assert allowed_tools(registry, {"gizmo": {"read"}}, ()) == {"gizmo.list"}
	assert allowed_tools(registry, {"gizmo": {"read", "write"}}, ()) == {"gizmo.list", "gizmo.fix"}


def test_routing_learns_entity_words_from_the_registry_vocabulary():
	words = (EntityWords("gizmo_plan", "manufacturing", "Gizmo Plan", ("widget schedule",)),)
	tools = [_tool("gizmo_plan.list", entity="gizmo_plan", action="list")]
	told = router_for(Registry(tools, Vocabulary(words=words)))
	untold = router_for(Registry(tools))
	assert "gizmo_plan" in told.route("show the widget schedule").entities
	assert "gizmo_plan" not in untold.route("show the widget schedule").entities
	# Without words an entity of the registry's tools is still routable by its key.
	assert "gizmo_plan" in untold.route("open gizmo plans").entities


def test_the_shipped_vocabulary_routes_other_systems_by_their_words():
	router = router_for(tool_modules.registry())
	assert "helpdesk.ticket" in router.route("open helpdesk tickets of Acme").entities
	assert "sales_invoice" in router.route("unpaid invoices of Acme").entities


def test_rows_of_another_system_never_link_into_this_desk():
	entities = tool_modules.registry().vocabulary.entities
	assert "helpdesk.ticket" not in entities
	ticket = responses.table_from(
		{"entity": "helpdesk.ticket", "rows": [{"name": "12", "subject": "x"}]}, entities
	)
	assert ticket["doctype"] is None
	assert {c["key"]: c["fieldtype"] for c in ticket["columns"]}["name"] == "Data"
	invoice = responses.table_from({"entity": "sales_invoice", "rows": [{"name": "SINV-1"}]}, entities)
	assert invoice["doctype"] == "Sales Invoice"
	assert invoice["columns"][0]["fieldtype"] == "Link"
