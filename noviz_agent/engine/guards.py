"""Guards: named checks on the calls a model proposes, run before the gateway.

A guard that fires does not run the call; its message goes back to the model as the
tool's answer, saying what to do instead. Each guard has a test named after the
failure it prevents.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from noviz_agent.engine.gateway import args_hash


@dataclass
class GuardState:
	"""What the turn has done so far, as the guards need to know it."""

	calls: dict[tuple[str, str], int] = field(default_factory=dict)
	pages: dict[str, set[int]] = field(default_factory=dict)
	fired: list[str] = field(default_factory=list)
	# Untrusted text read this turn that reads like an instruction: where it came from and an excerpt.
	instructions_seen: list[dict] = field(default_factory=list)

	def record(self, name: str, args: dict) -> None:
		key = (name, args_hash(args))
		self.calls[key] = self.calls.get(key, 0) + 1
		page = page_of(name, args)
		if page is not None:
			self.pages.setdefault(name, set()).add(page)


@dataclass(frozen=True)
class Verdict:
	guard: str
	message: str


Guard = Callable[[str, dict, GuardState], Verdict | None]


def page_of(name: str, args: dict) -> int | None:
	"""The page a list-like call asks for (1-based), or None if it is not a list call."""
	if not name.endswith(".list") and name != "report.page":
		return None
	page = args.get("page")
	if isinstance(page, int):
		return page
	offset, limit = args.get("offset"), args.get("limit") or args.get("page_size") or 20
	if isinstance(offset, int) and isinstance(limit, int) and limit > 0:
		return offset // limit + 1
	return 1


def repeated_identical_call(name: str, args: dict, state: GuardState) -> Verdict | None:
	"""Stops a model that loops on the same call: the answer is already in the conversation."""
	if state.calls.get((name, args_hash(args)), 0) >= 1:
		return Verdict(
			"repeated_identical_call",
			f"You already called {name} with exactly these arguments in this turn; its result is above. "
			"Use that result, change the arguments, or answer the person now.",
		)
	return None


def paging_to_build_a_total(name: str, args: dict, state: GuardState) -> Verdict | None:
	"""Stops adding up rows page by page: totals come from an aggregate computed by the system."""
	page = page_of(name, args)
	if page is None or page <= 1:
		return None
	seen = state.pages.get(name, set())
	if not seen:
		return None
	entity = name.rsplit(".", 1)[0]
	return Verdict(
		"paging_to_build_a_total",
		f"Do not page through {entity} rows to count or add them up: a page is only for showing rows. "
		f"For totals, counts or averages call analytics.aggregate (group-by sums/counts/averages) "
		f"or {entity}.count with the same filters. The person can page the table themselves.",
	)


GUARDS: tuple[Guard, ...] = (repeated_identical_call, paging_to_build_a_total)


def check(name: str, args: dict, state: GuardState, guards: tuple[Guard, ...] = GUARDS) -> Verdict | None:
	"""The first guard that fires for this call, recorded in the state; None when the call may run."""
	for guard in guards:
		verdict = guard(name, args, state)
		if verdict is not None:
			state.fired.append(verdict.guard)
			return verdict
	return None


# --- untrusted text ------------------------------------------------------------------

# Phrases that address a model rather than a reader: record fields, documents and passages are
# written by people outside this conversation and must never steer a write.
_INSTRUCTION = re.compile(
	r"(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|your|system)"
	r"\s+(instructions?|prompts?|rules?|messages?)"
	r"|\byou\s+are\s+now\b|\bnew\s+instructions?\s*:|\b(system|assistant|developer)\s*(prompt)?\s*:"
	r"|<\|?(im_start|system|tool_call|python_tag)\|?>|\[TOOL_CALLS\]"
	r"|\b(do\s+not|don't|never)\s+(tell|inform|ask|show)\s+the\s+(user|person|customer)"
	r"|\b(as\s+an?\s+)?(ai|assistant|agent|model)\s*,?\s+(you\s+)?(must|should|will)\s+"
	r"(now\s+)?(create|submit|cancel|delete|pay|transfer|approve|update)",
	re.IGNORECASE,
)


# Where a passage can start: every alternative of _INSTRUCTION begins with one of these (each is
# the start of what its alternative needs). Most record data holds none of them, and this scan is
# several times faster than the full pattern.
_START = (
	r"(?:ignore|disregard|forget|override)\s|<\|?(?:im_start|system|tool_call|python_tag)|\[tool_calls\]"
	r"|\b(?:you\s+are|new\s+instruction|system|assistant|developer|do\s+not|don't|never\s|as\s+an?\s"
	r"|(?:ai|agent|model)\b)"
)
_START_LOWER = re.compile(_START)  # on ASCII text lowered first (faster than IGNORECASE)
_START_ANY = re.compile(_START, re.IGNORECASE)


def instruction_in(text: str) -> str | None:
	"""An excerpt of the first instruction-like passage in untrusted text, or None."""
	text = text or ""
	# The first place a passage could start; the full pattern is searched from there only. For
	# ASCII, lowering the text is the same as IGNORECASE (not so for all of Unicode: "ſ" is "s").
	start = _START_LOWER.search(text.lower()) if text.isascii() else _START_ANY.search(text)
	if start is None:
		return None
	match = _INSTRUCTION.search(text, start.start())
	if match is None:
		return None
	start = max(0, match.start() - 40)
	return " ".join(text[start : match.end() + 80].split())


def note_untrusted(state: GuardState, source: str, text: str) -> None:
	"""Remember instruction-like content in text that came from data, with where it came from."""
	excerpt = instruction_in(text)
	if excerpt:
		state.instructions_seen.append({"source": source, "excerpt": excerpt})


def write_after_untrusted_instructions(state: GuardState) -> dict | None:
	"""Flags a write proposed after reading data that talks like an instruction.

	The write is not blocked (the person may really want it), but the proposal tells them
	that the turn read such text, and where, so an injected request cannot pass as theirs.
	"""
	if not state.instructions_seen:
		return None
	state.fired.append("write_after_untrusted_instructions")
	sources = ", ".join(dict.fromkeys(item["source"] for item in state.instructions_seen))
	return {
		"message": "Before this was proposed, the agent read text that contains instructions "
		f"(in {sources}). Make sure this change is what you asked for; if not, cancel it.",
		"sources": state.instructions_seen[:3],
	}
