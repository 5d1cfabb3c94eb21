"""Structured responses: one plain-data object per turn, drawn from tool results.

The model's prose becomes `text`; tables, cards, charts, proposals and refusals are built
from what the tools returned, never from model text. Numbers in the prose that no tool
result supports are flagged.

The contract the chat renders is typed: `Response`, `Table`/`Column`, `Card`, `Proposal`/
`ProposalField`, each with `to_dict()`; `RESPONSE_TYPES` is the one list of response kinds.
Values stay raw numbers with a `fieldtype` (ERPNext's own names: Currency, Percent, Int, Float,
Date, Link, Data) so the chat formats them the way the desk does (frappe.format with the
site's number and date formats and the currency).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from noviz_agent.engine.gateway import ToolResult

RESPONSE_TYPES = ("text", "table", "cards", "chart", "proposal", "refusal", "error")
MAX_TABLE_ROWS = 200
FIELDTYPES = ("Currency", "Percent", "Int", "Float", "Date", "Datetime", "Link", "Check", "Data")

# Analysis units -> the desk fieldtype their values are formatted with; no unit is ever shown as a word.
_UNIT_FIELDTYPE = {
	"currency": "Currency",
	"%": "Percent",
	"count": "Int",
	"people": "Int",
	"documents": "Int",
}
# Units that are a duration: the chat shows them as "12 days" (a translated template), not a bare word.
DURATION_UNITS = ("days", "hours")
_MODEL_FIELDTYPE = {
	"Currency": "Currency",
	"Float": "Float",
	"Percent": "Percent",
	"Int": "Int",
	"Duration": "Int",
	"Date": "Date",
	"Datetime": "Datetime",
	"Link": "Link",
	"Dynamic Link": "Link",
	"Check": "Check",
}
_MONEY_KEY = re.compile(
	r"(amount|revenue|sales|outstanding|spend|cost|price|profit|balance|debit|credit|income|expense|value|total)"
)
_NOT_MONEY_KEY = re.compile(
	r"(share|pct|percent|rate|ratio|count|qty|quantity|days|hours|number|margin_pct|%)"
)


@dataclass
class Column:
	key: str
	label: str
	fieldtype: str = "Data"
	options: str | None = None  # the linked DocType for a Link column
	currency: str | None = None

	def to_dict(self) -> dict:
		return asdict(self)


@dataclass
class Table:
	title: str
	columns: list[Column]
	rows: list[dict]
	page: dict
	doctype: str | None = None

	def to_dict(self) -> dict:
		return {
			"title": self.title,
			"columns": [c.to_dict() for c in self.columns],
			"rows": self.rows,
			"page": self.page,
			"doctype": self.doctype,
		}


@dataclass
class Card:
	"""A KPI: label, raw value with its fieldtype, and the change against the prior period."""

	title: str
	value: Any
	fieldtype: str = "Float"
	currency: str | None = None
	unit: str | None = None  # a duration unit (days, hours) shown through a translated template
	change: float | None = None
	change_kind: str | None = None  # "percent" (relative) or "points" (difference of two percentages)
	direction: str | None = None  # up, down or flat
	compared_with: str | None = None  # the prior period's label, e.g. "Sep 2026"
	link: str | None = None

	def to_dict(self) -> dict:
		return asdict(self)


@dataclass
class ProposalField:
	key: str
	label: str
	value: Any
	fieldtype: str = "Data"
	options: str | None = None
	before: Any = None
	changed: bool = False  # an update shows before -> after
	required: bool = False
	editable: bool = False

	def to_dict(self) -> dict:
		return asdict(self)


@dataclass
class Proposal:
	token: str | None
	tool: str
	action: str
	doctype: str | None
	name: str | None
	title: str
	effect: str
	fields: list[ProposalField]
	tables: dict
	missing: list[str]  # labels of mandatory fields still empty: ERPNext will ask for them
	editable: bool
	expires: int | None = None
	link: str | None = None
	warning: dict | None = None  # {message, sources}: instruction-like data was read this turn

	def to_dict(self) -> dict:
		out = asdict(self)
		out["fields"] = [f.to_dict() for f in self.fields]
		if self.warning is None:
			del out["warning"]  # present only when the turn read instruction-like data
		return out


@dataclass
class Response:
	type: str = "text"
	text: str = ""
	table: dict | None = None
	cards: list[dict] | None = None
	chart: dict | None = None
	proposal: dict | None = None
	refusal: dict | None = None
	error: dict | None = None
	flags: list[dict] = field(default_factory=list)
	sources: list[dict] = field(default_factory=list)
	# The analysis kept server-side behind the cards and chart (for its PDF and export).
	result_id: str | None = None
	# Whose figures the table, cards and chart show: company (or the companies a list covers),
	# currency, period and whether its last part is still running (`scope_from`).
	scope: dict | None = None

	def to_dict(self) -> dict:
		if self.type not in RESPONSE_TYPES:
			raise ValueError(f"Unknown response type {self.type!r}; use one of {', '.join(RESPONSE_TYPES)}.")
		return asdict(self)


def empty_response() -> dict:
	return Response().to_dict()


def error_response(message: str, hint: str | None = None) -> dict:
	return Response(type="error", error={"message": message, "hint": hint}).to_dict()


# --- blocks from tool results ----------------------------------------------------------


def _entity(key: Any, entities: Mapping[str, Any] | None):
	"""This site's entity for a result's `entity` key (from the registry's vocabulary), or None."""
	if not isinstance(key, str) or not key or not entities:
		return None
	return entities.get(key)


def _guess_fieldtype(key: str, rows: list[dict]) -> str:
	values = [r.get(key) for r in rows if r.get(key) is not None]
	if not values:
		return "Data"
	if all(isinstance(v, bool) for v in values):
		return "Check"
	if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
		lowered = key.lower()
		if _MONEY_KEY.search(lowered) and not _NOT_MONEY_KEY.search(lowered):
			return "Currency"
		return "Int" if all(isinstance(v, int) for v in values) else "Float"
	if all(isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) for v in values):
		return "Date"
	return "Data"


