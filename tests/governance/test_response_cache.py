"""The response cache: one person's answers only, first questions only, never writes or moving dates."""

from __future__ import annotations

import math

import pytest

from noviz_agent.engine.session import MemoryStore
from noviz_agent.governance.cache import ResponseCache, _unit, normalise, signature, time_relative

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


@pytest.mark.attack("permissions")
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
	# An entry stored before vectors were packed: a plain list of floats, unit length. (One stored
	# before signatures were kept has no `names` and is never served: it expires within the TTL.)
	old = [float(v) for v in _bag_embed(["top customers by revenue"])[0]]
	norm = math.sqrt(sum(v * v for v in old))
	cache.store.put(
		recent_key,
		[{"text": "top customers by revenue", "names": [], "vector": [v / norm for v in old]}],
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


# --- near misses: a close wording that names something else is another question ----------------


def _builtin_cache():
	from knowledge.embedding import builtin_embedder

	return _cache(embed=builtin_embedder().embed)


NEAR_MISSES = {
	"document-names": ("details of employee HR-EMP-00017", "details of employee HR-EMP-00071"),
	"codes": ("stock of item ITEM-A12 in Stores", "stock of item ITEM-B12 in Stores"),
	"amounts": ("purchase orders above 10000", "purchase orders above 100000"),
	"dates": ("sales invoices posted on 2025-01-03", "sales invoices posted on 2025-03-01"),
	"order-numbers": ("show sales order SAL-ORD-2026-00012", "show sales order SAL-ORD-2026-00021"),
}


@pytest.mark.attack("permissions")
@pytest.mark.parametrize("cached, asked", list(NEAR_MISSES.values()), ids=list(NEAR_MISSES))
def test_a_question_naming_another_record_code_amount_or_date_is_never_served_the_cached_answer(
	cached, asked
):
	cache = _builtin_cache()
	cache.remember("ann", cached, ANSWER, first_in_conversation=True, wrote=False)
	# The built-in embedder scores these pairs above the threshold: only what they name tells them apart.
	vectors = [_unit(v) for v in cache.embed([normalise(cached), normalise(asked)])]
	assert float(vectors[0] @ vectors[1]) >= cache.threshold
	assert cache.lookup("ann", asked, first_in_conversation=True) is None


def test_a_rewording_that_names_the_same_record_is_still_served():
	cache = _builtin_cache()
	cache.remember("ann", "details of employee HR-EMP-00017", ANSWER, first_in_conversation=True, wrote=False)
	hit = cache.lookup("ann", "details for employee HR-EMP-00017", first_in_conversation=True)
	assert hit is not None and hit.kind == "similar"


def test_the_same_amount_written_two_ways_names_the_same_thing():
	assert signature("orders above 10,000") == signature("orders above 10000.00") == ("10000",)
	assert signature("orders above 10000") != signature("orders above 100000")
	assert signature("Sales of Acme in March") == ("acme", "march")


@pytest.mark.attack("permissions")
def test_an_answer_kept_before_a_permission_changed_is_not_served_after_it():
	store = MemoryStore(clock=Clock())
	before = ResponseCache(store, ttl=600, threshold=0.9, embed=_bag_embed, context="perm:7")
	before.remember("ann", "top customers by revenue", ANSWER, first_in_conversation=True, wrote=False)
	assert before.lookup("ann", "top customers by revenue", first_in_conversation=True) is not None
	after = ResponseCache(store, ttl=600, threshold=0.9, embed=_bag_embed, context="perm:8")
	assert after.lookup("ann", "top customers by revenue", first_in_conversation=True) is None
	assert after.lookup("ann", "list top customers by revenue", first_in_conversation=True) is None
