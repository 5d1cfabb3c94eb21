"""An in-memory connector for engine and tool tests: the whole contract, with the frappe connector's semantics.

Rows are canonical dicts per entity (child tables as lists under the child's canonical
name). Permissions are per entity (`{"sales_order": {"read", "create"}}`); anything not
granted is refused with PermissionDenied, exactly where the real site would refuse.
Filters are checked by the same pure functions the frappe connector uses, so a bad field
fails the same way here and on a site.
"""

from __future__ import annotations

import copy
import fnmatch
from collections import defaultdict
from typing import Any

from noviz_agent.connectors.base import workflow_refusal
from noviz_agent.connectors.model import Entity, Model, load_model
from noviz_agent.connectors.translate import (
	doc_to_canonical,
	like_pattern,
	parse_filters,
	to_frappe_values,
	to_report_filters,
)
from noviz_agent.engine.errors import NotFound, PermissionDenied, ToolError, ValidationFailed

ALL_PERMISSIONS = frozenset({"read", "create", "write", "submit", "cancel"})
FIRST_VERSION = "2000-01-01 00:00:00.000000"


class MemoryConnector:
	"""One person's view of an in-memory system of record."""

	def __init__(
		self,
		user: str = "test@example.com",
		data: dict[str, list[dict]] | None = None,
		permissions: dict[str, set[str]] | None = None,
		reports: dict[str, dict] | None = None,
		workflows: dict[str, dict] | None = None,
		*,
		roles: set[str] | frozenset[str] = frozenset(),
		entities: list[str] | None = None,
		model: Model | None = None,
		restrictions: dict[str, set[str]] | None = None,
	):
		self.user = user
		self.roles = frozenset(roles)
		self.model = model or load_model()
		self.data: dict[str, list[dict]] = {k: [copy.deepcopy(r) for r in v] for k, v in (data or {}).items()}
		for rows in self.data.values():
			for row in rows:
				# Every record on a site has a version, whether its entity map lists the field or not.
				row.setdefault("modified", FIRST_VERSION)
		self.perms = {k: set(v) for k, v in (permissions or {}).items()}
		self.reports = reports or {}
		self.workflows = workflows or {}
		self._entities = list(entities) if entities is not None else [e.key for e in self.model]
		self.calls: list[tuple[str, Any]] = []
		self._counter = defaultdict(int)
		self._writes = 0
		# User Permissions as the site applies them: {field: allowed values} on every entity with
		# that field; a row whose field is empty stays visible (strict user permissions off).
		self.restrictions = {k: set(v) for k, v in (restrictions or {}).items()}

	def _touch(self, row: dict) -> None:
		"""Every write moves `modified` on, as frappe does, so stale previews can be detected."""
		self._writes += 1
		row["modified"] = f"2099-01-01 00:00:{self._writes:02d}.{self._writes:06d}"

	# --- helpers ---------------------------------------------------------------------

	def _entity(self, key: str, need: str | None = "read") -> Entity:
		if key not in self._entities:
			raise NotFound(f"There is no entity '{key}' on this site.")
		ent = self.model.entity(key)
		if need and need not in self.perms.get(key, set()):
			raise PermissionDenied(f"No permission for {ent.doctype}: {self.user} cannot {need} it.")
		return ent

	def _rows(self, key: str) -> list[dict]:
		return self.data.setdefault(key, [])

	def _visible(self, ent: Entity, row: dict) -> bool:
		for field, allowed in self.restrictions.items():
			if field in ent.fields and row.get(field) not in (None, "") and row.get(field) not in allowed:
				return False
		return True

	def _find(self, ent: Entity, name: str) -> dict:
		for row in self._rows(ent.key):
			if row.get("name") == name:
				if not self._visible(ent, row):
					raise PermissionDenied(f"No permission for {ent.doctype} {name}")
				return row
		raise NotFound(f"{ent.doctype} {name} not found")

	def _filtered(self, ent: Entity, filters) -> list[dict]:
		conditions = parse_filters(ent, filters)
		return [row for row in self._rows(ent.key) if self._visible(ent, row) and _matches(row, conditions)]

	# --- reading ------------------------------------------------------------------------

	def entities(self) -> list[str]:
		return list(self._entities)

	def permissions(self, entity: str) -> set[str]:
		if entity not in self._entities:
			return set()
		return set(self.perms.get(entity, set()))

	def list(self, entity, *, fields=None, filters=None, order_by=None, limit=20, offset=0) -> list[dict]:
		self.calls.append(("list", entity))
		ent = self._entity(entity)
		names = list(fields) if fields else ent.default_list_fields()
		if "name" not in names:
			names.insert(0, "name")
		for name in names:
			ent.resolve(name)
		rows = _explode(ent, self._filtered(ent, filters), names, parse_filters(ent, filters))
		rows = _sort(ent, rows, order_by or "modified desc")
		picked = [{n: row.get(ent.aliases.get(n, n)) for n in names} for row in rows]
		if any("." in n for n in names):
			picked = _distinct(picked)
		return picked[offset : offset + limit]

	def get(self, entity: str, name: str) -> dict:
		self.calls.append(("get", entity))
		ent = self._entity(entity)
		return self._canonical(ent, self._find(ent, name))

	def version(self, entity: str, name: str) -> str:
		"""The record's `modified` as the person may read it, exactly where the site would refuse."""
		self.calls.append(("version", entity))
		ent = self._entity(entity)
		return str(self._find(ent, name)["modified"])

	def _canonical(self, ent: Entity, row: dict) -> dict:
		as_doc = {f.field: row.get(n) for n, f in ent.fields.items()}
		for child in ent.children.values():
			as_doc[child.field] = [
				{f.field: r.get(n) for n, f in child.fields.items()} for r in row.get(child.name) or []
			]
		return doc_to_canonical(ent, as_doc)

	def count(self, entity: str, filters=None) -> int:
		self.calls.append(("count", entity))
		ent = self._entity(entity)
		return len(self._filtered(ent, filters))

	def aggregate(
		self, entity, *, metrics, group_by=None, filters=None, order_by=None, limit=None
	) -> list[dict]:
		self.calls.append(("aggregate", entity))
		ent = self._entity(entity)
		group_by = list(group_by or [])
		needed = group_by + [m["field"] for m in metrics if m.get("field")]
		for name in needed:
			ent.resolve(name)
		rows = _explode(ent, self._filtered(ent, filters), needed, parse_filters(ent, filters))
		groups: dict[tuple, list[dict]] = defaultdict(list)
		for row in rows:
			groups[tuple(row.get(ent.aliases.get(g, g)) for g in group_by)].append(row)
		out = []
		for key, members in groups.items():
			result = dict(zip(group_by, key, strict=True))
			for metric in metrics:
				fn, field = metric["fn"], metric.get("field")
				alias = metric.get("as") or (f"{fn}_{field}".replace(".", "_") if field else fn)
				values = [r.get(ent.aliases.get(field, field)) for r in members] if field else members
				result[alias] = _apply(fn, values, field)
			out.append(result)
		aliases = [m.get("as") or m["fn"] for m in metrics]
		out = _sort(ent, out, order_by or (f"{aliases[0]} desc" if group_by else None), extra=tuple(aliases))
		return out[:limit] if limit else out

	def meta(self, entity: str) -> dict:
		ent = self._entity(entity, need=None)
		return {
			"entity": ent.key,
			"doctype": ent.doctype,
			"fields": [f.describe() for f in ent.fields.values()],
			"children": {
				c.name: {"doctype": c.doctype, "fields": [f.describe() for f in c.fields.values()]}
				for c in ent.children.values()
			},
		}

	# --- writing ------------------------------------------------------------------------

	def create(self, entity: str, values: dict) -> dict:
		self.calls.append(("create", entity))
		ent = self._entity(entity, "create")
		to_frappe_values(ent, values, creating=True)
		self._counter[entity] += 1
		prefix = "".join(w[0] for w in ent.doctype.split()).upper()
		row = {ent.aliases.get(k, k): copy.deepcopy(v) for k, v in values.items()}
		row.update(name=f"{prefix}-MEM-{self._counter[entity]:05d}", docstatus=0, owner=self.user)
		self._touch(row)
		self._rows(entity).append(row)
		return self._canonical(ent, row)

	def update(self, entity: str, name: str, values: dict) -> dict:
		self.calls.append(("update", entity))
		ent = self._entity(entity, "write")
		to_frappe_values(ent, values, creating=False)
		row = self._find(ent, name)
		if row.get("docstatus", 0) != 0:
			raise ValidationFailed(f"Cannot edit {ent.doctype} {name}: it is submitted or cancelled.")
		row.update({ent.aliases.get(k, k): copy.deepcopy(v) for k, v in values.items()})
		self._touch(row)
		return self._canonical(ent, row)

	def submit(self, entity: str, name: str) -> dict:
		return self._move(entity, name, "submit", 0, 1)

	def cancel(self, entity: str, name: str) -> dict:
		return self._move(entity, name, "cancel", 1, 2)

	def _move(self, entity, name, action, before, after) -> dict:
		self.calls.append((action, entity))
		ent = self._entity(entity, action)
		if not ent.submittable:
			raise ValidationFailed(f"{ent.doctype} is not submittable.")
		row = self._find(ent, name)
		if row.get("docstatus", 0) != before:
			raise ValidationFailed(f"Cannot {action} {ent.doctype} {name} in its current state.")
		# As the site's connector: not past an active workflow the desk would not offer it under.
		refusal = workflow_refusal(self.workflow(entity), action)
		if refusal:
			raise ValidationFailed(f"{ent.doctype} {name}: {refusal}")
		row["docstatus"] = after
		self._touch(row)
		return self._canonical(ent, row)

	# --- reports ------------------------------------------------------------------------

	def _may_run(self, spec: dict) -> bool:
		roles = spec.get("roles")
		return roles is None or bool(set(roles) & self.roles)

	def list_reports(self) -> list[dict]:
		return [
			{
				"name": name,
				"module": spec.get("module", ""),
				"type": spec.get("type", "Script Report"),
				"ref_doctype": spec.get("ref_doctype"),
				"filters": spec.get("filters", []),
			}
			for name, spec in self.reports.items()
			if self._may_run(spec)
		]

	def run_report(self, report: str, filters: dict | None = None) -> dict:
		self.calls.append(("run_report", report))
		spec = self.reports.get(report)
		if spec is None:
			raise NotFound(f"Report {report} not found")
		if not self._may_run(spec):
			raise PermissionDenied(f"You don't have access to Report: {report}")
		filters = to_report_filters(spec.get("filters", []), filters)
		rows = spec["rows"](filters) if callable(spec.get("rows")) else copy.deepcopy(spec.get("rows", []))
		return {
			"report": report,
			"columns": copy.deepcopy(spec.get("columns", [])),
			"rows": rows,
			"filters": filters,
		}

	# --- workflow -----------------------------------------------------------------------

	def workflow(self, entity: str, name: str | None = None) -> dict | None:
		ent = self._entity(entity)
		spec = self.workflows.get(entity)
		if spec is None:
			return None
		out = {
			"workflow": spec["name"],
			"state_field": spec.get("state_field", "workflow_state"),
			"states": copy.deepcopy(spec.get("states", [])),
			"transitions": copy.deepcopy(spec.get("transitions", [])),
		}
		if name is not None:
			row = self._find(ent, name)
			state = row.get(out["state_field"]) or (out["states"][0]["state"] if out["states"] else None)
			out["name"] = name
			out["state"] = state
			out["actions"] = [
				{"action": t["action"], "next_state": t["next_state"]}
				for t in spec.get("transitions", [])
				if t["state"] == state and t.get("allowed") in self.roles
			]
		return out

	def apply_workflow(self, entity: str, name: str, action: str) -> dict:
		self.calls.append(("apply_workflow", entity))
		current = self.workflow(entity, name)
		if current is None:
			raise ToolError(f"{entity} has no active workflow")
		match = next((a for a in current["actions"] if a["action"] == action), None)
		if match is None:
			raise PermissionDenied(f"Not a valid Workflow Action for {self.user}: {action}")
		ent = self.model.entity(entity)
		row = self._find(ent, name)
		row[current["state_field"]] = match["next_state"]
		return self._canonical(ent, row)


