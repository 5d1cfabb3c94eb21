"""Budgets: the strictest cap refuses before the model is called; concurrent turns never overspend."""

from __future__ import annotations

import datetime as dt
import threading

import pytest

from noviz_agent.governance.budgets import (
	BudgetExceeded,
	Cap,
	MemoryUsage,
	Spend,
	applicable,
	reserve,
	resets_on,
	settle,
)

DAY = dt.date(2026, 12, 14)
CAPS = [
	Cap("Site", "", tokens=100_000),
	Cap("Role", "Sales User", tokens=50_000, money=5.0),
	Cap("Person", "ann@example.com", tokens=20_000),
	Cap("Person", "bob@example.com", tokens=1_000),
]


def test_caps_that_bind_a_person_are_the_sites_their_roles_and_their_own():
	caps = applicable(CAPS, "ann@example.com", {"Sales User"})
	assert [c.key for c in caps] == ["Site", "Role:Sales User", "Person:ann@example.com"]
	assert [c.key for c in applicable(CAPS, "eve@example.com", {"Accounts User"})] == ["Site"]


@pytest.mark.parametrize(
	"user, roles, used, cap_named",
	[
		("ann@example.com", {"Sales User"}, {"Person:ann@example.com": 19_000}, "for ann@example.com"),
		("ann@example.com", {"Sales User"}, {"Role:Sales User": 49_500}, "for the role Sales User"),
		("eve@example.com", set(), {"Site": 99_999}, "for the whole site"),
	],
)
def test_a_turn_over_any_cap_is_refused_naming_the_cap_and_its_reset(user, roles, used, cap_named):
	store = MemoryUsage()
	for key, tokens in used.items():
		store.add(key, "2026-12", Spend(tokens))
	with pytest.raises(BudgetExceeded) as info:
		reserve(store, applicable(CAPS, user, roles), Spend(2_000), DAY)
	assert cap_named in str(info.value) and "2027-01-01" in str(info.value)
	# Nothing stays reserved on the caps that had room.
	for cap in applicable(CAPS, user, roles):
		assert store.used(cap.key, "2026-12").tokens == used.get(cap.key, 0)


def test_money_caps_refuse_too():
	store = MemoryUsage()
	store.add("Role:Sales User", "2026-12", Spend(0, 4.99))
	with pytest.raises(BudgetExceeded):
		reserve(store, applicable(CAPS, "sam@example.com", {"Sales User"}), Spend(10, 0.02), DAY)


def test_settling_replaces_the_reservation_with_the_real_spend_and_warns_once_at_80_percent():
	store = MemoryUsage()
	caps = applicable(CAPS, "bob@example.com", set())
	held = reserve(store, caps, Spend(500), DAY)
	assert store.used("Person:bob@example.com", "2026-12").tokens == 500
	assert settle(store, held, Spend(300)) == []
	assert store.used("Person:bob@example.com", "2026-12").tokens == 300
	held = reserve(store, caps, Spend(600), DAY)
	crossed = settle(store, held, Spend(550))
	assert [c.key for c in crossed] == ["Person:bob@example.com"]
	held = reserve(store, caps, Spend(100), DAY)
	assert settle(store, held, Spend(10)) == []  # already past 80%: no second notice


def test_month_boundary_resets():
	assert resets_on(dt.date(2026, 12, 31)) == dt.date(2027, 1, 1)
	assert resets_on(dt.date(2027, 2, 3)) == dt.date(2027, 3, 1)
	store = MemoryUsage()
	store.add("Person:bob@example.com", "2026-12", Spend(1_000))
	reserve(store, applicable(CAPS, "bob@example.com", set()), Spend(500), dt.date(2027, 1, 1))


def test_concurrent_turns_never_overspend_a_cap():
	store = MemoryUsage()
	cap = Cap("Person", "ann@example.com", tokens=10_000)
	admitted, refused = [], []

	def turn():
		try:
			held = reserve(store, [cap], Spend(700), DAY)
		except BudgetExceeded:
			refused.append(1)
			return
		admitted.append(1)
		settle(store, held, Spend(650))

	threads = [threading.Thread(target=turn) for _ in range(64)]
	for t in threads:
		t.start()
	for t in threads:
		t.join()
	spent = store.used(cap.key, "2026-12").tokens
	assert spent == 650 * len(admitted) and spent <= cap.tokens
	# At least 14 worst cases (14 × 700) always fit; settled turns may free room for one or two more.
	assert len(admitted) >= 14 and len(admitted) + len(refused) == 64
	assert cap.tokens - spent < 700 + 50 * len(admitted)


def test_a_scope_is_checked():
	with pytest.raises(ValueError):
		Cap("Team", "x")
