"""Canonical requests → the exact arguments of frappe calls, and frappe rows → canonical rows.

Pure functions: no frappe import, tested everywhere. Every name the model sends is checked
against the entity map before it reaches a query, so model text never becomes SQL; what
comes out is table-qualified fieldnames, Frappe filter lists and a fixed set of aggregate
functions that `frappe.get_list` applies under the person's permissions.
"""

from __future__ import annotations

import datetime
import decimal
import re
from dataclasses import dataclass
from typing import Any

from noviz_agent.connectors.base import AGGREGATE_FUNCTIONS, normalise_filters
from noviz_agent.connectors.model import Child, Entity, Field, doc_url
from noviz_agent.engine.errors import ToolError

__all__ = [
	"Condition",
	"FIELD_OBJECTS",
	"SQL_TEXT",
	"AggregateQuery",
	"CountQuery",
	"aggregate_query",
	"count_query",
	"syntax_for",
	"doc_to_canonical",
	"doc_url",
	"like_pattern",
	"parse_js_filters",
	"plain",
	"list_args",
	"parse_filters",
	"report_to_canonical",
	"rows_to_canonical",
	"to_frappe_fields",
	"to_frappe_filters",
	"to_frappe_order_by",
	"to_frappe_values",
	"to_report_filters",
]

ALIAS_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
# Words the database would read as syntax if used bare as a column alias.
RESERVED_ALIASES = frozenset(
	"select from where group order by limit offset as and or not in is null like between desc asc "
	"range key keys index table join on union having distinct case when then else end lines rows".split()
)
MAX_PAGE = 500


@dataclass(frozen=True)
class Condition:
	"""One validated filter: the canonical name it came as, the child table (if any) and field it means."""

	name: str
	child: Child | None
	field: Field
	op: str
	value: Any


def parse_filters(entity: Entity, filters) -> list[Condition]:
	"""Canonical filters checked against the map; ToolError naming the bad field or operator."""
	try:
		triples = normalise_filters(filters)
	except ValueError as exc:
		raise ToolError(
			f'{exc}. Filters on {entity.key} look like [{{"field": "status", "op": "=", "value": "Unpaid"}}].'
		) from None
	conditions = []
	for name, op, value in triples:
		if not isinstance(name, str):
			raise ToolError(f"A filter field must be a field name, not {name!r}")
		child, field = entity.resolve(name)
		if field.choices and op in ("=", "!=") and value not in field.choices and value not in ("", None):
			raise ToolError(
				f"'{value}' is not a value of {entity.key}.{name}; allowed: {', '.join(field.choices)}"
			)
		conditions.append(Condition(name, child, field, op, value))
	return conditions


def like_pattern(value: Any) -> str:
	"""A `like` value as a pattern: bare words match anywhere, explicit % or _ are kept."""
	text = str(value)
	return text if ("%" in text or "_" in text) else f"%{text}%"


def _column(doctype: str, fieldname: str) -> str:
	return f"`tab{doctype}`.`{fieldname}`"


def to_frappe_filters(entity: Entity, filters) -> list[list]:
	"""Frappe filter lists: `[field, op, value]` on the entity, `[child doctype, field, op, value]` on a child."""
	out = []
	for cond in parse_filters(entity, filters):
		value = cond.value
		if cond.op in ("like", "not like"):
			value = like_pattern(value)
		elif cond.op in ("in", "not in", "between"):
			value = list(value)
		doctype = cond.child.doctype if cond.child else entity.doctype
		out.append([doctype, cond.field.field, cond.op, value])
	return out