# --- filter and sort semantics (mirroring frappe's SQL) ---------------------------------


def _blank(value):
	return "" if value is None else value


def _compare(a, b):
	"""Like SQL with ifnull: None is empty, numbers compare as numbers when both sides are numeric."""
	a, b = _blank(a), _blank(b)
	try:
		if isinstance(a, (int, float)) or isinstance(b, (int, float)):
			a, b = float(a or 0), float(b or 0)
	except (TypeError, ValueError):
		a, b = str(a), str(b)
	if type(a) is not type(b):
		a, b = str(a), str(b)
	return (a > b) - (a < b)


def _like(value, pattern) -> bool:
	glob = like_pattern(pattern).replace("*", "[*]").replace("?", "[?]").replace("%", "*").replace("_", "?")
	return fnmatch.fnmatchcase(str(_blank(value)).lower(), glob.lower())


def _test(value, op: str, target) -> bool:
	if op == "=":
		return _compare(value, target) == 0
	if op == "!=":
		return _compare(value, target) != 0
	if op in (">", ">=", "<", "<="):
		c = _compare(value, target)
		return {">": c > 0, ">=": c >= 0, "<": c < 0, "<=": c <= 0}[op]
	if op == "in":
		return any(_compare(value, t) == 0 for t in target)
	if op == "not in":
		return all(_compare(value, t) != 0 for t in target)
	if op == "like":
		return _like(value, target)
	if op == "not like":
		return not _like(value, target)
	if op == "between":
		return _compare(value, target[0]) >= 0 and _compare(value, target[1]) <= 0
	if op == "is":
		return (_blank(value) != "") == (target == "set")
	raise ToolError(f"Unknown operator {op}")


