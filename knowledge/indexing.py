"""Bring the store in line with a set of documents, paying for each embedding once.

A document is skipped when its checksum and embedding model match what is stored; a
changed one is re-chunked and re-embedded and its chunks swapped in one transaction; a
document no longer in the set is removed. Chunks of several documents share embedding
batches; a document is written as soon as all its chunks are embedded, so a provider
failure mid-run leaves every other document complete and the failing one as it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from knowledge.chunking import Chunk, chunk_document
from knowledge.documents import Document
from knowledge.embedding import Embedder
from knowledge.errors import EmbeddingError, IndexingError
from knowledge.store import PgVectorStore

# progress(done, total, current document title)
Progress = Callable[[int, int, str], None]


@dataclass
class IndexReport:
	"""What an index run did; ``embedding_calls`` counts requests to the provider."""

	added: list[str] = field(default_factory=list)
	updated: list[str] = field(default_factory=list)
	unchanged: list[str] = field(default_factory=list)
	removed: list[str] = field(default_factory=list)
	chunks_written: int = 0
	embedding_calls: int = 0
	embedding_model: str | None = None
	seconds: float = 0.0
	document_seconds: dict[str, float] = field(default_factory=dict)

	def to_dict(self) -> dict:
		return {
			"added": len(self.added),
			"updated": len(self.updated),
			"unchanged": len(self.unchanged),
			"removed": len(self.removed),
			"chunks_written": self.chunks_written,
			"embedding_calls": self.embedding_calls,
			"embedding_model": self.embedding_model,
			"seconds": round(self.seconds, 3),
		}


def index_documents(
	store: PgVectorStore,
	documents: Sequence[Document],
	*,
	embedder: Embedder | None = None,
	rebuild: bool = False,
	progress: Progress | None = None,
	chunker: Callable[[Document], list[Chunk]] = chunk_document,
) -> IndexReport:
	"""Index ``documents`` into ``store``; the set given is the whole set (others are removed)."""
	started = time.perf_counter()
	report = IndexReport(embedding_model=embedder.name if embedder else None)
	_check_unique(documents)
	states = store.document_states()
	wanted = {document.key for document in documents}
	report.removed = sorted(key for key in states if key not in wanted)
	store.remove_documents(report.removed)

	pending: list[tuple[Document, list[Chunk]]] = []
	for document in documents:
		state = states.get(document.key)
		if (
			not rebuild
			and state is not None
			and state.checksum == document.checksum
			# Without an embedder, vectors already stored stay useful for whoever has one.
			and (embedder is None or state.embedding_model == embedder.name)
		):
			report.unchanged.append(document.key)
			continue
		(report.updated if state else report.added).append(document.key)
		pending.append((document, chunker(document)))

	if embedder is not None and pending:
		# Only now: asking an OpenAI-compatible model its size costs a request.
		try:
			store.prepare_embedding_space(embedder.name, embedder.dimension)
		except EmbeddingError as exc:
			raise IndexingError(f"cannot start indexing: {exc}", report=report) from None

	total = len(documents)
	done = len(report.unchanged)
	if progress and done:
		progress(done, total, "unchanged documents skipped")
	if embedder is None:
		for document, chunks in pending:
			tick = time.perf_counter()
			store.replace_document(document, chunks, None, embedding_model=None)
			report.chunks_written += len(chunks)
			report.document_seconds[document.key] = time.perf_counter() - tick
			done += 1
			if progress:
				progress(done, total, document.title)
	else:
		_embed_and_write(store, pending, embedder, report, progress, done, total)
	report.seconds = time.perf_counter() - started
	return report


def _embed_and_write(store, pending, embedder, report, progress, done, total) -> None:
	# One queue of (document position, chunk) across documents, so small documents share requests.
	queue = [(position, chunk) for position, (_, chunks) in enumerate(pending) for chunk in chunks]
	vectors: list[list[list[float]]] = [[] for _ in pending]
	seconds = [0.0] * len(pending)
	next_to_write = 0

	def flush() -> None:
		# Write, in order, every document whose chunks are all embedded.
		nonlocal next_to_write, done
		while next_to_write < len(pending) and len(vectors[next_to_write]) == len(pending[next_to_write][1]):
			document, chunks = pending[next_to_write]
			tick = time.perf_counter()
			store.replace_document(document, chunks, vectors[next_to_write], embedding_model=embedder.name)
			report.document_seconds[document.key] = seconds[next_to_write] + time.perf_counter() - tick
			report.chunks_written += len(chunks)
			vectors[next_to_write] = []
			next_to_write += 1
			done += 1
			if progress:
				progress(done, total, document.title)

	flush()
	batch_size = max(1, int(getattr(embedder, "batch_size", 64)))
	for start in range(0, len(queue), batch_size):
		batch = queue[start : start + batch_size]
		tick = time.perf_counter()
		try:
			embedded = embedder.embed([chunk.text_for_embedding() for _, chunk in batch])
			report.embedding_calls += 1
			if len(embedded) != len(batch):
				raise EmbeddingError(
					f"the embedder returned {len(embedded)} vectors for {len(batch)} passages"
				)
		except EmbeddingError as exc:
			failing = pending[next_to_write][0]
			raise IndexingError(
				f"indexing stopped at {failing.path or failing.key}: {exc}. {next_to_write} of {len(pending)} "
				"changed documents were written; the rest keep their previous chunks. Run the index again to continue.",
				document=failing.key,
				report=report,
			) from None
		share = (time.perf_counter() - tick) / len(batch)
		for (position, _), vector in zip(batch, embedded, strict=True):
			vectors[position].append(vector)
			seconds[position] += share
		flush()


def _check_unique(documents: Sequence[Document]) -> None:
	seen: dict[str, Document] = {}
	for document in documents:
		if document.key in seen:
			raise IndexingError(
				f"two documents share the key {document.key!r}: {seen[document.key].path or seen[document.key].source} "
				f"and {document.path or document.source}"
			)
		seen[document.key] = document