def to_frappe_fields(entity: Entity, fields: list[str] | None) -> tuple[list[str], dict[str, str]]:
	"""Fieldnames for get_list, and the map from the keys frappe returns to canonical names.

	The entity's own fields go as bare names: frappe qualifies them itself when a child table is
	joined, and reads a bare name without parsing it (a qualified one goes through its SQL parser,
	about a millisecond per field the first time a process lists that DocType). A child's field is
	qualified with its table and aliased."""
	names = list(fields) if fields else entity.default_list_fields()
	if "name" not in names:
		names.insert(0, "name")
	frappe_fields: list[str] = []
	keymap: dict[str, str] = {}
	for name in names:
		child, field = entity.resolve(name)
		if child is None:
			key = field.field
			if key in keymap:
				continue
			frappe_fields.append(field.field)
		else:
			key = f"{child.name}__{field.name}"
			if key in keymap:
				continue
			frappe_fields.append(f"{_column(child.doctype, field.field)} as {key}")
		keymap[key] = name
	return frappe_fields, keymap


def to_frappe_order_by(entity: Entity, order_by: str | None, aliases: tuple[str, ...] = ()) -> str | None:
	"""`"date desc, total"` → qualified columns; aggregate aliases may be sorted on as they are."""
	if not order_by:
		return None
	parts = []
	for clause in str(order_by).split(","):
		words = clause.split()
		if not words or len(words) > 2:
			raise ToolError(f"order_by takes 'field' or 'field asc|desc', comma separated; got {order_by!r}")
		direction = words[1].lower() if len(words) == 2 else "asc"
		if direction not in ("asc", "desc"):
			raise ToolError(f"Sort direction must be asc or desc, not {words[1]!r}")
		name = words[0]
		if name in aliases:
			parts.append(f"{name} {direction}")
			continue
		child, field = entity.resolve(name)
		doctype = child.doctype if child else entity.doctype
		parts.append(f"{_column(doctype, field.field)} {direction}")
	return ", ".join(parts)


def _page(limit: int, offset: int) -> tuple[int, int]:
	if not isinstance(limit, int) or limit < 1:
		raise ToolError("limit must be a positive whole number")
	if not isinstance(offset, int) or offset < 0:
		raise ToolError("offset must be zero or a positive whole number")
	return min(limit, MAX_PAGE), offset


def list_args(
	entity: Entity,
	*,
	fields: list[str] | None = None,
	filters=None,
	order_by: str | None = None,
	limit: int = 20,
	offset: int = 0,
) -> tuple[dict, dict[str, str]]:
	"""Keyword arguments for `frappe.get_list` and the keymap to read its rows back."""
	frappe_fields, keymap = to_frappe_fields(entity, fields)
	limit, offset = _page(limit, offset)
	default_order = f"{_column(entity.doctype, 'modified')} desc"
	kwargs = {
		"doctype": entity.doctype,
		"fields": frappe_fields,
		"filters": to_frappe_filters(entity, filters),
		"order_by": to_frappe_order_by(entity, order_by) or default_order,
		"limit_start": offset,
		"limit_page_length": limit,
	}
	if any("__" in key for key in keymap):
		# Child rows multiply parents; distinct keeps one row per combination asked for.
		kwargs["distinct"] = True
	return kwargs, keymap


# How `frappe.get_list` takes an aggregate in its fields. Frappe 15 reads SQL text
# ("sum(`tabX`.`f`) as total"); Frappe 16 refuses functions written as text and takes objects
# ({"SUM": "f", "as": "total"}), and has no object for COUNT(DISTINCT ...). The frappe edge says
# which one the running framework takes (edge/frappe_versions.py); nothing here knows versions.
SQL_TEXT = "sql_text"
FIELD_OBJECTS = "field_objects"
SYNTAXES = (SQL_TEXT, FIELD_OBJECTS)


def syntax_for(frappe_version: str | None) -> str:
	"""The aggregate syntax of a Frappe release from its version text ("15.101.1", "16.10.7");
	SQL text when the version is unknown (the older form)."""
	try:
		major = int(str(frappe_version).split(".")[0])
	except (TypeError, ValueError):
		return SQL_TEXT
	return FIELD_OBJECTS if major >= 16 else SQL_TEXT


def _syntax(syntax: str) -> str:
	if syntax not in SYNTAXES:
		raise ValueError(f"unknown aggregate syntax {syntax!r}; use one of {SYNTAXES}")
	return syntax


