"""What a turn leaves behind: field values for the interaction log and the conversation's turn rows.

Pure translation from the engine's `TurnOutcome` dicts to DocType fields, so the api stays
a thin edge and these mappings are tested without a site.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from noviz_agent.engine.history import answer_text
from noviz_agent.engine.responses import RESPONSE_TYPES, empty_response

TITLE_CHARS = 70
# Long Text holds far more, but a log row is for reading; the full text stays on the conversation.
MAX_ERROR_CHARS = 4000


@dataclass(frozen=True)
class Rates:
	"""Provider prices per million tokens, from Agent Settings; zero when not set."""

	prompt: float = 0.0
	cached: float | None = None
	completion: float = 0.0

	@classmethod
	def from_settings(cls, values: dict) -> Rates:
		cached = values.get("cached_cost_per_million")
		return cls(
			prompt=float(values.get("prompt_cost_per_million") or 0),
			cached=float(cached) if cached not in (None, "", 0) else None,
			completion=float(values.get("completion_cost_per_million") or 0),
		)


def estimate_cost(prompt_tokens: int, cached_tokens: int, completion_tokens: int, rates: Rates) -> float:
	"""What a turn cost: cached prompt tokens at the cached rate (the prompt rate if none is set)."""
	prompt_tokens, cached_tokens = int(prompt_tokens or 0), int(cached_tokens or 0)
	cached_tokens = min(cached_tokens, prompt_tokens)
	cached_rate = rates.prompt if rates.cached is None else rates.cached
	cost = (
		(prompt_tokens - cached_tokens) * rates.prompt
		+ cached_tokens * cached_rate
		+ int(completion_tokens or 0) * rates.completion
	)
	return round(cost / 1_000_000, 6)


def conversation_title(message: str) -> str:
	"""A short title from the first question, cut at a word boundary."""
	text = " ".join((message or "").split())
	if len(text) <= TITLE_CHARS:
		return text or "New conversation"
	cut = text[: TITLE_CHARS - 1].rsplit(" ", 1)[0]
	return f"{cut}…"


def _joined(values) -> str:
	return ", ".join(str(v) for v in (values or ()) if v not in (None, ""))


def tool_call_rows(calls) -> list[dict]:
	"""Child rows for the log's tool calls: name, status, milliseconds, error."""
	rows = []
	for call in calls or ():
		rows.append(
			{
				"tool": str(call.get("name") or "")[:140],
				"status": str(call.get("status") or ""),
				"ms": float(call.get("ms") or 0),
				"error": (call.get("error") or "")[:MAX_ERROR_CHARS] or None,
			}
		)
	return rows


def log_values(log: dict, *, request: str, person: str, conversation: str | None, rates: Rates) -> dict:
	"""Field values of one Agent Interaction Log row from the engine's per-turn log."""
	prompt = int(log.get("prompt_tokens") or 0)
	cached = int(log.get("cached_tokens") or 0)
	completion = int(log.get("completion_tokens") or 0)
	response_type = log.get("response_type") or "error"
	error = (log.get("error") or "") or None
	return {
		"person": person,
		"conversation": conversation,
		"request": request,
		"modules": _joined(log.get("modules")),
		"tools_offered": _joined(log.get("tools_offered")),
		"tools_cut": _joined(log.get("tools_cut")),
		"tool_calls": tool_call_rows(log.get("tools_called")),
		"guards": _joined(log.get("guards")),
		"response_type": response_type if response_type in RESPONSE_TYPES else "error",
		"latency_ms": int(log.get("latency_ms") or 0),
		"prompt_tokens": prompt,
		"cached_tokens": cached,
		"completion_tokens": completion,
		"estimated_cost": estimate_cost(prompt, cached, completion, rates),
		"provider": log.get("provider") or "",
		"model": log.get("model") or "",
		"error": error[:MAX_ERROR_CHARS] if error else None,
		"failed": 1 if (error or response_type == "error") else 0,
		"cache_hit": log.get("cache_hit") or None,
		"channel": log.get("channel") or "desk",
	}


def failure_log(error: str | None, *, response_type: str = "error", latency_ms: int = 0) -> dict:
	"""The engine-shaped log for a turn that failed before the engine could write its own."""
	return {"response_type": response_type, "error": error, "latency_ms": latency_ms, "tools_called": []}


