"""tools.search: every permitted tool is one search away, and what it finds stays offered."""

from __future__ import annotations

from noviz_agent.engine.gateway import call_tool
from noviz_agent.engine.selection import select
from noviz_agent.tools import discovery
from tests.selection.fake_tools import fake_registry, make_session

REGISTRY = fake_registry()


def names(result) -> list[str]:
	return [f["name"] for f in result["found"]]


def test_search_finds_by_business_words_and_abbreviations():
	s = make_session(REGISTRY)
	assert "purchase_invoice.list" in discovery.search_tools_names(s, "supplier bills")
	assert "purchase_receipt.list" in discovery.search_tools_names(s, "GRN list")
	assert "leave_application.create" in discovery.search_tools_names(s, "new leave application", limit=4)


def test_search_only_finds_tools_the_person_may_use():
	allowed = {n for n in REGISTRY.names() if not n.startswith("purchase_invoice.")}
	s = make_session(REGISTRY, allowed)
	found = discovery.search_tools_names(s, "purchase invoice bills", limit=20)
	assert found and not [n for n in found if n.startswith("purchase_invoice.")]


def test_found_tools_stay_offered_for_the_turn():
	s = make_session(REGISTRY)
	select(s, "hello")
	assert "work_order.list" not in s.offered
	result = call_tool(s, "tools.search", {"query": "work order list production"})
	assert result.ok, result.error
	assert "work_order.list" in names(result.data)
	assert set(names(result.data)) <= s.offered
	assert all(f["call"] == f["name"].replace(".", "__") for f in result.data["found"])
	again = select(s, "hello")
	assert "work_order.list" in again.tools


def test_module_filter_and_limit():
	s = make_session(REGISTRY)
	result = discovery.search.handler({"query": "list records", "module": "hr", "limit": 3}, s)
	assert 0 < len(result["found"]) <= 3
	assert all(REGISTRY[n].module == "hr" for n in names(result))


def test_no_match_says_what_to_do():
	s = make_session(REGISTRY)
	result = discovery.search.handler({"query": "zzyzx qwerty"}, s)
	assert result["found"] == []
	assert "Try other words" in result["note"]
	assert not s.offered


def test_searches_never_push_a_turn_past_the_provider_limit():
	s = make_session(REGISTRY)
	s.offered.update(f"x.t{i}" for i in range(discovery.PROVIDER_TOOL_LIMIT - 1))
	result = discovery.search.handler({"query": "sales order", "limit": 5}, s)
	assert len(s.offered) == discovery.PROVIDER_TOOL_LIMIT
	assert len(result["found"]) == 1
	assert "could not be added" in result["note"]
