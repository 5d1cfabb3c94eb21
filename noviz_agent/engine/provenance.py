"""Where untrusted text entered a turn, and the warning every write proposed after it carries.

Text written by people outside the conversation - a record's free text, an uploaded document,
a process document's passage, another system's answer or error, what an earlier turn read -
can carry instructions meant for the agent, in any language and any wording. So the rule is
provenance, not phrasing: once such text entered the context, every write proposed in the same
turn (or procedure run) tells the person where that text came from, and they decide. The
instruction pattern below only adds detail (an excerpt of what reads like an instruction); it
never decides alone.

The gateway notes each result as it passes (`note_result`) and puts the warning on each proposal
(`warning`); the turn seeds the sources an earlier turn of the conversation recorded, and a
procedure run keeps its own across turns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

GUARD = "write_after_untrusted_text"
MAX_SOURCES = 20
MAX_EXCERPT_CHARS = 160

# Keys under which a tool result carries what it read (record values, rows, passages, matches);
# everything else in a result (notes, column labels, paging, totals' provenance) is the agent's own.
DATA_KEYS = frozenset(
	{"rows", "fields", "tables", "passages", "helpdesk_matches", "erpnext", "records", "lines", "values"}
)
# Letters of any script; a "word" is a run of them.
_WORD = re.compile(r"[^\W\d_]+")
# Scripts written without spaces between words (CJK, Thai...): a few letters already say a sentence.
_UNSPACED = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
PROSE_WORDS = 4
PROSE_LETTERS = 24
UNSPACED_LETTERS = 6


def prose(text: str) -> bool:
	"""Whether a value is free text someone wrote (a sentence), not a code, a name, a date or a URL."""
	text = text.strip()
	if len(text) < 8:
		return False
	if text.isascii() and not any(c.isspace() for c in text):
		return False  # an ID, an e-mail address, a URL, a number
	if len(_UNSPACED.findall(text)) >= UNSPACED_LETTERS:
		return True
	words = _WORD.findall(text)
	return len(words) >= PROSE_WORDS or sum(map(len, words)) >= PROSE_LETTERS


def free_text(data: Any, inside: bool = False) -> Iterator[str]:
	"""The free-text values a tool result carries from what it read, in order."""
	if isinstance(data, dict):
		for key, value in data.items():
			if isinstance(key, str) and key.startswith("_"):
				continue  # links and markers the agent added
			if inside or key in DATA_KEYS:
				yield from free_text(value, True)
			elif isinstance(value, dict | list):
				yield from free_text(value, False)
	elif isinstance(data, list | tuple):
		for value in data:
			yield from free_text(value, inside)
	elif inside and isinstance(data, str):
		if prose(data) or instruction_in(data):
			yield data


def note(untrusted: list[dict], source: str, texts: Iterable[str]) -> bool:
	"""Record that text from `source` entered the context (once per source); whether any did."""
	texts = [t for t in texts if t and t.strip()]
	if not texts:
		return False
	known = next((item for item in untrusted if item["source"] == source), None)
	if known is None:
		if len(untrusted) >= MAX_SOURCES:
			return True
		known = {"source": source}
		untrusted.append(known)
	if "excerpt" not in known:
		for text in texts:
			excerpt = instruction_in(text)
			if excerpt:
				known["excerpt"] = excerpt[:MAX_EXCERPT_CHARS]
				break
	return True


def source_of(tool: str, args: dict) -> str:
	"""Where a tool's result came from, in words: the tool and the record it read."""
	name = args.get("name") or args.get("report") or args.get("query") or args.get("customer")
	return f"the result of {tool}" + (f" ({str(name)[:60]})" if isinstance(name, str | int) and name else "")


def note_result(
	untrusted: list[dict], tool, args: dict, status: str, data: Any, error: str | None, meta: dict
):
	"""Note what one gateway result brought into the context (see the module's rule)."""
	if status == "ok":
		if getattr(tool, "trusted_output", False):
			return
		note(untrusted, source_of(tool.name, args), free_text(data))
	elif status in ("error", "refused") and meta.get("origin"):
		# Another system's own words: its error text is as untrusted as its answers.
		note(untrusted, f"the answer of {meta['origin']} to {tool.name}", [error or ""])


def seed(untrusted: list[dict], sources: Iterable) -> None:
	"""Sources known before this point (an earlier turn, a procedure run's earlier steps)."""
	for item in sources or ():
		if isinstance(item, str):
			item = {"source": item}
		if (
			isinstance(item, dict)
			and item.get("source")
			and not any(u["source"] == item["source"] for u in untrusted)
		):
			if len(untrusted) < MAX_SOURCES:
				untrusted.append(dict(item))


def earlier_turns(entries: Iterable[dict]) -> list[dict]:
	"""The sources earlier turns of the conversation read, as sources of this turn."""
	found: list[dict] = []
	for entry in entries or ():
		for source in (entry or {}).get("untrusted") or ():
			text = source.get("source") if isinstance(source, dict) else source
			if text:
				seed(found, [{"source": f"an earlier answer in this conversation, which read {text}"}])
	return found


def warning(untrusted: list[dict], own: dict | None = None) -> dict | None:
	"""The warning a proposal carries when untrusted text entered the context before it; else None.

	`own` is a warning the tool itself put on its preview (failed checks, say): both are kept.
	"""
	if not untrusted:
		return own
	sources = sorted(untrusted, key=lambda item: "excerpt" not in item)
	names = ", ".join(item["source"] for item in sources[:5]) + (" and more" if len(sources) > 5 else "")
	message = (
		f"Before this was proposed, the agent read text written by people outside this conversation "
		f"({names}). Such text can carry instructions meant for the agent, in any language. Make sure "
		"this change is what you asked for; if not, cancel it."
	)
	excerpts = [item for item in sources if item.get("excerpt")]
	if excerpts:
		message += f" Part of it reads like an instruction: \u201c{excerpts[0]['excerpt']}\u201d."
	if own and own.get("message"):
		message = f"{own['message']} {message}"
	return {**(own or {}), "message": message, "sources": [dict(item) for item in sources[:5]]}


# --- the instruction pattern (detail only) -----------------------------------------------------

# Phrases that address a model rather than a reader, in English; other wordings and languages are
# caught by provenance, not by this pattern.
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
