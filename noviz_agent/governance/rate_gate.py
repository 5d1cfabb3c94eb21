"""A shared tokens-per-minute gate in front of one provider, so a whole site stays under its limit.

Every worker counts the tokens it is about to send in the current minute's counter (an atomic
increment in a store all workers share: Redis on a site). When the minute is full, a turn waits
for the next minute up to a bounded time, or is refused with a clear message; it never meets
the provider's own 429.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from typing import Protocol

from noviz_agent.engine.errors import ProviderError


class CounterStore(Protocol):
	def incr(self, key: str, amount: int, ttl: int) -> int: ...


class RateLimited(ProviderError):
	"""The site's share of the provider's rate is used up for now; the message says when to retry."""


class OverBudget(ProviderError):
	"""A model call outside a turn that would cross one of the person's monthly budgets; not sent."""


class RateGate:
	"""`acquire(tokens)` before a model call: returns when the tokens fit this minute, else raises."""

	def __init__(
		self,
		store: CounterStore,
		provider: str,
		tokens_per_minute: int,
		*,
		max_wait: float = 20.0,
		clock: Callable[[], float] = time.time,
		sleep: Callable[[float], None] = time.sleep,
	):
		self.store, self.provider, self.limit = store, provider, tokens_per_minute
		self.max_wait, self.clock, self.sleep = max_wait, clock, sleep

	def acquire(self, tokens: int) -> float:
		"""Count `tokens` against the provider's minute; the seconds waited. 0 tokens per minute: no gate."""
		if self.limit <= 0:
			return 0.0
		tokens = max(1, int(tokens))
		if tokens > self.limit:
			raise RateLimited(
				f"This request needs about {tokens:,} tokens, more than the {self.limit:,} per minute allowed "
				"for the model provider on this site. Ask a narrower question or start a new conversation."
			)
		started = self.clock()
		while True:
			now = self.clock()
			minute = int(now // 60)
			total = self.store.incr(f"{self.provider}:{minute}", tokens, 120)
			if total <= self.limit:
				return now - started
			# Over: give the tokens back and wait for the next minute, if that is soon enough.
			self.store.incr(f"{self.provider}:{minute}", -tokens, 120)
			wait = (minute + 1) * 60 - now + 0.05
			if now + wait - started > self.max_wait:
				retry = math.ceil((minute + 1) * 60 - now)
				raise RateLimited(
					"Many questions are being answered on this site right now, and the model provider's "
					f"limit is reached. Try again in about {retry} seconds."
				)
			self.sleep(wait)


class MemoryCounters:
	"""A CounterStore in memory (tests, one process); expiry is not needed at this scale."""

	def __init__(self):
		self._lock = threading.Lock()
		self._values: dict[str, int] = {}

	def incr(self, key: str, amount: int, ttl: int) -> int:
		with self._lock:
			self._values[key] = self._values.get(key, 0) + amount
			return self._values[key]


# What an image costs a vision model, about: providers bill a picture by its tiles, not by the
# length of its base64 text (which would count a one-page scan as hundreds of thousands of tokens).
IMAGE_TOKENS = 1_500


def estimate_tokens(messages: list[dict], tools: list[dict]) -> int:
	"""The tokens a request will use, about four characters a token (the same for every worker)."""
	images = 0
	if any(isinstance(m.get("content"), list) for m in messages):
		shown = []
		for message in messages:
			content = message.get("content")
			if isinstance(content, list):
				kept = [
					part
					for part in content
					if not (isinstance(part, dict) and part.get("type") == "image_url")
				]
				images += len(content) - len(kept)
				message = {**message, "content": kept}
			shown.append(message)
		messages = shown
	return (len(json.dumps(messages, default=str)) + _tools_size(tools)) // 4 + images * IMAGE_TOKENS


class GatedProvider:
	"""A provider whose every call first passes the site's rate gate with its estimated tokens."""

	def __init__(self, provider, gate: RateGate, *, completion_allowance: int = 1_000):
		self.provider, self.gate, self.completion_allowance = provider, gate, completion_allowance

	def complete(self, messages: list[dict], tools: list[dict], *, timeout: float | None = None):
		if self.gate.limit > 0:  # no gate, nothing to estimate
			self.gate.acquire(estimate_tokens(messages, tools) + self.completion_allowance)
		return self.provider.complete(messages, tools, timeout=timeout)

	def __getattr__(self, name):
		return getattr(self.provider, name)


class MeteredProvider(GatedProvider):
	"""A provider for calls outside a turn's reservation (vision reading, a procedure's next step
	after a confirm): each call passes the rate gate and is held against the person's monthly
	budgets first (`budget`, a governance.budgets.CallBudget), then settled to what it spent.

	A call that would cross a cap raises BudgetExceeded before anything is sent; a call that
	failed is settled at nothing spent (the provider returned no usage to bill).
	"""

	def __init__(self, provider, gate: RateGate, budget, *, completion_allowance: int = 1_000):
		super().__init__(provider, gate, completion_allowance=completion_allowance)
		self.budget = budget

	def complete(self, messages: list[dict], tools: list[dict], *, timeout: float | None = None):
		from noviz_agent.governance.budgets import BudgetExceeded

		worst = estimate_tokens(messages, tools) + self.completion_allowance
		try:
			held = self.budget.reserve(worst) if self.budget is not None else None
		except BudgetExceeded as exc:
			raise OverBudget(str(exc)) from None
		reply = None
		try:
			reply = super().complete(messages, tools, timeout=timeout)
			return reply
		finally:
			if held is not None:
				usage = getattr(reply, "usage", None)
				self.budget.settle(
					held, getattr(usage, "prompt_tokens", 0), getattr(usage, "completion_tokens", 0)
				)


_SIZES: dict[str, int] = {}  # a tool schema's JSON length by its name: schemas are fixed per process


def _tools_size(tools: list[dict]) -> int:
	"""The JSON length of the offered tool schemas (each measured once: ~30 KB a call otherwise)."""
	total = 2 + 2 * max(len(tools) - 1, 0)  # "[", "]" and the ", " between items
	for tool in tools:
		name = (tool.get("function") or {}).get("name") or ""
		size = _SIZES.get(name) if name else None
		if size is None:
			size = len(json.dumps(tool, default=str))
			if name and len(_SIZES) < 10_000:
				_SIZES[name] = size
		total += size
	return total
