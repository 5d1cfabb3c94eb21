"""The OpenAI-compatible provider over real HTTP against the local stub: faults end in clear errors."""

from __future__ import annotations

import json
import traceback

import pytest

from noviz_agent.engine.errors import ProviderError
from noviz_agent.engine.provider import (
	PLACEHOLDER_KEY,
	ModelReply,
	OpenAICompatibleProvider,
	ProviderSettings,
	SettingsError,
	ToolCall,
	Usage,
)
from noviz_agent.testing.stub_provider import StubProvider

KEY = "sk-test-0123456789abcdef"
TOOLS = [
	{
		"type": "function",
		"function": {
			"name": "sales_order__list",
			"description": "List sales orders.",
			"parameters": {"type": "object", "properties": {"limit": {"type": "integer"}}},
		},
	}
]
ASK = [{"role": "user", "content": "show my sales orders"}]


@pytest.fixture
def stub():
	with StubProvider(rules=False) as server:
		yield server


def make(stub, sleeps, **overrides):
	values = {
		"base_url": stub.base_url,
		"api_key": KEY,
		"model": "stub-model",
		"timeout": 5,
		"max_retries": 2,
	}
	values.update(overrides)
	# rng=1.0 makes the jitter deterministic: each delay is the full exponential step.
	return OpenAICompatibleProvider(ProviderSettings(**values), sleep=sleeps.append, rng=lambda: 1.0)


# -- faults over HTTP -------------------------------------------------------------------------


def test_slow_answer_times_out_after_configured_tries(stub):
	sleeps = []
	stub.push(delay=2, text="too late", times=3)
	provider = make(stub, sleeps, timeout=0.3, max_retries=2)
	with pytest.raises(ProviderError) as info:
		provider.complete(ASK, TOOLS)
	message = str(info.value)
	assert f"The model provider at {stub.base_url} timed out after 0.3 s (3 tries)" in message
	assert "Agent Settings" in message
	assert info.value.kind == "timeout" and info.value.attempts == 3
	assert len(stub.chat_requests) == 3
	assert sleeps == [0.5, 1.0]


def test_per_call_timeout_overrides_the_setting(stub):
	stub.push(delay=2, text="too late")
	provider = make(stub, [], timeout=30, max_retries=0)
	with pytest.raises(ProviderError, match=r"timed out after 0\.3 s \(1 try\)"):
		provider.complete(ASK, TOOLS, timeout=0.3)


def test_rate_limit_then_success_is_retried_honouring_retry_after(stub):
	sleeps = []
	stub.push(status=429, retry_after=3, error="slow down")
	stub.push(text="Here are your orders.")
	reply = make(stub, sleeps).complete(ASK, TOOLS)
	assert reply.text == "Here are your orders."
	assert reply.attempts == 2
	assert sleeps == [3.0]
	assert len(stub.chat_requests) == 2


def test_rate_limit_asking_for_a_long_wait_fails_now_instead_of_hanging(stub):
	sleeps = []
	stub.push(status=429, retry_after=600)
	with pytest.raises(ProviderError, match=r"HTTP 429, 1 try") as info:
		make(stub, sleeps).complete(ASK, TOOLS)
	assert info.value.kind == "rate_limit"
	assert sleeps == []


def test_persistent_rate_limit_ends_in_a_clear_error(stub):
	stub.push(status=429, times=3)
	with pytest.raises(ProviderError, match=r"limiting requests \(HTTP 429, 3 tries\)"):
		make(stub, []).complete(ASK, TOOLS)


def test_persistent_500_gives_clear_error_after_backoff(stub):
	sleeps = []
	stub.push(status=500, error="model crashed", times=3)
	with pytest.raises(ProviderError) as info:
		make(stub, sleeps).complete(ASK, TOOLS)
	assert "failed with HTTP 500 (3 tries): model crashed" in str(info.value)
	assert "Check the server's logs" in str(info.value)
	assert info.value.status == 500
	assert sleeps == [0.5, 1.0]


def test_500_then_success_recovers(stub):
	stub.push(status=503)
	stub.push(text="ok")
	assert make(stub, []).complete(ASK, TOOLS).attempts == 2


