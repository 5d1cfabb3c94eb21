"""Streaming of the model's text: pieces reach the chat as they come; the reply is the same as unstreamed."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from noviz_agent.engine.llm import ModelSettings, OpenAICompatibleProvider
from noviz_agent.engine.streaming import StreamingProvider
from noviz_agent.testing.stub_provider import StubProvider


def _chunk(content=None, calls=None, finish=None, usage=None):
	delta = NS(content=content, tool_calls=calls)
	choices = [] if usage is not None else [NS(delta=delta, finish_reason=finish)]
	return NS(model="m-1", choices=choices, usage=usage)


def _call_part(index, id=None, name=None, arguments=None):
	return NS(index=index, id=id, function=NS(name=name, arguments=arguments))


class FakeClient:
	def __init__(self, chunks):
		self.chunks, self.requests = chunks, []
		self.chat = NS(completions=NS(create=self.create))

	def create(self, **request):
		self.requests.append(request)
		return iter(self.chunks)


def _provider(chunks):
	client = FakeClient(chunks)
	return OpenAICompatibleProvider(ModelSettings("http://127.0.0.1:9/v1", model="m"), client=client), client


USAGE = NS(prompt_tokens=120, completion_tokens=9, prompt_tokens_details=NS(cached_tokens=100))


def test_text_reaches_the_chat_in_pieces_and_the_reply_is_the_whole_text():
	words = ["You ", "have ", "five ", "open ", "orders ", "worth ", "1,250.00 ", "USD."]
	provider, client = _provider([_chunk(w) for w in words] + [_chunk(finish="stop"), _chunk(usage=USAGE)])
	pieces = []
	reply = StreamingProvider(provider, pieces.append, flush_chars=10).complete([{"role": "user"}], [])
	assert len(pieces) > 1
	assert "".join(pieces) == "".join(words)
	assert reply.text == "".join(words).strip()
	assert (reply.usage.prompt_tokens, reply.usage.cached_tokens, reply.usage.completion_tokens) == (
		120,
		100,
		9,
	)
	assert client.requests[0]["stream"] is True
	assert client.requests[0]["stream_options"] == {"include_usage": True}


def test_tool_calls_split_over_chunks_are_joined_and_nothing_is_streamed():
	chunks = [
		_chunk(calls=[_call_part(0, id="call_1", name="sales_order__list", arguments='{"lim')]),
		_chunk(calls=[_call_part(0, arguments='it": 5}')]),
		_chunk(finish="tool_calls"),
	]
	provider, _client = _provider(chunks)
	pieces = []
	reply = StreamingProvider(provider, pieces.append).complete([{"role": "user"}], [])
	assert pieces == []
	assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
		("call_1", "sales_order.list", {"limit": 5})
	]


def test_a_printed_tool_call_or_think_block_is_never_streamed_to_the_person():
	text = '<think>plan</think>{"name": "customer__list", "arguments": {}}'
	provider, _client = _provider([_chunk(text[:9]), _chunk(text[9:]), _chunk(finish="stop")])
	pieces = []
	StreamingProvider(provider, pieces.append, flush_chars=1).complete([{"role": "user"}], [])
	assert pieces == []


def test_a_provider_that_refuses_streaming_is_asked_again_without_it():
	with StubProvider(streams=False) as stub:
		stub.push(text="Plain answer.")
		provider = OpenAICompatibleProvider(ModelSettings(stub.base_url, model="stub-model", max_retries=0))
		streaming = StreamingProvider(provider, lambda piece: None)
		reply = streaming.complete([{"role": "user", "content": "hi"}], [])
		assert reply.text == "Plain answer."
		assert [bool(body.get("stream")) for body in stub.chat_requests] == [True, False]
		assert streaming.streams is False


def test_the_stub_waits_its_think_time_on_rule_answers_only():
	stub = StubProvider(latency=(0.3, 0.9))
	body = {"messages": [{"role": "user", "content": "hello"}]}
	assert 0.3 <= stub._next_chat(body)["delay"] <= 0.9
	stub.push(text="scripted")
	assert "delay" not in stub._next_chat(body)
	assert "delay" not in StubProvider()._next_chat(body)


class _WireResponse:
	"""An httpx-like response: the server-sent event lines of one stream, and whether it was closed."""

	def __init__(self, lines):
		self.lines, self.closed = list(lines), False

	def iter_lines(self):
		yield from self.lines

	def close(self):
		self.closed = True


def test_an_error_sent_inside_the_stream_fails_the_call_with_the_providers_message():
	from noviz_agent.engine.errors import ProviderError

	response = _WireResponse(
		[
			'data: {"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hel"}}]}',
			"",
			'data: {"error": {"message": "the model is overloaded"}}',
			"",
		]
	)
	provider, _ = _provider([])
	provider.client.chat.completions.create = lambda **request: NS(response=response)
	with pytest.raises(ProviderError, match="in the middle of its reply: the model is overloaded"):
		StreamingProvider(provider, lambda piece: None).complete([{"role": "user"}], [])
	assert response.closed


def test_the_rest_of_the_body_after_done_is_read_before_the_response_is_closed():
	from noviz_agent.engine import streaming

	rest_read = []

	def lines():
		yield 'data: {"choices": [{"index": 0, "delta": {"content": "Hi."}, "finish_reason": "stop"}]}'
		yield ""
		yield "data: [DONE]"
		yield ""
		rest_read.append(True)  # only reached when the body is read to its end

	response = _WireResponse([])
	response.iter_lines = lines
	chunks = list(streaming._chunks(NS(response=response)))
	assert [c["choices"][0]["delta"]["content"] for c in chunks] == ["Hi."]
	assert rest_read == [True] and response.closed


def test_pieces_are_held_back_until_the_minimum_interval_has_passed_and_nothing_is_lost():
	words = ["You ", "have ", "five ", "open ", "orders ", "worth ", "1,250.00 ", "USD."]
	clock = NS(now=100.0)
	provider, _ = _provider([_chunk(w) for w in words] + [_chunk(finish="stop"), _chunk(usage=USAGE)])
	pieces = []

	def on_text(piece):
		pieces.append(piece)
		clock.now += 0.04  # the next words arrive before 0.1 s has passed

	streaming = StreamingProvider(provider, on_text, flush_chars=4, min_seconds=0.1, clock=lambda: clock.now)
	reply = streaming.complete([{"role": "user"}], [])
	assert "".join(pieces) == "".join(words) and reply.text == "".join(words).strip()
	# Without the interval every word would go out alone (each is 4 characters or more).
	assert 1 < len(pieces) < len(words)
