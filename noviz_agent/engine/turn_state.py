"""The state of one turn between workers: a plain dict kept in Redis, changed only by these functions.

A background turn is queued by a web worker, run by a background worker, watched by the chat
(over realtime, or by reading the state after a page reload) and perhaps stopped by the person
from yet another web worker. Nothing about it lives in a process: whoever holds the turn id
and is its owner reads the same state. These functions are pure; the frappe edge stores the dict.

    queued -> running -> done | error | cancelled
    queued/running with no live worker -> queued again (attempt + 1), or error after the last attempt
"""

from __future__ import annotations

QUEUED, RUNNING, DONE, ERROR, CANCELLED = "queued", "running", "done", "error", "cancelled"
FINAL = frozenset({DONE, ERROR, CANCELLED})
MAX_EVENTS = 40
MAX_ATTEMPTS = 2
LOST_MESSAGE = (
	"The server that was answering this question stopped before it finished, twice. Nothing was "
	"changed. Ask again; if it keeps happening, tell your administrator."
)
STOPPED_BEFORE_START = "Stopped at your request before it started. Nothing was changed."


def new(turn: str, user: str, message: str, conversation: str, *, new_conversation: bool, now: float) -> dict:
	"""A queued turn: everything a worker needs to run it, and nothing the person may not see."""
	return {
		"turn": turn,
		"user": user,
		"message": message,
		"conversation": conversation,
		"new_conversation": bool(new_conversation),
		"status": QUEUED,
		"attempt": 1,
		"queued_at": now,
		"started_at": None,
		"finished_at": None,
		"events": [],
		"text": "",
		"response": None,
		"log": None,
		"message_for_person": None,
		"figures": {},
		"reservation": None,
	}


def is_final(state: dict | None) -> bool:
	return bool(state) and state.get("status") in FINAL


def started(state: dict, now: float) -> dict:
	return {**state, "status": RUNNING, "started_at": now}


def with_event(state: dict, event: dict) -> dict:
	"""The state after a progress event; streamed text is joined into `text`, other events kept (bounded)."""
	if event.get("event") == "text":
		return {**state, "text": (state.get("text") or "") + str(event.get("delta") or "")}
	events = [*state.get("events", []), {k: v for k, v in event.items() if k != "turn"}]
	return {**state, "events": events[-MAX_EVENTS:]}


def finished(state: dict, reply: dict, now: float, *, figures: dict | None = None) -> dict:
	"""The turn ended with a reply (an answer, a refusal, an error response or a stop), all recorded."""
	response = reply.get("response") or {}
	status = CANCELLED if reply.get("cancelled") else (ERROR if response.get("type") == "error" else DONE)
	return {
		**state,
		"status": status,
		"finished_at": now,
		"response": response,
		"conversation": reply.get("conversation") or state.get("conversation"),
		"log": reply.get("log"),
		"figures": figures or {},
		"reservation": None,
	}


def failed(state: dict, message: str, now: float) -> dict:
	"""The turn ended without a recorded answer; `message` tells the person what happened."""
	return {
		**state,
		"status": ERROR,
		"finished_at": now,
		"message_for_person": message,
		"response": {"type": "error", "text": message, "error": {"message": message}},
	}


def stopped_before_start(state: dict, now: float) -> dict:
	return {**failed(state, STOPPED_BEFORE_START, now), "status": CANCELLED}


def is_lost(state: dict | None, *, alive: bool, job_pending: bool) -> bool:
	"""Queued with no job waiting and no worker on it, or running with no heartbeat: no one will finish it."""
	if not state or is_final(state):
		return False
	if state.get("status") == QUEUED:
		return not job_pending and not alive
	return not alive


def recovered(state: dict, now: float) -> tuple[str, dict]:
	"""What to do with a lost turn: ("retry", the state queued again) or ("give_up", the state failed)."""
	attempt = int(state.get("attempt") or 1)
	if attempt >= MAX_ATTEMPTS:
		return "give_up", failed(state, LOST_MESSAGE, now)
	again = {
		**state,
		"status": QUEUED,
		"attempt": attempt + 1,
		"queued_at": now,
		"started_at": None,
		"text": "",
		"events": [*state.get("events", []), {"event": "retry", "attempt": attempt + 1}][-MAX_EVENTS:],
	}
	return "retry", again


def for_client(state: dict) -> dict:
	"""What the chat gets back for a turn id: status, progress so far, the answer when there is one."""
	keys = ("turn", "status", "attempt", "conversation", "events", "text", "response", "log", "figures")
	shown = {key: state.get(key) for key in keys}
	shown["message"] = state.get("message_for_person")
	return shown


def job_id(turn: str, attempt: int) -> str:
	"""One queue job per turn and attempt: sending the same turn twice queues it once."""
	return f"noviz_agent:turn:{turn}:{attempt}"
