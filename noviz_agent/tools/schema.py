"""`schema.describe`: an entity's fields in canonical names, for building filters and values."""

from __future__ import annotations

from noviz_agent.connectors.base import AGGREGATE_FUNCTIONS, OPERATORS
from noviz_agent.connectors.model import ACTION_PERMISSION, load_model
from noviz_agent.engine.errors import NotFound, PermissionDenied
from noviz_agent.engine.tools import Tool


def describe(args: dict, session) -> dict:
	key = args["entity"]
	ent = load_model().entity(key)
	conn = session.connector
	if key not in conn.entities():
		raise NotFound(f"{ent.label} ({ent.doctype}) is not installed on this site.")
	granted = conn.permissions(key)
	if "read" not in granted:
		raise PermissionDenied(f"{session.user} does not have permission to read {ent.doctype}.")
	meta = conn.meta(key)
	return {
		"entity": ent.key,
		"doctype": ent.doctype,
		"label": ent.label,
		"module": ent.module,
		"description": ent.description,
		"title_field": ent.title_field,
		"date_field": ent.date_field,
		"default_list_fields": ent.default_list_fields(),
		"fields": meta["fields"],
		"children": meta.get("children", {}),
		"aliases": ent.aliases,
		"writable": list(ent.writable),
		"filter_operators": list(OPERATORS),
		"aggregate_functions": list(AGGREGATE_FUNCTIONS),
		"actions": [
			f"{ent.key}.{a}"
			for a in ent.actions
			if ACTION_PERMISSION[a] in granted and session.may_use(f"{ent.key}.{a}")
		],
	}


def tools() -> list[Tool]:
	keys = list(load_model().entities)
	return [
		Tool(
			name="schema.describe",
			description=(
				"Describe an entity's fields in the names tools accept: type, label, linked entity and the "
				"allowed values of choice fields (e.g. every status), child tables (items.item), the filter "
				"operators and the tools this person may use on it. Call before filtering on a field whose "
				"values you are unsure of."
			),
			module="schema",
			parameters={
				"type": "object",
				"properties": {
					"entity": {"enum": keys, "description": "Canonical entity key, e.g. sales_invoice"}
				},
				"required": ["entity"],
				"additionalProperties": False,
			},
			handler=describe,
			tags=("spine",),
			trusted_output=True,
		)
	]
