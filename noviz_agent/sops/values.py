"""Reading values out of the person's answers and checking them before use.

Ids look like ERPNext document names (`SAL-ORD-2026-00012`, `HR-EMP-00003`, `SO-0005`);
dates must name a day unambiguously ("2026-03-12", "12 March 2026") — "next week" or
"soon" is refused and the question asked again. Nothing here guesses.
"""

from __future__ import annotations

import re
from datetime import date

ID = re.compile(r"\b[A-Za-z]{2,}(?:-[A-Za-z0-9]+)*-\d+\b")
ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
MONTHS = (
	"jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july august "
	"september october november december"
).split()
DAY_WITH_MONTH = re.compile(
	r"\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+(" + "|".join(MONTHS) + r")\.?(?:,?\s+(\d{4}))?\b"
	r"|\b(" + "|".join(MONTHS) + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b",
	re.IGNORECASE,
)

ORDINAL = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)\b", re.IGNORECASE)


def _month(name: str) -> int:
	return MONTH_NUMBERS[name.lower().rstrip(".")[:3]]


MONTH_NUMBERS = {
	m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)
}


class InvalidValue(ValueError):
	"""An answer that cannot be used as the value asked for; the message says what is needed."""


def find_id(text: str) -> str | None:
	"""The last document id in a text (people correct themselves: 'SO-1, no, SO-2'), upper-cased."""
	found = ID.findall(text or "")
	return found[-1].upper() if found else None


def parse_date(text: str, today: date | None = None) -> str:
	"""An ISO date from an answer that names one day; InvalidValue otherwise."""
	text = (text or "").strip()
	iso = ISO_DATE.findall(text)
	if len(iso) == 1:
		try:
			return date.fromisoformat(iso[0]).isoformat()
		except ValueError:
			raise InvalidValue(f"'{iso[0]}' is not a calendar date.") from None
	named = DAY_WITH_MONTH.findall(text)
	if len(iso) > 1 or len(named) > 1 or len(ORDINAL.findall(text)) > 1:
		raise InvalidValue("The answer names more than one date; give one date, e.g. 2026-03-12.")
	if named:
		parts = [p for p in named[0] if p]
		year = (
			next((int(p) for p in parts if p.isdigit() and len(p) == 4), None) or (today or date.today()).year
		)
		day = next(int(p) for p in parts if p.isdigit() and len(p) <= 2)
		month = next(_month(p) for p in parts if not p.isdigit())
		try:
			return date(year, month, day).isoformat()
		except ValueError:
			raise InvalidValue(f"'{text[:60]}' is not a calendar date.") from None
	raise InvalidValue(f"'{text[:60]}' does not name one day. Give the date as 2026-03-12 or 12 March 2026.")


def mentions(text: str, words: str) -> bool:
	"""True when every word of `words` (snake_case or spaced) appears in the text as a whole word."""
	present = set(re.findall(r"[a-z0-9]+", (text or "").lower()))
	return all(word in present for word in words.lower().replace("_", " ").split())


def find_field(value, name: str):
	"""The first value under key `name` anywhere in a nested observation (e.g. items[0].purchase_order)."""
	if isinstance(value, dict):
		if value.get(name) not in (None, ""):
			return value[name]
		for child in value.values():
			found = find_field(child, name)
			if found not in (None, ""):
				return found
	elif isinstance(value, list):
		for child in value:
			found = find_field(child, name)
			if found not in (None, ""):
				return found
	return None
