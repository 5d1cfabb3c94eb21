"""The response cache: one person's answers only, first questions only, never writes or moving dates."""

from __future__ import annotations

import math

from noviz_agent.engine.session import MemoryStore
from noviz_agent.governance.cache import ResponseCache, normalise, time_relative

ANSWER = {"type": "table", "text": "Top customers", "table": {"rows": [{"customer": "Acme"}]}}


class Clock:
	now = 1_000.0

	def __call__(self):
		return self.now


def _bag_embed(texts):
	"""Deterministic bag-of-words vectors: similar wording, similar vector."""
	vocab = ["top", "customers", "by", "revenue", "biggest", "clients", "stock", "warehouse", "best", "list"]
	out = []
	for text in texts:
		words = text.split()
		out.append([float(words.count(w)) for w in vocab] + [0.01])
	return out


def _cache(clock=None, embed=_bag_embed):
	return ResponseCache(MemoryStore(clock=clock or Clock()), ttl=600, threshold=0.9, embed=embed)


def test_an_exact_repeat_of_a_first_question_is_answered_from_cache():
	cache = _cache()
	assert cache.remember("ann", "Top customers by revenue?", ANSWER, first_in_conversation=True, wrote=False)
	hit = cache.lookup("ann", "top customers  by revenue", first_in_conversation=True)
	assert hit is not None and hit.kind == "exact" and hit.response == ANSWER


def test_one_persons_answer_never_reaches_another():
	cache = _cache()
	cache.remember("ann", "top customers by revenue", ANSWER, first_in_conversation=True, wrote=False)
	assert cache.lookup("bob", "top customers by revenue", first_in_conversation=True) is None


def test_a_very_similar_question_is_served_and_an_unrelated_one_is_not():
	cache = _cache()
	cache.remember("ann", "list top customers by revenue", ANSWER, first_in_conversation=True, wrote=False)
	hit = cache.lookup("ann", "top customers by revenue list", first_in_conversation=True)
	assert hit is not None and hit.kind == "similar" and hit.similarity >= 0.9
	assert cache.lookup("ann", "stock by warehouse", first_in_conversation=True) is None


def test_writes_failures_and_later_questions_are_never_cached():
	cache = _cache()
	proposal = {"type": "proposal", "proposal": {"tool": "customer.create"}}
	assert not cache.remember("ann", "add customer acme", proposal, first_in_conversation=True, wrote=True)
	assert not cache.remember("ann", "add customer acme", ANSWER, first_in_conversation=True, wrote=True)
	assert not cache.remember(
		"ann", "x y", {"type": "error", "error": {"message": "no"}}, first_in_conversation=True, wrote=False
	)
	assert not cache.remember("ann", "top customers", ANSWER, first_in_conversation=False, wrote=False)
	assert cache.lookup("ann", "add customer acme", first_in_conversation=True) is None


def test_time_relative_questions_are_never_cached():
	cache = _cache()
	for question in (
		"sales today",
		"revenue this month",
		"latest orders",
		"overdue invoices",
		"stock as of now",
	):
		assert time_relative(question)
		assert not cache.remember("ann", question, ANSWER, first_in_conversation=True, wrote=False)
	assert not time_relative("top customers by revenue in 2025")


def test_entries_expire():
	clock = Clock()
	cache = _cache(clock)
	cache.remember("ann", "top customers by revenue", ANSWER, first_in_conversation=True, wrote=False)
	clock.now += 601
	assert cache.lookup("ann", "top customers by revenue", first_in_conversation=True) is None
	assert cache.lookup("ann", "list top customers by revenue", first_in_conversation=True) is None


def test_without_an_embedder_only_exact_repeats_hit():
	cache = _cache(embed=None)
	cache.remember("ann", "top customers by revenue", ANSWER, first_in_conversation=True, wrote=False)
	assert cache.lookup("ann", "list top customers by revenue", first_in_conversation=True) is None
	assert normalise("Top, customers!") == "top customers"
	assert math.isclose(
		cache.lookup("ann", "TOP customers by revenue?", first_in_conversation=True).similarity, 1.0
	)


def test_vectors_are_kept_packed_and_entries_kept_as_float_lists_still_match():
	import json

	cache = _cache()
	cache.remember("ann", "list top customers by revenue", ANSWER, first_in_conversation=True, wrote=False)
	(recent_key,) = [k for k in cache.store._data if k.startswith("recent:")]
	(item,) = cache.store.get(recent_key)
	assert isinstance(item["vector"], str)  # base64 of float32, not 11 JSON floats
	# An entry stored before vectors were packed: a plain list of floats, unit length.
	old = [float(v) for v in _bag_embed(["top customers by revenue"])[0]]
	norm = math.sqrt(sum(v * v for v in old))
	cache.store.put(
		recent_key,
		[{"text": "top customers by revenue", "vector": [v / norm for v in old]}],
		600,
	)
	cache.store.put(
		ResponseCache._key("ann", "", "top customers by revenue"),
		{"question": "Top customers by revenue?", "response": ANSWER},
		600,
	)
	hit = cache.lookup("ann", "customers top by revenue", first_in_conversation=True)
	assert hit is not None and hit.kind == "similar" and hit.similarity > 0.99
	assert json.loads(json.dumps(hit.response)) == ANSWER