def _column(raw: Any, ent, rows: list[dict], currency: str | None) -> Column:
	if not isinstance(raw, dict):
		raw = {"key": str(raw)}
	key = str(raw.get("key", ""))
	label = str(raw.get("label") or key.replace("_", " ").title())
	fieldtype, options = raw.get("fieldtype"), raw.get("options")
	if fieldtype is None and ent is not None:
		try:
			_, model_field = ent.resolve(key)
			fieldtype = _MODEL_FIELDTYPE.get(model_field.type, "Data")
			options = model_field.link
		except Exception:
			fieldtype = None
	if key == "name" and ent is not None and fieldtype in (None, "Data"):
		fieldtype, options = "Link", ent.doctype
	if fieldtype is None:
		fieldtype = _guess_fieldtype(key, rows)
	return Column(
		key=key,
		label=label,
		fieldtype=fieldtype if fieldtype in FIELDTYPES else "Data",
		options=options if fieldtype == "Link" else None,
		currency=raw.get("currency") or (currency if fieldtype == "Currency" else None),
	)


def table_from(data: Any, entities: Mapping[str, Any] | None = None) -> dict | None:
	"""A table block from a list/report-shaped tool result: labels from the model, typed columns.

	`entities`: the registry's vocabulary of this site's entities (`registry.vocabulary.entities`);
	without it columns are typed from their values and rows link to nothing.
	"""
	if not isinstance(data, dict) or not isinstance(data.get("rows"), list) or not data["rows"]:
		return None
	rows = [r for r in data["rows"] if isinstance(r, dict)][:MAX_TABLE_ROWS]
	if not rows:
		return None
	ent = _entity(data.get("entity"), entities)
	raw_columns = data.get("columns") or [{"key": k} for k in rows[0]]
	columns = [_column(c, ent, rows, data.get("currency")) for c in raw_columns]
	columns = [c for c in columns if not c.key.startswith("_")]
	page = data.get("page") or {}
	return Table(
		title=data.get("title") or data.get("label") or "",
		columns=columns,
		rows=rows,
		page={
			"number": page.get("number", 1),
			"size": page.get("size", len(rows)),
			"total": data.get("total", page.get("total", len(rows))),
			"result_id": data.get("result_id") or page.get("result_id"),
		},
		doctype=data.get("doctype") or (ent.doctype if ent is not None else None),
	).to_dict()


def _direction(change: Any) -> str | None:
	if not isinstance(change, int | float) or isinstance(change, bool) or not math.isfinite(change):
		return None
	return "up" if change > 0 else "down" if change < 0 else "flat"