def _joins_children(entity: Entity, conditions: list[list]) -> bool:
	return any(c[0] != entity.doctype for c in conditions)


@dataclass(frozen=True)
class CountQuery:
	"""A permission-checked count: the `get_list` arguments and how to read the answer.

	A filter on a child table joins its rows, so a document matches once per matching line and is
	counted once (COUNT(DISTINCT name)). Where the framework has no distinct count, the names of the
	matching documents are read (distinct) and counted."""

	kwargs: dict
	by_names: bool = False

	def finish(self, rows: list) -> int:
		if self.by_names:
			return len({r.get("name") if isinstance(r, dict) else r for r in rows})
		if not rows:
			return 0
		row = rows[0]
		value = row.get("count") if isinstance(row, dict) else row[0]
		return int(value or 0)


def count_query(entity: Entity, filters=None, syntax: str = SQL_TEXT) -> CountQuery:
	conditions = to_frappe_filters(entity, filters)
	kwargs = {"doctype": entity.doctype, "filters": conditions, "limit_page_length": 0}
	if _syntax(syntax) == SQL_TEXT:
		kwargs["fields"] = [f"count(distinct {_column(entity.doctype, 'name')}) as count"]
		return CountQuery(kwargs)
	if _joins_children(entity, conditions):
		name = _column(entity.doctype, "name")
		return CountQuery(
			{**kwargs, "fields": [name], "distinct": True, "order_by": f"{name} asc"}, by_names=True
		)
	# Without a join every row is one document: COUNT(*) is the distinct count.
	return CountQuery({**kwargs, "fields": [{"COUNT": "*", "as": "count"}], "order_by": "count desc"})


@dataclass(frozen=True)
class _Metric:
	fn: str
	column: str  # the table-qualified column, or "" for a count of documents
	alias: str
	child: bool  # the column is a child table's


@dataclass(frozen=True)
class AggregateQuery:
	"""Group-by totals as `frappe.get_list` arguments, and how to read its rows back.

	Where the framework cannot count distinct documents over a join with their lines (Frappe 16),
	the query groups by the asked columns *and* the document, and `finish` adds those rows up per
	group: the document count is the number of documents, sums and line counts add, minimum and
	maximum are taken again, and an average is its sum over its count; then sorted and cut as asked."""

	kwargs: dict
	keymap: dict[str, str]
	regroup: tuple[_Metric, ...] = ()
	group_keys: tuple[str, ...] = ()
	order: tuple[tuple[str, bool], ...] = ()
	limit: int = 0

	def finish(self, rows: list[dict]) -> list[dict]:
		if not self.regroup:
			return rows_to_canonical(rows, self.keymap)
		groups: dict[tuple, dict] = {}
		for row in rows:
			key = tuple(row.get(k) for k in self.group_keys)
			acc = groups.setdefault(key, {k: row.get(k) for k in self.group_keys} | {"__docs": 0})
			acc["__docs"] += 1
			for m in self.regroup:
				if not m.column:
					continue
				if m.fn == "avg":
					_add(acc, f"{m.alias}__sum", row.get(f"{m.alias}__sum"))
					_add(acc, f"{m.alias}__count", row.get(f"{m.alias}__count"))
				elif m.fn in ("sum", "count"):
					_add(acc, m.alias, row.get(m.alias))
				else:
					value = row.get(m.alias)
					if value is not None and (acc.get(m.alias) is None or _better(m.fn, value, acc[m.alias])):
						acc[m.alias] = value
		out = []
		for acc in groups.values():
			row = {k: acc[k] for k in self.group_keys}
			for m in self.regroup:
				if not m.column:
					row[m.alias] = acc["__docs"]
				elif m.fn == "avg":
					count = acc.get(f"{m.alias}__count") or 0
					row[m.alias] = (acc.get(f"{m.alias}__sum") or 0) / count if count else None
				else:
					row[m.alias] = acc.get(m.alias)
			out.append(row)
		for key, descending in reversed(self.order):
			present = sorted(
				(r for r in out if r.get(key) is not None), key=lambda r, k=key: r[k], reverse=descending
			)
			out = present + [r for r in out if r.get(key) is None]
		if self.limit:
			out = out[: self.limit]
		return rows_to_canonical(out, self.keymap)


