"""Stage 1 of tool selection: which tools a person may be offered at all.

Two layers, each only removing: the site's own permissions (an entity's tools only where
the person can read it; create/update/submit/cancel only with that permission), then the
administrator's Agent Role Policy (role → allowed or denied modules and tools). A deny
always wins, even over the spine; an allow list, once any exists for the person's roles,
narrows them to what it names plus the spine. The result depends only on the person's
roles, permissions and the policy, so the frappe edge caches it per person under
`allowance_cache_key` (a permission or policy change gives a new key) with the roles it was
computed for (`allowance_entry`): an entry for other roles is computed again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from noviz_agent.engine.routing import router_for, spine_names


@dataclass(frozen=True)
class Rule:
	"""One Agent Role Policy row: a role allowed or denied a module or a tool (a tool may be a glob)."""

	role: str
	effect: str  # "allow" | "deny"
	module: str | None = None
	tool: str | None = None

	def matches(self, name: str, module: str) -> bool:
		if self.tool and not fnmatchcase(name, self.tool):
			return False
		if self.module and self.module != module:
			return False
		return bool(self.tool or self.module)


@dataclass(frozen=True)
class RoleLimit:
	"""Per-role bounds from Agent Role Policy: read-only, and the most rows a tool may return."""

	role: str
	read_only: bool = False
	max_rows: int | None = None


class PolicyError(ValueError):
	"""A policy row cannot be understood; the message names the row."""


@dataclass(frozen=True)
class RolePolicy:
	"""The administrator's rules, as data."""

	rules: tuple[Rule, ...] = ()
	limits: tuple[RoleLimit, ...] = ()

	@classmethod
	def from_rows(cls, rows: Iterable[Mapping]) -> RolePolicy:
		"""Rules from Agent Role Policy rows `{role, effect, module?, tool?}`; blank rows are skipped."""
		rules = []
		for index, row in enumerate(rows):
			role = (row.get("role") or "").strip()
			effect = (row.get("effect") or "").strip().lower()
			module = (row.get("module") or "").strip() or None
			tool = (row.get("tool") or "").strip() or None
			if not role and not module and not tool:
				continue
			if not role:
				raise PolicyError(f"Policy row {index + 1} names no role")
			if effect not in ("allow", "deny"):
				raise PolicyError(f"Policy row {index + 1}: effect must be 'allow' or 'deny', not {effect!r}")
			if not module and not tool:
				raise PolicyError(f"Policy row {index + 1} ({role}) names neither a module nor a tool")
			rules.append(Rule(role, effect, module, tool))
		return cls(tuple(rules))

	def with_limits(self, rows: Iterable[Mapping]) -> RolePolicy:
		"""This policy plus per-role limits from `{role, access, max_rows}` rows."""
		limits = []
		for row in rows:
			role = (row.get("role") or "").strip()
			if not role:
				continue
			access = (row.get("access") or "Read and write").strip().lower()
			if access not in ("read and write", "read only"):
				raise PolicyError(f"Policy for {role}: access must be 'Read and write' or 'Read only'")
			max_rows = int(row.get("max_rows") or 0) or None
			if max_rows is not None and max_rows < 1:
				raise PolicyError(f"Policy for {role}: the most rows must be a positive number")
			limits.append(RoleLimit(role, access == "read only", max_rows))
		return RolePolicy(self.rules, tuple(limits))

	def read_only(self, roles: Iterable[str]) -> bool:
		"""Read-only when any of the person's roles is: like a deny, the narrower rule wins."""
		held = set(roles)
		return any(limit.read_only for limit in self.limits if limit.role in held)

	def max_rows(self, roles: Iterable[str]) -> int | None:
		"""The smallest row bound among the person's roles, or None."""
		held = set(roles)
		bounds = [limit.max_rows for limit in self.limits if limit.role in held and limit.max_rows]
		return min(bounds) if bounds else None

	def for_roles(self, roles: Iterable[str]) -> tuple[list[Rule], list[Rule]]:
		"""The allow and deny rules that apply to a person with these roles."""
		held = set(roles)
		applying = [r for r in self.rules if r.role in held]
		return [r for r in applying if r.effect == "allow"], [r for r in applying if r.effect == "deny"]

	def fingerprint(self) -> str:
		rows = sorted((r.role, r.effect, r.module or "", r.tool or "") for r in self.rules)
		limits = sorted((x.role, x.read_only, x.max_rows or 0) for x in self.limits)
		return hashlib.sha256(json.dumps([rows, limits]).encode()).hexdigest()[:16]


def site_permits(tool, permissions: Mapping[str, set[str]]) -> bool:
	"""Whether the site's own permissions let the person use this tool (non-entity tools: yes).

	An entity tool needs read on its entity and the permission it carries (`Tool.permission`, set
	where entity tools are built from the model's action → permission map).
	"""
	if not tool.entity:
		return True
	held = permissions.get(tool.entity)
	if not held or "read" not in held:
		return False
	needed = tool.permission or ("write" if tool.writes else "read")
	return needed in held


def allowed_tools(
	registry,
	connector_permissions: Mapping[str, set[str]],
	roles: Iterable[str],
	policy: RolePolicy | None = None,
) -> frozenset[str]:
	"""The tools this person may be offered: the site's permissions, then the policy, only removing."""
	policy = policy or RolePolicy()
	roles = list(roles)
	allows, denies = policy.for_roles(roles)
	read_only = policy.read_only(roles)
	router = router_for(registry)
	spine = set(spine_names())
	allowed = []
	for tool in registry:
		if not site_permits(tool, connector_permissions):
			continue
		if read_only and tool.writes:
			continue
		module = router.module_of(tool)
		modules = {module, tool.module}
		if any(rule.matches(tool.name, m) for rule in denies for m in modules):
			continue
		if allows and tool.name not in spine:
			if not any(rule.matches(tool.name, m) for rule in allows for m in modules):
				continue
		allowed.append(tool.name)
	return frozenset(allowed)


def permission_fingerprint(
	connector_permissions: Mapping[str, Iterable[str]], policy: RolePolicy | None = None, registry=None
) -> str:
	"""A short digest of permissions, policy and tool names: it changes whenever what may be offered changes."""
	perms = sorted((entity, sorted(p)) for entity, p in connector_permissions.items())
	names = sorted(registry.names()) if registry is not None else []
	payload = json.dumps([perms, policy.fingerprint() if policy else "", names])
	return hashlib.sha256(payload.encode()).hexdigest()[:16]


def allowance_cache_key(user: str, permission_fingerprint: str) -> str:
	"""The cache key of a person's allowed tools; new permissions or policy give a new key. The
	person's name comes last, whole, so that every key of one person ends the same way."""
	return f"noviz_agent:allowed:{permission_fingerprint}:{user}"


def allowance_entry(roles: Iterable[str], tools: Iterable[str]) -> tuple:
	"""What is kept under `allowance_cache_key`: (the roles they were computed for, the tools).
	A tuple, not a dict: frappe's per-request cache holds Redis hashes as dicts."""
	return tuple(sorted(set(roles))), tuple(sorted(tools))


def allowance_from_entry(entry, roles: Iterable[str]) -> frozenset[str] | None:
	"""The kept tools when they were computed for these roles; None (compute them again) when the
	roles differ or the entry is missing or of another shape."""
	if not isinstance(entry, tuple) or len(entry) != 2 or entry[0] != tuple(sorted(set(roles))):
		return None
	return frozenset(entry[1])