def card_from_kpi(kpi: dict, currency: str | None = None) -> Card:
	unit = kpi.get("unit")
	fieldtype = _UNIT_FIELDTYPE.get(unit, "Float")
	change, kind = kpi.get("change"), "percent"
	if change is None and kpi.get("change_points") is not None:
		change, kind = kpi["change_points"], "points"
	if not isinstance(change, int | float) or isinstance(change, bool):
		change, kind = None, None
	value = kpi.get("value")
	if fieldtype == "Int" and isinstance(value, float) and value.is_integer():
		value = int(value)
	return Card(
		title=str(kpi["label"]),
		value=value,
		fieldtype=fieldtype,
		currency=kpi.get("currency") or (currency if fieldtype == "Currency" else None),
		unit=unit if unit in DURATION_UNITS else None,
		change=change,
		change_kind=kind,
		direction=_direction(change),
		compared_with=kpi.get("prior_label"),
		link=kpi.get("link"),
	)


def cards_from(data: Any, entities: Mapping[str, Any] | None = None) -> list[dict] | None:
	"""Cards from KPIs (analytics) or a single count (titled with the entity's label from `entities`)."""
	if not isinstance(data, dict):
		return None
	kpis = data.get("kpis")
	if isinstance(kpis, list) and kpis:
		cards = [
			card_from_kpi(k, data.get("currency")).to_dict()
			for k in kpis[:8]
			if isinstance(k, dict) and "label" in k
		]
		return cards or None
	if "count" in data and isinstance(data["count"], int) and not data.get("rows"):
		ent = _entity(data.get("entity"), entities)
		title = data.get("label") or (ent.label if ent is not None else None) or data.get("entity") or "Count"
		return [Card(title=str(title), value=data["count"], fieldtype="Int").to_dict()]
	return None


def analysis_response(answer: dict) -> dict:
	"""A finished background analysis as a response: the same cards, chart and text as a turn's."""
	answer = answer or {}
	if answer.get("status") == "error":
		return error_response(str(answer.get("error") or "The analysis could not be finished."))
	title = str(answer.get("title") or "The analysis")
	lines = [f"- {str(o).replace(chr(10), ' ')}" for o in answer.get("observations") or []]
	chart = chart_from(answer)
	cards = cards_from(answer)
	return Response(
		type="chart" if chart else "cards" if cards else "text",
		text="\n".join([f"{title} is ready.", *lines]),
		cards=cards,
		chart=chart,
		result_id=answer.get("result_id"),
		scope=scope_from(answer),
	).to_dict()


def scope_from(data: Any) -> dict | None:
	"""The scope a tool result says its figures have: company or companies, currency, period (start,
	end, as of, last period partial) and the other companies left out. None when it says none."""
	if not isinstance(data, dict):
		return None
	out: dict = {}
	for key in ("company", "currency"):
		if isinstance(data.get(key), str) and data[key]:
			out[key] = data[key]
	for key in ("companies", "other_companies"):
		values = data.get(key)
		if isinstance(values, list) and values:
			out[key] = [str(v) for v in values][:20]
	period = data.get("period")
	if isinstance(period, dict):
		kept = {k: str(period[k]) for k in ("start", "end", "as_of") if period.get(k)}
		if kept:
			out["period"] = {**kept, "partial": bool(period.get("partial"))}
	return out or None


def chart_from(data: Any) -> dict | None:
	chart = data.get("chart") if isinstance(data, dict) else None
	if isinstance(chart, dict) and isinstance(chart.get("data"), list):
		return safe_chart(chart)
	return None


# Plotly draws a subset of HTML in every text it shows (titles, tick labels, legend, hover): a
# customer named '<a href=...>' would become a link. Plotly decodes entities, so escaped text is
# shown exactly as written. Templates are the chart builder's own markup and are kept.
_CHART_MARKUP_KEYS = frozenset({"hovertemplate", "texttemplate"})


def safe_chart(figure: dict) -> dict:
	"""A copy of a Plotly figure whose every text shows literally; markup in data never renders."""
	return _escaped(figure)


def _escaped(value: Any, key: str = "") -> Any:
	if isinstance(value, str):
		return value if key in _CHART_MARKUP_KEYS else html.escape(value, quote=False)
	if isinstance(value, dict):
		return {k: _escaped(v, k) for k, v in value.items()}
	if isinstance(value, list | tuple):
		return [_escaped(v, key) for v in value]
	return value


