"""The built-in local embedder (WordLlama in its wheel) and the query vocabulary."""

from __future__ import annotations

import builtins
import logging
import socket

import numpy as np
import pytest

from knowledge import embedding
from knowledge.documents import SHIPPED_DOCS, load_folder
from knowledge.embedding import ContentWordsEmbedder, Embedder, builtin_embedder
from knowledge.errors import EmbeddingError
from knowledge.search import KnowledgeBase
from knowledge.service import KnowledgeConfig
from knowledge.vocabulary import Vocabulary, default_vocabulary


@pytest.fixture
def fresh(monkeypatch):
	"""Forget the process's loaded model, so a test sees a real load."""
	monkeypatch.setattr(embedding, "_builtin", None)


def _refuse_network(*args, **kwargs):
	raise AssertionError("the built-in embedder tried to reach the network")


def test_loads_offline_from_the_files_inside_the_package(fresh, monkeypatch, tmp_path):
	# No network and an empty home: only the files shipped in the wheel can satisfy the load.
	monkeypatch.setattr(socket.socket, "connect", _refuse_network)
	monkeypatch.setattr(socket, "create_connection", _refuse_network)
	monkeypatch.setenv("HOME", str(tmp_path))
	embedder = builtin_embedder()
	assert isinstance(embedder, Embedder)
	assert embedder.dimension == 256 and len(embedder.embed(["stock ledger"])[0]) == 256
	assert embedder.name == "wordllama-l2_supercat-256"


def test_is_loaded_once_per_process():
	assert builtin_embedder() is builtin_embedder()


def test_loading_does_not_add_handlers_to_the_root_logger(fresh):
	# wordllama calls logging.basicConfig() on import; a host process's logging must stay as it was.
	root = logging.getLogger()
	before = (list(root.handlers), root.level)
	builtin_embedder()
	assert (list(root.handlers), root.level) == before


def test_missing_package_is_a_clear_embedding_error_and_search_stays_lexical(fresh, monkeypatch):
	real_import = builtins.__import__

	def no_wordllama(name, *args, **kwargs):
		if name == "wordllama" or name.startswith("wordllama."):
			raise ImportError("No module named 'wordllama'")
		return real_import(name, *args, **kwargs)

	monkeypatch.setattr(builtins, "__import__", no_wordllama)
	with pytest.raises(EmbeddingError, match="pip install wordllama"):
		builtin_embedder()
	assert KnowledgeConfig().embedder() is None


@pytest.mark.parametrize("content_words", [False, True])
def test_vectors_are_unit_length_even_for_empty_and_stopword_only_texts(content_words):
	embedder = ContentWordsEmbedder(builtin_embedder()) if content_words else builtin_embedder()
	vectors = np.array(embedder.embed(["Sales invoice overdue", "", "the of and", "   ", "ÿ"]))
	assert vectors.shape == (5, 256)
	assert np.all(np.isfinite(vectors))
	assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_knowledge_embeds_content_words_under_its_own_name():
	inner = builtin_embedder()
	embedder = ContentWordsEmbedder(inner)
	assert embedder.embed(["the invoice of the customer"]) == inner.embed(["invoice customer"])
	assert inner.embed(["the invoice of the customer"]) != inner.embed(["invoice customer"])
	# A store embedded one way must never be searched the other way.
	assert embedder.name != inner.name and embedder.dimension == inner.dimension == 256


def test_embedding_is_deterministic_and_independent_of_the_batch():
	embedder = builtin_embedder()
	text = "Why can't I cancel this sales order?"
	alone = embedder.embed([text])[0]
	in_batch = embedder.embed(["stock reconciliation after a count", text, "payroll"])[1]
	assert alone == embedder.embed([text])[0]
	assert np.allclose(alone, in_batch, atol=1e-6)
	assert embedder.embed([]) == []


@pytest.mark.parametrize(
	("text", "similar", "unrelated"),
	[
		(
			"How do I return damaged goods to the supplier?",
			"sending faulty items back to the vendor",
			"monthly payroll for employees",
		),
		(
			"Which customers have not paid their invoices?",
			"clients that still owe us money",
			"the factory machine broke down",
		),
		(
			"Approve my leave request for Friday",
			"asking for a day off work",
			"valuation of stock in the warehouse",
		),
	],
)
def test_similar_texts_are_closer_than_unrelated_ones(text, similar, unrelated):
	a, b, c = np.array(builtin_embedder().embed([text, similar, unrelated]))
	assert a @ b > a @ c + 0.1


def test_no_embedding_model_means_the_built_in_embedder():
	embedder = KnowledgeConfig().embedder()
	assert isinstance(embedder, ContentWordsEmbedder) and embedder.inner is builtin_embedder()
	assert KnowledgeConfig(builtin_embedder=False).embedder() is None


def test_lexical_only_can_be_chosen_from_the_environment(monkeypatch):
	monkeypatch.delenv("NOVIZ_EMBEDDING_MODEL", raising=False)
	monkeypatch.setenv("NOVIZ_BUILTIN_EMBEDDER", "off")
	assert KnowledgeConfig.from_env().embedder() is None


def test_hybrid_with_the_built_in_embedder_finds_a_paraphrase_lexical_search_misses(store):
	documents = load_folder(SHIPPED_DOCS)
	question = "I paid for a hotel on a work trip, how do I get my money back?"
	lexical = KnowledgeBase(store, expand_queries=False)
	lexical.index(documents)
	# The precondition that makes this test mean something: BM25 alone misses it.
	assert "expense-claims" not in {p.slug for p in lexical.search(question, k=5)}
	embedder = KnowledgeConfig().embedder()
	hybrid = KnowledgeBase(store, embedder, expand_queries=False)
	report = hybrid.index(documents)
	assert report.embedding_model == embedder.name and hybrid.mode == "hybrid"
	assert "expense-claims" in {p.slug for p in hybrid.search(question, k=5)}


def test_vocabulary_adds_the_erpnext_term_once_and_keeps_the_question():
	vocabulary = Vocabulary({"bill": "invoice", "po": "purchase order", "write down": "depreciation"})
	assert (
		vocabulary.expand("The vendor's bill and another bill")
		== "The vendor's bill and another bill\ninvoice"
	)
	assert vocabulary.expand("Approve the PO") == "Approve the PO\npurchase order"
	assert vocabulary.expand("why did we write down the van?").endswith("\ndepreciation")


def test_vocabulary_matches_whole_words_only():
	vocabulary = Vocabulary({"po": "purchase order", "ship": "deliver"})
	assert vocabulary.expand("the report on our relationship") == "the report on our relationship"
	assert vocabulary.expand("") == ""
	assert Vocabulary({}).expand("anything") == "anything"


def test_shipped_vocabulary_loads_and_maps_common_words():
	expanded = default_vocabulary().expand("The client paid the bill late")
	assert "customer" in expanded and "invoice" in expanded


def test_search_expands_questions_so_everyday_words_reach_the_documents(store, write, docs_root):
	write("buying", "returns", "## Debit notes\n\nA debit note claims money back from a supplier.")
	write("selling", "orders", "## Orders\n\nA sales order records what a customer ordered.")
	documents = load_folder(docs_root)
	plain = KnowledgeBase(store, expand_queries=False)
	plain.index(documents)
	assert plain.search("the vendor overcharged us", k=5) == []
	expanding = KnowledgeBase(store)
	assert [p.slug for p in expanding.search("the vendor overcharged us", k=5)] == ["returns"]