@pytest.mark.parametrize(
	("status", "expected"),
	[
		(400, r"rejected the request \(HTTP 400\): bad field"),
		(401, r"refused the API key \(HTTP 401\)\. Check the API key in Agent Settings"),
		(404, r"does not know the model 'stub-model' \(HTTP 404\)"),
	],
)
def test_client_errors_are_not_retried(stub, status, expected):
	sleeps = []
	stub.push(status=status, error="bad field")
	with pytest.raises(ProviderError, match=expected) as info:
		make(stub, sleeps).complete(ASK, TOOLS)
	assert info.value.attempts == 1 and sleeps == []
	assert len(stub.chat_requests) == 1


def test_connection_refused_says_check_the_server():
	with StubProvider() as gone:
		url = gone.base_url
	sleeps = []
	provider = OpenAICompatibleProvider(
		ProviderSettings(url, model="m", max_retries=1), sleep=sleeps.append, rng=lambda: 0.0
	)
	with pytest.raises(ProviderError, match=r"Could not connect to the model provider at .* \(2 tries\)"):
		provider.complete(ASK, [])
	assert sleeps == [0.25]


@pytest.mark.parametrize(
	("raw", "content_type"),
	[
		("not json at all", "application/json"),
		('{"unexpected": true}', "application/json"),
		("<html>", "text/html"),
	],
)
def test_a_reply_that_is_not_a_completion_is_a_clear_error(stub, raw, content_type):
	stub.push(raw=raw, content_type=content_type)
	with pytest.raises(
		ProviderError, match=r"not an OpenAI-compatible response .*usually ends in /v1"
	) as info:
		make(stub, []).complete(ASK, TOOLS)
	assert info.value.kind == "bad_response"


# -- what comes back --------------------------------------------------------------------------


def test_malformed_tool_json_becomes_a_tool_call_with_error(stub):
	stub.push(tool_calls=[{"name": "sales_order.list", "arguments": '{"limit": 5'}])
	reply = make(stub, []).complete(ASK, TOOLS)
	(call,) = reply.tool_calls
	assert call.name == "sales_order.list"
	assert call.arguments is None
	assert call.raw_arguments == '{"limit": 5'
	assert "position" in call.error
	assert reply.finish_reason == "tool_calls"


def test_arguments_that_are_not_an_object_are_an_error(stub):
	stub.push(tool_calls=[{"name": "sales_order.list", "arguments": "[1, 2]"}])
	(call,) = make(stub, []).complete(ASK, TOOLS).tool_calls
	assert call.arguments is None and "list" in call.error


def test_unknown_tool_name_is_passed_through_for_the_gateway(stub):
	stub.push(
		tool_calls=[{"name": "payroll.delete_everything", "arguments": {}}, {"name": "sales_order.list"}]
	)
	reply = make(stub, []).complete(ASK, TOOLS)
	assert [c.name for c in reply.tool_calls] == ["payroll.delete_everything", "sales_order.list"]
	assert all(c.error is None and c.arguments == {} for c in reply.tool_calls)


def test_prompt_cached_and_completion_tokens_are_recorded(stub):
	stub.push(text="hi", usage={"prompt_tokens": 1200, "cached_tokens": 1024, "completion_tokens": 17})
	reply = make(stub, []).complete(ASK, TOOLS)
	assert reply.usage == Usage(prompt_tokens=1200, cached_tokens=1024, completion_tokens=17)
	assert reply.usage.total_tokens == 1217
	assert reply.model == "stub-model" and reply.latency_ms > 0


def test_deepseek_style_cache_hits_are_read(stub):
	body = (
		'{"id": "x", "object": "chat.completion", "created": 1, "model": "ds", "choices": [{"index": 0, '
		'"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}], '
		'"usage": {"prompt_tokens": 90, "completion_tokens": 3, "total_tokens": 93, "prompt_cache_hit_tokens": 64}}'
	)
	stub.push(raw=body)
	assert make(stub, []).complete(ASK, TOOLS).usage == Usage(90, 64, 3)


PRINTED = '<tool_call>{"name": "sales_order__list", "arguments": {"limit": 3}}</tool_call>'


def test_text_tool_calls_from_a_local_model_are_recognised_when_configured(stub):
	stub.push(text="Let me look.\n" + PRINTED)
	reply = make(stub, [], tool_call_format="text").complete(ASK, TOOLS)
	assert [(c.name, c.arguments) for c in reply.tool_calls] == [("sales_order.list", {"limit": 3})]
	assert reply.text == "Let me look."
	assert reply.finish_reason == "tool_calls"