def _matches(row: dict, conditions) -> bool:
	by_child: dict[str, list] = defaultdict(list)
	for cond in conditions:
		if cond.child is None:
			if not _test(row.get(cond.field.name), cond.op, cond.value):
				return False
		else:
			by_child[cond.child.name].append(cond)
	# One joined child row must satisfy every condition on its table, as in the SQL join.
	for child_name, conds in by_child.items():
		if not any(
			all(_test(c.get(x.field.name), x.op, x.value) for x in conds) for c in row.get(child_name) or []
		):
			return False
	return True


def _explode(ent: Entity, rows: list[dict], names: list[str], conditions=()) -> list[dict]:
	"""One row per child row when child fields are asked for (the SQL join), with `child.field` keys.

	As in the join's WHERE, conditions on that child table keep only the child rows that satisfy them.
	"""
	children = {n.split(".", 1)[0] for n in names if "." in n}
	if not children:
		return rows
	child = next(iter(children))
	on_child = [c for c in conditions if c.child is not None and c.child.name == child]
	out = []
	for row in rows:
		for crow in row.get(child) or []:
			if not all(_test(crow.get(c.field.name), c.op, c.value) for c in on_child):
				continue
			flat = dict(row)
			flat.update({f"{child}.{k}": v for k, v in crow.items()})
			out.append(flat)
	return out


