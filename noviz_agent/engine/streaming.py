"""Streaming of the model's text: chat completions with `stream=True`, text passed on as it arrives.

`StreamingProvider` wraps an `OpenAICompatibleProvider` and answers `complete()` exactly like
it (same ModelReply, same retries and error messages), but reads the reply as a stream and
hands text pieces to `on_text` while they come, joined into pieces of at least `flush_chars`.
Text that may turn out to be a printed tool call or a <think> block (it starts with one of
`<{[` or a backtick) is held back and never streamed. A provider that refuses streaming
(HTTP 400 to the first request) is asked again without it, and not again in this turn.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from noviz_agent.engine.provider.interface import ModelReply, ToolCall
from noviz_agent.engine.provider.openai_compatible import THINK_BLOCK, OpenAICompatibleProvider, _usage, field
from noviz_agent.engine.provider.retry import GaveUp, StreamError, classify
from noviz_agent.engine.provider.text_calls import parse_text_tool_calls

HELD_STARTS = ("<", "{", "[", "`")


class _Pieces:
	"""Text deltas, joined into pieces and passed on unless the text may be a call or a think block.

	A piece goes out once it has `flush_chars` characters and `min_seconds` have passed since the
	last one (a provider sends a token at a time; each piece is a message to the person's browser).
	"""

	def __init__(
		self,
		on_text: Callable[[str], None],
		flush_chars: int,
		min_seconds: float = 0.0,
		clock: Callable[[], float] = time.monotonic,
	):
		self.on_text, self.flush_chars, self.min_seconds, self.clock = (
			on_text,
			flush_chars,
			min_seconds,
			clock,
		)
		self.text, self.pending, self.decided, self.passing = "", "", False, False
		self.sent_at: float | None = None

	def add(self, delta: str) -> None:
		self.text += delta
		if not self.decided:
			start = self.text.lstrip()
			if not start:
				return
			self.decided, self.passing = True, not start.startswith(HELD_STARTS)
			delta = start if self.passing else ""
		if self.passing:
			self.pending += delta
			if len(self.pending) >= self.flush_chars and self._due():
				self.flush()

	def _due(self) -> bool:
		return self.sent_at is None or self.clock() - self.sent_at >= self.min_seconds

	def flush(self) -> None:
		if self.passing and self.pending:
			self.on_text(self.pending)
			self.pending = ""
			self.sent_at = self.clock()


class StreamingProvider:
	"""An OpenAI-compatible provider whose replies stream their text to `on_text`."""

	def __init__(
		self,
		provider: OpenAICompatibleProvider,
		on_text: Callable[[str], None],
		*,
		flush_chars=24,
		min_seconds: float = 0.0,
		clock: Callable[[], float] = time.monotonic,
	):
		self.provider, self.on_text, self.flush_chars = provider, on_text, flush_chars
		self.min_seconds, self.clock = min_seconds, clock
		self.streams = True

	def __getattr__(self, name):
		return getattr(self.provider, name)

	def complete(
		self, messages: list[dict], tools: list[dict], *, timeout: float | None = None
	) -> ModelReply:
		if not self.streams:
			return self.provider.complete(messages, tools, timeout=timeout)
		p, s = self.provider, self.provider.settings
		# The provider's own request (strict tools, dialect), asked for as a stream.
		request: dict[str, Any] = {**p.request(messages, tools), "stream": True}
		request["stream_options"] = {"include_usage": True}
		seconds = timeout or s.timeout
		started = time.monotonic()
		try:
			stream, attempts = p.retry.run(lambda: p._create(request, seconds))
		except GaveUp as exc:
			if exc.fault.status == 400:
				self.streams = False  # this server does not stream: plain requests for the rest of the turn
				return self.provider.complete(messages, tools, timeout=timeout)
			raise p._failure(exc.fault, exc.attempts, seconds) from None
		try:
			reply = self._read(stream, tools, attempts)
		except Exception as exc:  # noqa: BLE001 - a broken stream fails like a broken reply
			raise p._failure(classify(exc), attempts, seconds) from None
		reply.latency_ms = round((time.monotonic() - started) * 1000, 1)
		return reply

	def _read(self, stream, tools: list[dict], attempts: int) -> ModelReply:
		pieces = _Pieces(self.on_text, self.flush_chars, self.min_seconds, self.clock)
		calls: dict[int, dict] = {}
		usage, model, finish = None, "", None
		for chunk in _chunks(stream):
			model = field(chunk, "model") or model
			if field(chunk, "usage") is not None:
				usage = field(chunk, "usage")
			for choice in field(chunk, "choices") or []:
				finish = field(choice, "finish_reason") or finish
				delta = field(choice, "delta") or {}
				if field(delta, "content"):
					pieces.add(field(delta, "content"))
				for part in field(delta, "tool_calls") or []:
					slot = calls.setdefault(field(part, "index"), {"id": None, "name": "", "arguments": ""})
					slot["id"] = field(part, "id") or slot["id"]
					function = field(part, "function")
					if function is not None:
						slot["name"] += field(function, "name") or ""
						slot["arguments"] += field(function, "arguments") or ""
		if not calls:
			pieces.flush()
		text = THINK_BLOCK.sub("", pieces.text)
		found = [ToolCall.from_wire(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items())]
		fmt = self.provider.settings.tool_call_format
		if not found and text and fmt != "native":
			offered = {t.get("function", {}).get("name", "") for t in tools}
			text, found = parse_text_tool_calls(text, names=offered, lead_in=fmt == "text")
			if found:
				finish = "tool_calls"
		model = model or self.provider.settings.model
		return ModelReply(text.strip(), found, _usage(usage), model, finish, attempts=attempts)


def _chunks(stream) -> Iterator[Any]:
	"""The stream's chunks. From the SDK's stream, the server-sent events are read here as plain
	JSON (no typed object per chunk, one per token on a real provider) and the body is read to
	its end after `[DONE]`, so the connection goes back to the client's pool: the SDK's own
	iterator stops at `[DONE]` and closes the response unread, which drops the connection and
	makes every streamed call open (and, over TLS, negotiate) a new one."""
	response = getattr(stream, "response", None)
	if response is None or not hasattr(response, "iter_lines"):
		yield from stream  # a client's own iterator of chunk objects
		return
	try:
		lines = response.iter_lines()
		data: list[str] = []
		for line in lines:
			if line.startswith("data:"):
				data.append(line[5:].lstrip())
				continue
			if line or not data:
				continue  # comments, event names and ids; or a blank line between nothing
			payload, data = "\n".join(data), []
			if payload.startswith("[DONE]"):
				for _rest in lines:
					pass  # the end of the body, so the connection can be used again
				return
			chunk = json.loads(payload)
			if isinstance(chunk, dict) and chunk.get("error"):
				error = chunk["error"]
				message = error.get("message") if isinstance(error, dict) else None
				raise StreamError(message or "An error occurred during streaming")
			yield chunk
	finally:
		response.close()
