"""Index runs against a real PostgreSQL + pgvector: checksums, updates, removals, failures."""

from __future__ import annotations

import psycopg
import pytest

from knowledge.documents import load_folder
from knowledge.errors import IndexingError, StoreUnavailable
from knowledge.indexing import index_documents
from knowledge.store import PgVectorStore


def chunk_rows(store, key):
	return store._conn.execute(
		f'SELECT id, content, embedding IS NOT NULL FROM "{store.schema}".chunks WHERE document_key = %s ORDER BY ordinal',
		(key,),
	).fetchall()


def test_first_run_embeds_and_second_run_makes_zero_embedding_calls(store, write, docs_root, make_embedder):
	for i in range(5):
		write("stock", f"doc-{i}", f"## Part A\n\nText {i} about stock.\n\n## Part B\n\nMore {i}.")
	embedder = make_embedder(batch_size=4)
	first = index_documents(store, load_folder(docs_root), embedder=embedder)
	assert len(first.added) == 5 and first.chunks_written == 10
	assert embedder.calls == 3  # ten chunks in batches of four, shared across documents
	assert store.stats()["chunks_with_embeddings"] == 10

	again = make_embedder(batch_size=4)
	second = index_documents(store, load_folder(docs_root), embedder=again)
	assert again.calls == 0 and second.embedding_calls == 0
	assert len(second.unchanged) == 5 and second.chunks_written == 0


def test_updating_a_document_replaces_only_its_chunks(store, write, docs_root, make_embedder):
	write("selling", "orders", "## One\n\nOrders reserve stock.")
	write("selling", "invoices", "## One\n\nInvoices post to the ledger.")
	index_documents(store, load_folder(docs_root), embedder=make_embedder())
	untouched_before = chunk_rows(store, "selling/orders")

	write(
		"selling",
		"invoices",
		"## One\n\nInvoices post to the ledger.\n\n## Two\n\nCredit notes reverse them.",
	)
	embedder = make_embedder()
	report = index_documents(store, load_folder(docs_root), embedder=embedder)
	assert report.updated == ["selling/invoices"] and report.unchanged == ["selling/orders"]
	assert embedder.texts and all("Invoices" in t or "Credit notes" in t for t in embedder.texts)
	assert chunk_rows(store, "selling/orders") == untouched_before
	assert [row[1] for row in chunk_rows(store, "selling/invoices")] == [
		"Invoices post to the ledger.",
		"Credit notes reverse them.",
	]


def test_removed_documents_are_removed_with_their_chunks(store, write, docs_root, make_embedder):
	write("hr", "leave", "Leave text.")
	gone = write("hr", "attendance", "Attendance text.")
	index_documents(store, load_folder(docs_root), embedder=make_embedder())
	gone.unlink()
	report = index_documents(store, load_folder(docs_root), embedder=make_embedder())
	assert report.removed == ["hr/attendance"]
	assert set(store.document_states()) == {"hr/leave"}
	assert chunk_rows(store, "hr/attendance") == []


def test_provider_error_mid_batch_leaves_the_document_with_its_previous_chunks(
	store, write, docs_root, make_embedder
):
	write("accounting", "a-first", "## S\n\nFirst version A.")
	write("accounting", "b-second", "## S\n\nFirst version B.")
	write("accounting", "c-third", "## S\n\nFirst version C.")
	index_documents(store, load_folder(docs_root), embedder=make_embedder(batch_size=1))
	before = {
		key: chunk_rows(store, key)
		for key in ("accounting/a-first", "accounting/b-second", "accounting/c-third")
	}

	write("accounting", "a-first", "## S\n\nSecond version A.")
	write("accounting", "b-second", "## S\n\nSecond version B.\n\n## T\n\nAnd a new section.")
	write("accounting", "c-third", "## S\n\nSecond version C.")
	failing = make_embedder(batch_size=1, fail_on_call=3)  # A's chunk, B's first chunk, then B's second fails
	with pytest.raises(IndexingError) as caught:
		index_documents(store, load_folder(docs_root), embedder=failing)
	message = str(caught.value)
	assert "b-second.md" in message and "HTTP 503" in message and "1 of 3" in message
	assert caught.value.document == "accounting/b-second"

	assert [row[1] for row in chunk_rows(store, "accounting/a-first")] == ["Second version A."]
	assert chunk_rows(store, "accounting/b-second") == before["accounting/b-second"]
	assert chunk_rows(store, "accounting/c-third") == before["accounting/c-third"]

	# The next run picks up exactly what is left.
	retry = make_embedder(batch_size=1)
	report = index_documents(store, load_folder(docs_root), embedder=retry)
	assert report.unchanged == ["accounting/a-first"]
	assert sorted(report.updated) == ["accounting/b-second", "accounting/c-third"]
	assert retry.calls == 3


