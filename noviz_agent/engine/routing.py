"""The deterministic module router: which business modules and entities a question is about.

Keyword lists, abbreviations, document-ID prefixes and widening rules are data
(`data/modules.json`); entity labels and synonyms come from the canonical model, so an
entity added to a map is routable without touching the keyword lists. Words are stemmed
(plural and singular match alike) and everything is compiled once into lookup tables, so
routing a question costs a few dozen dictionary lookups.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import Stemmer

from noviz_agent.engine.tools import EntityWords

__all__ = ["EntityWords", "Route", "Router", "load_data", "router_for", "spine_names", "stems"]

DATA_PATH = Path(__file__).parent / "data" / "modules.json"
_WORD = re.compile(r"[A-Za-z0-9]+")
# Clauses of a request: "We received the steel, make the GRN" asks in its second clause.
_CLAUSE = re.compile(r"[,;:.!?]+\s+|\s+(?:and|then)\s+")
# "SO", "POs", "RFQ": capitals are abbreviations, matched as written ("so" is an English word)
_ABBREVIATION = re.compile(r"^([A-Z]{2,6})s?$")
_STEMMER = Stemmer.Stemmer("english")
_OBJECT_PRONOUNS = {"me", "us", "him", "her", "them", "it"}


@functools.lru_cache(maxsize=1)
def load_data() -> dict:
	"""The routing data shipped with the app (read once per process)."""
	return json.loads(DATA_PATH.read_text(encoding="utf-8"))


def spine_names() -> tuple[str, ...]:
	"""The tools offered on every request (when the person may use them)."""
	return tuple(load_data()["spine"])


@functools.lru_cache(maxsize=8192)
def _stem(word: str) -> str:
	return _STEMMER.stemWord(word)


def stems(text: str) -> list[str]:
	"""Lower-cased, stemmed words of a text: "Invoices" and "invoice" give the same stem."""
	return [_stem(w.lower()) for w in _WORD.findall(text)]


@dataclass(frozen=True)
class Route:
	"""What the router found in one question."""

	modules: tuple[str, ...]  # matched and widened, in the canonical module order
	direct: frozenset[str]  # modules named by the question's own words
	widened: tuple[str, ...]  # modules added only by a widening rule
	entities: dict[str, float]  # entity key → strength of the mention
	intents: frozenset[str]  # actions asked for: create, update, submit, cancel, count, get
	ids: tuple[str, ...] = ()  # entities whose document IDs appear in the question
	hits: tuple[str, ...] = field(default=())  # the words and phrases that matched, for the log
	imperative: bool = False  # a clause opens with a verb that is not a read verb ("raise", "book", ...)


class Router:
	"""Compiled routing tables; build once, route many questions."""

	def __init__(self, data: dict, entities: Iterable[EntityWords] = ()):
		self.order: tuple[str, ...] = tuple(data["order"])
		self._rank = {m: i for i, m in enumerate(self.order)}
		self._tool_prefixes = sorted(data.get("tool_modules", {}).items(), key=lambda kv: -len(kv[0]))
		self.entity_module: dict[str, str] = {}
		# stemmed phrase → [("module"|"entity", key)]
		self._phrases: dict[tuple[str, ...], set[tuple[str, str]]] = {}
		for module, spec in data["modules"].items():
			for text in [*spec.get("words", ()), *spec.get("phrases", ())]:
				self._add(text, ("module", module))
		self._abbrev: dict[str, str] = {}
		generic = {tuple(stems(w)) for w in data.get("generic_words", {}).get("words", ())}
		for ent in entities:
			self.entity_module[ent.key] = ent.module
			for index, text in enumerate(ent.phrases()):
				capitals = _ABBREVIATION.match(text.strip())
				if capitals:
					self._abbrev.setdefault(capitals.group(1), ent.key)
				elif index < 2 or tuple(stems(text)) not in generic:  # the key and label always count
					self._add(text, ("entity", ent.key))
		for key, texts in data.get("entity_words", {}).items():
			if key in self.entity_module:
				for text in texts:
					self._add(text, ("entity", key))
		self._longest = max((len(k) for k in self._phrases), default=1)
		for abbreviation, key in data.get("abbreviations", {}).items():
			if key in self.entity_module:
				self._abbrev.setdefault(abbreviation, key)
		lower = data.get("lowercase_abbreviations", {}).get("words", ())
		self._lower_abbrev = {w: self._abbrev[w.upper()] for w in lower if w.upper() in self._abbrev}
		prefixes = {p: e for p, e in data.get("id_prefixes", {}).items() if e in self.entity_module}
		self._id_prefixes = prefixes
		alternation = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
		self._id_pattern = re.compile(rf"(?<![A-Za-z0-9-])({alternation})-[A-Z0-9-]*\d") if prefixes else None
		self._intents: dict[tuple[str, ...], set[str]] = {}
		for intent, texts in data.get("intents", {}).items():
			for text in texts:
				self._intents.setdefault(tuple(stems(text)), set()).add(intent)
		self._intent_longest = max((len(k) for k in self._intents), default=1)
		imperative = data.get("imperative", {})
		self._prefixes = sorted(
			{tuple(stems(t)) for t in imperative.get("prefixes", ())} - {()}, key=len, reverse=True
		)
		self._not_verbs = {stem for text in imperative.get("not_verbs", ()) for stem in stems(text)}
		self._light_verbs = {stem for text in imperative.get("light_verbs", ()) for stem in stems(text)}
		# stemmed opening phrase → (entity, entities or None, action): "ship" → delivery_note create
		self._openers = {
			tuple(stems(text)): (target, action)
			for text, (target, action) in data.get("action_words", {}).get("words", {}).items()
			if stems(text)
		}
		self._opener_longest = max((len(k) for k in self._openers), default=1)
		self._related = [(tuple(rule["if"]), tuple(rule["add"])) for rule in data.get("related", ())]
		self.limits = dict(data.get("limits", {}))
		# A module's main entities first: when only the module is named, their list tools are offered.
		self.primary = {m: tuple(keys) for m, keys in data.get("primary", {}).items()}

	def _add(self, text: str, target: tuple[str, str]) -> None:
		key = tuple(stems(text))
		if key:
			self._phrases.setdefault(key, set()).add(target)

	def module_of(self, tool) -> str:
		"""The routing module of a tool: its entity's module, a name-prefix rule, or its own module."""
		if tool.entity and tool.entity in self.entity_module:
			return self.entity_module[tool.entity]
		for prefix, module in self._tool_prefixes:
			if tool.name.startswith(prefix):
				return module
		return tool.module

	def rank(self, module: str) -> int:
		return self._rank.get(module, len(self.order))

	def route(self, text: str) -> Route:
		"""Modules, entities and intents of one question; the same input always gives the same route."""
		words = stems(text)
		hits: list[str] = []
		module_score: dict[str, float] = {}
		entity_spans: list[tuple[int, int, str]] = []
		for n in range(min(self._longest, len(words)), 0, -1):
			for i in range(len(words) - n + 1):
				targets = self._phrases.get(tuple(words[i : i + n]))
				if not targets:
					continue
				hits.append(" ".join(words[i : i + n]))
				for kind, key in targets:
					if kind == "module":
						module_score[key] = module_score.get(key, 0) + 1
					else:
						entity_spans.append((i, i + n, key))
		entities: dict[str, float] = {}
		for start, end, key in entity_spans:
			# "purchase invoice" names purchase_invoice; its word "invoice" must not also name sales_invoice
			covered = any(
				s <= start and end <= e and (e - s) > (end - start) and k != key for s, e, k in entity_spans
			)
			if not covered:
				entities[key] = entities.get(key, 0) + 1
		for token in _WORD.findall(text):
			key = self._abbreviation(token)
			if key:
				hits.append(token)
				entities[key] = entities.get(key, 0) + 1
		ids: list[str] = []
		if self._id_pattern is not None:
			for match in self._id_pattern.finditer(text):
				key = self._id_prefixes[match.group(1)]
				hits.append(match.group(0))
				ids.append(key)
				entities[key] = entities.get(key, 0) + 2
		imperative, asked, named = self._imperatives(text)
		for key in named:
			hits.append(key)
			entities[key] = entities.get(key, 0) + 1
		for key in entities:
			module = self.entity_module[key]
			module_score[module] = module_score.get(module, 0) + entities[key]
		intents = self._find_intents(words) | asked
		if ids:
			intents.add("get")
			if imperative:
				intents.add("update")
		direct = frozenset(module_score)
		widened = self._widen(direct, entities)
		modules = tuple(sorted(direct | set(widened), key=self.rank))
		return Route(
			modules=modules,
			direct=direct,
			widened=tuple(sorted(widened, key=self.rank)),
			entities=entities,
			intents=frozenset(intents),
			ids=tuple(dict.fromkeys(ids)),
			hits=tuple(dict.fromkeys(hits)),
			imperative=imperative,
		)

	def _imperatives(self, text: str) -> tuple[bool, set[str], list[str]]:
		"""Whether a clause opens with a verb other than a read verb, the actions asked, the entities named.

		Any verb counts ("raise", "book", "key in"): a request that opens with one asks for a write,
		so its entities' create tools are offered; an action word ("ship", "bill") also names its entity.
		"""
		imperative, actions, named = False, set(), []
		for clause in _CLAUSE.split(text):
			opener = self._opener(stems(clause))
			if not opener:
				continue
			target, action = self._openers.get(tuple(opener), (None, None))
			if target is None and opener[0] in self._not_verbs and not self._light_use(opener[0], clause):
				continue
			imperative = True
			actions.add(action or "create")
			targets = target if isinstance(target, list) else [target]
			named.extend(t for t in targets if t in self.entity_module)
		return imperative, actions, named

	def _light_use(self, stem: str, clause: str) -> bool:
		"""A light verb with an object: "get a PO out", "give Acme a price" (not "give me the list")."""
		if stem not in self._light_verbs:
			return False
		tokens = _WORD.findall(clause)
		at = next((i for i, t in enumerate(tokens) if _stem(t.lower()) == stem), None)
		after = tokens[at + 1] if at is not None and at + 1 < len(tokens) else ""
		return after.lower() in ("a", "an") or (after[:1].isupper() and after.upper() != after)

	def _opener(self, words: list[str]) -> list[str]:
		"""The words a clause opens with after a polite prefix: the action word phrase, or its first word."""
		stripped = True
		while stripped and words:
			stripped = False
			for prefix in self._prefixes:
				if tuple(words[: len(prefix)]) == prefix:
					words, stripped = words[len(prefix) :], True
					break
		if not words or words[0].isdigit():
			return []
		# "clock me in" is the phrasal verb "clock in" with its object inside
		if len(words) > 2 and words[1] in _OBJECT_PRONOUNS:
			words = [words[0], *words[2:]]
		for n in range(min(self._opener_longest, len(words)), 0, -1):
			if tuple(words[:n]) in self._openers:
				return words[:n]
		return words[:1]

	def _abbreviation(self, token: str) -> str | None:
		if token in self._abbrev:
			return self._abbrev[token]
		# plural capitals: "POs", "SOs"
		if len(token) > 2 and token.endswith("s") and token[:-1].isupper() and token[:-1] in self._abbrev:
			return self._abbrev[token[:-1]]
		# three letters and more are not English words ("grn", "bom", "rfq"); two letters ("so") are
		upper = token.upper()
		if len(token) >= 3 and upper in self._abbrev:
			return self._abbrev[upper]
		return self._lower_abbrev.get(token.lower().removesuffix("s") if len(token) == 3 else token.lower())

	def _find_intents(self, words: list[str]) -> set[str]:
		found: set[str] = set()
		for n in range(1, min(self._intent_longest, len(words)) + 1):
			for i in range(len(words) - n + 1):
				found |= self._intents.get(tuple(words[i : i + n]), set())
		return found

	def _widen(self, direct: frozenset[str], entities: dict[str, float]) -> list[str]:
		present = set(direct) | set(entities)
		added: list[str] = []
		for condition, modules in self._related:
			if all(term in present for term in condition):
				added.extend(m for m in modules if m not in direct and m not in added)
		return added


_REGISTRY_ROUTERS: dict[tuple, tuple] = {}


def router_for(registry) -> Router:
	"""The router over the shipped data and the words of the registry's vocabulary (built once per registry).

	The vocabulary comes from whoever built the registry (the canonical model's labels and synonyms);
	an entity that only the registry's tools know (e.g. a test fake) is routable by its key.
	"""
	key = (id(registry), len(registry))
	cached = _REGISTRY_ROUTERS.get(key)
	if cached is not None and cached[0] is registry:
		return cached[1]
	words = list(registry.vocabulary.words)
	known = {w.key for w in words}
	extra = sorted({(t.entity, t.module) for t in registry if t.entity and t.entity not in known})
	router = Router(load_data(), words + [EntityWords(k, module) for k, module in extra])
	if len(_REGISTRY_ROUTERS) > 32:
		_REGISTRY_ROUTERS.clear()
	_REGISTRY_ROUTERS[key] = (registry, router)
	return router