def test_auto_reads_a_printed_call_only_when_the_reply_starts_with_it(stub):
	stub.push(text=PRINTED)
	stub.push(text="Let me look.\n" + PRINTED)
	provider = make(stub, [], tool_call_format="auto")
	assert [c.name for c in provider.complete(ASK, TOOLS).tool_calls] == ["sales_order.list"]
	prose = provider.complete(ASK, TOOLS)
	assert prose.tool_calls == [] and prose.text == "Let me look.\n" + PRINTED


def test_native_never_reads_calls_from_text(stub):
	stub.push(text=PRINTED)
	reply = make(stub, [], tool_call_format="native").complete(ASK, TOOLS)
	assert reply.tool_calls == [] and reply.text == PRINTED and reply.finish_reason == "stop"


def test_native_calls_win_over_printed_ones_and_the_text_is_kept(stub):
	stub.push(
		text="Checking " + PRINTED, tool_calls=[{"name": "sales_order.list", "arguments": {"limit": 1}}]
	)
	reply = make(stub, [], tool_call_format="text").complete(ASK, TOOLS)
	assert [(c.name, c.arguments) for c in reply.tool_calls] == [("sales_order.list", {"limit": 1})]
	assert reply.text == "Checking " + PRINTED


def test_functions_prefix_on_a_native_call_is_dropped(stub):
	call = {
		"id": "c1",
		"type": "function",
		"function": {"name": "functions.sales_order__list", "arguments": "{}"},
	}
	message = {"role": "assistant", "content": None, "tool_calls": [call]}
	body = {
		"id": "x",
		"object": "chat.completion",
		"created": 0,
		"model": "m",
		"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
	}
	stub.push(raw=json.dumps(body))
	(call,) = make(stub, []).complete(ASK, TOOLS).tool_calls
	assert call.name == "sales_order.list"


def test_reasoning_block_is_not_shown_as_the_answer(stub):
	stub.push(text="<think>The user wants orders.</think>\n\nYou have 3 orders.")
	assert make(stub, []).complete(ASK, TOOLS).text == "You have 3 orders."


def test_request_carries_model_tools_and_options(stub):
	stub.push(text="a")
	stub.push(text="b")
	provider = make(stub, [], temperature=0.1, max_tokens=300, extra_body={"top_k": 20})
	provider.complete(ASK, TOOLS)
	provider.complete(ASK, [])
	first, second = stub.chat_requests
	assert first["model"] == "stub-model" and first["tools"] == TOOLS and first["messages"] == ASK
	assert first["temperature"] == 0.1 and first["max_tokens"] == 300 and first["top_k"] == 20
	assert "tools" not in second  # some servers reject an empty tools list


def test_empty_api_key_works_with_a_placeholder_not_the_environment_key(stub, monkeypatch):
	monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment")
	stub.push(text="local")
	provider = OpenAICompatibleProvider(ProviderSettings(stub.base_url, model="llama"))
	assert provider.complete(ASK, []).text == "local"
	assert provider.client.api_key == PLACEHOLDER_KEY
	assert stub.requests[0]["headers"]["authorization"] == "<redacted>"


def test_reply_to_message_uses_wire_names_and_round_trips():
	reply = ModelReply("", [ToolCall("c1", "sales_order.list", {"limit": 2}, '{"limit": 2}')])
	message = reply.to_message()
	assert message["tool_calls"][0]["function"] == {"name": "sales_order__list", "arguments": '{"limit": 2}'}
	wire = message["tool_calls"][0]
	back = ToolCall.from_wire(wire["id"], wire["function"]["name"], wire["function"]["arguments"])
	assert back == reply.tool_calls[0]


def test_usage_adds_up():
	assert Usage(10, 4, 2) + Usage(5, 0, 1) == Usage(15, 4, 3)


# -- settings and the key ---------------------------------------------------------------------


@pytest.mark.parametrize(
	("values", "expected"),
	[
		({"model": "m"}, "base URL is missing"),
		({"base_url": "localhost:8000", "model": "m"}, "must start with http"),
		({"base_url": "http://x/v1"}, "model name is missing"),
		({"base_url": "http://x/v1", "model": "m", "timeout": 0}, "timeout must be a positive"),
		({"base_url": "http://x/v1", "model": "m", "timeout": "soon"}, "timeout must be a number"),
	],
)
def test_settings_errors_name_the_field(values, expected):
	with pytest.raises(SettingsError, match=expected):
		ProviderSettings.from_dict(values)


