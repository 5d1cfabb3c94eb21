"""The order rules of a chat request's messages, as OpenAI enforces them.

Every `tool` message answers a `tool_call_id` of the assistant message just before it (with
only other answers between), and an assistant message with `tool_calls` is followed by an
answer to each of them. A loop that breaks this gets HTTP 400 from OpenAI, whatever the model.
"""

from __future__ import annotations

from noviz_agent.engine.schema_rules import Problem

__all__ = ["check_messages"]


def check_messages(messages) -> list[Problem]:
	"""Message order: every `tool` message answers a call of the assistant message before it,
	and an assistant message with tool_calls is followed by an answer to each of them."""
	if not isinstance(messages, list) or not messages:
		return [Problem("messages", "messages", "messages must be a non-empty array.")]
	problems, open_calls, answered, asked_at = [], [], set(), 0
	for i, message in enumerate(messages):
		role = message.get("role") if isinstance(message, dict) else None
		if role not in ("system", "developer", "user", "assistant", "tool", "function"):
			problems.append(
				Problem("message-role", f"messages[{i}]", f"Invalid 'messages[{i}].role': {role!r}.")
			)
			continue
		if role == "tool":
			call_id = message.get("tool_call_id")
			if call_id not in open_calls:
				problems.append(
					Problem(
						"tool-message-order",
						f"messages[{i}]",
						"Invalid parameter: messages with role 'tool' must be a response to a preceeding "
						"message with 'tool_calls'.",
					)
				)
			else:
				answered.add(call_id)
			continue
		problems += _unanswered(open_calls, answered, asked_at)
		open_calls, answered, asked_at = [], set(), i
		if role == "assistant":
			open_calls = [c.get("id") for c in message.get("tool_calls") or [] if isinstance(c, dict)]
	problems += _unanswered(open_calls, answered, asked_at)
	return problems


def _unanswered(open_calls: list, answered: set, index: int) -> list[Problem]:
	missing = [c for c in open_calls if c not in answered]
	if not missing:
		return []
	return [
		Problem(
			"tool-calls-answered",
			f"messages[{index}]",
			"An assistant message with 'tool_calls' must be followed by tool messages responding to each "
			f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(map(str, missing))}",
		)
	]
