"""Entity tools generated from the canonical model: `<entity>.list/get/count/create/update/submit/cancel`.

One table of builders, one row per action; every entity gets the actions its map allows.
Results are shaped for the renderer (`columns` + `rows` with `_link`) and lists never hand
the model more than a page: the total comes with it, and the note says where sums come from.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from noviz_agent.connectors.base import filters_schema as base_filters_schema
from noviz_agent.connectors.base import workflow_refusal
from noviz_agent.connectors.dataset_reader import company_filters
from noviz_agent.connectors.model import ACTION_PERMISSION, Entity, Field, doc_url, load_model
from noviz_agent.connectors.translate import to_frappe_values
from noviz_agent.engine.errors import PermissionDenied, ToolError
from noviz_agent.engine.tools import Tool

RESULT_TTL_SECONDS = 60 * 60
ORDER_BY_PATTERN = r"^[a-z][a-z0-9_.]*( (asc|desc|ASC|DESC))?(, ?[a-z][a-z0-9_.]*( (asc|desc|ASC|DESC))?)*$"

_NUMBER_TYPES = {"Float", "Currency", "Percent"}
_INTEGER_TYPES = {"Int", "Duration"}


# --- parameter schemas ----------------------------------------------------------------


def field_names(ent: Entity) -> list[str]:
	"""Names a request may use on this entity: fields, `child.field` paths and aliases."""
	return ent.field_names() + [a for a in ent.aliases if a not in ent.fields]


def filters_schema(ent: Entity) -> dict:
	return base_filters_schema(field_names(ent))


def value_schema(field: Field) -> dict:
	"""JSON schema of one writable field, from its DocType type."""
	if field.choices:
		schema: dict = {"enum": list(field.choices)}
	elif field.type in _NUMBER_TYPES:
		schema = {"type": "number"}
	elif field.type in _INTEGER_TYPES:
		schema = {"type": "integer"}
	elif field.type == "Check":
		schema = {"type": ["integer", "boolean"], "enum": [0, 1, True, False]}
	elif field.type == "Date":
		schema = {"type": "string", "format": "date", "description": "YYYY-MM-DD"}
	else:
		schema = {"type": "string"}
	label = f"{field.label}" + (f" (a {field.link} name)" if field.link else "")
	schema.setdefault("description", label)
	return schema


def values_schema(ent: Entity, *, creating: bool) -> dict:
	properties: dict[str, dict] = {}
	for name in ent.writable:
		if name in ent.children:
			child = ent.children[name]
			properties[name] = {
				"type": "array",
				"minItems": 1,
				"description": f"{child.label} rows",
				"items": {
					"type": "object",
					"properties": {c: value_schema(child.fields[c]) for c in child.writable},
					"additionalProperties": False,
				},
			}
		else:
			properties[name] = value_schema(ent.fields[name])
	schema = {"type": "object", "properties": properties, "additionalProperties": False, "minProperties": 1}
	if creating and ent.required:
		schema["required"] = list(ent.required)
	return schema


def _params(properties: dict, required: list[str] | None = None) -> dict:
	schema = {"type": "object", "properties": properties, "additionalProperties": False}
	if required:
		schema["required"] = required
	return schema


NAME_PARAM = {
	"type": "string",
	"minLength": 1,
	"description": "The record's ID (name), e.g. from a list result",
}


# --- result shapes -------------------------------------------------------------------


def columns(ent: Entity, names: list[str]) -> list[dict]:
	out = []
	for name in names:
		child, field = ent.resolve(name)
		label = f"{child.label}: {field.label}" if child else field.label
		out.append({"key": name, "label": label or name})
	return out


def _with_links(ent: Entity, rows: list[dict]) -> list[dict]:
	# A connector that knows a better link (another system's own address) keeps it.
	return [{"_link": doc_url(ent.doctype, row["name"]), **row} if row.get("name") else row for row in rows]


def _record(ent: Entity, doc: dict) -> dict:
	"""A record for the model and the card renderer: empty values dropped, children kept as tables."""
	fields = {
		k: v for k, v in doc.items() if v not in (None, "", []) and k not in ent.children and k != "_link"
	}
	tables = {}
	for name, child in ent.children.items():
		rows = doc.get(name) or []
		if rows:
			tables[name] = {
				"columns": [{"key": k, "label": f.label} for k, f in child.fields.items()],
				"rows": [{k: v for k, v in r.items() if v not in (None, "")} for r in rows],
			}
	title = doc.get(ent.title_field) if ent.title_field else None
	return {
		"entity": ent.key,
		"doctype": ent.doctype,
		"name": doc.get("name"),
		"title": title or doc.get("name"),
		"_link": doc.get("_link") or doc_url(ent.doctype, doc.get("name")),
		"fields": fields,
		"tables": tables,
	}


# --- handlers ------------------------------------------------------------------------


def _total(conn, ent: Entity, filters, rows: list[dict], size: int, offset: int) -> int:
	"""How many records match: a short first page already holds them all, so no count is run.

	Only the first page: rows read through a child table may repeat a record, so a later
	page's offset counts rows, not records. The distinct names are what a count would give.
	"""
	if offset == 0 and len(rows) < size:
		return len({row.get("name") for row in rows})
	return conn.count(ent.key, filters)


def _list(ent: Entity) -> Callable:
	def handler(args: dict, session) -> dict:
		size = session.limits.page_size
		page = args.get("page", 1)
		names = list(args.get("fields") or ent.default_list_fields())
		if "name" not in names:
			names.insert(0, "name")
		filters, scope = company_filters(session, ent.key, args.get("filters"), required=False)
		order_by = args.get("order_by")
		conn = session.connector
		offset = (page - 1) * size
		rows = conn.list(ent.key, fields=names, filters=filters, order_by=order_by, limit=size, offset=offset)
		total = _total(conn, ent, filters, rows, size, offset)
		pages = max(1, -(-total // size))
		result = {
			"entity": ent.key,
			"doctype": ent.doctype,
			"columns": columns(ent, names),
			"rows": _with_links(ent, rows),
			"total": total,
			**(scope.describe() if scope else {}),
			"page": {"number": page, "size": size, "pages": pages, "has_more": page < pages},
			"note": (
				f"Showing {len(rows)} of {total} {ent.label} records (page {page} of {pages}). This is one page, "
				f"not the whole set: for sums or averages use analytics.aggregate, for counts {ent.key}.count; "
				"never add up rows from a page."
			),
		}
		if total > size:
			result_id = f"r_{secrets.token_urlsafe(9)}"
			session.results.put(
				result_id,
				{
					"kind": "query",
					"user": session.user,
					"entity": ent.key,
					"fields": names,
					"filters": filters,
					"order_by": order_by,
					"total": total,
					"columns": result["columns"],
				},
				RESULT_TTL_SECONDS,
			)
			result["result_id"] = result_id
		return result

	return handler


def _count(ent: Entity) -> Callable:
	def handler(args: dict, session) -> dict:
		filters, scope = company_filters(session, ent.key, args.get("filters"), required=False)
		return {
			"entity": ent.key,
			"doctype": ent.doctype,
			**(scope.describe() if scope else {}),
			"count": session.connector.count(ent.key, filters),
			"filters": filters or [],
		}

	return handler


def _get(ent: Entity) -> Callable:
	def handler(args: dict, session) -> dict:
		return _record(ent, session.connector.get(ent.key, args["name"]))

	return handler


def _require(ent: Entity, action: str, session) -> None:
	need = ACTION_PERMISSION[action]
	if need not in session.connector.permissions(ent.key):
		raise PermissionDenied(f"{session.user} does not have permission to {need} {ent.doctype}.")


def _labelled(ent: Entity, values: dict) -> tuple[list[dict], dict]:
	"""Preview fields with their labels, types and link targets; child rows as small labelled tables."""
	fields, tables = [], {}
	for key, value in values.items():
		name = ent.aliases.get(key, key)
		if name in ent.children:
			child = ent.children[name]
			keys = [k for k in child.writable if any(k in row for row in value)]
			tables[name] = {
				"label": child.label,
				"columns": [
					{"key": k, "label": child.fields[k].label, "type": child.fields[k].type} for k in keys
				],
				"rows": value,
			}
		else:
			f = ent.fields[name]
			item = {"key": name, "label": f.label, "value": value, "type": f.type}
			if f.link:
				item["options"] = f.link
			if name in ent.required:
				item["required"] = True
			fields.append(item)
	return fields, tables


def _missing(ent: Entity, values: dict, *, creating: bool) -> list[str]:
	"""Labels of mandatory fields still empty, which ERPNext will ask for before it saves."""
	given = {ent.aliases.get(k, k): v for k, v in values.items()}
	names = ent.required if creating else [n for n in ent.required if n in given]
	return [
		ent.fields[n].label if n in ent.fields else n
		for n in names
		if given.get(n) in (None, "", []) and n not in ent.children
	]


def _quoted(ent: Entity, values: dict) -> str:
	title = values.get(ent.title_field) if ent.title_field else None
	return f" '{title}'" if title not in (None, "") else ""


def _preview_create(ent: Entity) -> Callable:
	def preview(args: dict, session) -> dict:
		_require(ent, "create", session)
		to_frappe_values(ent, args["values"], creating=True)
		fields, tables = _labelled(ent, args["values"])
		details = [
			f"{f['label'].lower()} {f['value']}"
			for f in fields
			if f["key"] != ent.title_field and not isinstance(f["value"], list | dict)
		][:2]
		rows = sum(len(t["rows"]) for t in tables.values())
		effect = f"Creates {ent.label.lower()}{_quoted(ent, args['values'])}"
		effect += (" with " + " and ".join(details)) if details else ""
		effect += f" ({rows} row{'s' if rows != 1 else ''})" if rows else ""
		return {
			"action": "create",
			"entity": ent.key,
			"doctype": ent.doctype,
			"summary": f"Create a new {ent.label}",
			"effect": effect + ".",
			"fields": fields,
			"tables": tables,
			"missing": _missing(ent, args["values"], creating=True),
		}

	return preview


def _preview_update(ent: Entity) -> Callable:
	def preview(args: dict, session) -> dict:
		_require(ent, "update", session)
		to_frappe_values(ent, args["values"], creating=False)
		current = session.connector.get(ent.key, args["name"])
		fields, tables = _labelled(ent, args["values"])
		for item in fields:
			item["before"] = current.get(item["key"])
		changed = [f for f in fields if f["before"] != f["value"]]
		effect = f"Changes {ent.label.lower()} {args['name']}: " + "; ".join(
			f"{f['label'].lower()} from {f['before'] if f['before'] not in (None, '') else '(empty)'} to {f['value']}"
			for f in changed[:3]
		)
		return {
			"action": "update",
			"entity": ent.key,
			"doctype": ent.doctype,
			"name": args["name"],
			"_link": doc_url(ent.doctype, args["name"]),
			"summary": f"Change {ent.label} {args['name']}",
			"effect": (effect if changed else f"Leaves {ent.label.lower()} {args['name']} as it is") + ".",
			"fields": fields,
			"tables": tables,
			"missing": _missing(ent, args["values"], creating=False),
		}

	return preview


def _preview_state(ent: Entity, action: str) -> Callable:
	def preview(args: dict, session) -> dict:
		_require(ent, action, session)
		# Another system's entities ("helpdesk.ticket") are not under this site's workflows.
		if "." not in ent.key:
			refusal = workflow_refusal(session.connector.workflow(ent.key), action)
			if refusal:
				raise ToolError(f"{ent.label} {args['name']}: {refusal}")
		record = _record(ent, session.connector.get(ent.key, args["name"]))
		docstatus = record["fields"].get("docstatus", 0)
		if action == "submit" and docstatus != 0:
			raise ToolError(f"{ent.label} {args['name']} is not a draft, so it cannot be submitted.")
		if action == "cancel" and docstatus != 1:
			raise ToolError(f"{ent.label} {args['name']} is not submitted, so it cannot be cancelled.")
		shown = [k for k in ent.default_list_fields() if k in record["fields"]]
		return {
			"action": action,
			"entity": ent.key,
			"doctype": ent.doctype,
			"name": args["name"],
			"_link": record["_link"],
			"summary": f"{action.title()} {ent.label} {args['name']}",
			"effect": (
				f"Submits {ent.label.lower()} {args['name']}: it can then only be cancelled, not edited."
				if action == "submit"
				else f"Cancels {ent.label.lower()} {args['name']}: its entries are reversed and it stays as cancelled."
			),
			"fields": [
				{
					"key": k,
					"label": ent.fields[k].label,
					"value": record["fields"][k],
					"type": ent.fields[k].type,
					**({"options": ent.fields[k].link} if ent.fields[k].link else {}),
				}
				for k in shown
			],
		}

	return preview


# What each write does on the connector once the person confirms, and the word its result uses.
_WRITES: dict[str, tuple[Callable, str]] = {
	"create": (lambda conn, ent, args: conn.create(ent.key, args["values"]), "Created"),
	"update": (lambda conn, ent, args: conn.update(ent.key, args["name"], args["values"]), "Updated"),
	"submit": (lambda conn, ent, args: conn.submit(ent.key, args["name"]), "Submitted"),
	"cancel": (lambda conn, ent, args: conn.cancel(ent.key, args["name"]), "Cancelled"),
}


def _write(ent: Entity, action: str) -> Callable:
	run, verb = _WRITES[action]

	def handler(args: dict, session) -> dict:
		record = _record(ent, run(session.connector, ent, args))
		record["message"] = f"{verb} {ent.label} {record['name']}"
		return record

	return handler


# --- the table of actions --------------------------------------------------------------


def _describe(ent: Entity, action: str) -> str:
	also = f" Also called: {', '.join(ent.synonyms[:8])}." if ent.synonyms else ""
	label = ent.label
	texts = {
		"list": f"List {label} records: {ent.description}{also} Choose fields, filters and order_by; returns one "
		f"page of rows with links, the total count and the page number. Not for totals: use analytics.aggregate "
		f"for sums/averages and {ent.key}.count for counts. Default columns: "
		f"{', '.join(ent.default_list_fields())}.",
		"get": f"One {label} by its ID with all mapped fields and child tables. {ent.description}",
		"count": f"How many {label} records match the filters (counted by the system, permission-checked).",
		"create": f"Propose a new {label}. The person sees the exact values and must confirm; nothing is written "
		f"before that. Writable fields: {', '.join(ent.writable)}.",
		"update": f"Propose changes to {'a draft' if ent.submittable else 'a'} {label}. The person sees "
		"before/after values and must confirm.",
		"submit": f"Propose submitting a draft {label} (makes it final and posts its effects). The person must confirm.",
		"cancel": f"Propose cancelling a submitted {label} (reverses its effects). The person must confirm.",
	}
	return texts[action]


def _list_parameters(ent: Entity) -> dict:
	return _params(
		{
			"fields": {
				"type": "array",
				"items": {"enum": field_names(ent)},
				"uniqueItems": True,
				"description": "Columns to return; name is always included",
			},
			"filters": filters_schema(ent),
			"order_by": {
				"type": "string",
				"pattern": ORDER_BY_PATTERN,
				"description": "e.g. 'date desc' or 'total desc, customer'",
			},
			"page": {"type": "integer", "minimum": 1, "default": 1},
		}
	)


@dataclass(frozen=True)
class Action:
	"""How one entity action becomes a tool: its handler, its preview (writes only) and its parameters."""

	handler: Callable[[Entity], Callable]
	parameters: Callable[[Entity], dict]
	preview: Callable[[Entity], Callable] | None = None

	@property
	def writes(self) -> bool:
		return self.preview is not None


def _by_name(ent: Entity) -> dict:
	return _params({"name": NAME_PARAM}, ["name"])


ACTION_TABLE: dict[str, Action] = {
	"list": Action(_list, _list_parameters),
	"get": Action(_get, _by_name),
	"count": Action(_count, lambda ent: _params({"filters": filters_schema(ent)})),
	"create": Action(
		lambda ent: _write(ent, "create"),
		lambda ent: _params({"values": values_schema(ent, creating=True)}, ["values"]),
		_preview_create,
	),
	"update": Action(
		lambda ent: _write(ent, "update"),
		lambda ent: _params(
			{"name": NAME_PARAM, "values": values_schema(ent, creating=False)}, ["name", "values"]
		),
		_preview_update,
	),
	"submit": Action(lambda ent: _write(ent, "submit"), _by_name, lambda ent: _preview_state(ent, "submit")),
	"cancel": Action(lambda ent: _write(ent, "cancel"), _by_name, lambda ent: _preview_state(ent, "cancel")),
}


def entity_tools(ent: Entity) -> list[Tool]:
	"""The tools one entity's map allows, one row of ACTION_TABLE each."""
	tools = []
	for name in ent.actions:
		action = ACTION_TABLE[name]
		tools.append(
			Tool(
				name=f"{ent.key}.{name}",
				description=_describe(ent, name),
				module=ent.module,
				parameters=action.parameters(ent),
				handler=action.handler(ent),
				writes=action.writes,
				preview=action.preview(ent) if action.preview else None,
				entity=ent.key,
				action=name,
				tags=("entity", ent.doctype),
				permission=ACTION_PERMISSION[name],
			)
		)
	return tools


def tools() -> list[Tool]:
	return [tool for ent in load_model() for tool in entity_tools(ent)]
