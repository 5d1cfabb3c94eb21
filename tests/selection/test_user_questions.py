"""The user-written question set: well-formed labels, a dev/test split, and the dev set reachable.

`user_questions.{dev,test}.jsonl` hold questions written from an ERPNext user's point of view,
each with the tools that would answer it (`any`: offering one of them is enough). Routing is
tuned on the dev set only; the test set is only measured (`benchmarks/selection.py` prints its
recall), so no test here checks a test-set question's routing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from noviz_agent.connectors.model import MODULES, load_model
from noviz_agent.engine.routing import spine_names
from noviz_agent.engine.selection import select
from noviz_agent.engine.session import Person, Session
from noviz_agent.tools import build_registry
from noviz_agent.tools.discovery import search_tools_names

HERE = Path(__file__).parent
SEARCH_LIMIT = 8


def load(split: str) -> list[dict]:
	path = HERE / f"user_questions.{split}.jsonl"
	return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


DEV, TEST = load("dev"), load("test")


@pytest.fixture(scope="module")
def registry():
	return build_registry()


def everyone(registry) -> Session:
	return Session(
		person=Person(user="everyone"), connector=None, registry=registry, allowed=frozenset(registry.names())
	)


def test_the_set_has_at_least_150_questions_split_into_dev_and_test():
	assert len(DEV) + len(TEST) >= 150
	assert len(TEST) >= 100, "the test set is not a token sample"
	assert not {q["q"] for q in DEV} & {q["q"] for q in TEST}


def test_every_label_is_a_registered_tool_and_none_is_always_offered(registry):
	spine = set(spine_names())
	unknown = [(q["q"], t) for q in DEV + TEST for t in q["any"] if t not in registry]
	trivial = [q["q"] for q in DEV + TEST if spine & set(q["any"])]
	assert unknown == []
	assert trivial == [], "a spine tool is offered to every question; labelling it proves nothing"


def test_the_questions_reach_every_business_module():
	entity_module = {e.key: e.module for e in load_model()}
	covered = {entity_module.get(t.split(".")[0]) for q in DEV + TEST for t in q["any"]}
	assert set(MODULES) <= covered


def test_writes_are_a_large_part_of_the_set():
	writes = [
		q
		for q in DEV + TEST
		if any(t.endswith((".create", ".update", ".submit", ".cancel")) for t in q["any"])
	]
	assert len(writes) >= 60


@pytest.mark.parametrize("item", DEV, ids=[q["q"][:60] for q in DEV])
def test_dev_question_is_offered_or_found_by_search_on_keywords_alone(item, registry):
	chosen = select(everyone(registry), item["q"], similarity=None)
	if any(t in chosen.tools for t in item["any"]):
		return
	found = search_tools_names(everyone(registry), item["q"], limit=SEARCH_LIMIT)
	assert any(t in found for t in item["any"]), f"none of {item['any']} offered or found by tools.search"
