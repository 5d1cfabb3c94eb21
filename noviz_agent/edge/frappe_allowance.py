"""Which tools a person may be offered, cached in Redis and dropped when roles, permissions or policy change.

The same generation also keeps the agent's configuration that every turn reads (`cached`).

The computation is the engine's (`engine.policy.allowed_tools`); this module only feeds it
the site's permissions and the Agent Role Policy rows, and keeps the answer per person.
A change anywhere bumps one generation counter that is part of every cache key, so no
stale allowance is ever read (old keys simply expire).
"""

from __future__ import annotations

import hashlib

import frappe

from noviz_agent.engine.policy import (
	RolePolicy,
	allowance_cache_key,
	allowance_entry,
	allowance_from_entry,
	allowed_tools,
)

# A plain integer in Redis, moved on only by INCR: concurrent bumps never move it backwards.
GENERATION_KEY = "noviz_agent:permission_generation"
# What frappe renews whenever it clears a DocType's cached permissions - Role Permission Manager's
# update, remove, reset and add all do, through `frappe.clear_cache(doctype=...)`, without firing
# any document event - and on every full cache clear. Part of every key below.
METADATA_VERSION = "metadata_version"
TTL_SECONDS = 6 * 60 * 60
PRESENT_KEY = "noviz_agent:present_doctypes"


def generation() -> int:
	"""The agent's own generation, as Redis holds it now."""
	return int(frappe.cache.get(frappe.cache.make_key(GENERATION_KEY)) or 0)


def cache_token() -> str:
	"""What every cached allowance, configuration and answer is keyed by: the agent's generation and
	frappe's metadata version, so a permission change made anywhere - a document event here, or
	Role Permission Manager, which fires none - makes every older entry unreachable."""
	version = frappe.cache.get_value(METADATA_VERSION, expires=True)
	return f"{generation()}.{str(version or '')[:12]}"


def _bump() -> None:
	frappe.cache.incr(frappe.cache.make_key(GENERATION_KEY))


def invalidate(doc=None, method=None, *args, **kwargs) -> None:
	"""doc_events hook: roles, permissions, or the agent's own configuration changed (see hooks.py).

	Bumped now, for reads later in this transaction, and again when it commits or rolls back:
	another process that read the old rows before the commit (or this one, rows that were then
	rolled back) would otherwise keep them under the new generation.
	"""
	_bump()
	frappe.db.after_commit.add(_bump)
	frappe.db.after_rollback.add(_bump)


def cached_key(name: str, *, user: str | None = None) -> str:
	return f"noviz_agent:{name}:g{cache_token()}" + (f":{user}" if user else "")


def cached(name: str, build, *, user: str | None = None):
	"""What `build()` returns, kept in Redis until roles, permissions or the agent's configuration change.

	For values every turn reads that only an administrator changes (budgets, procedures, other
	systems). With `user`, the value is that person's own (read with their permissions). The
	generation is part of the key, so a change is seen at once; older keys expire.
	"""
	return _kept(cached_key(name, user=user), build)


def _kept(key: str, build):
	"""The value under `key` in Redis, else what `build()` returns, kept there for TTL_SECONDS."""
	value = frappe.cache.get_value(key, expires=True)
	if value is None:
		value = build()
		frappe.cache.set_value(key, value, expires_in_sec=TTL_SECONDS)
	return value


def after_migrate() -> None:
	"""after_migrate hook: DocTypes and permissions may have come or gone with the migrate."""
	frappe.cache.delete_value(PRESENT_KEY)
	invalidate()


def present_doctypes() -> set[str]:
	"""The DocTypes installed on the site (those of inactive domains left out, as the desk's boot
	counts them), kept in Redis so that a turn does not read every DocType again."""

	def read() -> list[str]:
		active = set(frappe.get_active_domains())
		# Site structure, not business data: the same list the desk's boot reads for everyone.
		rows = frappe.get_all("DocType", fields=["name", "restrict_to_domain"])
		return sorted(r.name for r in rows if not r.restrict_to_domain or r.restrict_to_domain in active)

	return set(_kept(PRESENT_KEY, read))


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


POLICY_CACHED = "role_policy"  # the administrator's whole policy (`cached`)


def site_policy() -> RolePolicy:
	"""The administrator's whole policy: rules and per-role limits (read once per change of any of them)."""
	kept = cached(
		POLICY_CACHED,
		lambda: {"rows": policy_rows(), "limits": [dict(row) for row in policy_limits()]},
	)
	return RolePolicy.from_rows(kept["rows"]).with_limits(kept["limits"])


_DIGESTS: dict[int, tuple[object, str]] = {}  # id(frozen registry) -> (registry, digest), per process


def _registry_digest(registry) -> str:
	kept = _DIGESTS.get(id(registry))
	if kept is not None and kept[0] is registry:
		return kept[1]
	digest = hashlib.sha256("\n".join(sorted(registry.names())).encode()).hexdigest()[:12]
	if getattr(registry, "frozen", False):  # a registry still open to new tools is digested each time
		_DIGESTS[id(registry)] = (registry, digest)
	return digest


def cache_key(person, registry) -> str:
	return allowance_cache_key(person.user, f"g{cache_token()}:{_registry_digest(registry)}")


def compute(person, connector, registry) -> frozenset[str]:
	"""The allowance computed afresh from the site's permissions and the policy."""
	permissions = {entity: set(connector.permissions(entity)) for entity in connector.entities()}
	return allowed_tools(registry, permissions, person.roles, site_policy())


def allowance(person, connector, registry) -> frozenset[str]:
	"""The person's allowed tools, from the cache when nothing changed since it was computed (an
	entry kept for other roles than the person's now is computed again)."""
	key = cache_key(person, registry)
	tools = allowance_from_entry(frappe.cache.get_value(key, expires=True), person.roles)
	if tools is None:
		tools = compute(person, connector, registry)
		frappe.cache.set_value(key, allowance_entry(person.roles, tools), expires_in_sec=TTL_SECONDS)
	return tools
