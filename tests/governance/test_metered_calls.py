"""Model calls outside a turn's reservation (vision reading, a procedure's step after a confirm) are
rate-gated and held against the person's budgets one call at a time, like a turn."""

from __future__ import annotations

import base64
import datetime as dt

import pytest

from noviz_agent.engine.provider import ModelReply, Usage
from noviz_agent.governance.budgets import CallBudget, Cap, MemoryUsage, Spend
from noviz_agent.governance.rate_gate import (
	IMAGE_TOKENS,
	MemoryCounters,
	MeteredProvider,
	OverBudget,
	RateGate,
	RateLimited,
	estimate_tokens,
)

TODAY = dt.date(2026, 11, 20)
PAGE_USAGE = Usage(prompt_tokens=1_200, completion_tokens=300)
PAGE = base64.b64encode(b"\x89PNG" + b"\x00" * 600_000).decode()


def _page_messages():
	return [
		{
			"role": "user",
			"content": [
				{"type": "text", "text": "Read page 1 of 1 of this supplier invoice."},
				{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PAGE}"}},
			],
		}
	]


class Vision:
	"""A vision model that answers every page with the same usage and counts its calls."""

	def __init__(self, usage: Usage = PAGE_USAGE):
		self.calls, self.usage = 0, usage

	def complete(self, messages, tools, *, timeout=None):
		self.calls += 1
		return ModelReply(text="{}", usage=self.usage, model="vision")


def _budget(store, tokens, settled=None):
	cap = Cap("Person", "ann@example.com", tokens=tokens)
	return CallBudget(
		store,
		[cap],
		TODAY,
		dearest=2.0,
		price=lambda p, c: (p + c) * 2.0 / 1_000_000,
		on_settled=(lambda held, actual, crossed: settled.append(actual)) if settled is not None else None,
	)


def test_an_image_counts_as_an_image_not_as_its_base64_text():
	assert estimate_tokens(_page_messages(), []) < IMAGE_TOKENS + 100
	assert len(PAGE) // 4 > 100 * IMAGE_TOKENS  # what the text estimate would have said


@pytest.mark.attack("budgets")
def test_a_vision_call_over_the_persons_budget_is_refused_before_the_model_is_called():
	vision = Vision()
	store = MemoryUsage()
	store.add("Person:ann@example.com", "2026-11", Spend(9_000))
	provider = MeteredProvider(vision, RateGate(MemoryCounters(), "p", 0), _budget(store, 10_000))
	with pytest.raises(OverBudget, match="monthly budget of 10,000 tokens"):
		provider.complete(_page_messages(), [])
	assert vision.calls == 0
	assert store.used("Person:ann@example.com", "2026-11") == Spend(9_000)  # nothing held after refusing


def test_each_call_is_settled_to_what_it_spent_and_recorded():
	vision, store, settled = Vision(), MemoryUsage(), []
	provider = MeteredProvider(vision, RateGate(MemoryCounters(), "p", 0), _budget(store, 100_000, settled))
	for _ in range(3):
		provider.complete(_page_messages(), [])
	assert vision.calls == 3
	assert store.used("Person:ann@example.com", "2026-11").tokens == 3 * 1_500
	assert [s.tokens for s in settled] == [1_500, 1_500, 1_500]


@pytest.mark.attack("budgets")
def test_vision_calls_share_the_sites_rate_gate():
	counters = MemoryCounters()
	gate = RateGate(counters, "p", 6_000, max_wait=0, clock=lambda: 60_005.0, sleep=lambda s: None)
	provider = MeteredProvider(Vision(), gate, _budget(MemoryUsage(), 10**9))
	provider.complete(_page_messages(), [])
	provider.complete(_page_messages(), [])
	with pytest.raises(RateLimited):
		provider.complete(_page_messages(), [])


def test_a_failed_call_gives_back_what_it_held():
	class Down(Vision):
		def complete(self, messages, tools, *, timeout=None):
			raise RuntimeError("connection reset")

	store = MemoryUsage()
	provider = MeteredProvider(Down(), RateGate(MemoryCounters(), "p", 0), _budget(store, 100_000))
	with pytest.raises(RuntimeError):
		provider.complete(_page_messages(), [])
	assert store.used("Person:ann@example.com", "2026-11") == Spend(0, 0.0)
