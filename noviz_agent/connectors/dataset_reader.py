"""The one reader of analytics datasets: scope, fetch, page, look up, convert, as the person.

Given a dataset's binding (`dataset_map`), it reads every row of the period for one company
(or for several the person asked to combine, all in one currency), page by page in a unique
order (the parent, then its line) so no line is read twice or skipped, fills lookup columns
from other entities a few hundred keys a request, brings party-currency amounts to the
company's currency, and renames everything to the data contract's columns.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from noviz_agent.connectors.dataset_map import Lookup, Source, load_sources
from noviz_agent.engine.errors import PermissionDenied, ToolError

PAGE_ROWS = 5_000
# Keys per lookup request: under the 500 rows a frappe page may hold.
LOOKUP_CHUNK = 400
MAX_ROWS = 1_000_000
MAX_COMPANIES_LISTED = 200


@dataclass(frozen=True)
class Scope:
	"""The companies one answer covers, their one currency, and the other companies the person can
	read that it leaves out (so an answer limited to one company can say so)."""

	companies: tuple[str, ...]
	currency: str | None
	others: tuple[str, ...] = ()

	@property
	def label(self) -> str:
		return " + ".join(self.companies)

	def describe(self) -> dict:
		out = {"company": self.label or None, "currency": self.currency}
		if self.companies and self.others:
			out["other_companies"] = list(self.others)
			out["scope_note"] = (
				f"Only {self.label}; you can also read {', '.join(self.others)}, not included here."
			)
		return out


@dataclass(frozen=True)
class AllCompanies:
	"""Documents of every company the person can read, as the desk's list shows them (no company
	filter): counts and lists of records, never money added up across companies."""

	companies: tuple[str, ...]

	def describe(self) -> dict:
		if len(self.companies) < 2:
			return {"company": self.companies[0] if self.companies else None}
		return {
			"company": None,
			"companies": list(self.companies),
			"scope_note": f"Records of every company you can read: {', '.join(self.companies)}.",
		}


def source(dataset: str) -> Source:
	found = load_sources().get(dataset)
	if found is None:
		raise ToolError(f"No source is mapped for the analytics dataset {dataset!r}.")
	return found


# --- company scope --------------------------------------------------------------------


def _companies(session) -> dict[str, str | None]:
	"""Companies this person can read, with their currency (from the connector's own cache of them
	where it keeps one: every request scoped by company asks)."""
	conn = session.connector
	kept = getattr(conn, "readable_companies", None)
	try:
		if kept is not None:
			rows = kept(MAX_COMPANIES_LISTED)
		else:
			rows = conn.list(
				"company", fields=["name", "currency"], order_by="name asc", limit=MAX_COMPANIES_LISTED
			)
	except PermissionDenied:
		return {}
	return {r["name"]: r.get("currency") for r in rows}


def resolve_scope(session, company: str | None = None, combine: list[str] | None = None) -> Scope:
	"""One company (the one named, else the person's default) or several named ones in one currency.

	ToolError, with the companies to choose from, when none can be chosen, one is unknown, or
	the combined companies keep their books in different currencies.
	"""
	known = _companies(session)
	listing = ", ".join(f"{n} ({c})" for n, c in known.items()) or "none readable"
	names = [n for n in (combine or []) if n] or [company or getattr(session.person, "company", None)]
	names = list(dict.fromkeys(n for n in names if n))
	if not names:
		if not known:
			# No company on record and no default: nothing to scope by (a site always has a default).
			return Scope((), None)
		if len(known) == 1:
			names = list(known)
		else:
			raise ToolError(
				f"Which company? Every figure belongs to one company; name one with company. Companies: {listing}."
			)
	if known:
		unknown = [n for n in names if n not in known]
		if unknown:
			raise ToolError(f"No company {', '.join(unknown)} that you can read; companies: {listing}.")
	currencies = {known.get(n) for n in names}
	if len(currencies) > 1:
		shown = ", ".join(f"{n} keeps its books in {known.get(n)}" for n in names)
		raise ToolError(
			f"These companies cannot be added together: {shown}, and amounts in different currencies "
			"do not add up. Ask for one company at a time."
		)
	others = tuple(n for n in known if n not in names)
	return Scope(tuple(names), next(iter(currencies)), others)


def company_filters(
	session, entity: str, filters, company: str | None = None, required: bool = True
) -> tuple[list, Scope | AllCompanies | None]:
	"""An entity request's filters and the companies they cover, when its DocType has a company field.

	Companies named in the filters are taken as asked (and must share a currency), and so is the
	`company` given. Otherwise a figure that adds money up (`required`) is kept to the person's
	default company; records found or counted (not `required`) are those of every company the
	person can read, as the desk's list shows them. The filters come back as a list, in the shape
	they came in.
	"""
	from noviz_agent.connectors.model import load_model
	from noviz_agent.connectors.translate import parse_filters

	listed = [[k, "=", v] for k, v in filters.items()] if isinstance(filters, dict) else list(filters or [])
	if "." in entity:
		return listed, None  # another system's entity (helpdesk.ticket): ERPNext's companies do not apply
	ent = load_model().entity(entity)
	if "company" not in ent.fields:
		return listed, None
	named = [c for c in parse_filters(ent, listed) if c.child is None and c.field.name == "company"]
	if named:
		values = [v for c in named for v in (c.value if isinstance(c.value, list | tuple) else [c.value])]
		return listed, resolve_scope(session, None, [str(v) for v in values])
	if not required and not company:
		return listed, AllCompanies(tuple(_companies(session)))
	scope = resolve_scope(session, company)
	if not scope.companies:
		return listed, scope
	shaped = (
		{"field": "company", "op": "in", "value": list(scope.companies)}
		if listed and isinstance(listed[0], dict)
		else ["company", "in", list(scope.companies)]
	)
	return [*listed, shaped], scope


def scope_filters(session, src: Source, scope: Scope | None) -> list[list] | None:
	"""Filters that keep one scope's rows; None when the scope has no rows at all (e.g. no warehouse)."""
	if scope is None or src.company is None or not scope.companies:
		return []
	companies = list(scope.companies)
	if src.company.field:
		return [[src.company.field, "in", companies]]
	names = [
		r["name"]
		for r in pages(session, src.company.via_entity, ["name"], [["company", "in", companies]], ["name"])
	]
	if not names:
		return None
	return [[src.columns[src.company.via_column], "in", names]]


# --- period ---------------------------------------------------------------------------


def months_back(day: dt.date, months: int) -> dt.date:
	month = day.month - months
	year = day.year + (month - 1) // 12
	month = (month - 1) % 12 + 1
	return dt.date(year, month, 1)


def period_filters(src: Source, params: dict, today: dt.date, full_history: bool = False) -> list[list]:
	"""The date range: start/end when given, else the default look-back; no start for full history."""
	if not src.date:
		return []
	start, end = params.get("start"), params.get("end")
	if full_history:
		start = None
	elif not start and src.default_months:
		start = months_back(today, src.default_months).isoformat()
	out = []
	if start:
		out.append([src.date, ">=", str(start)])
	if end:
		out.append([src.date, "<=", str(end)])
	return out


# --- reading --------------------------------------------------------------------------


def pages(session, entity: str, fields: list[str], filters: list, order: list[str], notify=None):
	"""Every row in a unique order, page by page; a short page ends only after a longer one."""
	order_by = ", ".join(f"{k} asc" for k in order)
	offset, served = 0, None
	while True:
		page = session.connector.list(
			entity, fields=fields, filters=filters, order_by=order_by, limit=PAGE_ROWS, offset=offset
		)
		if not page:
			return
		yield from page
		offset += len(page)
		if notify:
			notify(offset)
		# A connector may cap a page below what was asked (frappe serves 500), so the end is an
		# empty page or one shorter than those before it.
		if served is not None and len(page) < served:
			return
		served = len(page)


def _order_for(fields: list[str]) -> list[str]:
	children = sorted({f.split(".", 1)[0] for f in fields if "." in f})
	return ["name", *(f"{c}.line_id" for c in children)]


def fetch(
	session,
	dataset: str,
	columns: list[str],
	params: dict,
	*,
	scope: Scope | None = None,
	today: dt.date | None = None,
	required: tuple[str, ...] = (),
	full_history: bool = False,
	max_rows: int = MAX_ROWS,
) -> tuple[list[dict], list[str]]:
	"""Every row of one dataset for the period and scope, renamed to the contract's columns.

	Notes say when the fetch was cut short and which `required` columns this site cannot supply.
	"""
	src = source(dataset)
	today = today or dt.date.today()
	wanted = _with_parts(src, columns)
	mapped = {c: src.columns[c] for c in wanted if c in src.columns}
	for key in src.sort_keys():
		mapped.setdefault(f"_{key}", key)
	fields = list(dict.fromkeys(mapped.values()))
	notes: list[str] = []
	scoped = scope_filters(session, src, scope)
	if scoped is None:
		return [], [f"{dataset}: {scope.label} has no {src.company.via_entity} records."]
	filters = [list(f) for f in src.filters] + scoped + period_filters(src, params, today, full_history)
	rows: list[dict] = []

	def progress(n: int) -> None:
		session.notify({"event": "analytics_fetch", "dataset": dataset, "rows": n})

	if src.group_by:
		rows = _balances(session, src, filters)
	else:
		for row in pages(session, src.entity, fields, filters, src.sort_keys(), progress):
			rows.append({column: row.get(name) for column, name in mapped.items()})
			if len(rows) >= max_rows:
				notes.append(
					f"{dataset}: stopped at {len(rows):,} rows; narrow the period for a complete answer."
				)
				break
	for column, parts in src.coalesce.items():
		if column in wanted:
			for r in rows:
				r[column] = next((r.get(p) for p in parts if r.get(p) not in (None, "")), None)
	for column, lookup in src.lookups.items():
		if column in wanted:
			_fill(session, lookup, column, rows)
	for column, (left, right) in src.derived.items():
		if column in wanted:
			for r in rows:
				a, b = r.get(left), r.get(right)
				r[column] = a * b if isinstance(a, int | float) and isinstance(b, int | float) else None
			if column in src.notes:
				notes.append(src.notes[column])
	for column, (amount, currency, rate) in src.converted.items():
		if column in wanted:
			notes += _convert(rows, column, amount, currency, rate, scope, dataset)
	for r in rows:
		for column in [c for c in r if c not in columns]:
			del r[column]
	missing = [c for c in required if c not in src.served()]
	if missing:
		notes.append(f"{dataset}: this site's data has no field for {', '.join(missing)}.")
	return rows, notes


def _balances(session, src: Source, filters: list) -> list[dict]:
	"""Sums per group computed by the system (one query), groups whose every sum is zero left out."""
	found = session.connector.aggregate(
		src.entity,
		metrics=[{"fn": "sum", "field": field, "as": f"sum_{column}"} for column, field in src.sums.items()],
		group_by=[src.columns[c] for c in src.group_by],
		filters=filters,
	)
	rows = []
	for r in found:
		sums = {column: float(r.get(f"sum_{column}") or 0) for column in src.sums}
		if any(round(v, 9) for v in sums.values()):
			rows.append({**{c: r.get(src.columns[c]) for c in src.group_by}, **sums})
	return rows


def _with_parts(src: Source, columns: list[str]) -> list[str]:
	"""The columns asked for plus every column they are computed or looked up from."""
	wanted = list(columns)
	i = 0
	while i < len(wanted):
		column = wanted[i]
		parts: tuple = ()
		if column in src.derived:
			parts = src.derived[column]
		elif column in src.converted:
			parts = src.converted[column]
		elif column in src.coalesce:
			parts = src.coalesce[column]
		elif column in src.lookups:
			parts = tuple(src.lookups[column].match)
		wanted.extend(p for p in parts if p not in wanted)
		i += 1
	return wanted


def _convert(rows, column, amount, currency, rate, scope: Scope | None, dataset: str) -> list[str]:
	"""Party-currency amounts in the company's currency, so one figure never mixes two currencies."""
	home = scope.currency if scope else None
	foreign = 0
	for r in rows:
		value = r.get(amount)
		if not isinstance(value, int | float):
			r[column] = None
		elif r.get(currency) in (None, "", home) or home is None:
			r[column] = value
		else:
			r[column] = value * float(r.get(rate) or 0)
			foreign += 1
	if foreign:
		return [
			f"{dataset}: {foreign} amount(s) owed in a party currency were converted to {home} at the invoice's rate."
		]
	return []


def _fill(session, lookup: Lookup, column: str, rows: list[dict]) -> None:
	"""`column` of each row from the records of another entity that match it, a chunk of keys a request."""
	pairs = list(lookup.match.items())
	first_mine, first_theirs = pairs[0]
	keys = sorted({r.get(first_mine) for r in rows} - {None, ""})
	fields = list(dict.fromkeys([*lookup.match.values(), *lookup.field]))
	order = _order_for(fields)
	# The paging order is selected too: a distinct query may not sort on a column it does not return.
	fields = list(dict.fromkeys([*fields, *order]))
	found: dict[tuple, list[tuple]] = defaultdict(list)
	for start in range(0, len(keys), LOOKUP_CHUNK):
		chunk = keys[start : start + LOOKUP_CHUNK]
		filters = [list(f) for f in lookup.filters] + [[first_theirs, "in", chunk]]
		for rec in pages(session, lookup.entity, fields, filters, order):
			key = tuple(rec.get(theirs) for _, theirs in pairs)
			found[key].append(tuple(rec.get(f) for f in lookup.field))
	for r in rows:
		matches = found.get(tuple(r.get(mine) for mine, _ in pairs))
		r[column] = _reduce(lookup.reduce, matches) if matches else None


def _reduce(how: str, matches: list[tuple]):
	values = [m[0] for m in matches]
	if how == "first":
		return values[0]
	if how == "max":
		present = [v for v in values if v not in (None, "")]
		return max(present) if present else None
	if how == "sum":
		return sum(float(v or 0) for v in values)
	top = sum(float(m[0] or 0) for m in matches)
	bottom = sum(float(m[1] or 0) for m in matches)
	return top / bottom if bottom else None


def estimate_rows(session, dataset: str, params: dict, scope: Scope | None, today: dt.date) -> int:
	"""How many rows a fetch would read: lines, not documents, for line datasets."""
	src = source(dataset)
	scoped = scope_filters(session, src, scope)
	if scoped is None:
		return 0
	filters = [list(f) for f in src.filters] + scoped + period_filters(src, params, today)
	if src.group_by:
		return 0  # summed by the database in one query, not read row by row
	if not src.line:
		return session.connector.count(src.entity, filters)
	rows = session.connector.aggregate(
		src.entity,
		metrics=[{"fn": "count", "field": f"{src.line}.line_id", "as": "line_count"}],
		filters=filters,
	)
	return int((rows[0].get("line_count") if rows else 0) or 0)
