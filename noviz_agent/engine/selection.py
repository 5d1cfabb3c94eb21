"""Stages 2 and 3 of tool selection: the few dozen tools one request is offered.

Stage 1 (`policy.allowed_tools`) already removed what the person may not use; here the
router narrows that to the question's modules and entities, the spine is always added,
and a cap keeps the count well under the provider's limit (the spine and the strongest
matches win; what was cut is logged). Everything else stays reachable through
`tools.search`. Offered tools are listed spine first, then in registry order, so the same
modules give byte-identical tool lists and the provider's prompt cache hits.
"""

from __future__ import annotations

import json
import logging
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from noviz_agent.engine.routing import Route, Router, router_for, spine_names
from noviz_agent.engine.schema_rules import MAX_TOOLS
from noviz_agent.engine.session import Person, Session
from noviz_agent.engine.similarity import Near, Similarity, similarity_for

log = logging.getLogger(__name__)

# Scores: higher wins when the cap bites. The spine is placed before all of these.
FOUND_BY_SEARCH = 90
ENTITY_READ = 60
ENTITY_ACTION = 58
ENTITY_COUNT = 55
MODULE_TOOL = 40
SIMILAR_ENTITY = 36  # an entity (or tool) whose description is close in meaning to the question
SIMILAR_TOOL = 35
MODULE_LIST = 20
WIDENED_TOOL = 15
WIDENED_LIST = 10
READ_ACTIONS = ("list", "get")

ModulePicker = Callable[[str, list[str]], Iterable[str]]
# select()'s similarity default: the built-in embedder when installed; pass None for keywords only.
BUILTIN = object()
NO_MATCH = Near({}, {})


@dataclass(frozen=True)
class Selection:
	"""The tools offered to one request, and why."""

	modules: tuple[str, ...]  # in the canonical module order; the prompt loads these sections
	tools: tuple[str, ...]  # spine first, then registry order
	spine: tuple[str, ...]
	cut: tuple[str, ...] = ()  # removed by the cap, strongest first
	reasons: dict[str, str] = field(default_factory=dict)
	route: Route | None = None
	near: Near = NO_MATCH  # entities and tools matched by meaning

	def schemas(self, registry) -> list[dict]:
		"""The function definitions to send, in the stable offered order."""
		return [registry[name].schema() for name in self.tools]

	def as_plan(self) -> dict:
		return {"modules": list(self.modules), "tools": list(self.tools)}


def select(
	session,
	question: str,
	*,
	cap: int | None = None,
	model_picker: ModulePicker | None = None,
	router: Router | None = None,
	similarity: Similarity | None | object = BUILTIN,
) -> Selection:
	"""Choose the tools for one request from `session.allowed`; also records them in `session.offered`.

	`similarity` adds the entities and tools closest in meaning to the question (the built-in
	embedder by default; None routes on keywords alone).
	"""
	registry = session.registry
	router = router or router_for(registry)
	# Whatever the settings say, never more than a provider accepts in one request.
	cap = min(cap if cap is not None else session.limits.max_tools, MAX_TOOLS)
	view = allowance_view(registry, router, session.allowed)
	route = router.route(question)
	if similarity is BUILTIN:
		similarity = similarity_for(registry)
	near = similarity.near(question) if similarity is not None else NO_MATCH
	direct, modules = set(route.direct), set(route.modules)
	if model_picker is not None:
		picked = _pick(model_picker, question, [m for m in router.order if m in view.modules])
		direct |= picked
		modules |= picked
	spine = [n for n in spine_names() if n in view.module]
	scores = _score(router, route, view, set(spine), direct, modules, session.offered)
	_score_near(scores, route, near, view, set(spine))
	ranked = sorted(scores, key=lambda name: (-scores[name][0], view.index[name]))
	room = max(cap - len(spine), 0)
	kept, cut = ranked[:room], tuple(spine[cap:]) + tuple(ranked[room:])
	spine_kept = spine[:cap]
	tools = tuple(spine_kept) + tuple(sorted(kept, key=view.index.__getitem__))
	reasons = {name: "spine" for name in spine_kept}
	reasons.update({name: scores[name][1] for name in kept})
	if cut:
		log.info("tool cap %s cut %d tools: %s", cap, len(cut), ", ".join(cut))
	modules |= {router.entity_module[e] for e in near.entities if e in router.entity_module}
	chosen = tuple(m for m in router.order if m in modules and m in view.modules)
	session.offered.update(tools)
	return Selection(
		modules=chosen,
		tools=tools,
		spine=tuple(spine_kept),
		cut=cut,
		reasons=reasons,
		route=route,
		near=near,
	)


class AllowanceView:
	"""One person's allowed tools, indexed for scoring; built once per registry and allowance."""

	def __init__(self, registry, router: Router, allowed: frozenset[str]):
		self.registry = registry
		self.index = {name: i for i, name in enumerate(registry.names())}
		tools = [t for t in registry if t.name in allowed]
		self.module = {t.name: router.module_of(t) for t in tools}
		self.modules = set(self.module.values())
		self.by_entity: dict[str, list] = {}
		self.plain: dict[str, list] = {}  # tools without an entity, by routing module
		self.lists: dict[str, list] = {}  # entity list tools by module, the module's main entities first
		for tool in tools:
			module = self.module[tool.name]
			if tool.entity:
				self.by_entity.setdefault(tool.entity, []).append(tool)
				if tool.action == "list":
					self.lists.setdefault(module, []).append(tool)
			else:
				self.plain.setdefault(module, []).append(tool)
		for module, lists in self.lists.items():
			primary = router.primary.get(module, ())
			lists.sort(key=lambda t: primary.index(t.entity) if t.entity in primary else len(primary))


