"""The shared rate gate waits for the next minute or refuses; it never lets a minute overflow."""

from __future__ import annotations

import pytest

from noviz_agent.governance.rate_gate import MemoryCounters, RateGate, RateLimited


class Clock:
	def __init__(self, now: float = 60_000.0):
		self.now = now
		self.slept: list[float] = []

	def __call__(self) -> float:
		return self.now

	def sleep(self, seconds: float) -> None:
		self.slept.append(seconds)
		self.now += seconds


def _gate(clock, store=None, limit=10_000, max_wait=20.0):
	return RateGate(
		store or MemoryCounters(), "openai", limit, max_wait=max_wait, clock=clock, sleep=clock.sleep
	)


def test_requests_within_the_minute_pass_without_waiting():
	clock = Clock()
	gate = _gate(clock)
	assert [gate.acquire(3_000) for _ in range(3)] == [0, 0, 0]
	assert clock.slept == []


def test_a_full_minute_waits_for_the_next_when_it_is_near():
	clock = Clock(60_000.0 + 50)  # 10 s before the minute ends
	store = MemoryCounters()
	gate = _gate(clock, store)
	gate.acquire(9_000)
	waited = gate.acquire(2_000)
	assert 9.9 < waited < 10.2 and len(clock.slept) == 1
	assert store.incr("openai:1000", 0, 120) == 9_000  # the refused attempt gave its tokens back


def test_a_full_minute_far_from_its_end_is_refused_with_a_retry_time():
	clock = Clock(60_000.0 + 5)
	gate = _gate(clock, max_wait=20)
	gate.acquire(9_500)
	with pytest.raises(RateLimited, match=r"Try again in about 55 seconds"):
		gate.acquire(1_000)
	assert clock.slept == []


def test_two_workers_sharing_the_store_share_the_limit():
	clock = Clock(60_000.0 + 1)
	store = MemoryCounters()
	one, two = _gate(clock, store, max_wait=0), _gate(clock, store, max_wait=0)
	one.acquire(6_000)
	with pytest.raises(RateLimited):
		two.acquire(6_000)
	two.acquire(4_000)


def test_a_request_larger_than_the_limit_is_refused_at_once():
	with pytest.raises(RateLimited, match="more than the 10,000 per minute"):
		_gate(Clock()).acquire(12_000)


def test_no_limit_means_no_gate():
	assert _gate(Clock(), limit=0).acquire(10**9) == 0.0


def test_a_gated_provider_ends_a_turn_cleanly_when_the_site_is_over_its_rate():
	from noviz_agent.engine.turn import run_turn
	from noviz_agent.governance.rate_gate import GatedProvider
	from noviz_agent.testing.model import ScriptedModel
	from tests.support.factories import make_session
	from tests.support.memory_connector import MemoryConnector

	clock = Clock(60_000.0 + 1)
	store = MemoryCounters()
	store.incr("openai:1000", 9_900, 120)  # other workers used the minute
	model = ScriptedModel(["never sent"])
	provider = GatedProvider(model, _gate(clock, store, max_wait=5))
	session = make_session(MemoryConnector("ann@example.com", {}, {}), tools=[])
	outcome = run_turn(session, provider, "hello")
	assert outcome.response["type"] == "error"
	assert "Try again in about" in outcome.response["error"]["message"]
	assert model.requests == []  # the provider never saw the request


def test_the_estimate_counts_the_tool_schemas_exactly_as_they_are_sent():
	import json

	from noviz_agent.governance.rate_gate import GatedProvider, _tools_size

	tools = [
		{"type": "function", "function": {"name": f"t{n}__list", "description": "d" * n, "parameters": {}}}
		for n in range(1, 5)
	]
	for offered in ([], tools[:1], tools, tools[::-1]):
		assert _tools_size(offered) == len(json.dumps(offered))
	seen = []

	class Gate:
		limit = 100_000

		def acquire(self, tokens):
			seen.append(tokens)
			return 0.0

	class Model:
		def complete(self, messages, tools, *, timeout=None):
			return "reply"

	messages = [{"role": "user", "content": "hello"}]
	GatedProvider(Model(), Gate(), completion_allowance=0).complete(messages, tools)
	assert seen == [(len(json.dumps(messages)) + len(json.dumps(tools))) // 4]
