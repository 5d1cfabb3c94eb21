"""Embedders: the OpenAI-compatible one (with a fake client) and the deterministic hashing one."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from knowledge.embedding import Embedder, HashingEmbedder, OpenAIEmbedder, stem, tokens
from knowledge.errors import EmbeddingError


class FakeEmbeddings:
	def __init__(self, *, width=3, fail_at=None, short=False, ragged=False):
		self.requests: list[list[str]] = []
		self.width, self.fail_at, self.short, self.ragged = width, fail_at, short, ragged

	def create(self, *, model, input):
		self.requests.append(list(input))
		if self.fail_at is not None and len(self.requests) == self.fail_at:
			error = RuntimeError("rate limited")
			error.status_code = 429
			raise error
		items = [
			SimpleNamespace(index=i, embedding=[float(len(text))] * (self.width + (i if self.ragged else 0)))
			for i, text in enumerate(input)
		]
		if self.short:
			items = items[:-1]
		return SimpleNamespace(data=list(reversed(items)))  # providers may answer out of order


def client(**options):
	return SimpleNamespace(embeddings=FakeEmbeddings(**options))


def test_openai_embedder_batches_and_keeps_order():
	fake = client()
	embedder = OpenAIEmbedder("text-embedding-3-small", batch_size=2, client=fake)
	vectors = embedder.embed(["a", "bb", "ccc", "dddd", "eeeee"])
	assert [v[0] for v in vectors] == [1.0, 2.0, 3.0, 4.0, 5.0]
	assert [len(r) for r in fake.embeddings.requests] == [2, 2, 1]
	assert embedder.dimension == 3 and embedder.name == "openai:text-embedding-3-small"
	assert isinstance(embedder, Embedder)


def test_openai_embedder_probes_its_dimension_once():
	fake = client(width=7)
	embedder = OpenAIEmbedder("m", client=fake)
	assert embedder.dimension == 7 and embedder.dimension == 7
	assert len(fake.embeddings.requests) == 1


def test_provider_errors_become_embedding_errors_with_the_status():
	embedder = OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1", batch_size=1, client=client(fail_at=2))
	with pytest.raises(EmbeddingError) as caught:
		embedder.embed(["one", "two"])
	assert "HTTP 429: rate limited" in str(caught.value) and "127.0.0.1:9" in str(caught.value)


def test_a_short_answer_is_an_error():
	with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 texts"):
		OpenAIEmbedder("m", client=client(short=True)).embed(["a", "b"])


def test_vectors_of_mixed_sizes_are_an_error():
	with pytest.raises(EmbeddingError, match="mixed sizes"):
		OpenAIEmbedder("m", client=client(ragged=True)).embed(["a", "b"])


def test_a_missing_model_name_is_a_settings_error():
	with pytest.raises(EmbeddingError, match="no embedding model configured"):
		OpenAIEmbedder("", client=client())


def test_unreachable_provider_is_an_embedding_error():
	embedder = OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1", api_key="k", timeout=2, max_retries=0)
	with pytest.raises(EmbeddingError, match="embedding provider failed"):
		embedder.embed(["hello"])


def test_hashing_embedder_is_deterministic_and_unit_length():
	embedder = HashingEmbedder(128)
	first, again = (
		embedder.embed(["Submitted invoices cannot be edited"]),
		embedder.embed(["Submitted invoices cannot be edited"]),
	)
	assert first == again and len(first[0]) == 128
	assert math.isclose(math.sqrt(sum(x * x for x in first[0])), 1.0, rel_tol=1e-9)
	[empty] = embedder.embed([""])
	assert math.isclose(sum(x * x for x in empty), 1.0)


def test_hashing_embedder_prefers_shared_words():
	embedder = HashingEmbedder(256)
	query, near, far = embedder.embed(
		["cancel an invoice", "cancelling invoices", "leave balance of employees"]
	)
	dot = lambda a, b: sum(x * y for x, y in zip(a, b, strict=True))  # noqa: E731
	assert dot(query, near) > dot(query, far)


def test_tokens_drop_stopwords_and_stem_matches_word_forms():
	assert tokens("Why can't I submit the Invoice?") == ["t", "submit", "invoice"]
	assert stem("invoices") == stem("invoice") and stem("approved") == stem("approval")
