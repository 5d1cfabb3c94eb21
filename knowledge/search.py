"""Search: BM25 over the stored chunks, pgvector nearest neighbours, fused by reciprocal rank.

Lexical search always answers; when an embedder is configured (the built-in one unless a
provider is set) and the store holds its vectors, the two rankings are fused with reciprocal rank fusion (each ranking gives
``1 / (rrf_k + rank)``), which needs no score calibration between BM25 and cosine.
Both rankings see the question with the ERPNext terms of its everyday words added
(``knowledge.vocabulary``: "bill" also searches "invoice"). Documents restricted to roles are filtered in SQL for vectors and by a mask for BM25, so
a person without those roles never gets them — not even as a low-ranked candidate.

Each passage carries the ERPNext releases it describes (``knowledge.versions``); given the
site's release, one that describes another release, or has parts marked for one, carries a
note saying so, in its citation and in front of its text.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import bm25s
import numpy as np

from knowledge.documents import Document
from knowledge.embedding import Embedder, stem, tokens
from knowledge.errors import EmbeddingError, KnowledgeError
from knowledge.indexing import IndexReport, Progress, index_documents
from knowledge.store import PgVectorStore, StoredChunk
from knowledge.versions import marked_releases, passage_releases, short_label, site_major, version_note
from knowledge.vocabulary import Vocabulary, default_vocabulary

logger = logging.getLogger(__name__)

RRF_K = 60
MAX_K = 50


@dataclass(frozen=True)
class Passage:
	"""A passage returned to a caller, with what it needs to cite its source."""

	title: str
	section: str
	slug: str
	module: str
	score: float
	content: str
	doctypes: tuple[str, ...] = ()
	lexical: float = 0.0
	similarity: float | None = None
	# The ERPNext releases the passage describes (empty: not said) and those its marks name.
	releases: tuple[int, ...] = ()
	marked: tuple[int, ...] = ()
	# The site's ERPNext release when the caller knew it; the note and label follow from it.
	site_release: int | None = None

	@property
	def version_note(self) -> str:
		"""What a reader on the site's release must know; empty when the passage fits it."""
		return version_note(self.releases, self.marked, self.site_release)

	@property
	def citation(self) -> str:
		label = short_label(self.releases, self.site_release)
		return f"{self.title} > {self.section}" + (f" [{label}]" if label else "")

	@property
	def text(self) -> str:
		"""The content as delivered: the version note, when there is one, in front of it."""
		note = self.version_note
		return f"({note})\n{self.content}" if note else self.content

	def to_dict(self) -> dict:
		label = short_label(self.releases, self.site_release)
		return {
			"title": self.title,
			# The section as cited, so a label such as "ERPNext 16 only" reaches every renderer.
			"section": self.section + (f" [{label}]" if label else ""),
			"slug": self.slug,
			"module": self.module,
			"score": round(self.score, 6),
			"content": self.text,
			"releases": list(self.releases),
			"version_note": self.version_note,
		}


class LexicalIndex:
	"""BM25 over every stored chunk (label and text), rebuilt when the store's generation moves."""

	def __init__(self, chunks: Sequence[StoredChunk]):
		self.ids = np.array([chunk.id for chunk in chunks], dtype=np.int64)
		self._modules = np.array([chunk.module for chunk in chunks], dtype=object)
		self._roles = [frozenset(chunk.roles) for chunk in chunks]
		self._masks: dict[tuple, np.ndarray] = {}
		self._bm25 = None
		if chunks:
			corpus = [analyse(f"{chunk.label}\n{chunk.content}") or [""] for chunk in chunks]
			self._bm25 = bm25s.BM25()
			self._bm25.index(corpus, show_progress=False)

	def __len__(self) -> int:
		return len(self.ids)

	def search(
		self, query: str, *, k: int, roles: Iterable[str], module: str | None
	) -> list[tuple[int, float]]:
		"""``(chunk id, BM25 score)`` of the best visible chunks that share a word with the query."""
		if self._bm25 is None:
			return []
		words = [word for word in analyse(query) if word in self._bm25.vocab_dict]
		if not words:
			return []
		scores = self._bm25.get_scores(words) * self._mask(frozenset(roles), module)
		k = min(k, int(np.count_nonzero(scores)))
		if k == 0:
			return []
		top = np.argpartition(-scores, k - 1)[:k]
		top = top[np.argsort(-scores[top], kind="stable")]
		return [(int(self.ids[i]), float(scores[i])) for i in top]

	def _mask(self, roles: frozenset, module: str | None) -> np.ndarray:
		key = (roles, module)
		mask = self._masks.get(key)
		if mask is None:
			visible = np.array([not allowed or bool(allowed & roles) for allowed in self._roles], dtype=bool)
			if module:
				visible &= self._modules == module
			mask = visible.astype(np.float32)
			if len(self._masks) > 256:
				self._masks.clear()
			self._masks[key] = mask
		return mask


def analyse(text: str) -> list[str]:
	"""Words as the lexical index sees them: lowercased, stopwords dropped, stemmed."""
	return [stem(word) for word in tokens(text)]


