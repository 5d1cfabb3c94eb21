"""Query vocabulary: the ERPNext term added to a question that uses an everyday word for it.

People write "bill", "vendor", "PO" or "write-down"; the documents say invoice, supplier,
purchase order and depreciation. Neither BM25 nor a small static embedding model bridges
that gap reliably, so search appends the ERPNext term (never replacing a word). The table
is data (``vocabulary.json``); an organisation's own words can be passed in as a mapping.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path

VOCABULARY_FILE = Path(__file__).with_name("vocabulary.json")


@functools.lru_cache(maxsize=1)
def shipped_terms() -> dict[str, str]:
	"""The shipped table, everyday word (lowercase) to ERPNext term."""
	data = json.loads(VOCABULARY_FILE.read_text(encoding="utf-8"))
	return {key.lower(): value for key, value in data["terms"].items()}


class Vocabulary:
	"""Expands questions with the ERPNext terms of the everyday words they use."""

	def __init__(self, terms: Mapping[str, str]):
		self.terms = {key.lower(): value for key, value in terms.items() if key.strip() and value.strip()}
		words = sorted(self.terms, key=len, reverse=True)  # "write down" before "write"
		self._pattern = (
			re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, words)) + r")(?![\w-])", re.IGNORECASE)
			if words
			else None
		)

	def expand(self, query: str) -> str:
		"""``query`` with the ERPNext terms of its everyday words appended on a new line (each once)."""
		if self._pattern is None:
			return query
		added: list[str] = []
		for match in self._pattern.finditer(query):
			term = self.terms[match.group(1).lower()]
			if term not in added:
				added.append(term)
		return f"{query}\n{' '.join(added)}" if added else query


@functools.lru_cache(maxsize=1)
def default_vocabulary() -> Vocabulary:
	return Vocabulary(shipped_terms())