def sources_from(data: Any) -> list[dict]:
	if not isinstance(data, dict) or not isinstance(data.get("passages"), list):
		return []
	return [
		{"title": p.get("title"), "section": p.get("section"), "slug": p.get("slug")}
		for p in data["passages"]
		if isinstance(p, dict)
	]


def _proposal_field(raw: dict, action: str) -> ProposalField:
	fieldtype = _MODEL_FIELDTYPE.get(str(raw.get("type") or raw.get("fieldtype") or ""), "Data")
	has_before = "before" in raw
	return ProposalField(
		key=str(raw.get("key", "")),
		label=str(raw.get("label") or str(raw.get("key", "")).replace("_", " ").title()),
		value=raw.get("value"),
		fieldtype=fieldtype,
		options=raw.get("options") if fieldtype == "Link" else None,
		before=raw.get("before") if has_before else None,
		changed=has_before and raw.get("before") != raw.get("value"),
		required=bool(raw.get("required")),
		editable=action in ("create", "update") and not isinstance(raw.get("value"), list | dict),
	)


def proposal_block(result: ToolResult) -> dict:
	"""The proposal the chat shows: labelled, typed fields (before -> after for updates), its effect."""
	preview = dict(result.proposal or {})
	action = str(preview.get("action") or result.name.rpartition(".")[2] or "change")
	raw_fields = preview.get("fields")
	if not isinstance(raw_fields, list):
		values = preview.get("values") or result.args.get("values") or {}
		raw_fields = [{"key": k, "value": v} for k, v in values.items()] if isinstance(values, dict) else []
	fields = [_proposal_field(f, action) for f in raw_fields if isinstance(f, dict)]
	summary = str(preview.get("summary") or result.name)
	return Proposal(
		token=preview.get("token"),
		tool=str(preview.get("tool") or result.name),
		action=action,
		doctype=preview.get("doctype"),
		name=preview.get("name"),
		title=summary,
		effect=str(preview.get("effect") or summary),
		fields=fields,
		tables=preview.get("tables") or {},
		missing=[str(m) for m in preview.get("missing") or []],
		editable=action in ("create", "update") and any(f.editable for f in fields),
		expires=preview.get("expires"),
		link=preview.get("_link"),
		warning=preview.get("warning"),
	).to_dict()


def build(
	text: str,
	results: Iterable[ToolResult],
	*,
	question: str = "",
	entities: Mapping[str, Any] | None = None,
) -> dict:
	"""The turn's response from the model's final text and the tool results of the turn.

	`entities`: this site's entities by key, as the registry's vocabulary carries them
	(`session.registry.vocabulary.entities`): column labels, field types and desk links.
	"""
	results = list(results)
	response = empty_response()
	response["text"] = (text or "").strip()

	proposals = [r for r in results if r.status == "proposal"]
	if proposals:
		response["type"] = "proposal"
		response["proposal"] = proposal_block(proposals[-1])
		if not response["text"]:
			response["text"] = "Please review this change. Nothing is written until you confirm."

	refused = [r for r in results if r.status == "refused"]
	if refused:
		response["refusal"] = {"message": refused[-1].error}

	for result in reversed([r for r in results if r.ok]):
		data = result.data
		if not (response["chart"] or response["cards"]) and isinstance(data, dict) and data.get("kpis"):
			response["result_id"] = data.get("result_id")
		response["chart"] = response["chart"] or chart_from(data)
		response["table"] = response["table"] or table_from(data, entities)
		response["cards"] = response["cards"] or cards_from(data, entities)
		response["sources"] = response["sources"] or sources_from(data)
		if response["scope"] is None and (response["chart"] or response["table"] or response["cards"]):
			response["scope"] = scope_from(data)

	if response["type"] != "proposal":
		if response["chart"]:
			response["type"] = "chart"
		elif response["table"]:
			response["type"] = "table"
		elif response["cards"]:
			response["type"] = "cards"
		elif response["refusal"]:
			response["type"] = "refusal"
		else:
			response["type"] = "text"

	response["flags"] = unsupported_numbers(response["text"], results, question=question)
	return response


# --- numbers in prose ---------------------------------------------------------------

_NUMBER = re.compile(
	r"(?<![\w./-])(?P<sign>[-−])?(?P<cur>[$€£₹])?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
	r"\s?(?P<suffix>%|[kKmMbB](?![a-zA-Z]))?(?![\w/-]|\.\d)"
)
_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9}
_DIGIT = re.compile(r"\d")


