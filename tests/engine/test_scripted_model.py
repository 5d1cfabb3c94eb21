"""The scripted fake model: planned replies, recorded requests, loud failures on plan mismatch."""

from __future__ import annotations

import pytest

from noviz_agent.engine.errors import ProviderError
from noviz_agent.engine.provider import ModelReply, ToolCall, Usage
from noviz_agent.testing import ScriptedModel, answer, call, calls

TOOLS = [
	{"type": "function", "function": {"name": "sales_order__list", "description": "d", "parameters": {}}}
]


def ask(text):
	return [{"role": "user", "content": text}]


def test_call_then_answer_in_order():
	model = ScriptedModel([call("sales_order.list", {"limit": 5}), answer("You have 5 orders.")])
	first = model.complete(ask("orders?"), TOOLS)
	assert [(c.name, c.arguments, c.error) for c in first.tool_calls] == [
		("sales_order.list", {"limit": 5}, None)
	]
	assert first.finish_reason == "tool_calls" and first.text == ""
	second = model.complete(ask("orders?"), TOOLS)
	assert second.text == "You have 5 orders." and second.tool_calls == [] and second.finish_reason == "stop"
	model.assert_consumed()


def test_calls_makes_one_reply_with_several_calls_and_unique_ids():
	model = ScriptedModel(
		[calls([call("sales_order.list"), ("customer.get", {"name": "Acme"})], text="Looking.")]
	)
	reply = model.complete(ask("x"), TOOLS)
	assert [c.name for c in reply.tool_calls] == ["sales_order.list", "customer.get"]
	assert reply.tool_calls[1].arguments == {"name": "Acme"}
	assert len({c.id for c in reply.tool_calls}) == 2
	assert reply.text == "Looking."


def test_raw_arguments_simulate_malformed_json():
	(bad,) = ScriptedModel([call("sales_order.list", raw='{"limit": ')]).complete(ask("x"), TOOLS).tool_calls
	assert bad.arguments is None and bad.raw_arguments == '{"limit": ' and bad.error


def test_wire_names_in_a_plan_are_read_as_dotted():
	reply = ScriptedModel([call("sales_order__list", {})]).complete(ask("x"), TOOLS)
	assert reply.tool_calls[0].name == "sales_order.list"


def test_callable_step_sees_the_request_and_may_return_text_or_a_reply():
	seen = []

	def step(messages, tools):
		seen.append((messages[-1]["content"], len(tools)))
		return "computed"

	fixed = ModelReply("fixed", [ToolCall("c", "a.b", {}, "{}")])
	model = ScriptedModel([step, lambda m, t: fixed])
	assert model.complete(ask("hello"), TOOLS).text == "computed"
	assert model.complete(ask("again"), []) is fixed
	assert seen == [("hello", 1)]


def test_exception_step_is_raised():
	model = ScriptedModel([ProviderError("The model provider timed out.")])
	with pytest.raises(ProviderError, match="timed out"):
		model.complete(ask("x"), TOOLS)


def test_requests_are_recorded_as_sent_not_as_later_mutated():
	model = ScriptedModel([call("sales_order.list"), answer("done")])
	messages = ask("orders?")
	model.complete(messages, TOOLS, timeout=7)
	messages.append({"role": "tool", "tool_call_id": "call_1", "content": "[]"})
	model.complete(messages, TOOLS)
	assert len(model.requests[0][0]) == 1 and len(model.requests[1][0]) == 2
	assert model.requests[0][1] == TOOLS
	assert model.timeouts == [7, None]
	assert model.offered(0) == ["sales_order.list"]


def test_asking_for_more_steps_than_planned_fails_clearly():
	model = ScriptedModel([answer("only one")])
	model.complete(ask("first"), TOOLS)
	with pytest.raises(AssertionError, match=r"asked for reply 2 but only 1 step\(s\) were planned.*second"):
		model.complete(ask("second"), TOOLS)


def test_leftover_steps_fail_the_test():
	model = ScriptedModel([call("sales_order.list"), answer("never reached")])
	model.complete(ask("x"), TOOLS)
	assert model.remaining == 1
	with pytest.raises(
		AssertionError, match=r"1 planned step\(s\) were never used \(answer 'never reached'\)"
	):
		model.assert_consumed()


def test_context_manager_fails_on_leftovers_but_does_not_mask_a_real_error():
	with pytest.raises(AssertionError, match="never used"):
		with ScriptedModel([answer("unused")]):
			pass
	with pytest.raises(KeyError):
		with ScriptedModel([answer("unused")]):
			raise KeyError("the real failure")
	with ScriptedModel([answer("used")]) as model:
		model.complete(ask("x"), [])


def test_fixed_usage_per_model_and_per_step_makes_budgets_testable():
	model = ScriptedModel(
		[call("sales_order.list", usage=Usage(900, 100, 50)), answer("ok")], usage=Usage(10, 0, 5)
	)
	first = model.complete(ask("x"), TOOLS)
	second = model.complete(ask("x"), TOOLS)
	assert first.usage == Usage(900, 100, 50)
	assert second.usage == Usage(10, 0, 5)
	assert (first.usage + second.usage).total_tokens == 965


def test_default_usage_is_zero():
	assert ScriptedModel([answer("a")]).complete(ask("x"), []).usage == Usage()