def _add(acc: dict, key: str, value) -> None:
	if value is not None:
		acc[key] = (acc.get(key) or 0) + value


def _better(fn: str, value, current) -> bool:
	return value < current if fn == "min" else value > current


def _field_object(fn: str, column: str, alias: str) -> dict:
	return {"COUNT" if fn == "count" else fn.upper(): column or "*", "as": alias}


def aggregate_query(
	entity: Entity,
	*,
	metrics: list[dict],
	group_by: list[str] | None = None,
	filters=None,
	order_by: str | None = None,
	limit: int | None = None,
	syntax: str = SQL_TEXT,
) -> AggregateQuery:
	"""get_list arguments for group-by totals: only sum/count/avg/min/max over mapped fields."""
	_syntax(syntax)
	if not metrics:
		raise ToolError('Give at least one metric, e.g. {"fn": "sum", "field": "total", "as": "total"}')
	group_fields: list[str] = []
	keymap: dict[str, str] = {}
	group_columns: list[str] = []
	group_keys: list[str] = []
	tables: set[str] = set()
	for name in group_by or []:
		child, field = entity.resolve(name)
		doctype = child.doctype if child else entity.doctype
		tables.add(doctype)
		key = f"{child.name}__{field.name}" if child else field.field
		column = _column(doctype, field.field)
		group_fields.append(f"{column} as {key}" if child else column)
		group_columns.append(column)
		group_keys.append(key)
		keymap[key] = name
	parsed: list[_Metric] = []
	for metric in metrics:
		if not isinstance(metric, dict):
			raise ToolError(f"Each metric is an object with fn, field and as; got {metric!r}")
		fn = str(metric.get("fn", "")).lower()
		if fn not in AGGREGATE_FUNCTIONS:
			raise ToolError(
				f"Unknown aggregate function {metric.get('fn')!r}; use {', '.join(AGGREGATE_FUNCTIONS)}"
			)
		name = metric.get("field")
		if name is None and fn != "count":
			raise ToolError(f"'{fn}' needs a field to work on")
		alias = metric.get("as") or (f"{fn}_{name}".replace(".", "_") if name else fn)
		if not ALIAS_PATTERN.match(alias) or alias in RESERVED_ALIASES or alias in keymap.values():
			raise ToolError(f"Metric alias {alias!r} must be a new snake_case name such as 'total_amount'")
		if name is None or name == "name":
			parsed.append(_Metric(fn, "", alias, False))
		else:
			child, field = entity.resolve(name)
			doctype = child.doctype if child else entity.doctype
			tables.add(doctype)
			parsed.append(_Metric(fn, _column(doctype, field.field), alias, child is not None))
		keymap[alias] = alias
	conditions = to_frappe_filters(entity, filters)
	_refuse_fan_out(entity, metrics, tables | {c[0] for c in conditions})
	for doctype in sorted(tables - {entity.doctype} - {c[0] for c in conditions}):
		# Functions in fields do not make frappe join a child table; a filter on it does.
		conditions.append([doctype, "name", "is", "set"])
	aliases = tuple(m.alias for m in parsed)
	order = to_frappe_order_by(entity, order_by, aliases + tuple(group_by or ())) if order_by else None
	if order is None and aliases and group_columns:
		order = f"{aliases[0]} desc"
	page = _page(limit, 0)[0] if limit else 0
	joined = _joins_children(entity, conditions)
	if syntax == FIELD_OBJECTS and joined and any(not m.column for m in parsed):
		sort_keys = {v: k for k, v in keymap.items()} | dict(zip(group_columns, group_keys, strict=True))
		return _regrouped(
			entity,
			parsed,
			group_fields,
			group_columns,
			group_keys,
			keymap,
			conditions,
			order,
			page,
			sort_keys,
		)
	fields = list(group_fields)
	for m in parsed:
		if syntax == SQL_TEXT:
			column = m.column or f"distinct {_column(entity.doctype, 'name')}"
			if m.fn in ("min", "max") and m.column:
				# Frappe 15's get_list reads the text before a field's first "." as a table unless the
				# field uses sum(, count( or avg(: "max(`tabSales Invoice`" is then "not found". The bare
				# column avoids that; the database resolves it (and says so if two joined tables share it).
				column = "`" + m.column.rsplit("`.`", 1)[1]
			fields.append(f"{m.fn}({column}) as {m.alias}")
		else:
			# Without a join with lines, every row is one document: COUNT(*) counts documents.
			fields.append(_field_object(m.fn, _object_column(entity, m), m.alias))
	kwargs = {
		"doctype": entity.doctype,
		"fields": fields,
		"filters": conditions,
		"group_by": ", ".join(group_columns) or None,
		"order_by": order,
		"limit_page_length": page,
	}
	return AggregateQuery(kwargs, keymap)


