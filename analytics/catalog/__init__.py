"""The catalogue of standard analyses, as data: one registration per analysis, by category.

base.py      Analysis and Param, the shared parameters, the twelve categories
rows.py      constructors that turn a row into an Analysis over a building block
sales.py ... projects.py   the registrations, one module per category (ledger.py: receivables and payables)
"""

from __future__ import annotations

import difflib
import re

from analytics.catalog import (
	cash,
	customers,
	finance,
	hr,
	inventory,
	items,
	ledger,
	margins,
	projects,
	purchasing,
	sales,
)
from analytics.catalog.base import CATEGORIES, Analysis, Param
from analytics.errors import AnalyticsError

ANALYSES: dict[str, Analysis] = {}
for _module_analyses in (
	sales.ANALYSES,
	customers.ANALYSES,
	items.ANALYSES,
	purchasing.ANALYSES,
	inventory.ANALYSES,
	ledger.RECEIVABLES,
	ledger.PAYABLES,
	cash.ANALYSES,
	margins.ANALYSES,
	finance.ANALYSES,
	hr.ANALYSES,
	projects.ANALYSES,
):
	for _analysis in _module_analyses:
		if _analysis.key in ANALYSES:
			raise ValueError(f"Duplicate analysis key {_analysis.key!r}")
		ANALYSES[_analysis.key] = _analysis


def get(key: str) -> Analysis:
	try:
		return ANALYSES[key]
	except KeyError:
		close = difflib.get_close_matches(str(key), list(ANALYSES), n=3, cutoff=0.5)
		hint = f"; did you mean {', '.join(close)}?" if close else "; list them with the catalogue"
		raise AnalyticsError(f"Unknown analysis {key!r}{hint}") from None


def all_analyses() -> list[Analysis]:
	return list(ANALYSES.values())


def describe(category: str | None = None) -> list[dict]:
	return [a.describe() for a in ANALYSES.values() if category in (None, a.category)]


_WORD = re.compile(r"[a-z0-9%&]+")


def _words(text: str) -> list[str]:
	return _WORD.findall(text.lower())


def _stem(word: str) -> str:
	for suffix in ("ing", "ers", "es", "s", "ed"):
		if len(word) > len(suffix) + 2 and word.endswith(suffix):
			return word[: -len(suffix)]
	return word


def search(query: str, limit: int = 8, category: str | None = None) -> list[dict]:
	"""Analyses ranked by how well their key, title, purpose and tags match the words of `query`."""
	wanted = {_stem(w) for w in _words(query) if len(w) > 1}
	scored = []
	for analysis in ANALYSES.values():
		if category and analysis.category != category:
			continue
		title = {
			_stem(w) for w in _words(analysis.title + " " + analysis.key.replace("_", " ").replace(".", " "))
		}
		tags = {_stem(w) for tag in analysis.tags for w in _words(tag)}
		purpose = {_stem(w) for w in _words(analysis.purpose + " " + CATEGORIES[analysis.category])}
		score = sum(3 * (w in title) + 2 * (w in tags) + (w in purpose) for w in wanted)
		if score:
			scored.append((score, analysis))
	scored.sort(key=lambda pair: -pair[0])
	return [
		{"key": a.key, "category": a.category, "title": a.title, "purpose": a.purpose, "datasets": a.datasets}
		for _, a in scored[:limit]
	]


__all__ = ["ANALYSES", "CATEGORIES", "Analysis", "Param", "all_analyses", "describe", "get", "search"]
