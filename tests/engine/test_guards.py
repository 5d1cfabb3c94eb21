"""Each guard, named after the failure it prevents."""

from __future__ import annotations

from noviz_agent.engine import guards


def test_repeated_identical_call_is_stopped():
	state = guards.GuardState()
	args = {"filters": [{"field": "status", "op": "=", "value": "Overdue"}]}
	assert guards.check("sales_invoice.list", args, state) is None
	state.record("sales_invoice.list", args)
	verdict = guards.check("sales_invoice.list", dict(args), state)
	assert verdict is not None and verdict.guard == "repeated_identical_call"
	assert state.fired == ["repeated_identical_call"]


def test_repeated_call_with_other_arguments_is_allowed():
	state = guards.GuardState()
	state.record("sales_invoice.list", {"page": 1})
	assert guards.check("sales_invoice.list", {"page": 1, "filters": {"customer": "X"}}, state) is None


def test_paging_to_build_a_total_is_redirected_to_aggregate():
	state = guards.GuardState()
	state.record("sales_invoice.list", {"page": 1})
	verdict = guards.check("sales_invoice.list", {"page": 2}, state)
	assert verdict is not None and verdict.guard == "paging_to_build_a_total"
	assert "analytics.aggregate" in verdict.message and "sales_invoice.count" in verdict.message


def test_paging_by_offset_is_recognised_too():
	state = guards.GuardState()
	state.record("customer.list", {"limit": 20})
	verdict = guards.check("customer.list", {"limit": 20, "offset": 40}, state)
	assert verdict is not None and verdict.guard == "paging_to_build_a_total"


def test_a_first_request_for_page_two_is_not_a_total():
	state = guards.GuardState()
	assert guards.check("customer.list", {"page": 2}, state) is None


def test_non_list_tools_are_not_paging():
	assert guards.page_of("analytics.aggregate", {"page": 3}) is None
