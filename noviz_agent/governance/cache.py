"""A person's own answers, reused for a repeated or very similar first question.

Scoped to one person and never shared: two people may see different records. Only a
conversation's first question is served (later ones depend on what was said before), never a
question about a moving point in time ("today", "this month", "latest"), and never an answer
that proposed a write or failed. Entries expire quickly; each hit is recorded in the log.

A similar question is the same question only when it names the same things: a hit needs the
same identifiers, codes, amounts and dates (`signature`), however close the wording scores -
"employee HR-EMP-00017" and "HR-EMP-00071" embed alike but are different people. And every key
carries the permission generation (`context`), so an answer kept before a permission changed is
never served after it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

DEFAULT_TTL_SECONDS = 600
DEFAULT_THRESHOLD = 0.93
RECENT_KEPT = 50

# Words that make an answer depend on when it is asked.
TIME_RELATIVE = re.compile(
	r"\b(today|tonight|now|right now|currently|current|yesterday|tomorrow|this (week|month|quarter|year)|"
	r"last (week|month|quarter|year|\d+ days?)|past \d+|so far|to date|ytd|mtd|qtd|latest|recent(ly)?|"
	r"overdue|due (soon|this)|next (week|month)|as of|since)\b",
	re.IGNORECASE,
)
CACHEABLE_TYPES = frozenset({"text", "table", "cards", "chart"})


class Store(Protocol):
	def get(self, key: str) -> Any | None: ...

	def put(self, key: str, value: Any, ttl: float) -> None: ...


Embed = Callable[[list[str]], Sequence[Sequence[float]]]


def normalise(question: str) -> str:
	return " ".join(re.sub(r"[^\w\s]", " ", question.lower()).split())


def time_relative(question: str) -> bool:
	return bool(TIME_RELATIVE.search(question))


_MONTHS = (
	"january february march april may june july august september october november december "
	"jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_TOKEN = re.compile(r"\S+")
_QUOTED = re.compile(
	r"[\"\u201c\u201d\u00ab\u00bb']([^\"\u201c\u201d\u00ab\u00bb']{2,})[\"\u201c\u201d\u00ab\u00bb']"
)
_EDGE = ".,;:!?()[]{}<>\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"
_AMOUNT = re.compile(r"^[+-]?\d{1,3}(?:[,\u00a0 ]\d{3})+(?:\.\d+)?$|^[+-]?\d+(?:\.\d+)?$")


def _identifier(token: str, first: bool) -> str | None:
	"""The token as part of the question's signature, or None for an ordinary word."""
	word = token.strip(_EDGE)
	if word.lower().endswith(("'s", "\u2019s")):
		word = word[:-2]
	if not word:
		return None
	if any(c.isdigit() for c in word):
		if _AMOUNT.match(word):
			# 10,000 and 10000.00 are the same amount; 10000 and 100000 are not.
			number = float(re.sub(r"[,\u00a0 ]", "", word))
			return f"{number:g}" if abs(number) < 1e15 else word
		return word.lower()
	lower = word.lower()
	if lower in _MONTHS:
		return lower
	capitals = sum(c.isupper() for c in word)
	if capitals >= 2 or (capitals and any(c in "-_/." for c in word)):
		return lower  # a code: SO-DRAFT, ACME, HR-EMP
	if word[0].isupper() and not first:
		return lower  # a name: Acme, Globex
	return None


def signature(question: str) -> tuple[str, ...]:
	"""What the question names: identifiers, codes, amounts, dates, months, names and quoted text."""
	found = {match.group(1).strip().lower() for match in _QUOTED.finditer(question)}
	sentence_start = True
	for match in _TOKEN.finditer(question):
		token = match.group(0)
		ident = _identifier(token, sentence_start)
		if ident:
			found.add(ident)
		sentence_start = token.endswith((".", "?", "!", ":"))
	return tuple(sorted(found))


@dataclass(frozen=True)
class Hit:
	response: dict
	kind: str  # "exact" | "similar"
	similarity: float
	question: str