def _object_column(entity: Entity, m: _Metric) -> str:
	"""A column as Frappe 16's field objects name it: the entity's own field bare, a child's qualified."""
	if not m.column:
		return "*"
	return m.column if m.child else m.column.rsplit("`.`", 1)[1].rstrip("`")


def _regrouped(
	entity, parsed, group_fields, group_columns, group_keys, keymap, conditions, order, page, sort_keys
) -> AggregateQuery:
	"""Group by the asked columns and the document; `AggregateQuery.finish` adds the rows up."""
	name = _column(entity.doctype, "name")
	fields = [*group_fields, f"{name} as document__name"]
	for m in parsed:
		if not m.column:
			continue
		column = _object_column(entity, m)
		if m.fn == "avg":
			fields.append(_field_object("sum", column, f"{m.alias}__sum"))
			fields.append(_field_object("count", column, f"{m.alias}__count"))
		else:
			fields.append(_field_object(m.fn, column, m.alias))
	kwargs = {
		"doctype": entity.doctype,
		"fields": fields,
		"filters": conditions,
		"group_by": ", ".join([*group_columns, name]),
		"order_by": f"{name} asc",
		"limit_page_length": 0,
	}
	sort = []
	for clause in (order or "").split(","):
		column, _, direction = clause.strip().rpartition(" ")
		if column:
			sort.append((sort_keys.get(column, column), direction.lower() == "desc"))
	return AggregateQuery(kwargs, keymap, tuple(parsed), tuple(group_keys), tuple(sort), page)


def _refuse_fan_out(entity: Entity, metrics: list[dict], tables: set[str]) -> None:
	"""A document-level sum or average over a join with its lines would count each document once per line."""
	if not tables - {entity.doctype}:
		return
	for metric in metrics:
		name = metric.get("field")
		if str(metric.get("fn", "")).lower() in ("sum", "avg") and name and entity.resolve(name)[0] is None:
			raise ToolError(
				f"{name} is a whole-document amount and the request joins its lines, so each document "
				"would be added once per line. Total a line amount (e.g. items.net_amount) or filter "
				"the documents first."
			)


def plain(value: Any) -> Any:
	"""A database value as JSON-ready data: dates as ISO text, decimals as floats."""
	if isinstance(value, datetime.datetime):
		return value.isoformat(sep=" ")
	if isinstance(value, datetime.date):
		return value.isoformat()
	if isinstance(value, decimal.Decimal):
		return float(value)
	if isinstance(value, datetime.timedelta):
		return str(value)
	return value


def rows_to_canonical(rows: list[dict], keymap: dict[str, str]) -> list[dict]:
	"""Rows with frappe keys → rows with the canonical names that were asked for, in that order."""
	return [{keymap[k]: plain(row.get(k)) for k in keymap} for row in rows]


def doc_to_canonical(entity: Entity, doc: dict) -> dict:
	"""A full document (as_dict) → its mapped fields, child tables and desk link, in canonical names."""
	record = {name: doc.get(field.field) for name, field in entity.fields.items()}
	for child in entity.children.values():
		record[child.name] = [
			{name: row.get(field.field) for name, field in child.fields.items()}
			for row in doc.get(child.field) or []
		]
	record["_link"] = doc_url(entity.doctype, doc.get("name"))
	return record


