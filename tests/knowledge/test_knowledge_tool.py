"""knowledge.search as a tool: passages with sources, the person's roles, a lazily opened store, clear errors."""

from __future__ import annotations

import pytest

from knowledge.documents import load_folder
from knowledge.errors import StoreUnavailable
from knowledge.search import KnowledgeBase
from noviz_agent.engine.gateway import call_tool
from noviz_agent.engine.tools import Registry
from noviz_agent.tools import knowledge as knowledge_tools
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector


@pytest.fixture
def base(store, write, docs_root):
	write(
		"hr",
		"payroll",
		"## Slips\n\nSalary slips show net pay after deductions.",
		title="Payroll",
		roles=["HR Manager"],
	)
	write(
		"buying",
		"approvals",
		"## Pending approval\n\nA purchase order in Pending Approval waits for the approver role.",
		title="Purchase approvals",
	)
	kb = KnowledgeBase(store)
	kb.index(load_folder(docs_root))
	return kb


def session(roles, knowledge=None):
	s = make_session(MemoryConnector(roles=roles), registry=Registry(knowledge_tools.tools()))
	if knowledge is not None:
		s.knowledge = knowledge
	return s


def test_search_returns_passages_with_a_source_to_cite(base):
	result = call_tool(
		session({"Purchase User"}, base), "knowledge.search", {"query": "purchase order pending approval"}
	)
	assert result.ok, result.error
	[first, *_] = result.data["passages"]
	assert first["source"] == "Purchase approvals > Pending approval"
	assert first["module"] == "buying" and "approver role" in first["content"]
	assert "Cite" in result.data["note"]


def test_restricted_passages_follow_the_persons_roles(base):
	query = {"query": "salary slips net pay deductions"}
	without = call_tool(session({"Employee"}, base), "knowledge.search", query).data["passages"]
	assert all(p["slug"] != "payroll" for p in without)
	with_role = call_tool(session({"HR Manager"}, base), "knowledge.search", query).data["passages"]
	assert with_role[0]["slug"] == "payroll"


def test_module_filter_and_limit(base):
	data = call_tool(
		session(set(), base), "knowledge.search", {"query": "approval order", "module": "buying", "limit": 1}
	).data
	assert len(data["passages"]) == 1 and data["passages"][0]["module"] == "buying"


def test_the_store_is_opened_only_when_the_tool_runs(base):
	opened = []

	def open_base():
		opened.append(1)
		return base

	s = session(set(), open_base)
	assert opened == []
	call_tool(s, "knowledge.search", {"query": "approval"})
	call_tool(s, "knowledge.search", {"query": "approval"})
	assert opened == [1]


def test_no_knowledge_base_is_an_error_the_model_can_act_on():
	result = call_tool(session(set()), "knowledge.search", {"query": "approval"})
	assert result.status == "error" and "No knowledge base is set up" in result.error


def test_an_unreachable_store_is_an_error_not_a_crash():
	def unreachable():
		raise StoreUnavailable("cannot reach PostgreSQL at db:5432/knowledge: connection refused")

	result = call_tool(session(set(), unreachable), "knowledge.search", {"query": "approval"})
	assert result.status == "error" and "cannot reach PostgreSQL" in result.error


def test_an_empty_query_is_refused(base):
	result = call_tool(session(set(), base), "knowledge.search", {"query": "   "})
	assert result.status == "error" and "query is empty" in result.error


def test_nothing_found_says_what_to_do(base):
	data = call_tool(session(set(), base), "knowledge.search", {"query": "zebra xylophone"}).data
	assert data["passages"] == [] and "Try other words" in data["note"]


def test_the_tool_is_read_only_with_citation_rules():
	[tool] = knowledge_tools.tools()
	assert tool.name == "knowledge.search" and not tool.writes
	assert "square brackets" in tool.prompt_rules
	assert tool.parameters["required"] == ["query"]