class ResponseCache:
	def __init__(
		self,
		store: Store,
		*,
		ttl: float = DEFAULT_TTL_SECONDS,
		threshold: float = DEFAULT_THRESHOLD,
		embed: Embed | None = None,
		context: str = "",
	):
		self.store, self.ttl, self.threshold, self.embed = store, ttl, threshold, embed
		# Part of every key: on a site, the permission generation (a change makes every entry unreachable).
		self.context = context

	def usable(self, question: str, first_in_conversation: bool) -> bool:
		return first_in_conversation and bool(normalise(question)) and not time_relative(question)

	def lookup(
		self, user: str, question: str, *, first_in_conversation: bool, context: str | None = None
	) -> Hit | None:
		"""This person's cached answer to the same (or a very similar) question, else None."""
		if not self.usable(question, first_in_conversation):
			return None
		context = self.context if context is None else context
		text = normalise(question)
		exact = self.store.get(self._key(user, context, text))
		if isinstance(exact, dict):
			return Hit(exact["response"], "exact", 1.0, exact["question"])
		if self.embed is None:
			return None
		# Only a question that names exactly the same things may be served its answer.
		names = list(signature(question))
		recent = [
			item
			for item in self.store.get(self._recent_key(user, context)) or []
			if item.get("names") == names
		]
		if not recent:
			return None
		vector = _unit(self.embed([text])[0])
		kept = [(item, _unpack(item["vector"])) for item in recent]
		kept = [(item, stored) for item, stored in kept if stored.shape == vector.shape]
		if not kept:
			return None
		scores = np.stack([stored for _, stored in kept]) @ vector
		at = int(np.argmax(scores))
		best, score = kept[at][0], float(scores[at])
		if score < self.threshold:
			return None
		entry = self.store.get(self._key(user, context, best["text"]))
		if not isinstance(entry, dict):
			return None  # expired since
		return Hit(entry["response"], "similar", round(score, 4), entry["question"])

	def remember(
		self,
		user: str,
		question: str,
		response: dict,
		*,
		first_in_conversation: bool,
		wrote: bool,
		context: str | None = None,
	) -> bool:
		"""Keep this answer for the person if it may be reused; whether it was kept."""
		if wrote or not self.usable(question, first_in_conversation):
			return False
		if response.get("type") not in CACHEABLE_TYPES or response.get("proposal") or response.get("error"):
			return False
		context = self.context if context is None else context
		text = normalise(question)
		self.store.put(self._key(user, context, text), {"question": question, "response": response}, self.ttl)
		if self.embed is not None:
			recent = [i for i in (self.store.get(self._recent_key(user, context)) or []) if i["text"] != text]
			recent.append(
				{
					"text": text,
					"names": list(signature(question)),
					"vector": _pack(_unit(self.embed([text])[0])),
				}
			)
			self.store.put(self._recent_key(user, context), recent[-RECENT_KEPT:], self.ttl)
		return True

	@staticmethod
	def _key(user: str, context: str, text: str) -> str:
		digest = hashlib.sha256(json.dumps([user, context, text]).encode()).hexdigest()[:32]
		return f"answer:{digest}"

	@staticmethod
	def _recent_key(user: str, context: str) -> str:
		digest = hashlib.sha256(json.dumps([user, context]).encode()).hexdigest()[:32]
		return f"recent:{digest}"


def _unit(vector: Sequence[float]) -> np.ndarray:
	array = np.asarray(vector, dtype=np.float32)
	norm = float(np.linalg.norm(array)) or 1.0
	return array / norm


def _pack(vector: np.ndarray) -> str:
	"""A unit vector as base64 of its float32 bytes: a quarter of its JSON size, read back at once
	(a person keeps up to RECENT_KEPT of them, read and written on every first question)."""
	return base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")


def _unpack(stored: Any) -> np.ndarray:
	"""A stored vector: packed, or the list of floats entries kept before packing."""
	if isinstance(stored, str):
		return np.frombuffer(base64.b64decode(stored), dtype=np.float32)
	return np.asarray(stored, dtype=np.float32)
