"""The chunk store: PostgreSQL with pgvector, through psycopg.

Everything lives in one schema (``noviz_knowledge`` unless told otherwise): ``documents``
(one row per source document, with its checksum and the embedding model that embedded
it), ``chunks`` (passages with their vector, and the document's module and roles copied
onto each row so search filters without a join) and ``meta`` (embedding model, vector
size, and a generation number that changes on every write so in-process lexical indexes
know when to rebuild). Vectors are searched by cosine distance through an HNSW index.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from knowledge.chunking import Chunk
from knowledge.documents import Document
from knowledge.errors import StoreUnavailable

DEFAULT_SCHEMA = "noviz_knowledge"
# pgvector's default candidate list; iterative scans (below) refill it when filters drop rows.
EF_SEARCH = 40


@dataclass(frozen=True)
class StoredChunk:
	"""A chunk as read back from the store, with its document's labels."""

	id: int
	document_key: str
	slug: str
	module: str
	title: str
	section: str
	label: str
	content: str
	roles: tuple[str, ...]
	doctypes: tuple[str, ...]
	# The document's front-matter version ("ERPNext 15 and 16"); empty when it names none.
	version: str = ""


@dataclass(frozen=True)
class DocumentState:
	checksum: str
	embedding_model: str | None
	title: str


