"""What the loop sends to a model and what comes back: ToolCall, Usage, ModelReply, Provider.

The loop, the scripted test model and the OpenAI-compatible client all speak these types;
nothing here knows about HTTP, settings or a particular provider.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from noviz_agent.engine.tools import from_wire_name, to_wire_name

__all__ = ["ModelReply", "Provider", "ToolCall", "Usage", "new_call_id", "parse_arguments"]


@dataclass
class ToolCall:
	"""One tool the model asked for, by dotted name; `error` says why the arguments could not be read."""

	id: str
	name: str
	arguments: dict | None
	raw_arguments: str = ""
	error: str | None = None

	@classmethod
	def from_wire(cls, call_id: str | None, wire_name: str, raw: Any) -> ToolCall:
		arguments, raw_text, error = parse_arguments(raw)
		return cls(call_id or new_call_id(), from_wire_name(wire_name or ""), arguments, raw_text, error)

	def to_wire(self) -> dict:
		"""The call as it appears in an assistant message (wire name, arguments as a JSON string)."""
		# The model's own text when there is one: what it sent is what it should see again.
		raw = self.raw_arguments or json.dumps(self.arguments or {}, ensure_ascii=False)
		return {
			"id": self.id,
			"type": "function",
			"function": {"name": to_wire_name(self.name), "arguments": raw},
		}


@dataclass(frozen=True)
class Usage:
	"""Tokens of one call (or a sum of calls): cached tokens are the part of the prompt the provider reused."""

	prompt_tokens: int = 0
	cached_tokens: int = 0
	completion_tokens: int = 0

	@property
	def total_tokens(self) -> int:
		return self.prompt_tokens + self.completion_tokens

	def __add__(self, other: Usage) -> Usage:
		return Usage(
			self.prompt_tokens + other.prompt_tokens,
			self.cached_tokens + other.cached_tokens,
			self.completion_tokens + other.completion_tokens,
		)


@dataclass
class ModelReply:
	"""One answer of the model: text, the tool calls it asked for, and what it cost."""

	text: str
	tool_calls: list[ToolCall] = field(default_factory=list)
	usage: Usage = field(default_factory=Usage)
	model: str = ""
	finish_reason: str | None = None
	latency_ms: float = 0.0
	attempts: int = 1

	def to_message(self) -> dict:
		"""The assistant message to append to the conversation before the tool results."""
		message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
		if self.tool_calls:
			message["tool_calls"] = [call.to_wire() for call in self.tool_calls]
		return message


class Provider(Protocol):
	"""Anything that answers a chat: the OpenAI-compatible client, the scripted test model."""

	def complete(
		self, messages: list[dict], tools: list[dict], *, timeout: float | None = None
	) -> ModelReply: ...


def new_call_id() -> str:
	"""An id for a call that came without one: nine letters and digits, the one shape every
	chat template accepts (Mistral's require exactly that when the call is sent back)."""
	return uuid.uuid4().hex[:9]


def parse_arguments(raw: Any) -> tuple[dict | None, str, str | None]:
	"""(arguments, raw text, error): never raises, so a malformed call goes back to the model as an error."""
	if isinstance(raw, dict):
		try:
			return raw, json.dumps(raw, ensure_ascii=False), None
		except (RecursionError, ValueError, TypeError):
			return None, "", "the arguments could not be read as JSON (nested too deeply or not JSON values)"
	text = raw if isinstance(raw, str) else ("" if raw is None else json.dumps(raw))
	if not text.strip():
		return {}, text, None
	try:
		value = json.loads(text)
		if isinstance(value, str) and value.strip().startswith("{"):
			value = json.loads(value)  # some servers encode the arguments twice
	except ValueError as exc:
		return None, text, f"{getattr(exc, 'msg', exc)} at position {getattr(exc, 'pos', '?')}"
	except RecursionError:
		return None, text, "the JSON is nested too deeply"
	if not isinstance(value, dict):
		return None, text, f"a JSON {type(value).__name__} was sent where an object was expected"
	return value, text, None
