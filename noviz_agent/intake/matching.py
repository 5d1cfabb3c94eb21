"""Finding the document's party and items among the records the person can read.

The party: by tax id, then exact name, then fuzzy name (rapidfuzz). Items: by the supplier's part
number, then item code, then fuzzy description. Every answer carries its confidence and the
runner-up; an unmatched party or item is returned as such (the proposal offers it as a new record),
never created or guessed. The candidate lists come from the caller, read as the person.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz, process

PARTY_THRESHOLD = 88.0
ITEM_THRESHOLD = 85.0
# A best score this close to the runner-up is too close to call.
MIN_MARGIN = 3.0
LEGAL_SUFFIXES = r"\b(inc|incorporated|ltd|limited|llc|llp|gmbh|ag|kg|sa|sas|sarl|bv|nv|plc|co|corp|corporation|company|pty|pvt|srl|spa)\b"


def name_score(a: str, b: str, **_) -> float:
	"""Plain edit similarity or word-order-free similarity, whichever is higher: a dropped letter can
	change how the words sort ("seed ustomer 08"), a swapped word order changes the plain ratio."""
	return max(fuzz.ratio(a, b), fuzz.token_sort_ratio(a, b))


def normal_name(text: str | None) -> str:
	"""A name for comparison: lower case, no punctuation, no legal-form suffix, single spaces."""
	value = re.sub(r"[^\w\s]", " ", (text or "").casefold())
	value = re.sub(LEGAL_SUFFIXES, " ", value)
	return " ".join(value.split())


def normal_code(text: str | None) -> str:
	return re.sub(r"[^0-9A-Za-z]", "", text or "").upper()


def _unmatched(query, best=None) -> dict:
	out = {
		"status": "unmatched",
		"query": query,
		"name": None,
		"by": None,
		"confidence": 0.0,
		"runner_up": None,
	}
	if best:
		out["closest"] = best
	return out


def _runner(choice) -> dict | None:
	if choice is None:
		return None
	return {"name": choice[2], "score": round(choice[1] / 100, 3)}


def match_party(name: str | None, tax_id: str | None, candidates: list[dict]) -> dict:
	"""The party record: `candidates` are `{"name", "title", "tax_id"}` the person can read."""
	code = normal_code(tax_id)
	if code:
		hits = [c for c in candidates if normal_code(c.get("tax_id")) == code]
		if len(hits) == 1:
			return {
				"status": "matched",
				"query": name,
				"name": hits[0]["name"],
				"title": hits[0].get("title"),
				"by": "tax_id",
				"confidence": 1.0,
				"runner_up": None,
			}
	key = normal_name(name)
	if not key:
		return _unmatched(name)
	titles = {c["name"]: normal_name(c.get("title") or c["name"]) for c in candidates}
	exact = [c for c in candidates if titles[c["name"]] == key]
	if len(exact) == 1:
		return {
			"status": "matched",
			"query": name,
			"name": exact[0]["name"],
			"title": exact[0].get("title"),
			"by": "exact_name",
			"confidence": 0.99,
			"runner_up": None,
		}
	ranked = process.extract(key, titles, scorer=name_score, limit=2)
	if not ranked:
		return _unmatched(name)
	best, runner = ranked[0], (ranked[1] if len(ranked) > 1 else None)
	by_name = {c["name"]: c for c in candidates}
	if best[1] >= PARTY_THRESHOLD and (runner is None or best[1] - runner[1] >= MIN_MARGIN):
		return {
			"status": "matched",
			"query": name,
			"name": best[2],
			"title": by_name[best[2]].get("title"),
			"by": "fuzzy_name",
			"confidence": round(best[1] / 100, 3),
			"runner_up": _runner(runner),
		}
	return _unmatched(name, {"name": best[2], "score": round(best[1] / 100, 3), "runner_up": _runner(runner)})


def _item_text(item: dict) -> str:
	return normal_name(item.get("item_name") or item["item_code"])


def match_item(line: dict, items: list[dict], supplier: str | None = None) -> dict:
	"""The item of one line: `items` are `{"item_code", "item_name", "description", "supplier_parts"}`,
	where `supplier_parts` is a list of `[supplier, part_no]`."""
	code = normal_code(line.get("item_code"))
	if code and supplier:
		hits = [
			i
			for i in items
			if any(s == supplier and normal_code(p) == code for s, p in i.get("supplier_parts") or [])
		]
		if len(hits) == 1:
			return {
				"status": "matched",
				"query": line.get("item_code"),
				"name": hits[0]["item_code"],
				"by": "supplier_part_no",
				"confidence": 1.0,
				"runner_up": None,
			}
	if code:
		hits = [i for i in items if normal_code(i["item_code"]) == code]
		if len(hits) == 1:
			return {
				"status": "matched",
				"query": line.get("item_code"),
				"name": hits[0]["item_code"],
				"by": "item_code",
				"confidence": 1.0,
				"runner_up": None,
			}
	query = normal_name(line.get("description"))
	if not query or not items:
		return _unmatched(line.get("description"))
	texts = {i["item_code"]: _item_text(i) for i in items}
	ranked = process.extract(query, texts, scorer=fuzz.WRatio, limit=2)
	best, runner = ranked[0], (ranked[1] if len(ranked) > 1 else None)
	if best[1] >= ITEM_THRESHOLD and (runner is None or best[1] - runner[1] >= MIN_MARGIN):
		by = "exact_description" if best[1] >= 100 else "fuzzy_description"
		return {
			"status": "matched",
			"query": line.get("description"),
			"name": best[2],
			"by": by,
			"confidence": round(best[1] / 100, 3),
			"runner_up": _runner(runner),
		}
	return _unmatched(
		line.get("description"),
		{"name": best[2], "score": round(best[1] / 100, 3), "runner_up": _runner(runner)},
	)