_VIEWS: OrderedDict[tuple, AllowanceView] = OrderedDict()
_VIEW_CACHE_SIZE = 64


def allowance_view(registry, router: Router, allowed: frozenset[str]) -> AllowanceView:
	key = (id(registry), len(registry), id(router), allowed)
	view = _VIEWS.get(key)
	if view is None or view.registry is not registry:
		view = _VIEWS[key] = AllowanceView(registry, router, frozenset(allowed))
		if len(_VIEWS) > _VIEW_CACHE_SIZE:
			_VIEWS.popitem(last=False)
	else:
		_VIEWS.move_to_end(key)
	return view


def _score(router, route, view, spine, direct, modules, found) -> dict[str, tuple[int, str]]:
	scores: dict[str, tuple[int, str]] = {}

	def offer(name: str, score: float, reason: str) -> None:
		if name not in spine and (name not in scores or score > scores[name][0]):
			scores[name] = (score, reason)

	for name in found:
		if name in view.module:
			offer(name, FOUND_BY_SEARCH, "found by tools.search in this turn")
	analytic = "analytics" in modules or "count" in route.intents
	for entity, strength in route.entities.items():
		for tool in view.by_entity.get(entity, ()):
			action = tool.action or ""
			if action in READ_ACTIONS:
				offer(tool.name, ENTITY_READ + strength, f"{entity} named in the question")
			elif action == "count" and analytic:
				offer(tool.name, ENTITY_COUNT + strength, f"a count of {entity} asked for")
			elif action in route.intents:
				offer(tool.name, ENTITY_ACTION + strength, f"{action} of {entity} asked for")
	named_modules = {router.entity_module.get(e) for e in route.entities}
	for module in modules:
		is_direct = module in direct
		how = "matched" if is_direct else "widened"
		for tool in view.plain.get(module, ()):
			offer(tool.name, MODULE_TOOL if is_direct else WIDENED_TOOL, f"module {module} {how}")
		if module in named_modules:
			continue
		# A module named only by its words ("sales", "payroll"): its main entities' lists, few of them.
		wide = is_direct and not route.entities
		budget = router.limits.get("module_list_tools" if wide else "widened_list_tools", 3)
		for tool in view.lists.get(module, ())[:budget]:
			offer(tool.name, MODULE_LIST if is_direct else WIDENED_LIST, f"module {module} {how}")
	return scores


def _score_near(scores: dict, route: Route, near: Near, view, spine: set[str]) -> None:
	"""Offer what is close in meaning: an entity's reads and asked actions, a tool itself."""

	def offer(name: str, score: float, reason: str) -> None:
		if name in view.module and name not in spine and name not in scores:
			scores[name] = (score, reason)

	analytic = "count" in route.intents
	for entity, closeness in near.entities.items():
		for tool in view.by_entity.get(entity, ()):
			action = tool.action or ""
			if action in READ_ACTIONS or action in route.intents or (action == "count" and analytic):
				offer(tool.name, SIMILAR_ENTITY + closeness, f"{entity} close in meaning ({closeness:.2f})")
	for name, closeness in near.tools.items():
		offer(name, SIMILAR_TOOL + closeness, f"close in meaning ({closeness:.2f})")


def _pick(model_picker: ModulePicker, question: str, modules: list[str]) -> set[str]:
	try:
		picked = {m for m in model_picker(question, modules) if m in modules}
	except Exception as exc:  # an optional helper must never break routing; the router's answer stands
		log.warning("model module picker failed, keeping the router's modules: %s", exc)
		return set()
	return picked


def make_model_picker(complete: Callable[[list[dict]], str]) -> ModulePicker:
	"""A module picker that asks a cheap model once: `complete(messages) -> text` is the provider call."""
	from noviz_agent.engine.prompt import render_file

	def pick(question: str, modules: list[str]) -> list[str]:
		system = render_file("module_picker.md", modules=", ".join(modules))
		text = complete([{"role": "system", "content": system}, {"role": "user", "content": question}])
		match = re.search(r"\[.*?\]", text or "", re.S)
		if not match:
			return []
		try:
			names = json.loads(match.group(0))
		except json.JSONDecodeError:
			return []
		return [n for n in names if isinstance(n, str)]

	return pick


# --- the whole registry, everything allowed (the `route` command and the benchmarks) -----------


def _everyone(registry) -> Session:
	return Session(
		person=Person(user="everyone"), connector=None, registry=registry, allowed=frozenset(registry.names())
	)


def plan_for_everyone(registry, question: str) -> dict:
	"""`{"modules": [...], "tools": [...]}` a person allowed every tool of `registry` would be offered."""
	return select(_everyone(registry), question).as_plan()


def plan_many(registry, lines: Iterable[str]) -> list[dict]:
	"""One plan per non-blank line, in order."""
	return [plan_for_everyone(registry, line.strip()) for line in lines if line.strip()]
