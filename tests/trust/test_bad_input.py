"""Bad input from a person, a model or a browser gets a clear error, never a traceback."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noviz_agent import validation
from noviz_agent.engine import gateway
from noviz_agent.engine.provider import ToolCall
from noviz_agent.engine.turn import run_turn
from noviz_agent.testing.model import ScriptedModel, call
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

pytestmark = pytest.mark.attack("bad input")

NASTY = st.one_of(
	st.text(),
	st.text(alphabet=st.characters(max_codepoint=0x1F)),
	st.sampled_from(
		[
			"'; DROP TABLE `tabSales Invoice`; --",
			"1 OR 1=1",
			"<script>alert(1)</script>",
			"\x00\x01\x02",
			"{{ frappe.db.sql('select 1') }}",
			"a" * 100_000,
		]
	),
	st.integers(),
	st.floats(allow_nan=True),
	st.none(),
	st.lists(st.integers(), max_size=3),
	st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
)


def _deep(depth: int) -> dict:
	value: dict = {}
	for _ in range(depth):
		value = {"a": value}
	return value


def _session():
	conn = MemoryConnector(
		"ann@example.com",
		{"customer": [{"name": "Acme", "customer_name": "Acme", "customer_group": "Commercial"}]},
		{"customer": {"read", "create"}},
		roles={"Sales User"},
	)
	session = make_session(conn)
	session.offered = set(session.allowed)
	return session


@settings(max_examples=200, deadline=None)
@given(NASTY)
def test_api_input_checks_answer_with_input_errors_only(value):
	for check in (
		lambda v: validation.check_message(v, 4000),
		validation.check_rating,
		validation.check_comment,
		validation.check_token,
		lambda v: validation.check_page(v, v),
	):
		try:
			check(value)
		except validation.InputError as exc:
			assert str(exc) and "Traceback" not in str(exc)


def test_control_characters_never_reach_the_model_or_the_database():
	text = validation.check_message("overdue\x00 invoices\x1b[31m for\x07 Acme\tplease\n", 4000)
	assert text == "overdue  invoices [31m for  Acme\tplease"
	with pytest.raises(validation.InputError):
		validation.check_message("\x00\x01\x02", 4000)


@settings(max_examples=150, deadline=None)
@given(
	st.dictionaries(st.sampled_from(["name", "filters", "values", "page", "fields", "x"]), NASTY, max_size=4)
)
def test_tool_arguments_of_any_shape_get_a_result_never_an_exception(args):
	session = _session()
	for name in ("customer.list", "customer.get", "customer.count", "customer.create"):
		result = gateway.call_tool(session, name, args)
		assert result.status in {"ok", "error", "refused", "proposal"}
		if result.status == "error":
			assert result.error and "Traceback" not in result.error


@pytest.mark.parametrize("depth", [40, 2_000, 50_000])
def test_deeply_nested_arguments_are_refused_with_a_message(depth):
	result = gateway.call_tool(_session(), "customer.create", {"values": _deep(depth)})
	assert result.status == "error"
	if depth > gateway.MAX_ARGUMENT_DEPTH:
		assert "nested" in result.error


def test_huge_arguments_are_refused_before_validation():
	result = gateway.call_tool(_session(), "customer.list", {"filters": ["x" * 1000] * 1000})
	assert result.status == "error" and "too large" in result.error


def test_deeply_nested_argument_text_from_a_model_is_an_error_for_the_model():
	raw = "[" * 100_000 + "]" * 100_000
	parsed = ToolCall.from_wire("call_1", "customer.list", raw)
	assert parsed.arguments is None and parsed.error


def test_a_turn_with_hostile_tool_calls_ends_with_an_answer_and_a_log():
	session = _session()
	model = ScriptedModel(
		[
			call("customer.list", {"filters": _deep(5_000)}),
			call("customer.list", raw="{not json"),
			call("no.such_tool", {}),
			call("customer.get", {"name": "'; DROP TABLE tabCustomer; --"}),
			"I could not find it.",
		]
	)
	outcome = run_turn(session, model, "find customer x")
	assert outcome.response["type"] == "text"
	statuses = [c["status"] for c in outcome.log["tools_called"]]
	assert statuses == ["error", "error", "error", "error"]
	json.dumps(outcome.log)  # the log row is storable