class PgVectorStore:
	"""Chunks and vectors in PostgreSQL; one connection, guarded by a lock, per store object."""

	def __init__(self, dsn: str, *, schema: str = DEFAULT_SCHEMA, connect_timeout: int = 5):
		self.dsn = dsn
		self.schema = schema
		self._lock = threading.RLock()
		try:
			self._conn = psycopg.connect(dsn, connect_timeout=connect_timeout, autocommit=True)
		except psycopg.Error as exc:
			raise StoreUnavailable(f"cannot reach PostgreSQL at {redact(dsn)}: {_first_line(exc)}") from None
		self._ensure_schema()

	def close(self) -> None:
		with self._lock:
			self._conn.close()

	# -- schema -------------------------------------------------------------------------

	def _ensure_schema(self) -> None:
		with self._lock, self._conn.transaction():
			try:
				self._conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
			except psycopg.Error as exc:
				raise StoreUnavailable(
					f"PostgreSQL at {redact(self.dsn)} has no pgvector extension available "
					f"(install pgvector or ask an administrator to CREATE EXTENSION vector): {_first_line(exc)}"
				) from None
			for statement in _SCHEMA:
				self._conn.execute(sql.SQL(statement).format(schema=sql.Identifier(self.schema)))
			self._add_version_column()
		from pgvector.psycopg import register_vector

		register_vector(self._conn)
		# Session settings, so a query is one round trip. With role or module filters, the
		# iterative scan keeps walking the graph until enough rows pass them.
		self._conn.execute(sql.SQL("SET hnsw.ef_search = {}").format(sql.Literal(EF_SEARCH)))
		self._conn.execute("SET hnsw.iterative_scan = relaxed_order")

	def _add_version_column(self) -> None:
		"""Stores made before documents carried their version gain the column; their documents'
		checksums are cleared so the next indexing run re-reads every document and fills it in."""
		exists = self._conn.execute(
			"SELECT 1 FROM information_schema.columns WHERE table_schema = %s AND table_name = 'documents' "
			"AND column_name = 'version'",
			(self.schema,),
		).fetchone()
		if exists:
			return
		documents = self._table("documents")
		self._conn.execute(
			sql.SQL("ALTER TABLE {} ADD COLUMN version text NOT NULL DEFAULT ''").format(documents)
		)
		self._conn.execute(sql.SQL("UPDATE {} SET checksum = ''").format(documents))

	def _table(self, name: str) -> sql.Composed:
		return sql.SQL("{}.{}").format(sql.Identifier(self.schema), sql.Identifier(name))

	def _meta(self, key: str) -> str | None:
		row = self._conn.execute(
			sql.SQL("SELECT value FROM {} WHERE key = %s").format(self._table("meta")), (key,)
		).fetchone()
		return row[0] if row else None

	def _set_meta(self, key: str, value: str) -> None:
		self._conn.execute(
			sql.SQL(
				"INSERT INTO {} (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
			).format(self._table("meta")),
			(key, value),
		)

	def _bump_generation(self) -> None:
		self._conn.execute(
			sql.SQL(
				"INSERT INTO {} (key, value) VALUES ('generation', '1') ON CONFLICT (key) "
				"DO UPDATE SET value = ({}.value::bigint + 1)::text"
			).format(self._table("meta"), self._table("meta")),
		)

	def generation(self) -> int:
		with self._lock:
			return int(self._meta("generation") or 0)

	def embedding_space(self) -> tuple[str | None, int | None]:
		"""The model that embedded the stored vectors and their size."""
		with self._lock:
			dimension = self._meta("dimension")
			return self._meta("embedding_model"), int(dimension) if dimension else None

	def prepare_embedding_space(self, model: str, dimension: int) -> bool:
		"""Make the vector column fit ``model``; returns True when stored vectors had to be dropped.

		Vectors from two models are not comparable, so a change of model or size clears
		them and marks every document for re-embedding (its text chunks stay searchable
		lexically meanwhile).
		"""
		with self._lock, self._conn.transaction():
			current_model, current_dimension = self._meta("embedding_model"), self._meta("dimension")
			if current_model == model and current_dimension == str(dimension):
				return False
			chunks, documents = self._table("chunks"), self._table("documents")
			index = sql.Identifier("chunks_embedding_hnsw")
			self._conn.execute(
				sql.SQL("DROP INDEX IF EXISTS {}.{}").format(sql.Identifier(self.schema), index)
			)
			self._conn.execute(
				sql.SQL("UPDATE {} SET embedding = NULL WHERE embedding IS NOT NULL").format(chunks)
			)
			self._conn.execute(sql.SQL("UPDATE {} SET embedding_model = NULL").format(documents))
			self._conn.execute(
				sql.SQL("ALTER TABLE {} ALTER COLUMN embedding TYPE vector({})").format(
					chunks, sql.Literal(int(dimension))
				)
			)
			self._conn.execute(sql.SQL(_INLINE_VECTORS).format(schema=sql.Identifier(self.schema)))
			self._conn.execute(
				sql.SQL("CREATE INDEX {} ON {} USING hnsw (embedding vector_cosine_ops)").format(
					index, chunks
				)
			)
			self._set_meta("embedding_model", model)
			self._set_meta("dimension", str(int(dimension)))
			self._bump_generation()
			return current_model is not None

	# -- writes -------------------------------------------------------------------------

	def document_states(self) -> dict[str, DocumentState]:
		with self._lock:
			rows = self._conn.execute(
				sql.SQL("SELECT key, checksum, embedding_model, title FROM {}").format(
					self._table("documents")
				)
			).fetchall()
		return {key: DocumentState(checksum, model, title) for key, checksum, model, title in rows}

	def replace_document(
		self,
		document: Document,
		chunks: Sequence[Chunk],
		embeddings: Sequence[Sequence[float]] | None,
		*,
		embedding_model: str | None,
	) -> None:
		"""Swap one document's chunks in a single transaction: readers see the old set or the new one."""
		if embeddings is not None and len(embeddings) != len(chunks):
			raise ValueError("one embedding per chunk is required")
		documents, table = self._table("documents"), self._table("chunks")
		roles = list(document.roles)
		with self._lock, self._conn.transaction():
			self._conn.execute(
				sql.SQL(
					"INSERT INTO {} (key, slug, module, title, version, doctypes, roles, source, path, checksum, "
					"embedding_model, chunk_count, indexed_at) "
					"VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, now()) ON CONFLICT (key) DO UPDATE SET "
					"slug = EXCLUDED.slug, module = EXCLUDED.module, title = EXCLUDED.title, version = EXCLUDED.version, "
					"doctypes = EXCLUDED.doctypes, roles = EXCLUDED.roles, source = EXCLUDED.source, "
					"path = EXCLUDED.path, checksum = EXCLUDED.checksum, embedding_model = EXCLUDED.embedding_model, "
					"chunk_count = EXCLUDED.chunk_count, indexed_at = now()"
				).format(documents),
				(
					document.key,
					document.slug,
					document.module,
					document.cited_title,
					document.version,
					list(document.doctypes),
					roles,
					document.source,
					document.path,
					document.checksum,
					embedding_model,
					len(chunks),
				),
			)
			self._conn.execute(
				sql.SQL("DELETE FROM {} WHERE document_key = %s").format(table), (document.key,)
			)
			with self._conn.cursor() as cursor:
				cursor.executemany(
					sql.SQL(
						"INSERT INTO {} (document_key, ordinal, section, label, content, module, roles, embedding) "
						"VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
					).format(table),
					[
						(
							document.key,
							chunk.ordinal,
							chunk.section,
							chunk.label,
							chunk.content,
							document.module,
							roles,
							np.asarray(embeddings[i], dtype=np.float32) if embeddings is not None else None,
						)
						for i, chunk in enumerate(chunks)
					],
				)
			self._bump_generation()

	def remove_documents(self, keys: Iterable[str]) -> int:
		keys = list(keys)
		if not keys:
			return 0
		with self._lock, self._conn.transaction():
			# Chunks go with their document (ON DELETE CASCADE).
			cursor = self._conn.execute(
				sql.SQL("DELETE FROM {} WHERE key = ANY(%s)").format(self._table("documents")), (keys,)
			)
			self._bump_generation()
			return cursor.rowcount

	def clear(self) -> None:
		with self._lock, self._conn.transaction():
			self._conn.execute(sql.SQL("DELETE FROM {}").format(self._table("documents")))
			self._bump_generation()

	# -- reads --------------------------------------------------------------------------

	def vector_search(
		self,
		vector: Sequence[float],
		*,
		k: int,
		roles: Iterable[str],
		module: str | None = None,
	) -> list[tuple[int, float]]:
		"""``(chunk id, cosine similarity)`` of the nearest chunks this person may see."""
		query = np.asarray(vector, dtype=np.float32)
		conditions, params = _visibility(roles, module)
		statement = sql.SQL(
			"SELECT id, embedding <=> %s AS distance FROM {} WHERE embedding IS NOT NULL AND {} "
			"ORDER BY embedding <=> %s LIMIT %s"
		).format(self._table("chunks"), conditions)
		with self._lock:
			if k <= EF_SEARCH:
				rows = self._conn.execute(statement, (query, *params, query, k)).fetchall()
			else:
				with self._conn.transaction():
					self._conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(k)))
					rows = self._conn.execute(statement, (query, *params, query, k)).fetchall()
		# relaxed_order may return neighbours slightly out of order.
		return sorted(((chunk_id, 1.0 - float(distance)) for chunk_id, distance in rows), key=lambda r: -r[1])

	def chunks(self, ids: Iterable[int] | None = None) -> list[StoredChunk]:
		"""Chunks with their documents' labels: the given ids, or all of them (for the lexical index)."""
		statement = sql.SQL(
			"SELECT c.id, c.document_key, d.slug, c.module, d.title, c.section, c.label, c.content, c.roles, "
			"d.doctypes, d.version FROM {} c JOIN {} d ON d.key = c.document_key"
		).format(self._table("chunks"), self._table("documents"))
		params: tuple = ()
		if ids is not None:
			ids = list(ids)
			if not ids:
				return []
			statement = statement + sql.SQL(" WHERE c.id = ANY(%s)")
			params = (ids,)
		statement = statement + sql.SQL(" ORDER BY c.id")
		with self._lock:
			rows = self._conn.execute(statement, params).fetchall()
		return [
			StoredChunk(
				id=row[0],
				document_key=row[1],
				slug=row[2],
				module=row[3],
				title=row[4],
				section=row[5],
				label=row[6],
				content=row[7],
				roles=tuple(row[8] or ()),
				doctypes=tuple(row[9] or ()),
				version=row[10] or "",
			)
			for row in rows
		]

	def stats(self) -> dict:
		with self._lock:
			documents = self._conn.execute(
				sql.SQL(
					"SELECT count(*), count(*) FILTER (WHERE embedding_model IS NULL), max(indexed_at) FROM {}"
				).format(self._table("documents"))
			).fetchone()
			chunks = self._conn.execute(
				sql.SQL("SELECT count(*), count(embedding) FROM {}").format(self._table("chunks"))
			).fetchone()
			modules = self._conn.execute(
				sql.SQL("SELECT module, count(*) FROM {} GROUP BY module ORDER BY module").format(
					self._table("documents")
				)
			).fetchall()
		model, dimension = self.embedding_space()
		return {
			"documents": documents[0],
			"documents_without_embeddings": documents[1],
			"last_indexed": documents[2].isoformat() if documents[2] else None,
			"chunks": chunks[0],
			"chunks_with_embeddings": chunks[1],
			"modules": dict(modules),
			"embedding_model": model,
			"dimension": dimension,
		}


