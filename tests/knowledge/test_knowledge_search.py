"""Search: lexical and hybrid ranking, role and module filters, fusion, the prompt context."""

from __future__ import annotations

import pytest

from knowledge.documents import SHIPPED_DOCS, load_folder
from knowledge.errors import EmbeddingError, KnowledgeError
from knowledge.search import KnowledgeBase, fuse, render_context


@pytest.fixture
def corpus(write, docs_root):
	write(
		"hr",
		"payroll",
		"## Salary slips\n\nSalary slips show gross pay, deductions and net pay.",
		roles=["HR Manager"],
	)
	write("hr", "leave", "## Applying\n\nA leave application needs approval from the leave approver.")
	write("accounting", "closing", "## Frozen\n\nAccounts frozen till date blocks entries before it.")
	write(
		"selling",
		"returns",
		"## Credit notes\n\nA credit note reverses a sales invoice and its salary of taxes.",
	)
	return load_folder(docs_root)


@pytest.mark.parametrize("hybrid", [False, True])
def test_restricted_documents_never_reach_people_without_the_role(store, corpus, make_embedder, hybrid):
	kb = KnowledgeBase(store, make_embedder() if hybrid else None)
	kb.index(corpus)
	assert kb.mode == ("hybrid" if hybrid else "lexical")
	for roles in ((), ("Employee",), ("Sales User", "Accounts User")):
		results = kb.search("salary slips gross pay deductions", k=10, roles=roles)
		assert "payroll" not in {p.slug for p in results}
	allowed = kb.search("salary slips gross pay deductions", k=10, roles=("Employee", "HR Manager"))
	assert allowed[0].slug == "payroll"


def test_vector_search_filters_roles_in_sql(store, corpus, make_embedder):
	embedder = make_embedder()
	kb = KnowledgeBase(store, embedder)
	kb.index(corpus)
	vector = embedder.embed(["salary slips gross pay"])[0]
	visible = store.vector_search(vector, k=50, roles=["Employee"])
	payroll_ids = {c.id for c in store.chunks() if c.slug == "payroll"}
	assert payroll_ids and not payroll_ids & {chunk_id for chunk_id, _ in visible}
	assert payroll_ids <= {
		chunk_id for chunk_id, _ in store.vector_search(vector, k=50, roles=["HR Manager"])
	}


def test_module_filter(store, corpus):
	kb = KnowledgeBase(store)
	kb.index(corpus)
	results = kb.search("approval entries credit", k=10, module="hr")
	assert results and {p.module for p in results} == {"hr"}


def test_empty_query_is_refused(store, corpus):
	kb = KnowledgeBase(store)
	kb.index(corpus)
	for query in ("", "   ", None):
		with pytest.raises(KnowledgeError, match="empty query"):
			kb.search(query)


def test_k_out_of_range_is_refused(store):
	kb = KnowledgeBase(store)
	with pytest.raises(KnowledgeError, match="k must be"):
		kb.search("stock", k=0)


def test_a_query_sharing_no_word_finds_nothing_lexically(store, corpus):
	kb = KnowledgeBase(store)
	kb.index(corpus)
	assert kb.search("zebra xylophone") == []


def test_an_empty_store_answers_with_nothing(store):
	assert KnowledgeBase(store).search("anything at all") == []


def test_results_carry_what_a_citation_needs(store, corpus):
	kb = KnowledgeBase(store)
	kb.index(corpus)
	[top, *_] = kb.search("frozen accounts")
	assert top.to_dict().keys() == {
		"title",
		"section",
		"slug",
		"module",
		"score",
		"content",
		"releases",
		"version_note",
	}
	# A document that names no release holds for any; nothing is labelled.
	assert top.to_dict()["releases"] == [] and top.to_dict()["version_note"] == ""
	assert top.citation == "Closing > Frozen"


def test_the_lexical_index_follows_store_changes(store, write, docs_root):
	write("stock", "valuation", "## FIFO\n\nOldest lots first.")
	kb = KnowledgeBase(store)
	kb.index(load_folder(docs_root))
	assert kb.search("oldest lots")[0].slug == "valuation"
	write("stock", "valuation", "## LIFO\n\nNewest lots first.")
	kb.index(load_folder(docs_root))
	assert kb.search("oldest") == []
	assert kb.search("newest")[0].section == "LIFO"


def test_reciprocal_rank_fusion_rewards_agreement():
	lexical = [(1, 9.0), (2, 5.0), (5, 3.0), (6, 2.0), (3, 1.0)]
	vector = [(3, 0.9), (2, 0.8), (4, 0.7)]
	fused = fuse([lexical, vector], k=4, rrf_k=60)
	assert [item for item, _ in fused][0] == 2  # second in both beats first in one and fifth in the other
	assert [item for item, _ in fused][1:3] == [3, 1]
	assert fused[0][1] == pytest.approx(1 / 62 + 1 / 62)


def test_hybrid_search_finds_what_only_one_ranking_finds(store, write, docs_root, make_embedder):
	write("stock", "valuation", "## Methods\n\nFIFO consumes the oldest lots first.")
	write("stock", "negative", "## Errors\n\nInsufficient stock stops a delivery note.")
	kb = KnowledgeBase(store, make_embedder())
	kb.index(load_folder(docs_root))
	results = kb.search("insufficient stock delivery", k=2)
	assert results[0].slug == "negative"
	assert results[0].lexical > 0 and results[0].similarity is not None


class BrokenQueryEmbedder:
	def __init__(self, inner):
		self.inner, self.name, self.dimension, self.batch_size = (
			inner,
			inner.name,
			inner.dimension,
			inner.batch_size,
		)
		self.broken = False

	def embed(self, texts):
		if self.broken:
			raise EmbeddingError("provider down")
		return self.inner.embed(texts)


def test_search_falls_back_to_lexical_when_the_provider_fails(store, corpus, make_embedder):
	embedder = BrokenQueryEmbedder(make_embedder())
	kb = KnowledgeBase(store, embedder)
	kb.index(corpus)
	embedder.broken = True
	results = kb.search("frozen accounts")
	assert results[0].slug == "closing" and results[0].similarity is None


def test_context_keeps_related_passages_within_the_budget(store, corpus):
	kb = KnowledgeBase(store)
	kb.index(corpus)
	passages = kb.context("leave approval", roles=(), max_chars=500)
	assert passages and passages[0].slug == "leave"
	assert sum(len(p.content) for p in passages) <= 500
	assert kb.context("   ") == []
	block = render_context(passages)
	assert "[Leave > Applying]" in block


def test_shipped_documents_answer_the_questions_they_are_for(store):
	kb = KnowledgeBase(store)
	kb.index(load_folder(SHIPPED_DOCS))
	top = kb.search("why can't I edit a submitted sales invoice", k=3)
	assert {p.slug for p in top} & {"document-status-and-docstatus", "cancel-and-amend", "invoice-statuses"}
	top = kb.search("purchase order stuck in pending approval who approves", k=3)
	assert {p.slug for p in top} & {"approval-workflows", "purchase-order-statuses"}
	top = kb.search("salary slip net pay", k=5, roles=["Employee"])
	assert "payroll-and-salary-slips" not in {p.slug for p in top}
