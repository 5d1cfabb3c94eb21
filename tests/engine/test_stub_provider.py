"""The OpenAI-compatible stub: scripted responses, demo rules, embeddings, recording and its command line."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderSettings
from noviz_agent.testing.stub_provider import StubProvider, hashed_embedding, rule_reply

ROOT = Path(__file__).resolve().parents[2]


def tool(name, properties=None):
	params = {"type": "object", "properties": properties or {}}
	return {"type": "function", "function": {"name": name, "description": name, "parameters": params}}


DESK_TOOLS = [
	tool("customer__list", {"limit": {"type": "integer"}}),
	tool(
		"sales_order__list",
		{
			"fields": {"type": "array", "items": {"enum": ["customer", "date"]}},
			"order_by": {"type": "string"},
		},
	),
	tool("sales_invoice__list"),
	tool("customer__create", {"values": {"type": "object"}}),
	tool("tools__search"),
]


def post(url, body, headers=None):
	data = body if isinstance(body, bytes) else json.dumps(body).encode()
	request = urllib.request.Request(
		url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
	)
	try:
		with urllib.request.urlopen(request, timeout=5) as response:
			return response.status, json.loads(response.read())
	except urllib.error.HTTPError as exc:
		return exc.code, json.loads(exc.read())


@pytest.fixture
def stub():
	with StubProvider() as server:
		yield server


def provider_for(stub):
	return OpenAICompatibleProvider(ProviderSettings(stub.base_url, model="stub-model", timeout=5))


# -- demo rules, through the real provider ----------------------------------------------------


def test_rules_list_the_entity_asked_about_then_answer_after_the_result(stub):
	provider = provider_for(stub)
	messages = [{"role": "user", "content": "Show my recent sales orders"}]
	first = provider.complete(messages, DESK_TOOLS)
	assert [(c.name, c.arguments) for c in first.tool_calls] == [
		("sales_order.list", {"order_by": "date desc"})
	]
	messages += [
		first.to_message(),
		{
			"role": "tool",
			"tool_call_id": first.tool_calls[0].id,
			"content": json.dumps({"rows": [{}, {}, {}]}),
		},
	]
	second = provider.complete(messages, DESK_TOOLS)
	assert second.tool_calls == []
	assert second.text == "I found 3 records. They are shown below."


def test_rules_create_a_customer_by_name(stub):
	reply = provider_for(stub).complete(
		[{"role": "user", "content": "Please create a customer named Ada Lovelace."}], DESK_TOOLS
	)
	assert [(c.name, c.arguments) for c in reply.tool_calls] == [
		("customer.create", {"values": {"customer_name": "Ada Lovelace"}})
	]


def test_rules_fall_back_to_the_first_list_tool_for_record_words():
	body = {"messages": [{"role": "user", "content": "any invoices overdue?"}], "tools": DESK_TOOLS[:1]}
	assert rule_reply(body)["tool_calls"] == [{"name": "customer__list", "arguments": {"limit": 5}}]


def test_rules_answer_in_text_without_tools_or_after_errors_and_proposals():
	assert "stub model" in rule_reply({"messages": [{"role": "user", "content": "hello"}]})["text"]
	after = [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "1"}]
	after[1]["content"] = json.dumps({"error": "Not permitted"})
	assert rule_reply({"messages": after})["text"] == "The tool reported a problem: Not permitted"
	after[1]["content"] = json.dumps({"status": "refused", "message": "You cannot read Sales Invoice"})
	assert (
		rule_reply({"messages": after})["text"]
		== "The tool reported a problem: You cannot read Sales Invoice"
	)
	after[1]["content"] = json.dumps({"status": "awaiting_confirmation", "proposal": {"values": {}}})
	assert "confirm" in rule_reply({"messages": after})["text"]
	after[1]["content"] = json.dumps([1])
	assert rule_reply({"messages": after})["text"].startswith("I found 1 record.")


def test_rules_read_content_parts():
	body = {
		"messages": [{"role": "user", "content": [{"type": "text", "text": "list sales orders"}]}],
		"tools": DESK_TOOLS,
	}
	assert rule_reply(body)["tool_calls"] == [{"name": "sales_order__list", "arguments": {}}]


# -- scripted responses -----------------------------------------------------------------------


def test_queue_is_served_in_order_then_rules_take_over(stub):
	stub.push(text="one").push({"tool_calls": [{"name": "payroll.run", "arguments": "{bad"}]})
	url = stub.base_url + "/chat/completions"
	ask = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
	assert post(url, ask)[1]["choices"][0]["message"]["content"] == "one"
	second = post(url, ask)[1]["choices"][0]
	assert second["finish_reason"] == "tool_calls"
	assert second["message"]["tool_calls"][0]["function"] == {"name": "payroll__run", "arguments": "{bad"}
	assert "stub model" in post(url, ask)[1]["choices"][0]["message"]["content"]
	assert stub.pending == 0


def test_status_responses_carry_retry_after_and_an_error_body(stub):
	stub.push(status=429, retry_after=2, times=2)
	request = urllib.request.Request(
		stub.base_url + "/chat/completions", data=b'{"messages": [{"role": "user", "content": "hi"}]}'
	)
	for _ in range(2):
		with pytest.raises(urllib.error.HTTPError) as info:
			urllib.request.urlopen(request, timeout=5)
		assert info.value.code == 429 and info.value.headers["Retry-After"] == "2"
		assert json.loads(info.value.read())["error"]["code"] == 429


def test_without_rules_an_empty_queue_answers_500():
	with StubProvider(rules=False) as stub:
		status, body = post(
			stub.base_url + "/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}
		)
	assert status == 500 and "no scripted response left" in body["error"]["message"]


def test_unknown_push_field_is_refused(stub):
	with pytest.raises(ValueError, match="unknown field"):
		stub.push(txt="typo")


def test_bad_requests_get_json_errors(stub):
	assert post(stub.base_url + "/chat/completions", b"not json")[0] == 400
	assert post(stub.base_url + "/chat/completions", {"messages": [], "stream": True})[0] == 400
	assert post(stub.base_url + "/nowhere", {})[0] == 404


def test_requests_are_recorded_without_the_key(stub):
	post(
		stub.base_url + "/chat/completions",
		{"messages": [{"role": "user", "content": "hi"}]},
		{"Authorization": "Bearer sk-live-secret"},
	)
	(record,) = stub.requests
	assert record["method"] == "POST" and record["path"] == "/v1/chat/completions"
	assert record["headers"]["authorization"] == "<redacted>"
	assert "sk-live-secret" not in json.dumps(stub.requests)
	assert record["body"] == {"messages": [{"role": "user", "content": "hi"}]}


def test_repeated_prompt_prefix_is_reported_as_cached(stub):
	provider = provider_for(stub)
	system = {"role": "system", "content": "You are the ERPNext agent. " * 40}
	first = provider.complete([system, {"role": "user", "content": "a"}], [])
	second = provider.complete([system, {"role": "user", "content": "b"}], [])
	assert first.usage.cached_tokens == 0
	assert 0 < second.usage.cached_tokens < second.usage.prompt_tokens


# -- models and embeddings --------------------------------------------------------------------


def test_models_endpoint(stub):
	with urllib.request.urlopen(stub.base_url + "/models", timeout=5) as response:
		assert json.loads(response.read())["data"][0]["id"] == "stub-model"


def test_embeddings_are_deterministic_unit_vectors(stub):
	status, body = post(
		stub.base_url + "/embeddings", {"model": "e", "input": ["overdue invoices", ""], "dimensions": 32}
	)
	assert status == 200
	first, empty = (item["embedding"] for item in body["data"])
	assert len(first) == 32 and first == hashed_embedding("overdue invoices", 32)
	assert math.isclose(sum(v * v for v in first), 1.0, abs_tol=1e-4)
	assert math.isclose(sum(v * v for v in empty), 1.0)  # no zero vector: cosine distance stays defined


def test_texts_sharing_words_are_closer_than_unrelated_ones():
	def cosine(a, b):
		return sum(x * y for x, y in zip(a, b, strict=True))

	a, b, c = (
		hashed_embedding(t, 256)
		for t in ("overdue sales invoice", "sales invoice overdue today", "warehouse bin")
	)
	assert cosine(a, b) > cosine(a, c)


# -- command line -----------------------------------------------------------------------------


def test_command_line_serves_a_script_file(tmp_path):
	script = tmp_path / "script.json"
	script.write_text(json.dumps([{"text": "from the script"}]))
	env = {**os.environ, "PYTHONPATH": str(ROOT)}
	command = [
		sys.executable,
		"-m",
		"noviz_agent.testing.stub_provider",
		"--port",
		"0",
		"--script",
		str(script),
		"--quiet",
	]
	process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
	try:
		line = process.stdout.readline()
		assert line.startswith("Stub model provider at http://127.0.0.1:")
		base_url = line.split(" at ")[1].split(" ")[0]
		status, body = post(base_url + "/chat/completions", {"messages": [{"role": "user", "content": "hi"}]})
		assert status == 200 and body["choices"][0]["message"]["content"] == "from the script"
	finally:
		process.terminate()
		process.wait(timeout=10)
