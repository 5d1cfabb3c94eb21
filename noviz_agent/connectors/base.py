"""The connector contract: how the engine reaches the system of record.

Every part of the engine depends on this interface and nothing else. It speaks canonical
names (entities like `sales_invoice`, fields like `date`, `total`) and a small canonical
filter language, and returns canonical rows. A connector always acts as one person: it
never widens what that person may see or do.

Filters are a list of conditions, each an object `{"field", "op", "value"}` (the form tool
schemas describe to the model) or a `[field, op, value]` triple (the form code writes);
a dict of `field: value` means equality. `normalise_filters` turns them all into triples,
the one place the forms meet. Operators: `=`, `!=`, `>`, `>=`, `<`, `<=`, `in`, `not in`, `like`,
`not like`, `between` (value is `[low, high]`), `is` (value `"set"` or `"not set"`).

Aggregate metrics are `{"fn": "sum"|"count"|"avg"|"min"|"max", "field": name, "as": alias}`;
`count` may omit `field`.

Failures raise the engine's named errors (`noviz_agent.engine.errors`): `PermissionDenied`
with the system's own message, `NotFound`, `ValidationFailed`, or `ToolError`.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

OPERATORS = ("=", "!=", ">", ">=", "<", "<=", "in", "not in", "like", "not like", "between", "is")
AGGREGATE_FUNCTIONS = ("sum", "count", "avg", "min", "max")
PERMISSION_TYPES = ("read", "create", "write", "submit", "cancel")

Filters = list | dict | None


def filters_schema(fields: list[str] | None = None) -> dict:
	"""JSON schema of the filter language as tools offer it: a list of `{field, op, value}` objects.

	Every array has `items` and every object is closed, so the strictest provider rules hold;
	`fields` (an entity's field names) becomes the enum of `field`, or any name when None.
	"""
	field: dict = {"type": "string", "description": "Field name; child-table fields as items.item"}
	if fields is not None:
		field["enum"] = list(fields)
	condition = {
		"type": "object",
		"properties": {
			"field": field,
			"op": {"type": "string", "enum": list(OPERATORS)},
			"value": {
				"description": 'A list for "in"/"not in", [low, high] for "between", "set" or "not set" for "is"',
				"anyOf": [
					{"type": "string"},
					{"type": "number"},
					{"type": "boolean"},
					{"type": "array", "items": {"type": ["string", "number"]}},
				],
			},
		},
		"required": ["field", "op", "value"],
		"additionalProperties": False,
	}
	return {
		"type": "array",
		"description": 'Conditions, all of which must hold, e.g. [{"field": "status", "op": "=", "value": "Unpaid"}, '
		'{"field": "date", "op": ">=", "value": "2024-01-01"}]. "like" matches part of a value.',
		"items": condition,
	}


@runtime_checkable
class Connector(Protocol):
	"""One person's view of the system of record, in canonical terms."""

	user: str

	def entities(self) -> list[str]:
		"""Canonical entities whose DocType exists on this site."""
		...

	def permissions(self, entity: str) -> set[str]:
		"""Which of read/create/write/submit/cancel this person holds on the entity."""
		...

	def list(
		self,
		entity: str,
		*,
		fields: list[str] | None = None,
		filters: Filters = None,
		order_by: str | None = None,
		limit: int = 20,
		offset: int = 0,
	) -> list[dict]:
		"""Rows the person may read, canonical field names, at most `limit`."""
		...

	def get(self, entity: str, name: str) -> dict:
		"""One record with its child tables, canonical names."""
		...

	def version(self, entity: str, name: str) -> str:
		"""The record's current version (its `modified` timestamp as text), read from the record itself
		as the person, whatever the entity map lists; raises NotFound or PermissionDenied like `get`.

		A proposal to change a record is signed for this version, and its confirm is refused when
		the version moved since: nobody overwrites a change they have not seen.
		"""
		...

	def count(self, entity: str, filters: Filters = None) -> int: ...

	def aggregate(
		self,
		entity: str,
		*,
		metrics: list[dict],
		group_by: list[str] | None = None,
		filters: Filters = None,
		order_by: str | None = None,
		limit: int | None = None,
	) -> list[dict]:
		"""Group-by totals computed by the system under the person's permissions."""
		...

	def create(self, entity: str, values: dict) -> dict: ...

	def update(self, entity: str, name: str, values: dict) -> dict: ...

	def submit(self, entity: str, name: str) -> dict: ...

	def cancel(self, entity: str, name: str) -> dict: ...

	def meta(self, entity: str) -> dict:
		"""The entity's fields: canonical name, label, type, options/links, required."""
		...

	def list_reports(self) -> list[dict]:
		"""Query and script reports this person may run: name, module, type, filters."""
		...

	def run_report(self, report: str, filters: dict | None = None) -> dict:
		"""`{"columns": [...], "rows": [...]}` as the person."""
		...

	def workflow(self, entity: str, name: str | None = None) -> dict | None:
		"""The active workflow (states, transitions) and, for a record, its state and this person's actions."""
		...

	def apply_workflow(self, entity: str, name: str, action: str) -> dict: ...


def workflow_refusal(workflow: dict | None, action: str) -> str | None:
	"""Why `action` is not offered directly under this active workflow, as in the desk; None when it is.

	Under a workflow the desk offers no Submit: a document is submitted by a workflow action, with
	its roles, conditions and self-approval rule. Cancel stays offered unless one of the workflow's
	transitions leads to a cancelled state (frappe's `can_cancel_document`)."""
	if not workflow or action not in ("submit", "cancel"):
		return None
	if action == "cancel":
		cancelling = {s["state"] for s in workflow.get("states", []) if str(s.get("doc_status")) == "2"}
		if not any(t.get("next_state") in cancelling for t in workflow.get("transitions", [])):
			return None
	verb = "submitted" if action == "submit" else "cancelled"
	return (
		f'it follows the workflow "{workflow["workflow"]}", so it is {verb} through the workflow\'s '
		"actions, as in the desk, not directly. workflow.describe lists the actions open to you on it "
		"and workflow.apply proposes one."
	)


def normalise_filters(filters: Filters) -> list[list[Any]]:
	"""Canonical filters as a list of triples; raises ValueError naming the bad part."""
	if filters is None:
		return []
	if isinstance(filters, dict):
		return [[key, "=", value] for key, value in filters.items()]
	if not isinstance(filters, list):
		raise ValueError('Filters must be a list of {"field": ..., "op": ..., "value": ...} conditions')
	triples = []
	for item in filters:
		if isinstance(item, dict):
			if set(item) - {"field", "op", "value"} or not {"field", "op"} <= set(item):
				raise ValueError(
					f'Each filter must be {{"field": ..., "op": ..., "value": ...}}; got {item!r}'
				)
			item = [item["field"], item["op"], item.get("value")]
		if not isinstance(item, (list, tuple)) or len(item) != 3:
			raise ValueError(f'Each filter must be {{"field": ..., "op": ..., "value": ...}}; got {item!r}')
		field, op, value = item
		op = str(op).lower().strip()
		if op not in OPERATORS:
			raise ValueError(f"Unknown filter operator {item[1]!r}; use one of {', '.join(OPERATORS)}")
		if op == "between" and (not isinstance(value, (list, tuple)) or len(value) != 2):
			raise ValueError(f"'between' on {field!r} needs [low, high]")
		if op in ("in", "not in") and not isinstance(value, (list, tuple)):
			raise ValueError(f"'{op}' on {field!r} needs a list of values")
		if op == "is" and value not in ("set", "not set"):
			raise ValueError(f"'is' on {field!r} takes 'set' or 'not set'")
		triples.append([field, op, value])
	return triples
