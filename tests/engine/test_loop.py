"""The reasoning loop with a scripted model: limits, guards, malformed calls, proposals."""

from __future__ import annotations

import pytest

from noviz_agent.engine import loop
from noviz_agent.engine.errors import ProviderError, StepLimitExceeded, TimeLimitExceeded, TokenLimitExceeded
from noviz_agent.engine.provider import Usage
from noviz_agent.engine.session import Limits, Person, Session
from noviz_agent.engine.tools import Registry, Tool
from noviz_agent.testing.model import ScriptedModel, answer, call, calls

OBJ = {"type": "object", "properties": {"page": {"type": "integer"}, "q": {"type": "string"}}}


def _session(**limits):
	ran: list = []

	def listing(args, session):
		ran.append(("list", args))
		return {"rows": [{"name": "SO-1", "total": 10}], "total": 40}

	def create(args, session):
		ran.append(("create", args))
		return {"name": "C-1"}

	registry = Registry(
		[
			Tool("sales_order.list", "List orders.", "selling", OBJ, listing),
			Tool("customer.create", "Create.", "selling", OBJ, create, writes=True),
			Tool("stock_entry.list", "List stock entries.", "stock", OBJ, listing),
		]
	)
	session = Session(
		person=Person("ann@example.com"),
		connector=None,
		registry=registry,
		allowed=frozenset(registry.names()),
		limits=Limits(**limits),
		offered={"sales_order.list", "customer.create"},
	)
	return session, ran


def _messages():
	return [{"role": "system", "content": "core"}, {"role": "user", "content": "orders?"}]


def test_answer_after_a_tool_call_carries_the_result_back_to_the_model():
	session, ran = _session()
	model = ScriptedModel([call("sales_order.list", {}), answer("You have 40 orders.")])
	with model:
		result = loop.run(session, model, _messages())
	assert result.text == "You have 40 orders." and result.error is None
	assert ran == [("list", {})]
	tool_message = model.requests[1][0][-1]
	assert tool_message["role"] == "tool" and '"total": 40' in tool_message["content"]
	assert model.offered(0) == ["sales_order.list", "customer.create"]


def test_step_limit_ends_the_turn_with_a_named_error():
	session, _ = _session(max_steps=2)
	model = ScriptedModel([call("sales_order.list", {"q": "a"}), call("sales_order.list", {"q": "b"})])
	with model:
		result = loop.run(session, model, _messages())
	assert isinstance(result.error, StepLimitExceeded)
	assert "2 tool steps" in str(result.error)


def test_time_limit_ends_the_turn_with_a_named_error():
	session, _ = _session(max_seconds=10)
	ticks = iter([0.0, 5.0, 11.0])
	model = ScriptedModel([call("sales_order.list", {})])
	with model:
		result = loop.run(session, model, _messages(), clock=lambda: next(ticks))
	assert isinstance(result.error, TimeLimitExceeded)


def test_provider_timeout_is_bounded_by_the_time_left():
	session, _ = _session(max_seconds=30)
	ticks = iter([100.0, 120.0])
	model = ScriptedModel([answer("ok")])
	loop.run(session, model, _messages(), clock=lambda: next(ticks))
	assert model.timeouts == [10.0]


def test_token_limit_ends_the_turn_with_a_named_error():
	session, _ = _session(max_tokens=1000)
	model = ScriptedModel([call("sales_order.list", {}, usage=Usage(900, 0, 200))])
	with model:
		result = loop.run(session, model, _messages())
	assert isinstance(result.error, TokenLimitExceeded)
	assert result.usage.total_tokens == 1100


def test_provider_failure_ends_the_turn_cleanly():
	session, _ = _session()
	model = ScriptedModel([ProviderError("The model provider timed out.")])
	result = loop.run(session, model, _messages())
	assert isinstance(result.error, ProviderError) and result.results == []


def test_malformed_tool_arguments_go_back_to_the_model_as_an_error():
	session, ran = _session()
	model = ScriptedModel([call("sales_order.list", raw='{"q": '), answer("sorry")])
	with model:
		result = loop.run(session, model, _messages())
	assert ran == [] and result.results[0].status == "error"
	assert "not valid JSON" in model.requests[1][0][-1]["content"]


