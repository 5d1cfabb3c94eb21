"""Role policy limits: read-only roles lose every write tool, row bounds take the smallest; only removing."""

from __future__ import annotations

import pytest

from noviz_agent.engine.policy import PolicyError, RolePolicy, allowed_tools
from noviz_agent.tools import build_registry

PERMS = {"sales_order": {"read", "create", "write", "submit", "cancel"}, "customer": {"read", "create"}}


@pytest.fixture(scope="module")
def registry():
	return build_registry()


def test_a_read_only_role_is_never_offered_a_write(registry):
	policy = RolePolicy().with_limits([{"role": "Sales User", "access": "Read only"}])
	open_ = allowed_tools(registry, PERMS, {"Sales User"})
	narrowed = allowed_tools(registry, PERMS, {"Sales User"}, policy)
	assert {"sales_order.create", "customer.create"} <= open_
	assert not any(registry[n].writes for n in narrowed)
	assert narrowed == frozenset(n for n in open_ if not registry[n].writes)


def test_read_only_on_any_role_wins_like_a_deny(registry):
	policy = RolePolicy().with_limits(
		[{"role": "Sales User", "access": "Read only"}, {"role": "Sales Manager", "access": "Read and write"}]
	)
	allowed = allowed_tools(registry, PERMS, {"Sales User", "Sales Manager"}, policy)
	assert "sales_order.create" not in allowed


def test_limits_only_remove(registry):
	policy = RolePolicy().with_limits([{"role": "Sales User", "access": "Read and write", "max_rows": 10}])
	assert allowed_tools(registry, PERMS, {"Sales User"}, policy) == allowed_tools(
		registry, PERMS, {"Sales User"}
	)
	# A policy never grants what the site's permissions do not.
	assert "sales_invoice.list" not in allowed_tools(registry, PERMS, {"Sales User"}, policy)


def test_the_smallest_row_bound_of_a_persons_roles_applies():
	policy = RolePolicy().with_limits(
		[{"role": "A", "max_rows": 50}, {"role": "B", "max_rows": 10}, {"role": "C", "max_rows": 0}]
	)
	assert policy.max_rows({"A", "B", "C"}) == 10
	assert policy.max_rows({"A"}) == 50
	assert policy.max_rows({"C", "D"}) is None


def test_limits_change_the_policy_fingerprint():
	plain = RolePolicy()
	assert plain.with_limits([{"role": "A", "access": "Read only"}]).fingerprint() != plain.fingerprint()


@pytest.mark.parametrize(
	"row, fragment",
	[({"role": "A", "access": "Write only"}, "access"), ({"role": "A", "max_rows": -3}, "positive")],
)
def test_bad_limit_rows_are_named(row, fragment):
	with pytest.raises(PolicyError, match=fragment):
		RolePolicy().with_limits([row])
