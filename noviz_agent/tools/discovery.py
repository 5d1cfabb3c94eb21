"""`tools.search`: find any tool the person may use, by words, when it was not offered up front.

Selection offers only a few dozen tools; every other permitted tool stays one search away.
The index is BM25 (bm25s) over each tool's name, description, module, and the words people
use for its entity (label, synonyms, abbreviations) and action ("new", "change", ...).
Found tools are added to `session.offered` and stay offered for the rest of the turn.
"""

from __future__ import annotations

from collections import OrderedDict

import bm25s
import Stemmer
from bm25s.tokenization import Tokenizer

from noviz_agent.engine.routing import load_data, router_for
from noviz_agent.engine.tools import Tool, function_tool

# Providers refuse more tools than this in one request, whatever searches add.
PROVIDER_TOOL_LIMIT = 128
MAX_LIMIT = 20
_INDEX_CACHE_SIZE = 64
_STEMMER = Stemmer.Stemmer("english")
_ACTION_WORDS = {
	"list": "list find search show which filter rows records",
	"get": "get details open view one record lines",
	"count": "count how many number of",
}


class ToolIndex:
	"""A BM25 index over a fixed set of tools."""

	def __init__(self, tools: list[Tool], texts: list[str]):
		self.tools = tools
		self.tokenizer = Tokenizer(stemmer=_STEMMER, stopwords="en")
		ids = self.tokenizer.tokenize(texts, update_vocab=True, return_as="ids", show_progress=False)
		self.bm25 = bm25s.BM25()
		self.bm25.index(ids, show_progress=False)

	def search(self, query: str, module: str | None, limit: int, module_of) -> list[Tool]:
		ids = self.tokenizer.tokenize([query], update_vocab=False, return_as="ids", show_progress=False)[0]
		if not ids:
			return []
		scores = self.bm25.get_scores(ids)
		order = sorted(range(len(self.tools)), key=lambda i: (-scores[i], i))
		found = []
		for i in order:
			if scores[i] <= 0 or len(found) >= limit:
				break
			tool = self.tools[i]
			if module and module not in (tool.module, module_of(tool)):
				continue
			found.append(tool)
		return found


def _entity_words(registry) -> dict[str, list[str]]:
	data = load_data()
	words: dict[str, list[str]] = {}
	for ent in registry.vocabulary.words:
		words.setdefault(ent.key, []).extend([ent.label, *ent.synonyms])
	for key, texts in data.get("entity_words", {}).items():
		words.setdefault(key, []).extend(texts)
	for abbreviation, key in data.get("abbreviations", {}).items():
		words.setdefault(key, []).append(abbreviation)
	return words


def _action_words() -> dict[str, str]:
	words = dict(_ACTION_WORDS)
	for action, texts in load_data().get("intents", {}).items():
		words[action] = (words.get(action, "") + " " + " ".join(texts)).strip()
	return words


def document(
	tool: Tool, entity_words: dict[str, list[str]], action_words: dict[str, str], module: str
) -> str:
	"""The searchable text of a tool."""
	parts = [tool.name.replace(".", " ").replace("_", " "), tool.description, tool.module, module, *tool.tags]
	if tool.entity:
		parts.append(tool.entity.replace("_", " "))
		parts.extend(entity_words.get(tool.entity, ()))
	if tool.action:
		parts.append(action_words.get(tool.action, tool.action))
	return " ".join(p for p in parts if p)


_INDEXES: OrderedDict[tuple, ToolIndex] = OrderedDict()


def index_for(session) -> ToolIndex:
	"""The index over the tools this person may use (cached per registry and allowance)."""
	registry = session.registry
	key = (id(registry), len(registry), session.allowed)
	index = _INDEXES.get(key)
	if index is not None:
		_INDEXES.move_to_end(key)
		return index
	router = router_for(registry)
	entity_words, action_words = _entity_words(registry), _action_words()
	tools = [t for t in registry if t.name in session.allowed and t.name != "tools.search"]
	texts = [document(t, entity_words, action_words, router.module_of(t)) for t in tools]
	index = ToolIndex(tools, texts)
	_INDEXES[key] = index
	if len(_INDEXES) > _INDEX_CACHE_SIZE:
		_INDEXES.popitem(last=False)
	return index


def _summary(tool: Tool) -> dict:
	required = tool.parameters.get("required", [])
	return {
		"name": tool.name,
		"call": tool.wire_name,
		"description": tool.description.strip().splitlines()[0],
		"writes": tool.writes,
		"required": list(required),
	}


def search_tools(session, query: str, module: str | None = None, limit: int = 8) -> list[Tool]:
	"""The permitted tools best matching the words, strongest first (no side effects)."""
	limit = max(1, min(int(limit), MAX_LIMIT))
	router = router_for(session.registry)
	return index_for(session).search(query or "", module or None, limit, router.module_of)


def search_tools_names(session, query: str, module: str | None = None, limit: int = 8) -> list[str]:
	return [t.name for t in search_tools(session, query, module, limit)]


@function_tool("tools.search", "discovery", trusted_output=True)
def search(session, query: str, module: str | None = None, limit: int = 8) -> dict:
	"""Find tools you may use that were not offered yet, by a few words about the task.

	Returns up to `limit` tools (name, how to call it, a one-line description, required
	arguments). The tools found are offered to you from now on in this turn: call them by
	name. Use it when no offered tool fits, e.g. "stock ledger", "employee leave balance",
	"purchase receipt create". Search by what you need, not by a tool name you guess.

	Args:
		query: a few words about what you need to do or read (entity, action, report)
		module: only tools of this business module, e.g. selling, stock, hr
		limit: how many tools to return (1 to 20)
	"""
	found = search_tools(session, query, module, limit)
	if not found:
		return {
			"query": query,
			"found": [],
			"note": "No tool you may use matches these words. Try other words (the business name of the "
			"record or report), or tell the person this cannot be done here.",
		}
	room = PROVIDER_TOOL_LIMIT - len(session.offered)
	new = [t.name for t in found if t.name not in session.offered]
	added = new[: max(room, 0)]
	session.offered.update(added)
	note = "These tools are offered to you from now on in this turn; call them by name."
	if len(added) < len(new):
		note += f" {len(new) - len(added)} could not be added: this turn already offers {PROVIDER_TOOL_LIMIT} tools."
	return {"query": query, "found": [_summary(t) for t in found if t.name in session.offered], "note": note}


def tools() -> list[Tool]:
	return [search]
