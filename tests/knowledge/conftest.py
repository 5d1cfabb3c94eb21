"""Fixtures for knowledge tests: one real PostgreSQL with pgvector for the whole session.

The server is the embedded one the product uses when no DSN is configured, started in a
temporary folder (as root it runs PostgreSQL as an unprivileged ``pgserver`` user). Each
test gets its own schema, so tests share the server but never each other's rows.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

from knowledge.embedded import EmbeddedPostgres
from knowledge.embedding import HashingEmbedder
from knowledge.errors import EmbeddingError
from knowledge.search import KnowledgeBase
from knowledge.store import PgVectorStore


@pytest.fixture(scope="session")
def pg_dsn() -> str:
	# Not pytest's tmp_path: other pytest runs on the machine prune those folders while this one runs.
	folder = Path(tempfile.mkdtemp(prefix="noviz-knowledge-pg-"))
	server = EmbeddedPostgres(folder)
	dsn = server.start()
	yield dsn
	server.stop()
	shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def store(pg_dsn):
	schema = f"t_{uuid.uuid4().hex[:12]}"
	store = PgVectorStore(pg_dsn, schema=schema)
	yield store
	store._conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
	store.close()


class CountingEmbedder(HashingEmbedder):
	"""The deterministic hashing embedder, counting requests and able to fail on a chosen one."""

	def __init__(self, dimension: int = 64, *, batch_size: int = 4, fail_on_call: int | None = None):
		super().__init__(dimension, batch_size=batch_size)
		self.calls = 0
		self.texts: list[str] = []
		self.fail_on_call = fail_on_call

	def embed(self, texts):
		self.calls += 1
		if self.fail_on_call is not None and self.calls == self.fail_on_call:
			raise EmbeddingError("provider answered HTTP 503: overloaded")
		self.texts.extend(texts)
		return super().embed(texts)


@pytest.fixture
def embedder() -> CountingEmbedder:
	return CountingEmbedder()


@pytest.fixture
def kb(store, embedder) -> KnowledgeBase:
	return KnowledgeBase(store, embedder)


def write_doc(
	root: Path,
	module: str,
	slug: str,
	body: str,
	*,
	title: str | None = None,
	roles: list[str] | None = None,
	doctypes: list[str] | None = None,
) -> Path:
	"""Write one process document file the way an organisation would."""
	folder = root / module
	folder.mkdir(parents=True, exist_ok=True)
	lines = ["---", f"title: {title or slug.replace('-', ' ').title()}", f"module: {module}"]
	if doctypes:
		lines.append(f"doctypes: [{', '.join(doctypes)}]")
	if roles:
		lines.append(f"roles: [{', '.join(roles)}]")
	lines.append("---")
	path = folder / f"{slug}.md"
	path.write_text("\n".join(lines) + "\n" + body, encoding="utf-8")
	return path


@pytest.fixture
def docs_root(tmp_path) -> Path:
	root = tmp_path / "docs"
	root.mkdir()
	return root


@pytest.fixture
def write(docs_root):
	"""``write(module, slug, body, title=..., roles=[...])`` writes a document under ``docs_root``."""

	def _write(module, slug, body, **options):
		return write_doc(docs_root, module, slug, body, **options)

	return _write


@pytest.fixture
def make_embedder():
	return CountingEmbedder
