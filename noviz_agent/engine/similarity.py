"""Routing by meaning: the entities and tools whose descriptions a question is closest to.

Beside the router's keywords, a local embedder compares the question with one short text per
entity (label, synonyms, description) and per non-entity tool (its description), so "check me
in, I just arrived" reaches employee_checkin although no keyword says so. The embedder is the
built-in one (`knowledge.embedding.builtin_embedder`, a small static model shipped in its
wheel, CPU only); without it routing runs on keywords alone. Description vectors are computed
once per process (and shared by registries); each question costs one embedding.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

# A candidate counts when it is this close to the question and near the best match.
FLOOR = 0.3
MARGIN = 0.08
TOP_K = 2
# Tools matched by meaning are never the spine nor an entity's own tool (entities cover those).
_SKIP_PREFIXES = ("tools.", "schema.")


@dataclass(frozen=True)
class Near:
	"""What a question is close to: entity key → similarity, tool name → similarity."""

	entities: dict[str, float]
	tools: dict[str, float]


class Similarity:
	"""Unit vectors of every entity's and tool's description; compare a question with them all."""

	def __init__(self, embedder, entities: Iterable[tuple[str, str]], tools: Iterable[tuple[str, str]]):
		self.embedder = embedder
		entities, tools = list(entities), list(tools)
		self.keys = [("entity", key) for key, _ in entities] + [("tool", name) for name, _ in tools]
		texts = [text for _, text in entities] + [text for _, text in tools]
		self.matrix = _vectors(embedder, texts) if texts else None

	def near(
		self, question: str, *, top_k: int = TOP_K, floor: float = FLOOR, margin: float = MARGIN
	) -> Near:
		"""The few entities and tools closest to the question, strongest first."""
		if self.matrix is None or not question.strip():
			return Near({}, {})
		vector = _unit(np.asarray(self.embedder.embed([question]), dtype=np.float32))[0]
		scores = self.matrix @ vector
		best = float(scores.max())
		entities: dict[str, float] = {}
		tools: dict[str, float] = {}
		for index in np.argsort(-scores)[:top_k]:
			score = float(scores[index])
			if score < floor or score < best - margin:
				break
			kind, key = self.keys[index]
			(entities if kind == "entity" else tools)[key] = round(score, 4)
		return Near(entities, tools)


# Description vectors per embedder (held, so its id is never reused), by text: computed once per process.
_CACHE: dict[int, tuple[object, dict[str, np.ndarray]]] = {}


def _vectors(embedder, texts: list[str]) -> np.ndarray:
	held = _CACHE.get(id(embedder))
	if held is None or held[0] is not embedder:
		held = _CACHE[id(embedder)] = (embedder, {})
	known = held[1]
	missing = list(dict.fromkeys(t for t in texts if t not in known))
	if missing:
		vectors = _unit(np.asarray(embedder.embed(missing), dtype=np.float32))
		known.update(zip(missing, vectors, strict=True))
	return np.stack([known[t] for t in texts])


def _unit(matrix: np.ndarray) -> np.ndarray:
	norms = np.linalg.norm(matrix, axis=1, keepdims=True)
	return matrix / np.where(norms == 0, 1, norms)


def entity_text(label: str, synonyms: Iterable[str], description: str) -> str:
	return f"{label}. {', '.join(synonyms)}. {description}"


def tool_text(tool) -> str:
	return f"{tool.name.replace('.', ' ').replace('_', ' ')}. {tool.description.strip().splitlines()[0]}"


class _WordLlama:
	"""The wordllama model shipped inside its wheel, when the knowledge package offers no embedder."""

	name = "wordllama"

	def __init__(self):
		import wordllama

		self._model = wordllama.WordLlama.load(
			cache_dir=os.path.dirname(wordllama.__file__), disable_download=True
		)

	def embed(self, texts: list[str]) -> list[list[float]]:
		return self._model.embed(list(texts), norm=True).tolist()


def builtin_embedder():
	"""The built-in local embedder, or None when no local model is installed (keywords only then)."""
	try:
		from knowledge.embedding import builtin_embedder as knowledge_embedder
	except ImportError:
		knowledge_embedder = None
	try:
		return knowledge_embedder() if knowledge_embedder else _WordLlama()
	except ImportError:
		return None
	except Exception as exc:  # a broken model file must not stop routing; keywords still work
		log.warning("built-in embedder unavailable, routing on keywords only: %s", exc)
		return None


@functools.lru_cache(maxsize=1)
def default_embedder():
	"""The built-in embedder, loaded once per process (None when not installed)."""
	return builtin_embedder()


_BY_REGISTRY: dict[tuple, tuple] = {}


def similarity_for(registry) -> Similarity | None:
	"""Similarity over a registry's entities and non-entity tools, or None without an embedder."""
	embedder = default_embedder()
	if embedder is None:
		return None
	key = (id(registry), len(registry))
	cached = _BY_REGISTRY.get(key)
	if cached is not None and cached[0] is registry:
		return cached[1]
	from noviz_agent.engine.routing import spine_names

	model = registry.vocabulary.entities
	spine = set(spine_names())
	keys = dict.fromkeys(t.entity for t in registry if t.entity)
	entities = [
		(k, entity_text(model[k].label, model[k].synonyms, model[k].description) if k in model else k)
		for k in keys
	]
	tools = [
		(t.name, tool_text(t))
		for t in registry
		if not t.entity and t.name not in spine and not t.name.startswith(_SKIP_PREFIXES)
	]
	similarity = Similarity(embedder, entities, tools)
	if len(_BY_REGISTRY) > 32:
		_BY_REGISTRY.clear()
	_BY_REGISTRY[key] = (registry, similarity)
	return similarity