def test_blank_numeric_fields_from_a_form_mean_defaults():
	settings = ProviderSettings.from_dict(
		{"base_url": "http://x/v1", "model": "m", "max_tokens": 0, "api_key": None}
	)
	assert settings.max_tokens is None and settings.api_key == "" and settings.timeout == 60.0


FORM = {"base_url": "https://api.example.com/v1", "api_key": KEY, "model": "big", "timeout": "30"}


def test_one_settings_type_serves_every_role_and_others_inherit_server_and_key():
	values = {
		**FORM,
		"vision_model": "eyes",
		"embedding_base_url": "http://localhost:11434/v1",
		"embedding_model": "nomic-embed-text",
	}
	reasoning = ProviderSettings.from_agent_settings(values)
	vision = ProviderSettings.from_agent_settings(values, "vision")
	embedding = ProviderSettings.from_agent_settings(values, "embedding")
	assert {type(reasoning), type(vision), type(embedding)} == {ProviderSettings}
	assert reasoning.timeout == 30.0 and vision.timeout == 30.0
	assert (vision.base_url, vision.api_key, vision.model) == ("https://api.example.com/v1", KEY, "eyes")
	# A different server must not receive the reasoning provider's key.
	assert embedding.api_key == "" and embedding.role == "embedding"
	assert embedding.base_url == "http://localhost:11434/v1"


def test_same_server_named_again_still_gets_the_key():
	values = {**FORM, "embedding_base_url": FORM["base_url"] + "/", "embedding_model": "e"}
	assert ProviderSettings.from_agent_settings(values, "embedding").api_key == KEY


def test_settings_without_a_model_for_the_role_are_a_clear_error():
	with pytest.raises(SettingsError, match="base URL is missing"):
		ProviderSettings.from_agent_settings({"vision_model": "x"}, "vision")
	with pytest.raises(SettingsError, match="embedding model is not configured"):
		ProviderSettings.from_agent_settings(FORM, "embedding")
	with pytest.raises(SettingsError, match=r"\(vision model\): the base URL must start"):
		ProviderSettings.from_agent_settings(
			{**FORM, "vision_base_url": "ftp://x", "vision_model": "v"}, "vision"
		)


def test_tool_call_format_and_strict_come_from_the_form():
	settings = ProviderSettings.from_agent_settings({**FORM, "tool_call_format": "native", "strict_tools": 1})
	assert settings.tool_call_format == "native" and settings.strict_tools is True
	assert ProviderSettings.from_agent_settings(FORM).tool_call_format == "native"
	with pytest.raises(SettingsError, match="tool call format must be one of native, text, auto"):
		ProviderSettings.from_agent_settings({**FORM, "tool_call_format": "xml"})


def test_key_never_appears_in_repr_or_str():
	settings = ProviderSettings(
		"https://api.example.com/v1", KEY, "m", extra_headers={"api-key": "hdr-secret"}
	)
	provider = OpenAICompatibleProvider(settings)
	texts = [
		repr(settings),
		str(settings),
		repr(provider),
		str(provider),
	]
	for text in texts:
		assert KEY not in text and "hdr-secret" not in text
	assert "api_key='***'" in repr(settings)


def test_key_never_appears_in_provider_errors_even_when_the_server_echoes_it(stub):
	stub.push(status=401, error=f"Incorrect API key provided: {KEY}")
	stub.push(status=500, error=f"upstream said {KEY}", times=3)
	provider = make(stub, [])
	for kind in ("auth", "server"):
		with pytest.raises(ProviderError) as info:
			provider.complete(ASK, TOOLS)
		assert info.value.kind == kind
		shown = str(info.value) + repr(info.value) + "".join(traceback.format_exception(info.value))
		assert KEY not in shown
	assert "upstream said ***" in str(info.value)


def test_the_provider_package_imports_the_openai_sdk_only_when_a_client_is_made():
	"""A web request that only queues a turn imports the provider package but never talks to the
	model: the SDK (half a second to import) must not come with the package."""
	import subprocess
	import sys

	code = (
		"import sys\n"
		"import noviz_agent.engine.provider as p\n"
		"assert 'openai' not in sys.modules, 'imported with the package'\n"
		"p.OpenAICompatibleProvider(p.ProviderSettings('http://127.0.0.1:9/v1', model='m'))\n"
		"assert 'openai' in sys.modules\n"
	)
	done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
	assert done.returncode == 0, done.stderr
