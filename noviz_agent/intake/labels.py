"""The printed labels of `data/labels.yaml` as matchers: which label a segment of text starts with.

A label matches at the start of a segment, without case or accents, with any of " ", ".", "-" or
"/" between its words ("Rechnungs-Nr.", "P.U. HT"), a lone capital split from its word ("F
actuurnummer", as some PDFs draw it), and the ":", "#", "n°" or "No." that may follow it. Among
all the labels of a group, the longest match wins.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from noviz_agent.intake.values import _unaccented

DATA = Path(__file__).parent / "data" / "labels.yaml"
_AFTER = r"(?![a-z0-9])[\s:#.°º\-–)]*"


@dataclass(frozen=True)
class Label:
	kind: str
	language: str
	end: int  # where the value starts in the segment's text
	length: int


@functools.cache
def data() -> dict:
	with DATA.open(encoding="utf-8") as f:
		return yaml.safe_load(f)


def _pattern(label: str) -> str:
	words = [w for w in re.split(r"[\s.\-/]+", _unaccented(label)) if w]
	parts = []
	for i, word in enumerate(words):
		first = re.escape(word[0]) + (r" ?" if i == 0 and len(word) > 3 else "")
		parts.append(first + re.escape(word[1:]))
	return r"[\s.\-/]*".join(parts)


@functools.cache
def matchers(group: str) -> list[tuple[str, str, re.Pattern]]:
	"""(kind, language, regex) of one group of labels: fields, totals, titles or columns."""
	out = []
	for kind, languages in data()[group].items():
		for language, labels in languages.items():
			alternatives = sorted({_pattern(str(x)) for x in labels}, key=len, reverse=True)
			out.append((kind, language, re.compile(rf"^\s*(?:{'|'.join(alternatives)}){_AFTER}")))
	return out


def label_at(text: str, group: str, kinds: tuple[str, ...] | None = None) -> Label | None:
	"""The longest label of the group that the text starts with, and where its value begins."""
	plain = _unaccented(text)
	best: Label | None = None
	for kind, language, pattern in matchers(group):
		if kinds and kind not in kinds:
			continue
		m = pattern.match(plain)
		if m is None:
			continue
		core = len(m.group(0).rstrip(" :#.°º-–)"))
		if best is None or core > best.length:
			best = Label(kind, language, m.end(), core)
	return best


def is_label(text: str) -> bool:
	"""Whether a text is nothing but a label (of a field or a total), so it is no value."""
	for group in ("fields", "totals"):
		found = label_at(text, group)
		if found and not text[found.end :].strip():
			return True
	return False


@functools.cache
def legal_form_pattern() -> re.Pattern:
	"""A company name: up to six words ending in a legal form ("Hetzner Online GmbH", "bol.com b.v.")."""
	variants = {v for f in data()["legal_forms"] for v in (f, f.lower(), f.upper())}
	forms = sorted((re.escape(f).replace(r"\ ", r"\s*") for f in variants), key=len, reverse=True)
	word = r"[A-Za-zÀ-ÿ0-9][\w&'’.\-]*"
	return re.compile(rf"((?:{word}[ ,]+){{1,6}}?(?:{'|'.join(forms)}))(?![A-Za-z])")
