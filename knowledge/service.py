"""One entry point for callers (bench commands, the CLI, the agent's tools): settings in, a knowledge base out.

With no DSN, an embedded PostgreSQL is started in ``data_dir`` (inside a bench: under the
site's private folder). With no embedding model, the built-in local embedder (WordLlama,
shipped in its wheel) embeds and search is hybrid; ``builtin_embedder=False`` makes it
lexical only. Knowledge bases are
cached per store and embedder, so a long-lived worker keeps one connection and one
lexical index instead of rebuilding them every turn.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from knowledge.documents import SHIPPED_DOCS, Document, collect, load_folder
from knowledge.embedded import EmbeddedPostgres
from knowledge.embedding import (
	DEFAULT_BATCH_SIZE,
	ContentWordsEmbedder,
	Embedder,
	OpenAIEmbedder,
	builtin_embedder,
)
from knowledge.errors import EmbeddingError
from knowledge.search import KnowledgeBase
from knowledge.store import DEFAULT_SCHEMA, PgVectorStore

logger = logging.getLogger(__name__)


def default_data_dir() -> Path:
	"""Where a console-script store lives unless ``--data-dir`` or NOVIZ_KNOWLEDGE_DATA_DIR says otherwise."""
	configured = os.environ.get("NOVIZ_KNOWLEDGE_DATA_DIR")
	if configured:
		return Path(configured).expanduser()
	base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
	return Path(base) / "noviz-agent" / "knowledge"


@dataclass(frozen=True)
class KnowledgeConfig:
	"""Where documents come from, where chunks are stored and which model embeds them."""

	dsn: str | None = None
	data_dir: Path | None = None
	docs_dirs: tuple[Path, ...] = ()
	include_shipped: bool = True
	embedding_model: str | None = None
	embedding_base_url: str | None = None
	embedding_api_key: str | None = field(default=None, repr=False)
	embedding_dimension: int | None = None
	embedding_batch_size: int = DEFAULT_BATCH_SIZE
	schema: str = DEFAULT_SCHEMA
	# With no embedding model: the built-in local embedder (True) or lexical search only (False).
	builtin_embedder: bool = True

	@classmethod
	def from_env(cls, **overrides) -> KnowledgeConfig:
		"""Settings from NOVIZ_* environment variables; explicit ``overrides`` that are not None win."""
		dimension = os.environ.get("NOVIZ_EMBEDDING_DIMENSION")
		values = {
			"dsn": os.environ.get("NOVIZ_KNOWLEDGE_DSN") or None,
			"embedding_model": os.environ.get("NOVIZ_EMBEDDING_MODEL") or None,
			"embedding_base_url": os.environ.get("NOVIZ_EMBEDDING_BASE_URL") or None,
			"embedding_api_key": os.environ.get("NOVIZ_EMBEDDING_API_KEY")
			or os.environ.get("OPENAI_API_KEY"),
			"embedding_dimension": int(dimension) if dimension and dimension.isdigit() else None,
			"builtin_embedder": os.environ.get("NOVIZ_BUILTIN_EMBEDDER", "1").strip().lower()
			not in ("0", "false", "no", "off"),
		}
		values.update({key: value for key, value in overrides.items() if value is not None})
		return cls(**values)

	def embedder(self) -> Embedder | None:
		"""The provider's embedding model when one is set, else the built-in one (None: lexical only)."""
		if not self.embedding_model:
			if not self.builtin_embedder:
				return None
			try:
				return ContentWordsEmbedder(builtin_embedder())
			except EmbeddingError as exc:
				# Lexical search still answers; say why vectors are missing.
				logger.warning("knowledge search is lexical only: %s", exc)
				return None
		return OpenAIEmbedder(
			self.embedding_model,
			base_url=self.embedding_base_url,
			api_key=self.embedding_api_key,
			dimension=self.embedding_dimension,
			batch_size=self.embedding_batch_size,
		)


_servers: dict[Path, EmbeddedPostgres] = {}
_bases: dict[tuple, KnowledgeBase] = {}
_lock = threading.Lock()


def resolve_dsn(config: KnowledgeConfig) -> str:
	"""The configured DSN, or the URI of the embedded server in the data folder (started if needed)."""
	if config.dsn:
		return config.dsn
	data_dir = Path(config.data_dir or default_data_dir()).expanduser().resolve()
	with _lock:
		server = _servers.get(data_dir)
		if server is None:
			server = _servers[data_dir] = EmbeddedPostgres(data_dir)
	return server.start()


def open_knowledge(config: KnowledgeConfig, *, embedder: Embedder | None = None) -> KnowledgeBase:
	"""The (cached) knowledge base for ``config``; pass ``embedder`` to use one not built from settings."""
	dsn = resolve_dsn(config)
	embedder = embedder if embedder is not None else config.embedder()
	key = (dsn, config.schema, embedder.name if embedder else None, config.embedding_base_url)
	with _lock:
		base = _bases.get(key)
		if base is None:
			base = _bases[key] = KnowledgeBase(PgVectorStore(dsn, schema=config.schema), embedder)
		return base


def load_documents(config: KnowledgeConfig, records: Iterable[Document] = ()) -> list[Document]:
	"""Shipped documents, then the organisation's folders, then desk records; later ones replace earlier."""
	groups = [load_folder(SHIPPED_DOCS)] if config.include_shipped else []
	groups += [load_folder(folder) for folder in config.docs_dirs]
	groups.append(list(records))
	return collect(*groups)


def close_all() -> None:
	"""Close cached connections and stop embedded servers this process started (tests, shutdown)."""
	with _lock:
		for base in _bases.values():
			base.store.close()
		_bases.clear()
		for server in _servers.values():
			server.stop()
		_servers.clear()
