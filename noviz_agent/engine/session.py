"""The session: who is asking, what they may use, and the limits of one turn.

Built once per turn from the person's identity; never shared between people.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from noviz_agent.engine.secrets import Scrubber
from noviz_agent.engine.tools import Registry


@dataclass(frozen=True)
class Person:
	"""The signed-in person the turn runs as."""

	user: str
	roles: frozenset[str] = frozenset()
	full_name: str = ""
	company: str | None = None
	language: str = "en"


@dataclass(frozen=True)
class Limits:
	"""Per-turn bounds; each one that is hit ends the turn with a named error."""

	max_steps: int = 8
	max_seconds: float = 120.0
	max_tokens: int = 80_000
	page_size: int = 20
	history_turns: int = 6
	max_tools: int = 40
	proposal_ttl_seconds: int = 15 * 60


class MemoryStore:
	"""A small expiring key-value store with an atomic take; the frappe edge uses Redis instead."""

	def __init__(self, clock: Callable[[], float] = time.time):
		self._data: dict[str, tuple[float, Any]] = {}
		self._lock = threading.Lock()
		self._clock = clock

	def put(self, key: str, value: Any, ttl: float) -> None:
		with self._lock:
			self._data[key] = (self._clock() + ttl, value)

	def get(self, key: str) -> Any | None:
		with self._lock:
			item = self._data.get(key)
			if item is None:
				return None
			if item[0] < self._clock():
				del self._data[key]
				return None
			return item[1]

	def take(self, key: str) -> Any | None:
		"""Remove and return the value: of two concurrent takes, only one gets it."""
		with self._lock:
			item = self._data.pop(key, None)
			if item is None or item[0] < self._clock():
				return None
			return item[1]


@dataclass
class Session:
	"""Everything one turn needs, bound to one person."""

	person: Person
	connector: Any
	registry: Registry
	allowed: frozenset[str]
	limits: Limits = field(default_factory=Limits)
	# Signs proposal tokens; the frappe edge derives it from the site's encryption key.
	secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))
	proposals: Any = field(default_factory=MemoryStore)
	results: Any = field(default_factory=MemoryStore)
	writes_enabled: bool = True
	clock: Callable[[], float] = time.time
	# Tools offered in this turn; `tools.search` adds to it.
	offered: set[str] = field(default_factory=set)
	# The tools selection offered, in its order: written by `turn.run_turn`, read by the loop (the
	# provider sees them in this order, so its prompt cache hits) and by the evaluation's records.
	offer_order: list[str] = field(default_factory=list)
	# The process documents for `knowledge.search`: a knowledge base (anything with `search` and
	# `context`), or a zero-argument opener that the tool calls on first use and replaces with what it
	# opened; None where the site has none.
	knowledge: Any = None
	# Hands a large analysis to a background worker: `enqueue_analysis(key, params, companies)` returns
	# the job id; None (no worker serves the long queue) computes it inside the turn.
	enqueue_analysis: Callable[[str, dict, list[str]], str] | None = None
	# Document intake's reads and writes as this person (`documents.intake`); None where unavailable.
	intake: Any = None
	# Standing goals made as this person (`goals.propose`): anything with `create(spec) -> {name, _link}`;
	# None where unavailable.
	goals: Any = None
	progress: Callable[[dict], None] | None = None
	# The conversation this turn belongs to: proposals made here are confirmed only here.
	conversation: str | None = None
	# Whether the person asked to stop this turn; read between steps (a flag in Redis on a site).
	cancelled: Callable[[], bool] | None = None
	# The ERPNext release the site runs (15, 16); passages written for another one say so. None: unknown.
	erpnext_version: int | None = None
	# Removes every secret of this site and person from a text before the model, a log row or the
	# browser sees it (engine/secrets.py); the frappe edge gives it the configured keys.
	scrub: Callable[[Any], Any] = field(default_factory=Scrubber)
	# Where untrusted text (records, documents, passages, other systems, earlier turns) entered
	# this turn's context: every write proposed after it carries a warning naming these sources.
	untrusted: list[dict] = field(default_factory=list)

	@property
	def user(self) -> str:
		return self.person.user

	def may_use(self, name: str) -> bool:
		return name in self.allowed and name in self.registry

	def stop_requested(self) -> bool:
		return self.cancelled is not None and bool(self.cancelled())

	def notify(self, event: dict) -> None:
		if self.progress is not None:
			self.progress(event)