def to_frappe_values(entity: Entity, values: dict, *, creating: bool = True) -> dict:
	"""Canonical values for a write → DocType fieldnames; only the map's writable fields are accepted."""
	if not isinstance(values, dict) or not values:
		raise ToolError(f"Give the values to write as an object of field: value for {entity.key}")
	unknown = [k for k in values if entity.aliases.get(k, k) not in entity.writable]
	if unknown:
		raise ToolError(
			f"{', '.join(unknown)} cannot be written on {entity.key}; writable fields: {', '.join(entity.writable)}"
		)
	if creating:
		given = {entity.aliases.get(k, k) for k in values}
		missing = [r for r in entity.required if r not in given]
		if missing:
			raise ToolError(f"To create a {entity.key} also give: {', '.join(missing)}")
	out: dict[str, Any] = {}
	for key, value in values.items():
		name = entity.aliases.get(key, key)
		if name in entity.children:
			out[entity.children[name].field] = _child_rows(entity, entity.children[name], value)
			continue
		field = entity.fields[name]
		if field.choices and value not in field.choices:
			raise ToolError(
				f"'{value}' is not a value of {entity.key}.{name}; allowed: {', '.join(field.choices)}"
			)
		out[field.field] = value
	return out


def _child_rows(entity: Entity, child: Child, rows) -> list[dict]:
	if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
		raise ToolError(f"{entity.key}.{child.name} takes a list of rows (objects)")
	out = []
	for row in rows:
		unknown = [k for k in row if k not in child.writable]
		if unknown:
			raise ToolError(
				f"{', '.join(unknown)} cannot be set on {entity.key}.{child.name}; "
				f"writable: {', '.join(child.writable)}"
			)
		out.append({child.fields[k].field: v for k, v in row.items()})
	return out


def to_report_filters(definitions: list[dict], filters: dict | None) -> dict:
	"""A report's filters by its own fieldnames; unknown names → ToolError listing the report's filters."""
	filters = filters or {}
	if not isinstance(filters, dict):
		raise ToolError("Report filters are an object of filter name: value")
	if not definitions:
		# Standard reports declare filters in their JS; names are still kept to plain identifiers.
		bad = [k for k in filters if not isinstance(k, str) or not ALIAS_PATTERN.match(k)]
		if bad:
			raise ToolError(f"Report filter names are snake_case words; {bad} are not")
		return dict(filters)
	known = {d.get("fieldname") for d in definitions if d.get("fieldname")}
	unknown = [k for k in filters if k not in known]
	if unknown:
		listed = ", ".join(sorted(known)) or "none"
		raise ToolError(f"The report has no filter {', '.join(unknown)}; its filters are: {listed}")
	missing = [
		d["fieldname"]
		for d in definitions
		if d.get("reqd") and d.get("fieldname") not in filters and not d.get("default")
	]
	if missing:
		raise ToolError(f"The report needs these filters: {', '.join(missing)}")
	out = {
		d["fieldname"]: d["default"]
		for d in definitions
		if d.get("default") not in (None, "") and d.get("fieldname")
	}
	out.update(filters)
	return out


NUMERIC_TYPES = ("Currency", "Float", "Int", "Percent")


def _report_column(column, index: int) -> dict:
	"""A report column as {key, label, type, options}: frappe gives dicts or 'Label:Type/Options:Width' strings."""
	if isinstance(column, dict):
		label = column.get("label") or column.get("fieldname") or f"column_{index}"
		key = column.get("fieldname") or _slug(label) or f"column_{index}"
		return {
			"key": key,
			"label": label,
			"type": column.get("fieldtype") or "Data",
			"options": column.get("options"),
		}
	parts = str(column).split(":")
	label = parts[0]
	kind, _, options = (parts[1] if len(parts) > 1 else "Data").partition("/")
	return {
		"key": _slug(label) or f"column_{index}",
		"label": label,
		"type": kind or "Data",
		"options": options or None,
	}


