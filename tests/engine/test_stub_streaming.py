"""The stub streams as OpenAI does: chunks the openai SDK reassembles into exactly the plain reply.

The oracle is the SDK's own stream accumulator (`ChatCompletionStreamState`, what
`client.chat.completions.stream()` uses), compared with the same script answered without
streaming by a second, fresh stub (fresh, so ids and cached-token counts start alike).
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState

from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderSettings
from noviz_agent.engine.streaming import StreamingProvider
from noviz_agent.testing.stub_provider import StubProvider
from noviz_agent.testing.stub_stream import text_pieces

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [{"role": "user", "content": "Show my open sales orders and who ordered most."}]
TEXT = "You have five open sales orders worth 1,250.00 USD in total; the oldest is from March."
CALLS = [
	{
		"name": "sales_order.list",
		"arguments": {"limit": 5, "order_by": "date desc", "filters": [["status", "=", "To Deliver"]]},
	},
	{"name": "customer.list", "arguments": {"limit": 1}},
]
SCRIPTS = {
	"text": {"text": TEXT},
	"tool_calls": {"tool_calls": CALLS},
	"text_and_tool_calls": {"text": "Let me look.", "tool_calls": CALLS[:1]},
}


def tool(name: str) -> dict:
	parameters = {
		"type": "object",
		"properties": {
			"limit": {"type": "integer"},
			"order_by": {"type": "string"},
			"filters": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
		},
	}
	return {"type": "function", "function": {"name": name, "description": name, "parameters": parameters}}


TOOLS = [tool("sales_order__list"), tool("customer__list")]


def sdk(stub: StubProvider) -> openai.OpenAI:
	return openai.OpenAI(base_url=stub.base_url, api_key="sk-test", max_retries=0, timeout=5)


def provider_for(stub: StubProvider) -> OpenAICompatibleProvider:
	return OpenAICompatibleProvider(ProviderSettings(stub.base_url, model="stub-model", timeout=5))


def streamed_chunks(stub: StubProvider) -> list:
	"""The chunks of one streamed request (with usage) for MESSAGES and TOOLS, read by the SDK."""
	stream = sdk(stub).chat.completions.create(
		model="stub-model",
		messages=MESSAGES,
		tools=TOOLS,
		stream=True,
		stream_options={"include_usage": True},
	)
	return list(stream)


def raw_post(stub: StubProvider, body: dict) -> tuple[int, dict, bytes]:
	"""Status, headers and body bytes of one chat request, read by the standard library's client."""
	url = urlsplit(stub.base_url)
	connection = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
	try:
		connection.request(
			"POST", url.path + "/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
		)
		response = connection.getresponse()
		return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
	finally:
		connection.close()


def events(data: bytes) -> list[str]:
	"""The data of each Server-Sent Event, in order; fails on anything that is not `data: ...`."""
	blocks = data.decode().split("\n\n")
	assert blocks[-1] == "", "the stream must end with a blank line"
	assert all(block.startswith("data: ") and "\n" not in block for block in blocks[:-1]), blocks
	return [block.removeprefix("data: ") for block in blocks[:-1]]


def calls(message) -> list[tuple]:
	return [(c.id, c.type, c.function.name, c.function.arguments) for c in message.tool_calls or []]


# -- the openai SDK reassembles the plain reply -------------------------------------------------


@pytest.mark.parametrize("kind", SCRIPTS)
def test_the_sdk_reassembles_exactly_the_plain_reply_from_the_stream(kind):
	with StubProvider(rules=False) as plain_stub, StubProvider(rules=False) as stream_stub:
		plain_stub.push(SCRIPTS[kind])
		stream_stub.push(SCRIPTS[kind])
		plain = sdk(plain_stub).chat.completions.create(model="stub-model", messages=MESSAGES, tools=TOOLS)
		chunks = streamed_chunks(stream_stub)
	state = ChatCompletionStreamState()
	for chunk in chunks:
		state.handle_chunk(chunk)
	final = state.get_final_completion()
	(want,), (got,) = plain.choices, final.choices
	assert (final.id, final.model) == (plain.id, plain.model)  # `created`: each stub's own clock second
	assert got.message.content == want.message.content
	assert got.message.role == "assistant"
	assert calls(got.message) == calls(want.message)
	assert len(calls(want.message)) == len(SCRIPTS[kind].get("tool_calls", []))
	assert (
		got.finish_reason == want.finish_reason == ("tool_calls" if "tool_calls" in SCRIPTS[kind] else "stop")
	)
	assert final.usage == plain.usage and plain.usage.prompt_tokens_details.cached_tokens == 0