def turn_values(question: str, response: dict, entry: dict | None, log_name: str | None) -> dict:
	"""Field values of one Agent Conversation Turn row."""
	entry = dict(entry or {})
	return {
		"question": question,
		"answer": answer_text(response or {}),
		"response_type": (response or {}).get("type") or "error",
		"response": json.dumps(response or {}, default=str, ensure_ascii=False),
		"tool_calls": json.dumps(entry.get("tool_calls") or entry.get("tools") or [], default=str),
		"history_entry": json.dumps(entry, default=str, ensure_ascii=False),
		"log": log_name,
	}


def settle_proposal(response: dict, token: str, state: str) -> bool:
	"""Mark the proposal with this token in a stored response as settled; True if it was there.

	A reopened conversation then shows what happened instead of live Confirm/Cancel buttons,
	and the spent token is dropped from the stored answer.
	"""
	proposal = (response or {}).get("proposal")
	if not isinstance(proposal, dict) or proposal.get("token") != token:
		return False
	proposal.pop("token", None)
	proposal["settled"] = state
	return True


def settled_state(confirm: bool, response: dict) -> str:
	"""How a proposal ended: confirmed or cancelled, or closed when the system refused the token."""
	if response.get("type") in ("refusal", "error"):
		return "closed"
	return "confirmed" if confirm else "cancelled"


def history_from_rows(rows) -> list[dict]:
	"""The engine's history (oldest first) from stored turn rows; a row without an entry falls back to its text."""
	history = []
	for row in rows or ():
		entry = loads(row.get("history_entry"), None)
		if not isinstance(entry, dict) or not entry:
			entry = {"question": row.get("question") or ""}
		entry.setdefault("question", row.get("question") or "")
		entry.setdefault("answer", row.get("answer") or answer_text(loads(row.get("response"), {}) or {}))
		history.append(entry)
	return history


def turn_for_client(row: dict) -> dict:
	"""One stored turn as the chat shows it when a conversation is reopened."""
	return {
		"question": row.get("question") or "",
		"response": loads(row.get("response"), {}) or {},
		"log": row.get("log"),
		"asked_at": str(row.get("creation") or row.get("asked_at") or ""),
	}


def loads(value, default):
	"""A JSON field's value (already parsed, a JSON string, or empty) as Python data."""
	if isinstance(value, dict | list):
		return value
	if not value:
		return default
	try:
		return json.loads(value)
	except (TypeError, ValueError):
		return default


def error_response(message: str, hint: str | None = None, *, kind: str = "error") -> dict:
	"""A response object for a turn the engine could not answer (or refused before it ran)."""
	response = empty_response()
	response["type"] = kind
	if kind == "refusal":
		response["refusal"] = {"message": message}
	else:
		response["error"] = {"message": message, "hint": hint} if hint else {"message": message}
	return response


def page_of_result(record, number: int, size: int) -> dict | None:
	"""One page of a result kept server-side, as a table block; None when the record holds no rows."""
	if not isinstance(record, dict) or not isinstance(record.get("rows"), list):
		return None
	rows = [r for r in record["rows"] if isinstance(r, dict)]
	size = max(1, int(record.get("page_size") or size))
	total = len(rows)
	pages = max(1, -(-total // size))
	number = min(max(1, number), pages)
	chosen = rows[(number - 1) * size : number * size]
	columns = record.get("columns") or [
		{"key": k, "label": k.replace("_", " ").title()}
		for k in (rows[0] if rows else {})
		if not k.startswith("_")
	]
	return {
		"title": record.get("title") or "",
		"columns": columns,
		"rows": chosen,
		"page": {"number": number, "size": size, "total": total, "result_id": record.get("result_id")},
	}


def page_call(record, result_id: str, number: int) -> tuple[str, dict] | None:
	"""The tool call that fetches another page of a kept result, so paging re-checks permissions."""
	if not isinstance(record, dict):
		return None
	if record.get("kind") == "query" and record.get("entity"):
		args: dict = {"page": number}
		for key in ("fields", "filters", "order_by"):
			if record.get(key):
				args[key] = record[key]
		return f"{record['entity']}.list", args
	if record.get("kind") == "rows":
		return "report.run", {"result_id": result_id, "page": number}
	return None
