"""Routing by meaning beside the keywords: what it adds, how it is cached, and routing without it."""

from __future__ import annotations

import builtins
import math
import re

import pytest

from noviz_agent.engine import similarity as sim
from noviz_agent.engine.selection import select
from noviz_agent.engine.similarity import Near, Similarity
from tests.selection.fake_tools import fake_registry, make_session


class WordsEmbedder:
	"""A deterministic stand-in: one dimension per known word, so closeness is shared words."""

	name = "words"

	def __init__(self, vocabulary: list[str]):
		self.vocabulary = vocabulary
		self.calls: list[list[str]] = []

	def embed(self, texts: list[str]) -> list[list[float]]:
		self.calls.append(list(texts))
		out = []
		for text in texts:
			words = set(re.findall(r"[a-z]+", text.lower()))
			vector = [1.0 if w in words else 0.0 for w in self.vocabulary]
			norm = math.sqrt(sum(v * v for v in vector)) or 1.0
			out.append([v / norm for v in vector])
		return out


VOCABULARY = ["clock", "arrived", "office", "attendance", "machine", "broken", "repair", "trend", "monthly"]
ENTITIES = [
	("attendance", "Attendance. clock, arrived, office."),
	("asset", "Asset. machine, broken, repair."),
]
TOOLS = [("analytics.build", "analytics build. monthly trend")]


def test_near_returns_the_closest_entity_above_the_floor():
	similarity = Similarity(WordsEmbedder(VOCABULARY), ENTITIES, TOOLS)
	near = similarity.near("I just arrived at the office")
	assert list(near.entities) == ["attendance"]
	assert near.tools == {}


def test_near_returns_a_tool_when_its_description_is_closest():
	near = Similarity(WordsEmbedder(VOCABULARY), ENTITIES, TOOLS).near("monthly trend please")
	assert list(near.tools) == ["analytics.build"]


def test_a_question_close_to_nothing_adds_nothing():
	near = Similarity(WordsEmbedder(VOCABULARY), ENTITIES, TOOLS).near("hello there")
	assert near == Near({}, {})


def test_description_vectors_are_computed_once_per_process():
	embedder = WordsEmbedder(VOCABULARY)
	Similarity(embedder, ENTITIES, TOOLS)
	Similarity(embedder, ENTITIES, TOOLS)
	described = [c for c in embedder.calls if len(c) > 1]
	assert len(described) == 1, "the second Similarity reused the cached description vectors"
	sizes_before = len(embedder.calls)
	Similarity(embedder, ENTITIES, TOOLS).near("broken machine")
	assert len(embedder.calls) == sizes_before + 1, "one embedding per question, none for descriptions"


def test_selection_offers_the_entity_found_by_meaning():
	registry = fake_registry()
	similarity = Similarity(WordsEmbedder(VOCABULARY), [("asset", "broken machine repair")], [])
	session = make_session(registry)
	chosen = select(session, "the press in hall 2 is broken again", similarity=similarity)
	assert "asset.list" in chosen.tools
	assert chosen.near.entities == {"asset": pytest.approx(chosen.near.entities["asset"])}
	assert "close in meaning" in chosen.reasons["asset.list"]
	without = select(make_session(registry), "the press in hall 2 is broken again", similarity=None)
	assert "asset.list" not in without.tools


def test_routing_works_without_an_embedder(monkeypatch):
	monkeypatch.setattr(sim, "default_embedder", lambda: None)
	registry = fake_registry()
	assert sim.similarity_for(registry) is None
	chosen = select(make_session(registry), "show the open sales orders")
	assert "sales_order.list" in chosen.tools
	assert chosen.near == Near({}, {})


def test_no_embedder_installed_gives_none_not_an_error(monkeypatch):
	real_import = builtins.__import__

	def refuse(name, *args, **kwargs):
		if name in ("wordllama", "knowledge.embedding"):
			raise ImportError(f"No module named {name!r}")
		return real_import(name, *args, **kwargs)

	monkeypatch.setattr(builtins, "__import__", refuse)
	assert sim.builtin_embedder() is None


def test_the_knowledge_embedder_is_used_when_it_offers_one(monkeypatch):
	import knowledge.embedding

	marker = WordsEmbedder(VOCABULARY)
	monkeypatch.setattr(knowledge.embedding, "builtin_embedder", lambda: marker, raising=False)
	assert sim.builtin_embedder() is marker


def test_a_broken_model_falls_back_to_keywords(monkeypatch):
	import knowledge.embedding

	def broken():
		raise OSError("model file truncated")

	monkeypatch.setattr(knowledge.embedding, "builtin_embedder", broken, raising=False)
	assert sim.builtin_embedder() is None


def test_the_builtin_model_finds_what_no_keyword_names():
	pytest.importorskip("wordllama")
	registry = _full_registry()
	question = "which machines need servicing soon"
	assert "asset_maintenance" not in select(make_session(registry), question, similarity=None).tools
	chosen = select(make_session(registry), question)
	assert "asset_maintenance" in chosen.near.entities
	assert "asset_maintenance.list" in chosen.tools


def _full_registry():
	from noviz_agent.tools import build_registry

	return build_registry()
