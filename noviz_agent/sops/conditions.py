"""The baseline's simple rules for a condition line, read against the last observations.

Two forms are understood:
- a comparison, "the invoice total is higher than the order total": each side names an
  entity word and a field; the newest successful lookup of that entity gives the number;
- a state, "the order is delivered" / "the employee is not active": the condition's words
  are looked up, as whole words, in the status fields of the newest successful lookup
  (`status`, `*_status`); a negation in the condition or in the status value flips it.
Anything else is false, and the reason says the rule could not read it.
"""

from __future__ import annotations

import re

from noviz_agent.sops.memory import Entry

WORD = re.compile(r"[a-z]+")
NEGATIONS = {"not", "no", "never", "isn", "hasn", "wasn", "un"}
FILLER = {
	"the",
	"a",
	"an",
	"is",
	"are",
	"was",
	"been",
	"has",
	"have",
	"any",
	"of",
	"it",
	"its",
	"already",
	"in",
	"full",
	"this",
	"that",
}
COMPARISON = re.compile(
	r"^(?P<left>.+?)\s+(?:is|are)\s+(?P<op>higher|greater|more|larger|bigger|lower|less|smaller)\s+than\s+"
	r"(?P<right>.+)$",
	re.IGNORECASE,
)
GREATER = {"higher", "greater", "more", "larger", "bigger"}


def _words(text: str) -> list[str]:
	return WORD.findall((text or "").lower().replace("n't", " not"))


def record(observation: dict) -> dict:
	"""A looked-up record's own fields (a `get` answers {name, fields: {...}, tables: {...}})."""
	fields = observation.get("fields")
	return {**fields, "name": observation.get("name")} if isinstance(fields, dict) else observation


def _lookups(memory: list[Entry]) -> list[tuple[str, dict]]:
	"""(action, record) of successful tool steps that returned a record, newest first."""
	return [
		(e.action, record(e.observation))
		for e in reversed(memory)
		if e.kind == "step" and e.ok and isinstance(e.observation, dict) and "." in e.action
	]


def _number(side: str, memory: list[Entry]) -> tuple[float | None, str]:
	words = [w for w in _words(side) if w not in FILLER]
	if not words:
		return None, ""
	field, hints = words[-1], words[:-1]
	for action, fields in _lookups(memory):
		entity = action.split(".")[0]
		if hints and not any(h in entity.split("_") for h in hints):
			continue
		value = fields.get(field)
		if isinstance(value, (int, float)) and not isinstance(value, bool):
			return float(value), f"{action} {field}={value}"
	return None, ""


def _status_words(observation: dict) -> list[tuple[str, list[str]]]:
	return [
		(key, _words(value))
		for key, value in observation.items()
		if isinstance(value, str) and (key == "status" or key.endswith("_status"))
	]


def evaluate(condition: str, memory: list[Entry]) -> tuple[bool, str]:
	"""Whether the condition holds by the baseline's rules, and the reason in a few words."""
	compared = COMPARISON.match(condition.strip())
	if compared:
		left, why_left = _number(compared.group("left"), memory)
		right, why_right = _number(compared.group("right"), memory)
		if left is None or right is None:
			return False, f"rule: could not find both numbers for '{condition}'"
		holds = left > right if compared.group("op").lower() in GREATER else left < right
		return holds, f"rule: {why_left} vs {why_right}"
	words = _words(condition)
	negated = any(w in NEGATIONS for w in words)
	lookups = _lookups(memory)
	if not lookups:
		return False, "rule: no record looked up yet"
	action, fields = lookups[0]
	subject = set(action.split(".")[0].split("_"))
	targets = [w for w in words if w not in FILLER and w not in NEGATIONS and w not in subject]
	for key, value_words in _status_words(fields):
		if any(t in value_words for t in targets):
			holds = not any(w in NEGATIONS for w in value_words)
			return holds != negated, f"rule: {key}={' '.join(value_words)}"
	return negated, f"rule: none of {targets} in the status of {action}"