def _slug(text: str) -> str:
	return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


ROW_KINDS = ("leaf", "group", "summary")


def _row_kind(row, indent: float, next_indent: float | None) -> str:
	"""Whether a report row is a leaf, a group of the rows under it, or a summary (opening, total, closing)."""
	if isinstance(row, dict):
		if row.get("is_group") or row.get("bold"):
			return "group" if row.get("is_group") else "summary"
		cells = list(row.values())
	else:
		cells = list(row)
	texts = [c for c in cells if isinstance(c, str) and c.strip()]
	if not texts and not any(isinstance(c, int | float) and not isinstance(c, bool) for c in cells):
		return "summary"  # a blank separator row
	# ERPNext writes its own summary rows' labels in quotes: 'Opening', 'Total', 'Profit for the year'.
	if any(t.startswith("'") and t.endswith("'") and len(t) > 2 for t in texts):
		return "summary"
	if next_indent is not None and next_indent > indent:
		return "group"
	return "leaf"


def report_to_canonical(result: dict) -> dict:
	"""`frappe.desk.query_report.run` output → columns, rows, each row's kind, and the report's own total row.

	Kinds tell leaf rows from group rows (a parent account before its children) and summary rows
	(opening, total, closing, subtotals), so totals are never counted twice.
	"""
	cols = [_report_column(c, i) for i, c in enumerate(result.get("columns") or [])]
	keys = [c["key"] for c in cols]
	raw = [r for r in result.get("result") or [] if isinstance(r, dict | list | tuple)]
	total_row = None
	if result.get("add_total_row") and raw:
		total_row, raw = raw[-1], raw[:-1]  # frappe appends its own total row
	indents = [float(r.get("indent") or 0) if isinstance(r, dict) else 0.0 for r in raw]
	rows, kinds = [], []
	for i, row in enumerate(raw):
		if isinstance(row, dict):
			rows.append({k: plain(row.get(k)) for k in keys})
		else:
			padded = [plain(v) for v in row] + [None] * (len(keys) - len(row))
			rows.append(dict(zip(keys, padded, strict=False)))
		kinds.append(_row_kind(row, indents[i], indents[i + 1] if i + 1 < len(raw) else None))
	out = {"columns": cols, "rows": rows, "kinds": kinds}
	if total_row is not None:
		if isinstance(total_row, dict):
			out["total_row"] = {k: plain(total_row.get(k)) for k in keys}
		else:
			out["total_row"] = dict(zip(keys, [plain(v) for v in total_row], strict=False))
	return out


_JS_FIELD = re.compile(r"fieldname\s*:\s*[\"'](\w+)[\"']")


def parse_js_filters(script: str) -> list[dict]:
	"""Best-effort: fieldname, label, type and required flag of each filter object in a report's JS."""
	matches = list(_JS_FIELD.finditer(script))
	out, seen = [], set()
	for i, match in enumerate(matches):
		name = match.group(1)
		if name in seen:
			continue
		seen.add(name)
		start = script.rfind("{", 0, match.start())
		end = matches[i + 1].start() if i + 1 < len(matches) else len(script)
		window = script[max(start, 0) : end]
		item = {"fieldname": name}
		label = re.search(r"label\s*:\s*__\(\s*[\"']([^\"']+)", window)
		kind = re.search(r"fieldtype\s*:\s*[\"'](\w[\w ]*)[\"']", window)
		options = re.search(r"options\s*:\s*[\"']([^\"'\n]+)[\"']", window)
		if label:
			item["label"] = label.group(1)
		if kind:
			item["fieldtype"] = kind.group(1)
		if options:
			text = options.group(1)
			# Select choices are written "A\\nB" in the JS source.
			item["options"] = text.split("\\n") if "\\n" in text else text
		if re.search(r"reqd\s*:\s*(1|true)", window):
			item["reqd"] = 1
		out.append(item)
	return out