def test_lexical_only_index_stores_text_and_a_later_embedder_fills_vectors(
	store, write, docs_root, make_embedder
):
	write("stock", "valuation", "## FIFO\n\nOldest lots first.")
	report = index_documents(store, load_folder(docs_root), embedder=None)
	assert report.embedding_calls == 0 and store.stats()["chunks_with_embeddings"] == 0
	embedder = make_embedder()
	report = index_documents(store, load_folder(docs_root), embedder=embedder)
	assert report.updated == ["stock/valuation"] and embedder.calls == 1
	assert store.stats()["chunks_with_embeddings"] == 1
	# Indexing again without a provider keeps the vectors already paid for.
	index_documents(store, load_folder(docs_root), embedder=None)
	assert store.stats()["chunks_with_embeddings"] == 1


def test_a_new_embedding_model_re_embeds_everything(store, write, docs_root, make_embedder):
	write("stock", "valuation", "## FIFO\n\nOldest lots first.")
	index_documents(store, load_folder(docs_root), embedder=make_embedder(dimension=64))
	wider = make_embedder(dimension=32)
	report = index_documents(store, load_folder(docs_root), embedder=wider)
	assert report.updated == ["stock/valuation"] and wider.calls == 1
	assert store.embedding_space() == ("hashing-32", 32)


def test_rebuild_re_embeds_unchanged_documents(store, write, docs_root, make_embedder):
	write("stock", "valuation", "## FIFO\n\nOldest lots first.")
	index_documents(store, load_folder(docs_root), embedder=make_embedder())
	embedder = make_embedder()
	report = index_documents(store, load_folder(docs_root), embedder=embedder, rebuild=True)
	assert report.updated == ["stock/valuation"] and embedder.calls == 1


def test_progress_reports_every_document(store, write, docs_root, make_embedder):
	for i in range(3):
		write("crm", f"d{i}", f"Text {i}.")
	seen = []
	index_documents(
		store, load_folder(docs_root), embedder=make_embedder(), progress=lambda *a: seen.append(a)
	)
	assert [done for done, _, _ in seen] == [1, 2, 3] and all(total == 3 for _, total, _ in seen)
	seen.clear()
	index_documents(
		store, load_folder(docs_root), embedder=make_embedder(), progress=lambda *a: seen.append(a)
	)
	assert seen == [(3, 3, "unchanged documents skipped")]


def test_documents_with_no_text_are_recorded_without_chunks(store, write, docs_root, make_embedder):
	write("core", "empty", "")
	write("core", "full", "Some text.")
	report = index_documents(store, load_folder(docs_root), embedder=make_embedder())
	assert sorted(report.added) == ["core/empty", "core/full"]
	assert set(store.document_states()) == {"core/empty", "core/full"}


def test_unreachable_dsn_is_a_clear_error_without_the_password():
	with pytest.raises(StoreUnavailable) as caught:
		PgVectorStore("postgresql://agent:s3cret@127.0.0.1:1/knowledge", connect_timeout=2)
	message = str(caught.value)
	assert "cannot reach PostgreSQL at 127.0.0.1:1/knowledge" in message
	assert "s3cret" not in message


def test_store_schema_uses_hnsw_cosine_index(store, write, docs_root, make_embedder):
	write("stock", "valuation", "Text.")
	index_documents(store, load_folder(docs_root), embedder=make_embedder())
	indexdef = store._conn.execute(
		"SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = 'chunks_embedding_hnsw'",
		(store.schema,),
	).fetchone()[0]
	assert "hnsw" in indexdef and "vector_cosine_ops" in indexdef
	# Inline vectors keep the planner's cost of a sequential scan honest (see store._INLINE_VECTORS).
	storage = store._conn.execute(
		"SELECT attstorage FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'embedding'",
		(f'"{store.schema}".chunks',),
	).fetchone()[0]
	assert storage == "m"


def test_a_failed_write_keeps_the_previous_chunks(store, write, docs_root, make_embedder):
	write("stock", "valuation", "## A\n\nOne.\n\n## B\n\nTwo.")
	index_documents(store, load_folder(docs_root), embedder=make_embedder())
	before = chunk_rows(store, "stock/valuation")
	# PostgreSQL refuses NUL characters in text, so the insert fails after the old rows were deleted.
	write("stock", "valuation", "## A\n\nOne changed.\n\n## B\n\nTwo \x00 changed.")
	with pytest.raises(psycopg.Error):
		index_documents(store, load_folder(docs_root), embedder=make_embedder())
	assert chunk_rows(store, "stock/valuation") == before