def test_the_chunks_follow_openais_stream_format():
	with StubProvider(rules=False) as stub:
		stub.push(text=TEXT, tool_calls=CALLS)
		chunks = streamed_chunks(stub)
	*choice_chunks, usage_chunk = chunks
	assert {c.object for c in chunks} == {"chat.completion.chunk"} and len({c.id for c in chunks}) == 1
	assert usage_chunk.choices == [] and usage_chunk.usage.total_tokens > 0
	assert all(c.usage is None and len(c.choices) == 1 for c in choice_chunks)
	deltas = [c.choices[0].delta for c in choice_chunks]
	assert deltas[0].role == "assistant" and all(d.role is None for d in deltas[1:])
	assert [c.choices[0].finish_reason for c in choice_chunks] == [None] * (len(deltas) - 1) + ["tool_calls"]
	texts = [d.content for d in deltas if d.content]
	assert len(texts) > 1 and "".join(texts) == TEXT
	fragments = [part for d in deltas for part in d.tool_calls or []]
	for index, call in enumerate(CALLS):
		first, *rest = [f for f in fragments if f.index == index]
		assert first.id.startswith("call_") and first.type == "function"
		assert (first.function.name, first.function.arguments) == (call["name"].replace(".", "__"), "")
		assert rest and all(f.id is None and f.type is None and f.function.name is None for f in rest)
		assert json.loads("".join(f.function.arguments for f in rest)) == call["arguments"]
	assert [f.index for f in fragments] == sorted(f.index for f in fragments)  # one call after another


def test_text_pieces_join_back_to_the_text_exactly():
	for text in (TEXT, "  leading and trailing  ", "one", "", "line one\nline two\n\n- a\n- b"):
		assert "".join(text_pieces(text)) == text
	assert len(text_pieces(TEXT)) > 1


# -- the agent's streaming provider over the stub -----------------------------------------------


@pytest.mark.parametrize("kind", SCRIPTS)
def test_the_streaming_provider_gets_the_plain_reply_in_one_request(kind):
	pieces: list[str] = []
	with StubProvider(rules=False) as plain_stub, StubProvider(rules=False) as stream_stub:
		plain_stub.push(SCRIPTS[kind])
		stream_stub.push(SCRIPTS[kind])
		plain = provider_for(plain_stub).complete(MESSAGES, TOOLS)
		streamed = StreamingProvider(provider_for(stream_stub), pieces.append).complete(MESSAGES, TOOLS)
		(body,) = stream_stub.chat_requests  # no refused first request, no second plain one
	assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
	assert replace(streamed, latency_ms=0) == replace(plain, latency_ms=0)
	assert streamed.usage.prompt_tokens > 0 and streamed.usage.completion_tokens > 0
	if kind == "text":
		assert len(pieces) > 1 and "".join(pieces) == TEXT
	else:
		assert pieces == []  # nothing streams from a reply that calls tools


def test_streamed_calls_go_back_to_one_kept_alive_connection(monkeypatch):
	# The SDK's own stream iterator stops at [DONE] and closes the response unread, which drops
	# the connection: every streamed call then opens a new one (a new TLS handshake on a provider).
	from noviz_agent.testing import stub_provider

	opened: list = []
	setup = stub_provider._Handler.setup

	def counting(handler):
		opened.append(handler.client_address)
		setup(handler)

	monkeypatch.setattr(stub_provider._Handler, "setup", counting)
	with StubProvider(rules=False) as stub:
		for kind in ("text", "tool_calls", "text"):
			stub.push(SCRIPTS[kind])
		streaming = StreamingProvider(provider_for(stub), lambda piece: None)
		replies = [streaming.complete(MESSAGES, TOOLS) for _ in range(3)]
		assert len(stub.chat_requests) == 3
	assert [r.text for r in replies] == [TEXT, "", TEXT]
	assert len(opened) == 1, opened


# -- the wire: usage, framing, errors --------------------------------------------------------------


def test_without_include_usage_no_chunk_carries_usage():
	with StubProvider(rules=False) as stub:
		stub.push(text=TEXT)
		status, headers, data = raw_post(stub, {"model": "m", "messages": MESSAGES, "stream": True})
	assert status == 200 and headers["content-type"].startswith("text/event-stream")
	*chunks, done = events(data)
	assert done == "[DONE]"
	chunks = [json.loads(c) for c in chunks]
	assert all("usage" not in c and len(c["choices"]) == 1 for c in chunks)
	assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "stop"}


