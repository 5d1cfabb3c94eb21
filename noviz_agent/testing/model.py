"""A scripted fake model: a queue of planned tool calls and answers that records what it was sent.

    model = ScriptedModel([call("sales_order.list", {"limit": 5}), answer("You have 5 orders.")])
    with model:                      # fails the test if a planned step is left over
        run_turn(..., provider=model)
    assert model.requests[1][0][-1]["role"] == "tool"

A step is `call(...)`, `calls([...])` (several calls in one reply), `answer(...)`, an
exception to raise (e.g. a ProviderError), or a callable `(messages, tools) -> ModelReply`
(a string or a step may be returned too).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from noviz_agent.engine.provider import ModelReply, ToolCall, Usage
from noviz_agent.engine.tools import from_wire_name

__all__ = ["ScriptedModel", "Step", "answer", "call", "calls"]


@dataclass(frozen=True)
class Step:
	"""One planned reply: text and/or tool calls as (name, arguments dict or raw argument text)."""

	text: str = ""
	tool_calls: tuple[tuple[str, dict | str], ...] = ()
	usage: Usage | None = None


def call(
	name: str, args: dict | None = None, *, raw: str | None = None, text: str = "", usage: Usage | None = None
) -> Step:
	"""A reply with one tool call; `raw` sends argument text as is (e.g. malformed JSON)."""
	return Step(text, ((name, raw if raw is not None else dict(args or {})),), usage)


def calls(
	items: Iterable[Step | tuple[str, dict | str]], *, text: str = "", usage: Usage | None = None
) -> Step:
	"""A reply with several tool calls, from `call(...)` steps or `(name, args)` pairs."""
	planned: list[tuple[str, dict | str]] = []
	for item in items:
		planned.extend(item.tool_calls if isinstance(item, Step) else [(item[0], item[1])])
	return Step(text, tuple(planned), usage)


def answer(text: str, *, usage: Usage | None = None) -> Step:
	"""A final text reply with no tool calls."""
	return Step(text, (), usage)


StepLike = Step | BaseException | Callable[[list[dict], list[dict]], Any]


class ScriptedModel:
	"""A `Provider` that replies from a fixed plan and fails loudly when the plan and the run disagree."""

	def __init__(
		self, steps: Iterable[StepLike] = (), *, usage: Usage | None = None, model: str = "scripted"
	):
		self.steps: list[StepLike] = list(steps)
		self.usage = usage
		self.model = model
		self.requests: list[tuple[list[dict], list[dict]]] = []
		self.timeouts: list[float | None] = []
		self._next = 0
		self._ids = 0

	def complete(
		self, messages: list[dict], tools: list[dict], *, timeout: float | None = None
	) -> ModelReply:
		# Copies, because the loop keeps appending to the same list after this call.
		self.requests.append((copy.deepcopy(messages), copy.deepcopy(tools)))
		self.timeouts.append(timeout)
		if self._next >= len(self.steps):
			raise AssertionError(
				f"ScriptedModel was asked for reply {self._next + 1} but only {len(self.steps)} "
				f"step(s) were planned. The last message sent was: {_describe(messages)}"
			)
		step = self.steps[self._next]
		self._next += 1
		if isinstance(step, BaseException):
			raise step
		if callable(step) and not isinstance(step, Step):
			step = step(messages, tools)
		if isinstance(step, str):
			step = answer(step)
		if isinstance(step, ModelReply):
			return step
		if not isinstance(step, Step):
			raise TypeError(
				f"ScriptedModel step {self._next} is {type(step).__name__}, not a step or ModelReply"
			)
		return self._reply(step)

	def _reply(self, step: Step) -> ModelReply:
		tool_calls: list[ToolCall] = []
		for name, args in step.tool_calls:
			self._ids += 1
			tool_calls.append(ToolCall.from_wire(f"call_{self._ids}", name, args))
		return ModelReply(
			text=step.text,
			tool_calls=tool_calls,
			usage=step.usage or self.usage or Usage(),
			model=self.model,
			finish_reason="tool_calls" if tool_calls else "stop",
		)

	@property
	def remaining(self) -> int:
		return len(self.steps) - self._next

	def offered(self, request: int = -1) -> list[str]:
		"""The dotted names of the tools offered in one recorded request (the last by default)."""
		return [from_wire_name(t["function"]["name"]) for t in self.requests[request][1]]

	def assert_consumed(self) -> None:
		if self.remaining:
			left = ", ".join(_describe_step(s) for s in self.steps[self._next :])
			raise AssertionError(
				f"ScriptedModel: {self.remaining} planned step(s) were never used ({left}); "
				f"the run made {len(self.requests)} model call(s)."
			)

	def __enter__(self) -> ScriptedModel:
		return self

	def __exit__(self, exc_type, exc, tb) -> None:
		# A failure inside the block is the real story; don't mask it with a leftover-steps error.
		if exc_type is None:
			self.assert_consumed()


def _describe(messages: list[dict]) -> str:
	if not messages:
		return "(no messages)"
	last = messages[-1]
	content = last.get("content")
	if not isinstance(content, str):
		content = repr(content)
	return f"{last.get('role')}: {content[:200]!r}"


def _describe_step(step: StepLike) -> str:
	if isinstance(step, Step):
		if step.tool_calls:
			return "call " + "+".join(name for name, _ in step.tool_calls)
		return f"answer {step.text[:40]!r}"
	return type(step).__name__
