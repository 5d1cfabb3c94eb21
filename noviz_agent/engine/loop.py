"""The reasoning loop, as plain functions.

Call the model, guard the calls it proposes, run them through the gateway, append the
results, repeat — bounded by steps, wall time and tokens. A proposal ends the loop: a
write waits for the person, not for the model.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from noviz_agent.engine import gateway, guards, provenance
from noviz_agent.engine.errors import (
	ProviderError,
	StepLimitExceeded,
	TimeLimitExceeded,
	TokenLimitExceeded,
	TurnCancelled,
	TurnLimitError,
)
from noviz_agent.engine.gateway import ToolResult
from noviz_agent.engine.provider import Provider, ToolCall, Usage
from noviz_agent.engine.schema_rules import MAX_TOOLS
from noviz_agent.engine.session import Session


@dataclass
class LoopResult:
	"""What the loop produced: the final text, every tool result, usage, and why it stopped."""

	text: str = ""
	results: list[ToolResult] = field(default_factory=list)
	usage: Usage = field(default_factory=Usage)
	steps: int = 0
	model_calls: int = 0
	guards: list[str] = field(default_factory=list)
	error: Exception | None = None
	messages: list[dict] = field(default_factory=list)
	model: str = ""

	@property
	def stopped_by_limit(self) -> bool:
		return isinstance(self.error, TurnLimitError)


def offered_schemas(session: Session) -> list[dict]:
	"""The schemas of the tools offered now: the selection's order first, tools found later at the end.

	A stable order keeps the request prefix byte-identical, so provider prompt caches hit.
	"""
	selected = [n for n in session.offer_order if n in session.offered]
	placed = set(selected)
	# In the registry's order (the whole registry is walked only when a search found tools).
	found = (
		[t.name for t in session.registry if t.name in session.offered and t.name not in placed]
		if any(name not in placed for name in session.offered)
		else []
	)
	# Tools found by tools.search during the turn stay offered; over the provider's cap, the
	# last of the selection's order make room for them.
	order = selected[: max(MAX_TOOLS - len(found), 0)] + found[:MAX_TOOLS]
	return [session.registry[n].schema() for n in order if session.may_use(n)]


def _run_call(session: Session, call: ToolCall, state: guards.GuardState) -> ToolResult:
	if call.error or call.arguments is None:
		return ToolResult(
			call.name,
			{},
			"error",
			error=f"The arguments for {call.name} were not valid JSON ({call.error or 'missing'}). "
			"Send them again as one JSON object.",
		)
	if call.name not in session.offered and call.name in session.registry:
		return ToolResult(
			call.name,
			call.arguments,
			"error",
			error=f"{call.name} was not offered for this request. Use tools.search to find and unlock the "
			"tool you need, then call it.",
		)
	tool = session.registry.get(call.name)
	# Strict mode sends every property, null where not given: guards see what the gateway runs.
	args = gateway.nulls_as_absent(call.arguments, tool.parameters) if tool else call.arguments
	verdict = guards.check(call.name, args, state)
	if verdict is not None:
		return ToolResult(call.name, args, "error", error=verdict.message, meta={"guard": verdict.guard})
	state.record(call.name, args)
	result = gateway.call_tool(session, call.name, args)
	# The gateway warned a proposal made after untrusted text (engine/provenance.py): the log says so.
	if result.meta.get("guard") == provenance.GUARD and provenance.GUARD not in state.fired:
		state.fired.append(provenance.GUARD)
	return result


STOPPED = "Stopped at your request before the answer was finished. Nothing was changed."


def _check_stop(session: Session) -> None:
	if session.stop_requested():
		raise TurnCancelled(STOPPED)


def run(
	session: Session,
	provider: Provider,
	messages: list[dict],
	*,
	clock: Callable[[], float] = time.monotonic,
	untrusted: tuple[tuple[str, str], ...] = (),
) -> LoopResult:
	"""Run the loop until the model answers, a proposal awaits the person, or a limit is hit.

	`untrusted` is (source, text) read before the loop (knowledge passages, say): text of others in
	the context from the start, like the results of tools (engine/provenance.py).
	"""
	limits = session.limits
	outcome = LoopResult(messages=messages)
	state = guards.GuardState()
	for source, text in untrusted:
		provenance.note(session.untrusted, source, [text])
	deadline = clock() + limits.max_seconds
	try:
		for step in range(1, limits.max_steps + 1):
			outcome.steps = step
			remaining = deadline - clock()
			if remaining <= 0:
				raise TimeLimitExceeded(
					f"I stopped after {limits.max_seconds:g} seconds without finishing. "
					"Try a narrower question, or ask your administrator to raise the turn time limit."
				)
			session.notify({"event": "thinking", "step": step, "max_steps": limits.max_steps})
			# Asked right after the notice, so a sender that reads the stop flag with its message
			# answers from that reading (see edge/frappe_turns.StopFlag).
			_check_stop(session)
			reply = provider.complete(messages, offered_schemas(session), timeout=remaining)
			outcome.model_calls += 1
			outcome.model = reply.model or outcome.model
			outcome.usage = outcome.usage + reply.usage
			if outcome.usage.total_tokens > limits.max_tokens:
				raise TokenLimitExceeded(
					f"I stopped because this question used more than {limits.max_tokens:,} tokens. "
					"Try a narrower question or start a new conversation."
				)
			if not reply.tool_calls:
				outcome.text = reply.text or ""
				return outcome
			messages.append(reply.to_message())
			awaiting = False
			for call in reply.tool_calls:
				session.notify(
					{"event": "tool", "tool": call.name, "step": step, "max_steps": limits.max_steps}
				)
				result = _run_call(session, call, state)
				outcome.results.append(result)
				messages.append({"role": "tool", "tool_call_id": call.id, "content": result.for_model()})
				awaiting = awaiting or result.status == "proposal"
			if awaiting:
				outcome.text = reply.text or ""
				return outcome
			_check_stop(session)
		raise StepLimitExceeded(
			f"I stopped after {limits.max_steps} tool steps without reaching an answer. "
			"Try asking for one thing at a time."
		)
	except (TurnLimitError, ProviderError) as exc:
		outcome.error = exc
		return outcome
	finally:
		outcome.guards = list(state.fired)


def tool_calls_for_log(results: list[ToolResult]) -> list[dict]:
	"""One line per call for the interaction log: name, status, milliseconds, error."""
	return [
		{
			"name": r.name,
			"status": r.status,
			"ms": r.ms,
			"error": r.error,
			"args": json.dumps(r.args, default=str, ensure_ascii=False)[:500],
		}
		for r in results
	]
