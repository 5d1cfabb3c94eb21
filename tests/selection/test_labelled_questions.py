"""The labelled question set: every needed tool is offered, or found by tools.search with the question's words.

Runs against the full canonical registry (`build_registry`). A question whose tools come from a
tool module that has not been registered yet is skipped with the module named, so the test
grows stricter as modules land.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from noviz_agent.connectors.model import MODULES, load_model
from noviz_agent.engine.selection import select
from noviz_agent.engine.session import Person, Session
from noviz_agent.tools import TOOL_MODULES, build_registry
from noviz_agent.tools.discovery import search_tools_names

QUESTIONS = [
	json.loads(line)
	for line in (Path(__file__).parent / "questions.jsonl").read_text(encoding="utf-8").splitlines()
	if line.strip()
]
# Which tool module provides a tool, by its name's prefix; everything else is a generated entity tool.
SOURCES = {
	"analytics.": "analytics",
	"chart.": "analytics",
	"knowledge.": "knowledge",
	"workflow.": "workflow",
	"report.": "reports",
	"schema.": "schema",
	"tools.": "discovery",
}
SEARCH_LIMIT = 8


def source_of(tool: str) -> str:
	return next((module for prefix, module in SOURCES.items() if tool.startswith(prefix)), "entities")


@pytest.fixture(scope="module")
def registry():
	return build_registry()


def everyone(registry) -> Session:
	return Session(
		person=Person(user="everyone"), connector=None, registry=registry, allowed=frozenset(registry.names())
	)


def test_the_set_is_large_and_covers_every_module():
	assert len(QUESTIONS) >= 150
	entity_module = {e.key: e.module for e in load_model()}
	covered = {entity_module.get(t.split(".")[0]) for q in QUESTIONS for t in q["needs"]}
	assert set(MODULES) <= covered
	sources = {source_of(t) for q in QUESTIONS for t in q["needs"]}
	assert {"analytics", "knowledge", "reports", "workflow", "schema"} <= sources


def test_labels_name_entity_actions_the_model_has():
	model = load_model()
	wrong = [
		t
		for q in QUESTIONS
		for t in q["needs"]
		if source_of(t) == "entities" and not model.entity(t.split(".")[0]).allows(t.split(".")[1])
	]
	assert wrong == []


@pytest.mark.parametrize("item", QUESTIONS, ids=[q["q"][:60] for q in QUESTIONS])
def test_needed_tools_are_offered_or_found_by_search(item, registry):
	pending = sorted({source_of(t) for t in item["needs"]} - set(TOOL_MODULES))
	if pending:
		pytest.skip(f"tool modules not registered yet: {', '.join(pending)}")
	unknown = [t for t in item["needs"] if t not in registry]
	assert unknown == [], f"labelled tools missing from the registry: {unknown}"
	selection = select(everyone(registry), item["q"])
	missing = [t for t in item["needs"] if t not in selection.tools]
	if missing:
		found = search_tools_names(everyone(registry), item["q"], limit=SEARCH_LIMIT)
		unreachable = [t for t in missing if t not in found]
		assert unreachable == [], f"neither offered nor found by tools.search: {unreachable}"
