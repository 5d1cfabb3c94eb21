"""Monthly budgets in tokens and money: the strictest cap applies, checked before the model is called.

A turn reserves its worst case (the turn's token limit, priced at the model's rates) on every
cap that applies to the person, in one atomic step per cap; a reservation that would cross a cap
fails, and the caps already taken are released. After the turn the reservation is settled to
what was really spent. Concurrent turns on any number of workers therefore never overspend a
cap, and a turn that dies keeps its reservation (a conservative error) until the month ends.
"""

from __future__ import annotations

import calendar
import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

SCOPES = ("Site", "Role", "Person")


@dataclass(frozen=True)
class Cap:
	"""One monthly cap: on the whole site, on everyone holding a role, or on one person."""

	scope: str
	target: str  # "" for the site, the role or the user id
	tokens: int = 0  # 0 means no token cap
	money: float = 0.0  # 0 means no money cap
	warn_at: float = 0.8

	def __post_init__(self):
		if self.scope not in SCOPES:
			raise ValueError(f"A budget's scope is one of {', '.join(SCOPES)}, not {self.scope!r}.")

	@property
	def key(self) -> str:
		return f"{self.scope}:{self.target}" if self.target else self.scope

	def describe(self) -> str:
		who = {"Site": "the whole site", "Role": f"the role {self.target}", "Person": self.target}[self.scope]
		limits = []
		if self.tokens:
			limits.append(f"{self.tokens:,} tokens")
		if self.money:
			limits.append(f"{self.money:,.2f} in cost")
		return f"the monthly budget of {' and '.join(limits)} for {who}"


@dataclass(frozen=True)
class Spend:
	tokens: int = 0
	money: float = 0.0

	def __add__(self, other: Spend) -> Spend:
		return Spend(self.tokens + other.tokens, round(self.money + other.money, 6))

	def __sub__(self, other: Spend) -> Spend:
		return Spend(self.tokens - other.tokens, round(self.money - other.money, 6))


class UsageStore(Protocol):
	"""Spending per cap and month. `reserve` must be atomic: add only if no cap would be crossed."""

	def reserve(self, key: str, month: str, amount: Spend, cap: Cap) -> bool: ...

	def add(self, key: str, month: str, amount: Spend) -> None: ...

	def used(self, key: str, month: str) -> Spend: ...


def month_of(day: dt.date) -> str:
	return f"{day.year:04d}-{day.month:02d}"


def resets_on(day: dt.date) -> dt.date:
	"""The first day of the next month, when every monthly cap starts again."""
	last = calendar.monthrange(day.year, day.month)[1]
	return day.replace(day=last) + dt.timedelta(days=1)


def applicable(caps: list[Cap], user: str, roles: frozenset[str] | set[str]) -> list[Cap]:
	"""The caps that bind this person: the site's, their roles', their own."""
	return [
		c
		for c in caps
		if c.scope == "Site"
		or (c.scope == "Role" and c.target in roles)
		or (c.scope == "Person" and c.target == user)
	]


class BudgetExceeded(Exception):
	"""A turn that would cross a cap; the message names the cap and when it resets."""


@dataclass
class Reservation:
	"""What one turn holds on each cap until it is settled."""

	month: str
	amount: Spend
	caps: list[Cap] = field(default_factory=list)
	warnings: list[str] = field(default_factory=list)


def reserve(store: UsageStore, caps: list[Cap], worst: Spend, today: dt.date) -> Reservation:
	"""Hold the turn's worst case on every cap, or refuse before anything is spent."""
	month = month_of(today)
	held = Reservation(month, worst)
	for cap in caps:
		if not store.reserve(cap.key, month, worst, cap):
			for taken in held.caps:
				store.add(taken.key, month, Spend() - worst)
			raise BudgetExceeded(
				f"This question could go over {cap.describe()}, so it was not sent to the model. "
				f"The budget starts again on {resets_on(today).isoformat()}; your administrator can raise it "
				"in Agent Budget."
			)
		held.caps.append(cap)
	return held


def settle(store: UsageStore, held: Reservation, actual: Spend) -> list[Cap]:
	"""Replace the reservation with what the turn really spent; the caps that crossed their warning."""
	crossed = []
	for cap in held.caps:
		before = store.used(cap.key, held.month) - held.amount
		store.add(cap.key, held.month, actual - held.amount)
		after = before + actual
		if _share(cap, before) < cap.warn_at <= _share(cap, after):
			crossed.append(cap)
	return crossed


def _share(cap: Cap, spend: Spend) -> float:
	shares = []
	if cap.tokens:
		shares.append(spend.tokens / cap.tokens)
	if cap.money:
		shares.append(spend.money / cap.money)
	return max(shares, default=0.0)


def fits(cap: Cap, used: Spend, amount: Spend) -> bool:
	"""Whether `amount` more keeps `used` within the cap (the rule every store applies atomically)."""
	after = used + amount
	return (not cap.tokens or after.tokens <= cap.tokens) and (
		not cap.money or after.money <= cap.money + 1e-9
	)


class MemoryUsage:
	"""A UsageStore in memory, atomic under a lock: tests and the console script."""

	def __init__(self):
		self._lock = threading.Lock()
		self._used: dict[tuple[str, str], Spend] = {}

	def reserve(self, key: str, month: str, amount: Spend, cap: Cap) -> bool:
		with self._lock:
			used = self._used.get((key, month), Spend())
			if not fits(cap, used, amount):
				return False
			self._used[(key, month)] = used + amount
			return True

	def add(self, key: str, month: str, amount: Spend) -> None:
		with self._lock:
			self._used[(key, month)] = self._used.get((key, month), Spend()) + amount

	def used(self, key: str, month: str) -> Spend:
		with self._lock:
			return self._used.get((key, month), Spend())


@dataclass
class CallBudget:
	"""The person's caps for model calls made outside a turn's own reservation (reading a scan with
	the vision model, a procedure going on after a confirm): each call reserves its own worst case
	and is settled to what it spent, exactly like a turn.

	`price(prompt, completion)` is what tokens cost at the site's rates; `dearest` the price of a
	token at the dearer rate, for the worst case; `on_settled(held, actual, crossed)` records it.
	"""

	store: UsageStore
	caps: list[Cap]
	today: dt.date
	dearest: float = 0.0
	price: Callable[[int, int], float] = lambda prompt, completion: 0.0
	on_settled: Callable[[Reservation, Spend, list[Cap]], None] | None = None

	def reserve(self, tokens: int) -> Reservation:
		"""Hold `tokens` at the dearer rate on every cap, or raise BudgetExceeded before the call."""
		worst = Spend(int(tokens), round(int(tokens) * self.dearest / 1_000_000, 6))
		return reserve(self.store, self.caps, worst, self.today)

	def settle(self, held: Reservation, prompt_tokens: int, completion_tokens: int) -> None:
		actual = Spend(
			int(prompt_tokens) + int(completion_tokens),
			round(self.price(prompt_tokens, completion_tokens), 6),
		)
		crossed = settle(self.store, held, actual)
		if self.on_settled is not None:
			self.on_settled(held, actual, crossed)
