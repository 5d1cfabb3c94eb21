"""Analytics tools: find an analysis, build it from the person's own data, compare, aggregate, chart.

The model names an analysis and its parameters, never rows. `analytics.build` fetches the
complete period through the connector as the person, maps canonical fields onto the
analytics data contract (the table `SOURCES` below: the only place that knows which entity
feeds which dataset), runs the computation in the frappe-free `analytics` package and
returns a bounded summary plus the chart. The full result stays in `session.results` under
`result_id` for paging, the chat's chart, `chart.build` and the dashboard PDF.

Large fetches are handed to a background job when the edge offers one
(`session.context["enqueue"]`, the frappe side's `frappe.enqueue` on the long queue);
progress goes to the person through `session.notify`.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from analytics import catalog as analytics_catalog
from analytics import charts
from analytics.compare import compare_periods, compare_segments
from analytics.contract import DATASETS
from analytics.dashboard import build as build_dashboard
from analytics.errors import AnalyticsError
from analytics.result import jsonable, summary_for_model
from analytics.runner import run as run_analysis
from noviz_agent.connectors.base import AGGREGATE_FUNCTIONS
from noviz_agent.engine.errors import NotFound, ToolError
from noviz_agent.engine.tools import Tool

RESULT_TTL_SECONDS = 60 * 60
PAGE_ROWS = 5_000
# Names per lookup request: under the 500 rows a frappe page may hold.
LOOKUP_CHUNK = 400
# Above this many rows a fetch is moved to a background job when the edge can run one.
IN_TURN_ROWS = 50_000
MAX_ROWS = 1_000_000
AGGREGATE_MAX_ROWS = 50


@dataclass(frozen=True)
class Lookup:
	"""A column filled from another entity (e.g. an account's root type for GL entries)."""

	entity: str
	key_column: str
	field: str


@dataclass(frozen=True)
class Source:
	"""Where one analytics dataset comes from: an entity and the canonical field behind each column."""

	entity: str
	columns: dict[str, str]
	date: str | None = None
	filters: tuple = ()
	default_months: int | None = 24
	lookups: dict[str, Lookup] = field(default_factory=dict)
	# Columns computed as the product of two others (e.g. cost = quantity × unit cost).
	derived: dict[str, tuple[str, str]] = field(default_factory=dict)
	# Said with every answer that uses a derived column, so an estimate is never taken for a record.
	derived_notes: dict[str, str] = field(default_factory=dict)


SUBMITTED = (("docstatus", "=", 1),)

SOURCES: dict[str, Source] = {
	"sales": Source(
		"sales_invoice",
		{
			# The line, so two identical lines of one document stay two rows.
			"id": "items.line_id",
			"document": "name",
			"date": "date",
			"party": "customer",
			"territory": "territory",
			"item": "items.item",
			"item_group": "items.item_group",
			"amount": "items.net_amount",
			"quantity": "items.qty",
		},
		date="date",
		filters=SUBMITTED,
		# Invoice lines carry a cost only when the invoice itself moved stock, so margins use the
		# item's valuation rate: an estimate, and the answer says so.
		lookups={"unit_cost": Lookup("item", "item", "valuation_rate")},
		derived={"cost": ("quantity", "unit_cost")},
		derived_notes={
			"cost": "sales: cost is estimated as quantity × each item's current valuation rate, "
			"not the cost booked when the goods left stock."
		},
	),
	"purchases": Source(
		"purchase_invoice",
		{
			# The line, so two identical lines of one document stay two rows.
			"id": "items.line_id",
			"document": "name",
			"date": "date",
			"party": "supplier",
			"item": "items.item",
			"item_group": "items.item_group",
			"amount": "items.net_amount",
			"quantity": "items.qty",
		},
		date="date",
		filters=SUBMITTED,
	),
	"purchase_orders": Source(
		"purchase_order",
		{
			# The line, so two identical lines of one document stay two rows.
			"id": "items.line_id",
			"document": "name",
			"date": "date",
			"party": "supplier",
			"item": "items.item",
			"quantity": "items.qty",
			"amount": "items.net_amount",
			"expected_date": "items.required_by",
			"received_quantity": "items.received_qty",
		},
		date="date",
		filters=SUBMITTED,
	),
	"stock": Source(
		"stock_balance",
		{"item": "item", "warehouse": "warehouse", "quantity": "actual_qty", "value": "stock_value"},
		default_months=None,
		lookups={"item_group": Lookup("item", "item", "item_group")},
	),
	"stock_moves": Source(
		"stock_ledger_entry",
		{
			"id": "name",
			"date": "date",
			"item": "item",
			"warehouse": "warehouse",
			"quantity": "qty_change",
			"value": "value_change",
		},
		date="date",
		filters=(("is_cancelled", "=", 0),),
		default_months=12,
	),
	"receivables": Source(
		"sales_invoice",
		{
			"document": "name",
			"party": "customer",
			"territory": "territory",
			"posting_date": "date",
			"due_date": "due_date",
			"amount": "base_total",
			"outstanding": "outstanding",
		},
		date="date",
		filters=SUBMITTED,
		default_months=None,
	),
	"payables": Source(
		"purchase_invoice",
		{
			"document": "name",
			"party": "supplier",
			"posting_date": "date",
			"due_date": "due_date",
			"amount": "base_total",
			"outstanding": "outstanding",
		},
		date="date",
		filters=SUBMITTED,
		default_months=None,
	),
	"payments": Source(
		"payment_entry",
		{
			"document": "name",
			"date": "date",
			"party": "party",
			"party_type": "party_type",
			"direction": "payment_type",
			"amount": "base_paid_amount",
			"mode": "mode_of_payment",
		},
		date="date",
		filters=SUBMITTED,
	),
	"gl": Source(
		"gl_entry",
		{
			"id": "name",
			"date": "date",
			"account": "account",
			"debit": "debit",
			"credit": "credit",
			"cost_center": "cost_center",
			"voucher_type": "voucher_type",
			"document": "voucher_no",
			"party": "party",
		},
		date="date",
		filters=(("is_cancelled", "=", 0),),
		lookups={"root_type": Lookup("account", "account", "root_type")},
	),
	"budget": Source(
		"budget",
		{"account": "accounts.account", "cost_center": "cost_center", "amount": "accounts.budget_amount"},
		filters=SUBMITTED,
		default_months=None,
	),
	"employees": Source(
		"employee",
		{
			"employee": "name",
			"department": "department",
			"designation": "designation",
			"branch": "branch",
			"joining_date": "date_of_joining",
			"relieving_date": "relieving_date",
			"status": "status",
		},
		default_months=None,
	),
	"attendance": Source(
		"attendance",
		{
			"id": "name",
			"employee": "employee",
			"department": "department",
			"date": "date",
			"status": "status",
		},
		date="date",
		filters=SUBMITTED,
		default_months=6,
	),
	"leave": Source(
		"leave_application",
		{
			"id": "name",
			"employee": "employee",
			"department": "department",
			"leave_type": "leave_type",
			"from_date": "from_date",
			"to_date": "to_date",
			"days": "days",
			"status": "status",
		},
		date="from_date",
		filters=(("docstatus", "!=", 2),),
		default_months=12,
	),
	"projects": Source(
		"project",
		{
			"project": "name",
			"status": "status",
			"start_date": "expected_start_date",
			"end_date": "expected_end_date",
			"budget": "estimated_cost",
			"actual_cost": "costing_amount",
			"progress": "percent_complete",
		},
		default_months=None,
	),
	"timesheets": Source(
		"timesheet",
		{
			"date": "time_logs.from_time",
			"employee": "employee",
			"project": "time_logs.project",
			"activity": "time_logs.activity_type",
			"hours": "time_logs.hours",
			"billable": "time_logs.is_billable",
			"billing_amount": "time_logs.billing_amount",
			"cost_amount": "time_logs.costing_amount",
		},
		date="start_date",
		filters=SUBMITTED,
		default_months=12,
	),
	"issues": Source(
		"issue",
		{
			"document": "name",
			"opened": "opening_date",
			"resolved": "resolution_date",
			"status": "status",
			"priority": "priority",
			"party": "customer",
		},
		date="opening_date",
		default_months=12,
	),
}


# --- fetching -------------------------------------------------------------------------


def _today(session) -> dt.date:
	return dt.date.fromtimestamp(session.clock())


def _months_back(day: dt.date, months: int) -> dt.date:
	month = day.month - months
	year = day.year + (month - 1) // 12
	month = (month - 1) % 12 + 1
	return dt.date(year, month, 1)


def period_filters(source: Source, params: dict, today: dt.date) -> list[list]:
	"""The date range of the fetch: start/end when given, else the source's default look-back."""
	if not source.date:
		return []
	start, end = params.get("start"), params.get("end")
	if not start and source.default_months:
		start = _months_back(today, source.default_months).isoformat()
	out = []
	if start:
		out.append([source.date, ">=", str(start)])
	if end:
		out.append([source.date, "<=", str(end)])
	return out


def _columns_wanted(analysis, dataset: str) -> list[str]:
	wanted = list(analysis.needs.get(dataset, ())) + list(analysis.uses.get(dataset, ()))
	spec = DATASETS[dataset]
	for extra in (spec.id, spec.date, *spec.dimensions):
		if extra:
			wanted.append(extra)
	return list(dict.fromkeys(wanted))


def fetch(
	session,
	dataset: str,
	columns: list[str],
	params: dict,
	required: tuple[str, ...] = (),
	max_rows: int = MAX_ROWS,
) -> tuple[list[dict], list[str]]:
	"""Every row of one dataset for the period, as the person, renamed to the contract's columns.

	Notes say when the fetch was cut short and which `required` columns this site cannot supply.
	"""
	source = SOURCES.get(dataset)
	if source is None:
		raise ToolError(f"No source is mapped for the analytics dataset {dataset!r}.")
	derived = {c: source.derived[c] for c in columns if c in source.derived}
	wanted = list(dict.fromkeys([*columns, *(part for parts in derived.values() for part in parts)]))
	mapped = {c: source.columns[c] for c in wanted if c in source.columns}
	lookups = {c: source.lookups[c] for c in wanted if c in source.lookups}
	for lookup in lookups.values():
		mapped.setdefault(lookup.key_column, source.columns[lookup.key_column])
	fields = list(dict.fromkeys(mapped.values()))
	filters = [list(f) for f in source.filters] + period_filters(source, params, _today(session))
	rows: list[dict] = []
	offset = 0
	notes = []
	# A connector may cap a page below what was asked (the frappe one serves at most 500 rows), so a
	# short page is not the end: the end is an empty page, or one shorter than the pages before it.
	served = None
	while True:
		page = session.connector.list(
			source.entity, fields=fields, filters=filters, order_by="name asc", limit=PAGE_ROWS, offset=offset
		)
		if not page:
			break
		rows.extend({column: row.get(name) for column, name in mapped.items()} for row in page)
		offset += len(page)
		if served is not None and len(page) < served:
			break
		served = len(page)
		session.notify({"event": "analytics_fetch", "dataset": dataset, "rows": len(rows)})
		if len(rows) >= max_rows:
			notes.append(
				f"{dataset}: stopped at {len(rows):,} rows; narrow the period for a complete answer."
			)
			break
	for column, lookup in lookups.items():
		values = _look_up(session, lookup, {r.get(lookup.key_column) for r in rows} - {None, ""})
		for r in rows:
			r[column] = values.get(r.get(lookup.key_column))
	for column, (left, right) in derived.items():
		for r in rows:
			a, b = r.get(left), r.get(right)
			r[column] = a * b if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None
		notes.append(
			source.derived_notes.get(column, f"{dataset}: {column} is computed as {left} × {right}.")
		)
	helpers = [c for c in wanted if c not in columns]
	for r in rows:
		for column in helpers:
			r.pop(column, None)
	missing = [c for c in required if c not in mapped and c not in lookups and c not in derived]
	if missing:
		notes.append(f"{dataset}: this site's data has no field for {', '.join(missing)}.")
	return rows, notes


def _look_up(session, lookup: Lookup, keys: set) -> dict:
	"""`lookup.field` of each key's record, a few hundred names a request (a page is capped)."""
	keys = sorted(keys)
	values = {}
	for start in range(0, len(keys), LOOKUP_CHUNK):
		chunk = keys[start : start + LOOKUP_CHUNK]
		found = session.connector.list(
			lookup.entity, fields=["name", lookup.field], filters=[["name", "in", chunk]], limit=len(chunk)
		)
		values.update((r["name"], r.get(lookup.field)) for r in found)
	return values


def estimate_rows(session, analysis, params: dict) -> int:
	total = 0
	for dataset in analysis.needs:
		source = SOURCES.get(dataset)
		if source is None:
			continue
		filters = [list(f) for f in source.filters] + period_filters(source, params, _today(session))
		total += session.connector.count(source.entity, filters)
	return total


def _analysis(key: str):
	try:
		return analytics_catalog.get(key)
	except AnalyticsError as exc:
		raise ToolError(f"{exc}. Find analyses with analytics.catalog.") from None


def _with_defaults(session, analysis, params: dict | None) -> dict:
	params = dict(params or {})
	names = {p.name for p in analysis.all_params()}
	if "as_of" in names and not params.get("as_of"):
		params["as_of"] = _today(session).isoformat()
	return params


def compute(session, key: str, params: dict | None = None) -> dict:
	"""Fetch the datasets of analysis `key` as the person and compute it: the full result."""
	analysis = _analysis(key)
	params = _with_defaults(session, analysis, params)
	try:
		analysis.resolve(params)
	except AnalyticsError as exc:
		raise ToolError(str(exc)) from None
	data, notes = {}, []
	for dataset in analysis.needs:
		session.notify({"event": "analytics_fetch", "dataset": dataset, "rows": 0})
		data[dataset], more = fetch(
			session, dataset, _columns_wanted(analysis, dataset), params, analysis.needs[dataset]
		)
		notes += more
	session.notify({"event": "analytics_compute", "key": key})
	try:
		result = run_analysis(key, data, params)
	except AnalyticsError as exc:
		raise ToolError(f"{exc}" + (f" ({'; '.join(notes)})" if notes else "")) from None
	except (ArithmeticError, IndexError, KeyError, TypeError, ValueError) as exc:
		# A fault in an analysis must still reach the model as words, not escape as a traceback.
		raise ToolError(
			f"Analysis {key} could not be computed on this data ({type(exc).__name__}: {exc}). "
			"Try other parameters or another analysis."
		) from None
	result["warnings"] = notes + result.get("warnings", [])
	return result


def _store(session, result: dict, kind: str = "analysis") -> str:
	result_id = f"a_{secrets.token_urlsafe(9)}"
	session.results.put(result_id, {"kind": kind, "user": session.user, "result": result}, RESULT_TTL_SECONDS)
	return result_id


def _stored(session, result_id: str) -> dict:
	record = session.results.get(result_id)
	if not isinstance(record, dict) or record.get("user") != session.user:
		raise NotFound("That result is no longer available; build the analysis again.")
	return record


def _answer(result: dict, result_id: str) -> dict:
	"""What the model reads: the bounded summary, the id of the full result, and the chart for the chat."""
	return {**summary_for_model(result), "result_id": result_id, "chart": result.get("chart")}


# --- tools ----------------------------------------------------------------------------


def catalog_tool(session, words: str = "", category: str | None = None, limit: int = 8) -> dict:
	"""Find standard analyses by words and purpose (e.g. "sales trend forecast", "overdue customers", "dead stock").

	Returns each analysis's key, title, purpose and the data it reads. Build one with
	analytics.build; with no words, lists the categories and how many analyses each has.

	Args:
		words: What the person wants to know, in a few words.
		category: Only this category (sales, customers, items, purchasing, inventory, receivables, payables, cash, margins, finance, hr, projects).
		limit: How many analyses to return at most.
	"""
	if category and category not in analytics_catalog.CATEGORIES:
		raise ToolError(
			f"Unknown category {category!r}; use one of {', '.join(analytics_catalog.CATEGORIES)}."
		)
	if not words.strip():
		counts: dict[str, int] = {}
		for analysis in analytics_catalog.all_analyses():
			counts[analysis.category] = counts.get(analysis.category, 0) + 1
		return {
			"categories": [
				{"category": c, "title": t, "analyses": counts.get(c, 0)}
				for c, t in analytics_catalog.CATEGORIES.items()
			]
		}
	found = analytics_catalog.search(words, limit=limit, category=category)
	for item in found:
		item["params"] = [
			{k: v for k, v in p.items() if k in ("name", "type", "default", "choices")}
			for p in analytics_catalog.get(item["key"]).describe()["params"]
		]
	return {
		"analyses": found,
		"note": "Build one with analytics.build(key, params)."
		if found
		else "No analysis matched; try other words.",
	}


def build_tool(session, key: str, params: dict | None = None) -> dict:
	"""Compute a standard analysis on the person's own data and get its KPIs, findings and chart.

	Every number is computed in code over the complete period (forecasts, anomalies and change
	points included); quote them rather than estimating. The full result is kept under
	result_id for charts and dashboards. Parameters: start/end dates (YYYY-MM-DD) and those
	listed by analytics.catalog.

	Args:
		key: The analysis key from analytics.catalog, e.g. "sales.monthly_trend".
		params: Parameters, e.g. {"start": "2024-01-01", "end": "2024-12-31", "horizon": 3}.
	"""
	analysis = _analysis(key)
	enqueue: Callable | None = (session.context or {}).get("enqueue")
	if enqueue is not None:
		rows = estimate_rows(session, analysis, _with_defaults(session, analysis, params))
		if rows > IN_TURN_ROWS:
			job = enqueue(
				"noviz_agent.tools.analytics.background_build", {"key": key, "params": params or {}}
			)
			return {
				"status": "running",
				"job": job,
				"rows": rows,
				"message": f"{rows:,} records to read: the analysis runs in the background and the person is told when it is ready.",
			}
	result = compute(session, key, params)
	return _answer(result, _store(session, result))


def background_build(session, key: str, params: dict | None = None) -> dict:
	"""The body of a background analysis job: compute, keep the result, tell the person it is ready."""
	result = compute(session, key, params)
	result_id = _store(session, result)
	session.notify(
		{"event": "analytics_ready", "key": key, "result_id": result_id, "title": result.get("title")}
	)
	return _answer(result, result_id)


def _fetch_all(session, analysis, params: dict) -> dict:
	data = {}
	for dataset in analysis.needs:
		data[dataset], _ = fetch(session, dataset, _columns_wanted(analysis, dataset), params)
	return data


def compare_periods_tool(
	session, key: str, period_a: list[str], period_b: list[str], params: dict | None = None
) -> dict:
	"""Compare one analysis over two date ranges and get what changed and which customers, items... drove it.

	Args:
		key: The analysis key, e.g. "sales.monthly_trend".
		period_a: [start, end] of the first period (YYYY-MM-DD), usually the earlier one.
		period_b: [start, end] of the second period.
		params: Other parameters of the analysis.
	"""
	analysis = _analysis(key)
	if len(period_a) != 2 or len(period_b) != 2:
		raise ToolError("period_a and period_b are each [start, end] dates.")
	params = _with_defaults(session, analysis, params)
	span = {"start": min(period_a[0], period_b[0]), "end": max(period_a[1], period_b[1])}
	data = _fetch_all(session, analysis, {**params, **span})
	try:
		result = compare_periods(key, data, tuple(period_a), tuple(period_b), params)
	except AnalyticsError as exc:
		raise ToolError(str(exc)) from None
	return _compare_answer(session, result)


def compare_segments_tool(
	session, key: str, column: str, segment_a: str, segment_b: str, params: dict | None = None
) -> dict:
	"""Compare one analysis between two segments (e.g. territory North vs South) and what drives the gap.

	Args:
		key: The analysis key, e.g. "sales.monthly_trend".
		column: The column that splits the segments, e.g. "territory", "item_group", "party".
		segment_a: The first segment's value.
		segment_b: The second segment's value.
		params: Other parameters of the analysis.
	"""
	analysis = _analysis(key)
	params = _with_defaults(session, analysis, params)
	data = _fetch_all(session, analysis, params)
	try:
		result = compare_segments(key, data, column, segment_a, segment_b, params)
	except AnalyticsError as exc:
		raise ToolError(str(exc)) from None
	return _compare_answer(session, result)


def _compare_answer(session, result: dict) -> dict:
	full = {**result}
	sides = full.pop("results", [])
	result_id = _store(session, {**full, "sides": sides}, kind="comparison")
	summary = {
		"key": result["key"],
		"title": result["title"],
		"kpis": result["kpis"],
		"kpi_changes": result["kpi_changes"][:6],
		"drivers": {
			by: {"up": d["up"][:3], "down": d["down"][:3]} for by, d in list(result["drivers"].items())[:2]
		},
		"observations": result["observations"][:5],
		"warnings": result["warnings"][:2],
	}
	return {**jsonable(summary), "result_id": result_id, "chart": result.get("chart")}


def aggregate_tool(
	session,
	entity: str,
	metrics: list[dict],
	group_by: list[str] | None = None,
	filters: list | dict | None = None,
	order_by: str | None = None,
	limit: int = 20,
) -> dict:
	"""Totals, counts and averages of any entity grouped by fields, computed by the system as the person.

	Use for ad-hoc questions ("sales per customer this year", "open orders per status")
	instead of listing records and adding them up.

	Args:
		entity: Canonical entity, e.g. "sales_invoice".
		metrics: [{"fn": "sum", "field": "total", "as": "revenue"}, {"fn": "count"}]; fn is sum, count, avg, min or max.
		group_by: Fields to group by, e.g. ["customer"]; child fields as items.item.
		filters: Conditions, e.g. [["date", ">=", "2025-01-01"], ["docstatus", "=", 1]].
		order_by: e.g. "revenue desc".
		limit: Most groups to return.
	"""
	for metric in metrics:
		if not isinstance(metric, dict) or metric.get("fn") not in AGGREGATE_FUNCTIONS:
			raise ToolError(f"Each metric needs fn in {', '.join(AGGREGATE_FUNCTIONS)}; got {metric!r}.")
		if metric["fn"] != "count" and not metric.get("field"):
			raise ToolError(f"Metric {metric['fn']} needs a field.")
	limit = max(1, min(int(limit), AGGREGATE_MAX_ROWS))
	rows = session.connector.aggregate(
		entity, metrics=metrics, group_by=group_by or [], filters=filters, order_by=order_by, limit=limit + 1
	)
	more = len(rows) > limit
	rows = rows[:limit]
	keys = list(rows[0]) if rows else [*(group_by or []), *(m.get("as") or m["fn"] for m in metrics)]
	answer = {
		"entity": entity,
		"columns": [{"key": k, "label": k.replace("_", " ").replace(".", " ").capitalize()} for k in keys],
		"rows": rows,
		"total": len(rows),
		"note": "Computed by the system over all matching records."
		+ (f" Only the first {limit} groups are shown; narrow the filters or raise limit." if more else ""),
	}
	if group_by and rows and len(group_by) == 1:
		measure = next((k for k in keys if k not in group_by), None)
		values = [r.get(measure) for r in rows]
		if measure and all(isinstance(v, int | float) for v in values):
			answer["chart"] = charts.bar(
				f"{measure} by {group_by[0]}", [r.get(group_by[0]) for r in rows], values, measure
			)
	return jsonable(answer)


CHART_KINDS = ("line", "bar", "stacked", "pie")


def chart_tool(
	session,
	result_id: str,
	kind: str = "bar",
	x: str | None = None,
	y: list[str] | None = None,
	title: str = "",
) -> dict:
	"""A chart of a result kept on the server (from analytics.build or report.run), drawn from its rows.

	Without x and y it returns the analysis's own chart. With them it plots the named
	columns of the result's table.

	Args:
		result_id: The result_id of an earlier analytics.build or report.run.
		kind: line, bar, stacked or pie.
		x: The column for the x axis (or the pie's labels).
		y: One or more numeric columns to plot.
		title: The chart title.
	"""
	if kind not in CHART_KINDS:
		raise ToolError(f"kind must be one of {', '.join(CHART_KINDS)}.")
	record = session.results.get(result_id)
	if not isinstance(record, dict) or record.get("user") not in (None, session.user):
		raise NotFound("That result is no longer available; run it again.")
	if record.get("kind") in ("analysis", "comparison"):
		result = record["result"]
		if not x and not y:
			if not result.get("chart"):
				raise ToolError("This analysis has no chart; name x and y columns of its table.")
			return {"chart": result["chart"], "title": result.get("title")}
		table = result.get("table") or {}
		columns, rows = (
			table.get("columns", []),
			[dict(zip(table.get("columns", []), r, strict=False)) for r in table.get("rows", [])],
		)
	elif record.get("kind") == "rows":
		columns = [c.get("key") for c in record.get("columns", [])]
		rows = record.get("rows", [])
	else:
		raise ToolError("That result cannot be charted.")
	if not x or not y:
		raise ToolError(f"Name x and y from the columns: {', '.join(map(str, columns))}.")
	for name in [x, *y]:
		if name not in columns:
			raise ToolError(f"No column {name!r}; the columns are {', '.join(map(str, columns))}.")
	labels = [r.get(x) for r in rows][: charts.MAX_CATEGORIES * 10]
	series = {name: [r.get(name) for r in rows][: len(labels)] for name in y}
	heading = title or f"{', '.join(y)} by {x}"
	if kind == "pie":
		figure = charts.pie(heading, labels, series[y[0]])
	elif kind == "line":
		figure = charts.line(heading, labels, series)
	else:
		figure = charts.grouped(heading, labels, series, stacked=kind == "stacked")
	return {"chart": figure, "title": heading}


def dashboard_tool(session, result_ids: list[str], title: str = "Dashboard") -> dict:
	"""Put several built analyses on one dashboard (KPIs and charts together); it can be shared as a PDF.

	Args:
		result_ids: result_id values from analytics.build, in the order to show them.
		title: The dashboard's title.
	"""
	results = []
	for result_id in result_ids:
		record = _stored(session, result_id)
		if record.get("kind") != "analysis":
			raise ToolError(f"{result_id} is not an analysis result.")
		results.append(record["result"])
	try:
		board = build_dashboard(results, title)
	except AnalyticsError as exc:
		raise ToolError(str(exc)) from None
	board_id = _store(session, board, kind="dashboard")
	return {
		"title": title,
		"result_id": board_id,
		"panels": [{"key": p["key"], "title": p["title"]} for p in board["panels"]],
		"kpis": board["kpis"][:8],
		"note": "The dashboard is kept under result_id; the person can download it as a PDF.",
	}


def dashboard_pdf(session, result_id: str) -> bytes:
	"""The PDF of a stored dashboard (or of one analysis), for the edge to send to the person."""
	from analytics.pdf import render

	record = _stored(session, result_id)
	if record.get("kind") == "dashboard":
		return render(record["result"])
	if record.get("kind") == "analysis":
		return render(build_dashboard([record["result"]], record["result"].get("title") or "Analysis"))
	raise ToolError("Only dashboards and analyses can be exported as PDF.")


RULES = (
	"For how the business is doing, trends, forecasts, rankings, ageing or margins, find a standard analysis "
	"with analytics.catalog and run it with analytics.build; never add up rows or estimate numbers yourself. "
	"Quote KPIs and observations as given; say which period they cover."
)


def tools() -> list[Tool]:
	from noviz_agent.engine.tools import function_tool

	catalog = function_tool("analytics.catalog", "analytics", tags=("spine",), prompt_rules=RULES)(
		catalog_tool
	)
	catalog.parameters["properties"]["category"]["enum"] = list(analytics_catalog.CATEGORIES)
	catalog.parameters["properties"]["limit"].update(minimum=1, maximum=20)
	build = function_tool("analytics.build", "analytics")(build_tool)
	build.parameters["properties"]["key"]["enum"] = list(analytics_catalog.ANALYSES)
	periods = function_tool("analytics.compare_periods", "analytics")(compare_periods_tool)
	for name in ("period_a", "period_b"):
		periods.parameters["properties"][name].update(minItems=2, maxItems=2)
	segments = function_tool("analytics.compare_segments", "analytics")(compare_segments_tool)
	aggregate = function_tool("analytics.aggregate", "analytics", tags=("spine",))(aggregate_tool)
	aggregate.parameters["properties"]["limit"].update(minimum=1, maximum=AGGREGATE_MAX_ROWS)
	chart = function_tool("chart.build", "analytics")(chart_tool)
	chart.parameters["properties"]["kind"]["enum"] = list(CHART_KINDS)
	board = function_tool("analytics.dashboard", "analytics")(dashboard_tool)
	return [catalog, build, periods, segments, aggregate, chart, board]
