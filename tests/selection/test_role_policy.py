"""Stage 1: the site's permissions, then the admin's policy; layers only remove access."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noviz_agent.engine.policy import (
	PolicyError,
	RolePolicy,
	allowance_cache_key,
	allowance_entry,
	allowance_from_entry,
	allowed_tools,
	permission_fingerprint,
)
from noviz_agent.engine.routing import spine_names
from tests.selection.fake_tools import ENTITIES, HAND_WRITTEN, fake_registry

FULL = {key: {"read", "create", "write", "submit", "cancel"} for key in ENTITIES}
# What an out-of-the-box Sales User holds (DESIGN.md: no Sales Invoice, no Employee, no GL Entry).
SALES_USER = {
	"customer": {"read", "create", "write"},
	"quotation": {"read", "create", "write", "submit", "cancel"},
	"sales_order": {"read", "create", "write", "submit"},
	"item": {"read"},
	"delivery_note": {"read"},
	"lead": {"read"},
	"opportunity": {"read"},
}


@pytest.fixture(scope="module")
def registry():
	return fake_registry()


def test_a_sales_user_never_gets_sales_invoice_tools(registry):
	allowed = allowed_tools(registry, SALES_USER, ["Sales User"])
	assert not [n for n in allowed if n.startswith(("sales_invoice.", "employee.", "gl_entry.", "purchase_"))]
	assert {"sales_order.list", "sales_order.create", "sales_order.submit", "customer.update"} <= allowed


def test_write_tools_need_the_matching_permission(registry):
	allowed = allowed_tools(registry, SALES_USER, ["Sales User"])
	assert "sales_order.cancel" not in allowed  # no cancel permission
	assert "item.create" not in allowed and "item.update" not in allowed
	assert "item.list" in allowed and "item.count" in allowed
	assert "delivery_note.submit" not in allowed


def test_write_without_read_gives_nothing(registry):
	allowed = allowed_tools(registry, {"customer": {"create", "write"}}, ["X"])
	assert not [n for n in allowed if n.startswith("customer.")]


def test_non_entity_tools_pass_the_site_layer(registry):
	allowed = allowed_tools(registry, {}, ["Guest-ish"])
	assert set(HAND_WRITTEN) | {"tools.search"} == set(allowed)


def test_deny_wins_over_allow(registry):
	policy = RolePolicy.from_rows(
		[
			{"role": "Sales User", "effect": "allow", "module": "selling"},
			{"role": "Sales User", "effect": "deny", "tool": "sales_order.create"},
		]
	)
	allowed = allowed_tools(registry, FULL, ["Sales User"], policy)
	assert "sales_order.list" in allowed
	assert "sales_order.create" not in allowed


def test_an_allow_list_narrows_to_its_modules_plus_the_spine(registry):
	policy = RolePolicy.from_rows([{"role": "Sales User", "effect": "allow", "module": "selling"}])
	allowed = allowed_tools(registry, FULL, ["Sales User"], policy)
	spine = set(spine_names()) & set(registry.names())
	assert spine <= allowed
	others = allowed - spine
	assert others and all(registry[n].module == "selling" for n in others)


def test_allow_by_tool_glob(registry):
	policy = RolePolicy.from_rows([{"role": "Auditor", "effect": "allow", "tool": "*.list"}])
	allowed = allowed_tools(registry, FULL, ["Auditor"], policy)
	assert all(n.endswith(".list") or n in spine_names() for n in allowed)
	assert "customer.list" in allowed and "customer.get" not in allowed


def test_deny_may_remove_the_spine(registry):
	policy = RolePolicy.from_rows([{"role": "Clerk", "effect": "deny", "tool": "knowledge.search"}])
	allowed = allowed_tools(registry, FULL, ["Clerk"], policy)
	assert "knowledge.search" not in allowed
	assert "tools.search" in allowed


def test_rules_of_roles_the_person_lacks_do_not_apply(registry):
	policy = RolePolicy.from_rows([{"role": "Accounts User", "effect": "deny", "module": "selling"}])
	assert allowed_tools(registry, FULL, ["Sales User"], policy) == allowed_tools(
		registry, FULL, ["Sales User"]
	)


def test_policy_rows_are_checked():
	with pytest.raises(PolicyError, match="effect"):
		RolePolicy.from_rows([{"role": "A", "effect": "maybe", "module": "selling"}])
	with pytest.raises(PolicyError, match="no role"):
		RolePolicy.from_rows([{"effect": "deny", "module": "selling"}])
	with pytest.raises(PolicyError, match="neither"):
		RolePolicy.from_rows([{"role": "A", "effect": "deny"}])
	assert RolePolicy.from_rows([{"role": "", "effect": "", "module": ""}]).rules == ()


RULES = st.lists(
	st.fixed_dictionaries(
		{
			"role": st.sampled_from(["Sales User", "Stock User", "Accounts User"]),
			"effect": st.sampled_from(["allow", "deny"]),
			"module": st.sampled_from(["", "selling", "stock", "accounting", "analytics", "reports"]),
			"tool": st.sampled_from(["", "sales_order.*", "*.create", "knowledge.search", "item.list"]),
		}
	).filter(lambda r: r["module"] or r["tool"]),
	max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(rows=RULES, roles=st.sets(st.sampled_from(["Sales User", "Stock User", "Accounts User"])))
def test_the_policy_only_removes(rows, roles):
	registry = fake_registry()
	without = allowed_tools(registry, SALES_USER, roles)
	with_policy = allowed_tools(registry, SALES_USER, roles, RolePolicy.from_rows(rows))
	assert with_policy <= without


def test_cache_key_follows_the_person_and_permissions_and_the_entry_its_roles(registry):
	policy = RolePolicy.from_rows([{"role": "Sales User", "effect": "deny", "module": "stock"}])
	fp = permission_fingerprint(SALES_USER, policy, registry)
	key = allowance_cache_key("a@x.com", fp)
	assert key.endswith(":a@x.com"), "the person's name last and whole"
	assert key != allowance_cache_key("b@x.com", fp)
	# The roles are kept with the tools: an entry for other roles is no answer.
	entry = allowance_entry(["Sales User", "Employee"], {"b.list", "a.list"})
	assert allowance_from_entry(entry, ["Employee", "Sales User", "Employee"]) == {"a.list", "b.list"}
	assert allowance_from_entry(entry, ["Sales User"]) is None
	assert allowance_from_entry(entry, ["Sales User", "Employee", "System Manager"]) is None
	assert allowance_from_entry(["a.list"], ["Sales User", "Employee"]) is None  # another shape
	assert allowance_from_entry({"roles": ["Employee", "Sales User"]}, ["Sales User", "Employee"]) is None
	assert allowance_from_entry(None, []) is None
	more = {**SALES_USER, "sales_invoice": {"read"}}
	assert fp != permission_fingerprint(more, policy, registry)
	assert fp != permission_fingerprint(SALES_USER, RolePolicy(), registry)