class KnowledgeBase:
	"""Indexing and search over one store, with an optional embedder."""

	def __init__(
		self,
		store: PgVectorStore,
		embedder: Embedder | None = None,
		*,
		rrf_k: int = RRF_K,
		vocabulary: Vocabulary | None = None,
		expand_queries: bool = True,
	):
		self.store = store
		self.embedder = embedder
		self.rrf_k = rrf_k
		self.vocabulary = (vocabulary or default_vocabulary()) if expand_queries else None
		self._lexical: LexicalIndex | None = None
		self._lexical_generation = -1
		self._stored_model: str | None = None
		self._lock = threading.Lock()

	def index(
		self, documents: Sequence[Document], *, rebuild: bool = False, progress: Progress | None = None
	) -> IndexReport:
		return index_documents(
			self.store, documents, embedder=self.embedder, rebuild=rebuild, progress=progress
		)

	@property
	def mode(self) -> str:
		"""``hybrid`` when the store holds vectors from this embedder, else ``lexical``."""
		if self.embedder is None:
			return "lexical"
		model, _ = self.store.embedding_space()
		return "hybrid" if model == self.embedder.name else "lexical"

	def search(
		self,
		query: str,
		*,
		k: int = 5,
		module: str | None = None,
		roles: Iterable[str] = (),
		candidates: int | None = None,
		site_version=None,
	) -> list[Passage]:
		"""The ``k`` best passages for ``query`` that a person with ``roles`` may read.

		``score`` is the fused reciprocal-rank score in hybrid mode and the BM25 score in
		lexical mode: it orders results, it is not a probability. ``site_version`` is the
		site's ERPNext release (16, "16.7.3"); passages that describe another one say so.
		"""
		query = (query or "").strip()
		if not query:
			raise KnowledgeError(
				"empty query: ask about a process, e.g. 'why can't I edit a submitted invoice?'"
			)
		if not isinstance(k, int) or not 1 <= k <= MAX_K:
			raise KnowledgeError(f"k must be a whole number from 1 to {MAX_K}")
		roles = frozenset(roles)
		pool = candidates or max(4 * k, 40)
		index, hybrid = self._current()
		expanded = self.vocabulary.expand(query) if self.vocabulary else query
		lexical = index.search(expanded, k=pool, roles=roles, module=module)
		vector = self._vector_ranking(expanded, pool, roles, module) if hybrid else None
		if vector is None:
			ranked = lexical[:k]
		else:
			ranked = fuse([lexical, vector], k=k, rrf_k=self.rrf_k)
		return self._passages(ranked, dict(lexical), dict(vector or ()), site_major(site_version))

	def context(
		self,
		query: str,
		*,
		roles: Iterable[str] = (),
		max_chars: int = 3000,
		k: int = 4,
		min_similarity: float = 0.3,
		site_version=None,
	) -> list[Passage]:
		"""Passages for a prompt: the closest ones that plausibly relate to the request, within a budget."""
		if not (query or "").strip():
			return []
		chosen, used = [], 0
		for passage in self.search(query, k=k, roles=roles, site_version=site_version):
			related = passage.lexical > 0 or (passage.similarity or 0.0) >= min_similarity
			if not related or used + len(passage.content) > max_chars:
				continue
			chosen.append(passage)
			used += len(passage.content)
		return chosen

	def status(self) -> dict:
		stats = self.store.stats()
		stats["mode"] = self.mode
		stats["embedder"] = self.embedder.name if self.embedder else None
		return stats

	def _vector_ranking(self, query, pool, roles, module) -> list[tuple[int, float]] | None:
		try:
			vector = self.embedder.embed([query])[0]
		except EmbeddingError as exc:
			# A turn is better served by lexical results than by no results.
			logger.warning("knowledge search fell back to lexical: %s", exc)
			return None
		return self.store.vector_search(vector, k=pool, roles=roles, module=module)

	def _current(self) -> tuple[LexicalIndex, bool]:
		"""The lexical index and whether vectors can be searched, refreshed when the store's generation moves.

		Every write and every change of embedding model bumps the generation, so one small
		query per search is enough to know both are still current.
		"""
		generation = self.store.generation()
		with self._lock:
			if self._lexical is None or generation != self._lexical_generation:
				self._stored_model, _ = self.store.embedding_space()
				self._lexical = LexicalIndex(self.store.chunks())
				self._lexical_generation = generation
			hybrid = self.embedder is not None and self._stored_model == self.embedder.name
			return self._lexical, hybrid

	def _passages(self, ranked, lexical: dict, vector: dict, site: int | None) -> list[Passage]:
		chunks = {chunk.id: chunk for chunk in self.store.chunks(chunk_id for chunk_id, _ in ranked)}
		passages = []
		for chunk_id, score in ranked:
			chunk = chunks.get(chunk_id)
			if chunk is None:  # removed between ranking and reading
				continue
			passages.append(
				Passage(
					title=chunk.title,
					section=chunk.section,
					slug=chunk.slug,
					module=chunk.module,
					score=score,
					content=chunk.content,
					doctypes=chunk.doctypes,
					lexical=lexical.get(chunk_id, 0.0),
					similarity=vector.get(chunk_id),
					releases=tuple(sorted(passage_releases(chunk.version, chunk.section))),
					marked=tuple(sorted(marked_releases(chunk.content))),
					site_release=site,
				)
			)
		return passages


def fuse(
	rankings: Sequence[Sequence[tuple[int, float]]], *, k: int, rrf_k: int = RRF_K
) -> list[tuple[int, float]]:
	"""Reciprocal rank fusion of several best-first rankings of ids."""
	scores: dict[int, float] = {}
	for ranking in rankings:
		for rank, (item, _) in enumerate(ranking, start=1):
			scores[item] = scores.get(item, 0.0) + 1.0 / (rrf_k + rank)
	return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))[:k]


def render_context(passages: Sequence[Passage], *, header: str = "Process knowledge") -> str:
	"""Passages as a prompt block; the bracketed labels are what the model cites."""
	if not passages:
		return ""
	blocks = [f"[{passage.citation}]\n{passage.text}" for passage in passages]
	return f"{header} (cite the bracketed source when you use it):\n\n" + "\n\n".join(blocks)
