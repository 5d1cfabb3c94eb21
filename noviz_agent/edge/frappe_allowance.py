"""Which tools a person may be offered, cached in Redis and dropped when roles, permissions or policy change.

The computation is the engine's (`engine.policy.allowed_tools`); this module only feeds it
the site's permissions and the Agent Role Policy rows, and keeps the answer per person.
A change anywhere bumps one generation counter that is part of every cache key, so no
stale allowance is ever read (old keys simply expire).
"""

from __future__ import annotations

import hashlib

import frappe

from noviz_agent.engine.policy import RolePolicy, allowance_cache_key, allowed_tools

GENERATION_KEY = "noviz_agent:allowance_generation"
TTL_SECONDS = 6 * 60 * 60


def generation() -> int:
	return int(frappe.cache.get_value(GENERATION_KEY, expires=True) or 0)


def invalidate(doc=None, method=None) -> None:
	"""doc_events hook (User, Has Role, DocPerm, Custom DocPerm, User Permission, Agent Role Policy)."""
	frappe.cache.set_value(GENERATION_KEY, generation() + 1, expires_in_sec=30 * 24 * 60 * 60)


def policy_rows() -> list[dict]:
	"""The enabled Agent Role Policy rules as `{role, effect, module, tool}` rows."""
	if not frappe.db.table_exists("Agent Role Policy"):
		return []
	# The administrator's policy must apply to people who cannot read it: reading it as them
	# would return nothing and so widen their access. It only ever removes tools.
	enabled = frappe.get_all("Agent Role Policy", filters={"enabled": 1}, pluck="name")
	if not enabled:
		return []
	rows = frappe.get_all(
		"Agent Role Policy Rule",
		filters={"parenttype": "Agent Role Policy", "parent": ("in", enabled)},
		fields=["parent as role", "effect", "module", "tool"],
		order_by="parent asc, idx asc",
	)
	# An empty Select comes back as "", an empty Data as None: both mean "not set".
	return [{**row, "module": row.module or None, "tool": row.tool or None} for row in rows]


def policy_limits() -> list[dict]:
	"""Per-role access and row bounds of the enabled Agent Role Policies."""
	if not frappe.db.table_exists("Agent Role Policy"):
		return []
	return frappe.get_all(
		"Agent Role Policy",
		filters={"enabled": 1},
		fields=["role", "access", "max_rows"],
		order_by="role asc",
	)


def site_policy() -> RolePolicy:
	"""The administrator's whole policy: rules and per-role limits."""
	return RolePolicy.from_rows(policy_rows()).with_limits(policy_limits())


def _registry_digest(registry) -> str:
	return hashlib.sha256("\n".join(sorted(registry.names())).encode()).hexdigest()[:12]


def cache_key(person, registry) -> str:
	return allowance_cache_key(person.user, person.roles, f"g{generation()}:{_registry_digest(registry)}")


def compute(person, connector, registry) -> frozenset[str]:
	"""The allowance computed afresh from the site's permissions and the policy."""
	permissions = {entity: set(connector.permissions(entity)) for entity in connector.entities()}
	return allowed_tools(registry, permissions, person.roles, site_policy())


def allowance(person, connector, registry) -> frozenset[str]:
	"""The person's allowed tools, from the cache when nothing changed since it was computed."""
	key = cache_key(person, registry)
	cached = frappe.cache.get_value(key, expires=True)
	if cached is not None:
		return frozenset(cached)
	allowed = compute(person, connector, registry)
	frappe.cache.set_value(key, sorted(allowed), expires_in_sec=TTL_SECONDS)
	return allowed
