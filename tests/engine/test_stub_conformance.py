"""The stub refuses what the providers refuse, with HTTP 400 in OpenAI's error shape.

One test per broken request shape; the last ones send what the agent really sends (the
registry's tools, plain and strict, and a whole turn), so they pass only if OpenAI would
accept it too.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from noviz_agent.engine.errors import ProviderError
from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderSettings
from noviz_agent.engine.schema_rules import check_tools
from noviz_agent.testing.stub_provider import StubProvider
from noviz_agent.tools import build_registry

USER = {"role": "user", "content": "show my sales orders"}
OK = {"type": "object", "properties": {"limit": {"type": "integer"}}}


def tool(parameters=OK, name="sales_order__list", description="List sales orders.", strict=None) -> dict:
	fn = {"name": name, "description": description, "parameters": parameters}
	if strict is not None:
		fn["strict"] = strict
	return {"type": "function", "function": fn}


def post(stub, body: dict) -> tuple[int, dict]:
	request = urllib.request.Request(
		stub.base_url + "/chat/completions",
		data=json.dumps(body).encode(),
		headers={"Content-Type": "application/json"},
	)
	try:
		with urllib.request.urlopen(request, timeout=5) as response:
			return response.status, json.loads(response.read())
	except urllib.error.HTTPError as exc:
		return exc.code, json.loads(exc.read())


@pytest.fixture
def stub():
	with StubProvider(rules=False) as server:
		server.push(text="accepted")
		yield server


def refused(stub, body: dict) -> dict:
	"""The error of a refused request; the scripted reply stays queued for the next good one."""
	status, payload = post(stub, {"model": "m", **body})
	assert status == 400, payload
	assert set(payload) == {"error"} and set(payload["error"]) == {"message", "type", "param", "code"}
	assert payload["error"]["type"] == "invalid_request_error"
	assert stub.pending == 1
	return payload["error"]


def test_a_conforming_request_is_answered(stub):
	status, payload = post(stub, {"model": "m", "messages": [USER], "tools": [tool()]})
	assert status == 200 and payload["choices"][0]["message"]["content"] == "accepted"
	assert stub.refused == []


def test_array_without_items_is_refused_as_openai_does(stub):
	error = refused(
		stub,
		{"messages": [USER], "tools": [tool({"type": "object", "properties": {"f": {"type": "array"}}})]},
	)
	assert error["code"] == "invalid_function_parameters"
	assert error["message"].endswith("In context=('properties', 'f'), array schema missing items.")
	assert error["param"] == "tools[0].function.parameters.properties.f"


def test_the_old_filters_schema_is_refused(stub):
	old = {
		"type": "object",
		"properties": {
			"filters": {
				"anyOf": [
					{"type": "array", "items": {"type": "array", "prefixItems": [{}, {}, {}]}},
					{"type": "object"},
				]
			}
		},
	}
	assert (
		"array schema missing items" in refused(stub, {"messages": [USER], "tools": [tool(old)]})["message"]
	)


def test_more_than_128_tools_are_refused(stub):
	tools = [tool(name=f"t{i}") for i in range(129)]
	assert refused(stub, {"messages": [USER], "tools": tools})["code"] == "array_above_max_length"


def test_a_bad_function_name_is_refused(stub):
	assert (
		refused(stub, {"messages": [USER], "tools": [tool(name="sales_order.list")]})["code"]
		== "invalid_value"
	)


def test_a_too_long_description_is_refused(stub):
	error = refused(stub, {"messages": [USER], "tools": [tool(description="x" * 1025)]})
	assert error["code"] == "string_above_max_length"


def test_parameters_that_are_not_an_object_are_refused(stub):
	error = refused(stub, {"messages": [USER], "tools": [tool({"type": "string"})]})
	assert "'type: \"object\"'" in error["message"]


def test_an_open_strict_schema_is_refused(stub):
	error = refused(stub, {"messages": [USER], "tools": [tool(OK, strict=True)]})
	assert "additionalProperties" in error["message"]


def test_a_tool_message_without_the_call_before_it_is_refused(stub):
	answer = {"role": "tool", "tool_call_id": "call_1", "content": "{}"}
	error = refused(stub, {"messages": [USER, answer]})
	assert error["code"] is None and "preceeding message with 'tool_calls'" in error["message"]
	assert error["param"] == "messages[1]"


def test_tool_calls_left_unanswered_are_refused(stub):
	asked = {
		"role": "assistant",
		"content": None,
		"tool_calls": [
			{"id": "call_1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
			{"id": "call_2", "type": "function", "function": {"name": "b", "arguments": "{}"}},
		],
	}
	one = {"role": "tool", "tool_call_id": "call_1", "content": "{}"}
	error = refused(stub, {"messages": [USER, asked, one, USER]})
	assert "call_2" in error["message"] and error["param"] == "messages[1]"


def test_azure_profile_refuses_strict_tools_with_parallel_calls():
	strict = tool({**OK, "required": ["limit"], "additionalProperties": False}, strict=True)
	with StubProvider(rules=False, profile="azure") as azure:
		azure.push(text="accepted")
		assert "parallel_tool_calls" in refused(azure, {"messages": [USER], "tools": [strict]})["message"]
		assert post(azure, {"messages": [USER], "tools": [strict], "parallel_tool_calls": False})[0] == 200


def test_gemini_profile_refuses_keywords_outside_its_subset():
	closed = tool({**OK, "additionalProperties": False})
	with StubProvider(rules=False, profile="gemini") as gemini:
		gemini.push(text="accepted")
		assert "additionalProperties" in refused(gemini, {"messages": [USER], "tools": [closed]})["message"]


def test_the_client_reports_the_refusal_without_retrying(stub):
	provider = OpenAICompatibleProvider(ProviderSettings(stub.base_url, model="m", timeout=5, max_retries=2))
	with pytest.raises(ProviderError) as info:
		provider.complete([USER], [tool({"type": "object", "properties": {"f": {"type": "array"}}})])
	assert info.value.kind == "rejected" and info.value.status == 400 and info.value.attempts == 1
	assert "array schema missing items" in str(info.value)


# -- what the agent really sends ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def registry_tools() -> list[dict]:
	return [t.schema() for t in build_registry()]


@pytest.mark.parametrize("strict", [False, True])
def test_the_registry_sent_128_at_a_time_is_accepted(stub, registry_tools, strict):
	provider = OpenAICompatibleProvider(
		ProviderSettings(stub.base_url, model="m", timeout=10, strict_tools=strict)
	)
	stub.push(text="accepted", times=len(registry_tools) // 128 + 1)
	for start in range(0, len(registry_tools), 128):
		assert provider.complete([USER], registry_tools[start : start + 128]).text == "accepted"
	assert stub.refused == []
	sent = [t for r in stub.chat_requests for t in r["tools"]]
	assert len(sent) == len(registry_tools)
	if strict:
		assert sum(t["function"]["strict"] for t in sent) >= len(registry_tools) - 10
	else:
		assert sent == registry_tools and "parallel_tool_calls" not in stub.chat_requests[0]


def test_an_azure_base_url_gets_strict_tools_within_azure_limits_and_serial_calls(registry_tools):
	provider = OpenAICompatibleProvider(
		ProviderSettings("https://acme.openai.azure.com/openai/v1/", model="gpt-4o", strict_tools=True)
	)
	for start in range(0, len(registry_tools), 128):
		request = provider.request([USER], registry_tools[start : start + 128])
		assert request["parallel_tool_calls"] is False
		assert check_tools(request["tools"], "azure", parallel_tool_calls=False) == []
	plain = OpenAICompatibleProvider(
		ProviderSettings("https://api.openai.com/v1", model="o3-mini", strict_tools=True)
	)
	assert "parallel_tool_calls" not in plain.request([USER], registry_tools[:3])


def test_a_gemini_base_url_gets_the_registry_in_its_schema_subset(registry_tools):
	provider = OpenAICompatibleProvider(
		ProviderSettings("https://generativelanguage.googleapis.com/v1beta/openai/", model="gemini-2.5-flash")
	)
	for start in range(0, len(registry_tools), 128):
		request = provider.request([USER], registry_tools[start : start + 128])
		assert check_tools(request["tools"], "gemini") == []


# -- whole turns: the loop's own requests must be ones OpenAI accepts ---------------------------------


@pytest.mark.parametrize("strict", [False, True])
def test_a_whole_turn_with_two_tool_rounds_sends_only_conforming_requests(strict):
	from datetime import date

	from noviz_agent.engine import turn
	from tests.support.factories import make_session
	from tests.support.memory_connector import MemoryConnector

	orders = [
		{"name": f"SO-{i}", "customer": "Acme", "date": f"2026-0{i}-10", "total": 10.0 * i, "status": "Draft"}
		for i in range(1, 6)
	]
	connector = MemoryConnector("ann@example.com", {"sales_order": orders}, {"sales_order": {"read"}})
	session = make_session(connector)
	with StubProvider(rules=False) as stub:
		stub.push(
			tool_calls=[
				{
					"name": "sales_order.list",
					"arguments": {"filters": [{"field": "customer", "op": "=", "value": "Acme"}]},
				},
				{"name": "sales_order.count", "arguments": {}},
			]
		)
		stub.push(
			tool_calls=[{"name": "sales_order.count", "arguments": {"filters": None} if strict else {}}]
		)
		stub.push(text="Acme has 5 draft orders.")
		provider = OpenAICompatibleProvider(
			ProviderSettings(stub.base_url, model="m", timeout=10, strict_tools=strict)
		)
		outcome = turn.run_turn(session, provider, "Show Acme's sales orders", today=date(2026, 11, 30))
	assert stub.refused == [] and stub.pending == 0
	assert outcome.response["type"] == "table" and outcome.response["text"] == "Acme has 5 draft orders."
	last = stub.chat_requests[-1]["messages"]
	assert [m["role"] for m in last[-5:]] == ["assistant", "tool", "tool", "assistant", "tool"]
	assert len(stub.chat_requests[0]["tools"]) <= 128