def test_a_streamed_reply_ends_so_a_kept_alive_connection_serves_the_next_request():
	with StubProvider(rules=False) as stub:
		stub.push(text=TEXT).push(text="second")
		url = urlsplit(stub.base_url)
		connection = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
		try:
			body = {"model": "m", "messages": MESSAGES, "stream": True}
			connection.request("POST", url.path + "/chat/completions", json.dumps(body))
			first = connection.getresponse()
			assert first.getheader("Transfer-Encoding") == "chunked" and not first.will_close
			assert events(first.read())[-1] == "[DONE]"
			socket = connection.sock
			connection.request("POST", url.path + "/chat/completions", json.dumps({**body, "stream": False}))
			second = connection.getresponse()
			assert connection.sock is socket  # the same connection, not a new one
			assert json.loads(second.read())["choices"][0]["message"]["content"] == "second"
		finally:
			connection.close()


def test_a_scripted_error_on_a_stream_request_is_a_plain_json_error():
	with StubProvider(rules=False) as stub:
		stub.push(status=429, retry_after=0, error="slow down").push(status=503, error="overloaded")
		status, headers, data = raw_post(stub, {"model": "m", "messages": MESSAGES, "stream": True})
		assert (status, headers["content-type"], headers["retry-after"]) == (429, "application/json", "0")
		assert json.loads(data)["error"]["message"] == "slow down"
		with pytest.raises(openai.InternalServerError, match="overloaded"):
			sdk(stub).chat.completions.create(model="m", messages=MESSAGES, stream=True)


def test_a_stream_request_openai_would_refuse_gets_400_and_keeps_the_script():
	with StubProvider(rules=False) as stub:
		stub.push(text="kept")
		orphan = [*MESSAGES, {"role": "tool", "tool_call_id": "call_1", "content": "{}"}]
		status, headers, data = raw_post(stub, {"model": "m", "messages": orphan, "stream": True})
		assert (status, headers["content-type"]) == (400, "application/json")
		assert json.loads(data)["error"]["type"] == "invalid_request_error"
		assert stub.pending == 1 and len(stub.refused) == 1


def test_a_raw_reply_goes_out_as_scripted_on_a_stream_request():
	with StubProvider(rules=False) as stub:
		stub.push(raw="data: {broken\n\n", content_type="text/event-stream")
		status, headers, data = raw_post(stub, {"model": "m", "messages": MESSAGES, "stream": True})
	assert (status, headers["content-type"], data) == (200, "text/event-stream", b"data: {broken\n\n")


def test_a_delay_comes_before_the_first_byte_of_a_stream():
	with StubProvider(rules=False) as stub:
		stub.push(delay=5, text="late")
		client = openai.OpenAI(base_url=stub.base_url, api_key="sk-test", max_retries=0, timeout=0.3)
		# `create` returns once the headers arrive: a delay sent after them would not time it out.
		with pytest.raises(openai.APITimeoutError):
			client.chat.completions.create(model="m", messages=MESSAGES, stream=True)


# -- refusing to stream, for the fallback test ---------------------------------------------------


def test_streams_false_refuses_a_stream_request_with_400_and_keeps_the_script():
	with StubProvider(rules=False, streams=False) as stub:
		stub.push(text="plain")
		status, _headers, data = raw_post(stub, {"model": "m", "messages": MESSAGES, "stream": True})
		assert status == 400 and "does not stream" in json.loads(data)["error"]["message"]
		assert stub.pending == 1
		plain = sdk(stub).chat.completions.create(model="m", messages=MESSAGES)
		assert plain.choices[0].message.content == "plain"


@pytest.mark.parametrize(("flags", "status"), [([], 200), (["--no-stream"], 400)])
def test_the_command_line_streams_unless_told_not_to(flags, status):
	command = [sys.executable, "-m", "noviz_agent.testing.stub_provider", "--port", "0", "--quiet", *flags]
	env = {**os.environ, "PYTHONPATH": str(ROOT)}
	process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
	try:
		base_url = process.stdout.readline().split(" at ")[1].split(" ")[0]
		url = urlsplit(base_url)
		connection = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
		body = {"model": "m", "messages": MESSAGES, "stream": True}
		connection.request("POST", url.path + "/chat/completions", json.dumps(body))
		response = connection.getresponse()
		data = response.read()
		connection.close()
		assert response.status == status
		if status == 200:
			assert events(data)[-1] == "[DONE]"
	finally:
		process.terminate()
		process.wait(timeout=10)