def _distinct(rows: list[dict]) -> list[dict]:
	seen, out = set(), []
	for row in rows:
		key = tuple(sorted((k, repr(v)) for k, v in row.items()))
		if key not in seen:
			seen.add(key)
			out.append(row)
	return out


def _sort(ent: Entity, rows: list[dict], order_by: str | None, extra: tuple[str, ...] = ()) -> list[dict]:
	if not order_by:
		return rows
	clauses = []
	for clause in order_by.split(","):
		words = clause.split()
		name, direction = words[0], (words[1].lower() if len(words) > 1 else "asc")
		if name not in extra and name not in ("modified", "created"):
			ent.resolve(name)
		clauses.append((ent.aliases.get(name, name), direction == "desc"))
	for name, desc in reversed(clauses):
		rows = sorted(rows, key=lambda r: _SortKey(r.get(name)), reverse=desc)
	return rows


class _SortKey:
	def __init__(self, value):
		self.value = value

	def __lt__(self, other):
		return _compare(self.value, other.value) < 0


def _apply(fn: str, values: list, field: str | None):
	if fn == "count":
		return len(values) if not field else sum(1 for v in values if v is not None)
	nums = [float(v) for v in values if v is not None]
	if not nums:
		return None
	if fn == "sum":
		return sum(nums)
	if fn == "avg":
		return sum(nums) / len(nums)
	return min(nums) if fn == "min" else max(nums)
