"""Execution memory: what a procedure run did and saw, stored with the conversation.

A run is plain JSON (`RunState.to_dict`), so it survives between turns and workers: the
frappe edge keeps it in an `Agent SOP Run` row linked to the conversation; tests and the
benchmark use `InMemoryRunStore`. Entries are (action, observation, success/failure) with
the line they belong to and the controller's short reason.
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

RUNNING, AWAITING_ANSWER, AWAITING_CONFIRMATION, COMPLETED, ENDED = (
	"running",
	"awaiting_answer",
	"awaiting_confirmation",
	"completed",
	"ended",
)
OPEN = (RUNNING, AWAITING_ANSWER, AWAITING_CONFIRMATION)
# Observations are kept short: the model reads them every step, the store keeps them per run.
MAX_OBSERVATION_CHARS = 1500


def short(value: Any, limit: int = MAX_OBSERVATION_CHARS) -> Any:
	"""An observation small enough to keep: JSON-able values as they are, big ones cut to text."""
	try:
		text = json.dumps(value, default=str, ensure_ascii=False)
	except (TypeError, ValueError):
		text = str(value)
	if len(text) <= limit:
		return json.loads(text)
	return text[:limit] + " …"


@dataclass
class Entry:
	"""One thing the run did: an action at a line, what came back, and whether it worked."""

	kind: str  # "step" | "answer" | "decision" | "interrupt" | "settled" (a proposal confirmed or not) | "ended"
	line: int | None
	action: str
	ok: bool = True
	args: dict = field(default_factory=dict)
	observation: Any = None
	reason: str = ""
	failure: str = ""  # "", "invalid_input", "api_error", "refused", "cancelled"


@dataclass
class RunState:
	"""One run of one procedure in one conversation."""

	sop: str
	title: str = ""
	status: str = RUNNING
	position: int | None = None  # the line to run next, or the line waiting for the person
	reached: list[int] = field(default_factory=list)  # lines reached so far, in order of first arrival
	attempts: dict[str, int] = field(default_factory=dict)
	memory: list[Entry] = field(default_factory=list)
	pending_token: str | None = None
	matches: dict[str, dict] = field(default_factory=dict)
	# Where untrusted text entered the run (its steps' results, across turns): each write it proposes
	# later says so (engine/provenance.py).
	untrusted: list[dict] = field(default_factory=list)

	@property
	def open(self) -> bool:
		return self.status in OPEN

	def add(self, entry: Entry) -> Entry:
		self.memory.append(entry)
		return entry

	def answers(self) -> list[Entry]:
		return [e for e in self.memory if e.kind == "answer"]

	def steps(self) -> list[Entry]:
		return [e for e in self.memory if e.kind in ("step", "interrupt")]

	def to_dict(self) -> dict:
		return asdict(self)

	@classmethod
	def from_dict(cls, data: dict) -> RunState:
		data = copy.deepcopy(data)
		data["memory"] = [Entry(**e) for e in data.get("memory", [])]
		data["attempts"] = {str(k): int(v) for k, v in (data.get("attempts") or {}).items()}
		known = {f for f in cls.__dataclass_fields__}
		return cls(**{k: v for k, v in data.items() if k in known})


class RunStore(Protocol):
	"""Where runs live between turns: one open run per conversation at most."""

	def load(self, conversation: str) -> RunState | None: ...

	def save(self, conversation: str, state: RunState) -> None: ...


class InMemoryRunStore:
	"""A RunStore in a dict, storing JSON text as the frappe edge does (so nothing leaks by reference)."""

	def __init__(self):
		self.rows: dict[str, str] = {}

	def load(self, conversation: str) -> RunState | None:
		text = self.rows.get(conversation)
		return RunState.from_dict(json.loads(text)) if text else None

	def save(self, conversation: str, state: RunState) -> None:
		self.rows[conversation] = json.dumps(state.to_dict(), default=str, ensure_ascii=False)