def numbers_in_text(text: str) -> list[tuple[str, float, int, str]]:
	"""Each number written in the text: (as written, value, decimals shown, suffix)."""
	found = []
	for match in _NUMBER.finditer(text or ""):
		raw = match.group("num")
		value = float(raw.replace(",", ""))
		if match.group("sign"):
			value = -value
		suffix = (match.group("suffix") or "").lower()
		if suffix in _SCALE:
			value *= _SCALE[suffix]
		decimals = len(raw.split(".")[1]) if "." in raw else 0
		found.append((match.group(0).strip(), value, decimals, suffix))
	return found


def _numbers_in(value: Any, out: set[float], depth: int = 0) -> None:
	if depth > 12:
		return
	if isinstance(value, bool):
		return
	if isinstance(value, (int, float)):
		_add_number(value, out)
	elif isinstance(value, str):
		if not _DIGIT.search(value):
			return  # no number in it (float() would read only "inf" and "nan", which support nothing)
		for _, number, _, _ in numbers_in_text(value):
			out.add(number)
		# Digits inside dates and record names ("2026-03-31", "SINV-2026-00012") support years and ids.
		out.update(float(d) for d in re.findall(r"\d+", value)[:50])
		try:
			out.add(float(value.replace(",", "")))
		except ValueError:
			pass
	elif isinstance(value, dict):
		for item in value.values():
			_numbers_in(item, out, depth + 1)
		rows = value.get("rows")
		if isinstance(rows, list):
			out.add(float(len(rows)))
	elif isinstance(value, (list, tuple)):
		out.add(float(len(value)))
		for item in value:
			_numbers_in(item, out, depth + 1)


def _checked_values(results: list[ToolResult]):
	for result in results:
		if result.status == "ok":
			yield result.data
		elif result.status == "proposal":
			yield result.proposal
		yield result.args


def _top_numbers(value: Any, out: set[float]) -> None:
	"""The numbers at the top of a tool result (its totals and counts, the length of its lists, the
	figures of a dict beside them such as the page): the usual support of a claim like "I found
	57 invoices". A subset of what `_numbers_in` finds in the same value."""
	if isinstance(value, (list, tuple)):
		out.add(float(len(value)))
		return
	if not isinstance(value, dict):
		return
	for item in value.values():
		if isinstance(item, (list, tuple)):
			out.add(float(len(item)))
		elif isinstance(item, dict):
			for inner in item.values():
				_add_number(inner, out)
		else:
			_add_number(item, out)


def _add_number(value: Any, out: set[float]) -> None:
	if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
		out.add(float(value))


def _supported(value: float, decimals: int, suffix: str, known: set[float]) -> bool:
	candidates = {value, abs(value)}
	if suffix == "%":
		candidates |= {value / 100, abs(value) / 100}
	for candidate in candidates:
		for number in known:
			# Agree to the precision the prose shows (and 1% for scaled figures like 1.2M).
			tolerance = 0.5 * 10 ** (-decimals) if suffix not in _SCALE else abs(number) * 0.05
			if suffix == "%" and candidate != value:
				tolerance /= 100
			if abs(abs(number) - candidate) <= tolerance + 1e-9:
				return True
	return False


def unsupported_numbers(text: str, results: Iterable[ToolResult], *, question: str = "") -> list[dict]:
	"""Numbers in the model's text that nothing the tools returned (or the person asked) supports."""
	claims = [
		found
		for found in numbers_in_text(text)
		# small counts and list ordinals carry no claim worth checking
		if found[3] or found[2] or not 0 <= found[1] <= 10
	]
	if not claims:
		return []  # nothing to check: the tool results are not walked
	results = list(results)
	known: set[float] = {number for _, number, _, _ in numbers_in_text(question)}
	for value in _checked_values(results):
		_top_numbers(value, known)
	if all(_supported(value, decimals, suffix, known) for _, value, decimals, suffix in claims):
		return []  # the totals and counts at the top support every claim: the rows are not walked
	for value in _checked_values(results):
		_numbers_in(value, known)
	flags = []
	for written, value, decimals, suffix in claims:
		if not _supported(value, decimals, suffix, known):
			flags.append(
				{"value": written, "message": "No tool result in this turn supports this number; verify it."}
			)
	return flags