def test_unknown_tool_name_goes_back_to_the_model_as_an_error():
	session, _ = _session()
	model = ScriptedModel([call("sales_order.delete_all", {}), answer("I can't.")])
	with model:
		result = loop.run(session, model, _messages())
	assert result.results[0].status == "error" and "tools.search" in result.results[0].error


def test_tool_not_offered_this_turn_must_be_found_first():
	session, ran = _session()
	model = ScriptedModel([call("stock_entry.list", {}), answer("ok")])
	with model:
		result = loop.run(session, model, _messages())
	assert ran == [] and "not offered" in result.results[0].error


def test_repeated_identical_call_is_not_run_twice():
	session, ran = _session()
	model = ScriptedModel([call("sales_order.list", {}), call("sales_order.list", {}), answer("done")])
	with model:
		result = loop.run(session, model, _messages())
	assert len(ran) == 1 and result.guards == ["repeated_identical_call"]


def test_a_strict_call_repeated_with_nulls_is_still_a_repeat_and_runs_without_them():
	session, ran = _session()
	steps = [
		call("sales_order.list", {"q": "x"}),
		call("sales_order.list", {"q": "x", "page": None}),
		answer("ok"),
	]
	with ScriptedModel(steps) as model:
		result = loop.run(session, model, _messages())
	assert ran == [("list", {"q": "x"})] and result.guards == ["repeated_identical_call"]


def test_paging_to_build_a_total_is_redirected():
	session, ran = _session()
	model = ScriptedModel(
		[
			call("sales_order.list", {"page": 1}),
			call("sales_order.list", {"page": 2}),
			answer("Use aggregate"),
		]
	)
	with model:
		result = loop.run(session, model, _messages())
	assert len(ran) == 1 and result.guards == ["paging_to_build_a_total"]
	assert "analytics.aggregate" in model.requests[2][0][-1]["content"]


def test_a_proposal_ends_the_loop_without_writing():
	session, ran = _session()
	model = ScriptedModel([calls([("customer.create", {"q": "Zed"})], text="I prepared it.")])
	with model:
		result = loop.run(session, model, _messages())
	assert ran == [] and result.results[0].status == "proposal"
	assert result.text == "I prepared it."


def test_progress_is_reported_per_step_and_tool():
	session, _ = _session()
	events: list = []
	session.progress = events.append
	loop.run(session, ScriptedModel([call("sales_order.list", {}), answer("ok")]), _messages())
	assert [e["event"] for e in events] == ["thinking", "tool", "thinking"]
	assert events[1]["tool"] == "sales_order.list" and events[1]["max_steps"] == 8


@pytest.mark.parametrize("steps", [[answer("a"), answer("b")]])
def test_scripted_model_fails_a_test_that_leaves_steps_unconsumed(steps):
	session, _ = _session()
	model = ScriptedModel(steps)
	loop.run(session, model, _messages())
	with pytest.raises(AssertionError, match="never used"):
		model.assert_consumed()


def test_schemas_keep_the_selection_order_and_found_tools_go_last():
	session, _ = _session()
	session.offer_order = ["customer.create", "sales_order.list"]
	session.offered.add("stock_entry.list")
	names = [s["function"]["name"] for s in loop.offered_schemas(session)]
	assert names == ["customer__create", "sales_order__list", "stock_entry__list"]


def test_tools_found_during_the_turn_never_push_a_request_over_128_tools():
	from noviz_agent.engine.schema_rules import MAX_TOOLS

	noop = lambda args, session: {}  # noqa: E731
	registry = Registry([Tool(f"thing.t{i}", "A thing.", "selling", OBJ, noop) for i in range(150)])
	names = registry.names()
	session = Session(Person("ann"), None, registry, frozenset(names), offered=set(names[:120]))
	session.offer_order = names[:120]
	session.offered.update(names[130:140])  # unlocked by tools.search after the selection
	sent = [s["function"]["name"] for s in loop.offered_schemas(session)]
	assert len(sent) == MAX_TOOLS
	assert sent[-10:] == [f"thing__t{i}" for i in range(130, 140)]
	assert sent[:118] == [n.replace(".", "__") for n in names[:118]]