def _visibility(roles: Iterable[str], module: str | None) -> tuple[sql.Composable, list]:
	"""SQL that hides documents restricted to roles the person lacks (and other modules when asked)."""
	conditions = [sql.SQL("(cardinality(roles) = 0 OR roles && %s::text[])")]
	params: list = [sorted(set(roles))]
	if module:
		conditions.append(sql.SQL("module = %s"))
		params.append(module)
	return sql.SQL(" AND ").join(conditions), params


# Vectors stay in the row rather than in TOAST: a TOASTed vector makes a sequential scan look
# cheap to the planner (few heap pages) while every row costs a TOAST fetch, so it picks that
# over the HNSW index at tens of thousands of chunks. MAIN still moves a vector out of line
# when a row would not fit a page (very wide models).
_INLINE_VECTORS = "ALTER TABLE {schema}.chunks ALTER COLUMN embedding SET STORAGE MAIN"

_SCHEMA = (
	"CREATE SCHEMA IF NOT EXISTS {schema}",
	"CREATE TABLE IF NOT EXISTS {schema}.meta (key text PRIMARY KEY, value text NOT NULL)",
	"CREATE TABLE IF NOT EXISTS {schema}.documents ("
	" key text PRIMARY KEY, slug text NOT NULL, module text NOT NULL, title text NOT NULL,"
	" doctypes text[] NOT NULL DEFAULT '{{}}', roles text[] NOT NULL DEFAULT '{{}}', source text NOT NULL,"
	" path text, checksum text NOT NULL, embedding_model text, chunk_count integer NOT NULL DEFAULT 0,"
	" indexed_at timestamptz NOT NULL DEFAULT now())",
	"CREATE TABLE IF NOT EXISTS {schema}.chunks ("
	" id bigserial PRIMARY KEY,"
	" document_key text NOT NULL REFERENCES {schema}.documents (key) ON DELETE CASCADE,"
	" ordinal integer NOT NULL, section text NOT NULL, label text NOT NULL, content text NOT NULL,"
	" module text NOT NULL, roles text[] NOT NULL DEFAULT '{{}}', embedding vector)",
	"CREATE INDEX IF NOT EXISTS chunks_document_key ON {schema}.chunks (document_key)",
	_INLINE_VECTORS,
)


def redact(dsn: str) -> str:
	"""The DSN without its password, for messages."""
	try:
		parts = conninfo_to_dict(dsn)
	except psycopg.Error:
		return "<unparseable DSN>"
	parts.pop("password", None)
	host = parts.get("host") or "local socket"
	where = f"{host}:{parts['port']}" if parts.get("port") else host
	return f"{where}/{parts.get('dbname', '')}".rstrip("/")


def _first_line(exc: Exception) -> str:
	return " ".join(str(exc).split())[:300]
