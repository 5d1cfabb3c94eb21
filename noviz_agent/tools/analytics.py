"""Analytics tools: find an analysis, build it from the person's own data, compare, aggregate, chart.

The model names an analysis and its parameters, never rows. `analytics.build` fetches the
complete period through the connector as the person, maps canonical fields onto the
analytics data contract (the table `SOURCES` below: the only place that knows which entity
feeds which dataset), runs the computation in the frappe-free `analytics` package and
returns a bounded summary plus the chart. The full result stays in `session.results` under
`result_id` for paging, the chat's chart, `chart.build` and the dashboard PDF.

Large fetches are handed to a background job when the edge offers one
(`session.enqueue_analysis`, the frappe side's `frappe.enqueue` on the long queue);
progress goes to the person through `session.notify`.
"""

from __future__ import annotations

import datetime as dt
import secrets

from analytics import catalog as analytics_catalog
from analytics import charts
from analytics.compare import compare_periods, compare_segments
from analytics.contract import DATASETS
from analytics.dashboard import build as build_dashboard
from analytics.errors import AnalyticsError
from analytics.result import jsonable, summary_for_model
from analytics.runner import run as run_analysis
from noviz_agent.connectors import dataset_reader as reader
from noviz_agent.connectors.base import AGGREGATE_FUNCTIONS, filters_schema
from noviz_agent.connectors.dataset_reader import Scope
from noviz_agent.connectors.model import load_model
from noviz_agent.connectors.translate import parse_filters
from noviz_agent.engine.errors import NotFound, ToolError
from noviz_agent.engine.tools import Tool

RESULT_TTL_SECONDS = 60 * 60
# Above this many rows a fetch is moved to a background job when the edge can run one.
IN_TURN_ROWS = 50_000
AGGREGATE_MAX_ROWS = 50
# Documents a child-table filter may select before a document-level total is refused as too broad.
AGGREGATE_MAX_DOCUMENTS = 20_000


def _today(session) -> dt.date:
	return dt.date.fromtimestamp(session.clock())


def _columns_wanted(analysis, dataset: str) -> list[str]:
	wanted = list(analysis.needs.get(dataset, ())) + list(analysis.uses.get(dataset, ()))
	spec = DATASETS[dataset]
	for extra in (spec.id, spec.date, *spec.dimensions):
		if extra:
			wanted.append(extra)
	return list(dict.fromkeys(wanted))


def estimate_rows(session, analysis, params: dict, scope: Scope | None = None) -> int:
	return sum(
		reader.estimate_rows(session, dataset, params, scope, _today(session)) for dataset in analysis.needs
	)


def _analysis(key: str):
	try:
		return analytics_catalog.get(key)
	except AnalyticsError as exc:
		raise ToolError(f"{exc}. Find analyses with analytics.catalog.") from None


def _fiscal_year(session, name: str | None) -> dict:
	"""The fiscal year named, else the one containing today: its name and dates."""
	today = _today(session).isoformat()
	filters = [["year", "=", name]] if name else [["start_date", "<=", today], ["end_date", ">=", today]]
	found = session.connector.list(
		"fiscal_year", fields=["name", "year", "start_date", "end_date"], filters=filters, limit=1
	)
	if not found:
		raise ToolError(
			f"No fiscal year {name!r}; name one as it is written in Fiscal Year."
			if name
			else "No fiscal year contains today; name the fiscal_year to compare."
		)
	return found[0]


def _with_defaults(session, analysis, params: dict | None) -> dict:
	params = dict(params or {})
	names = {p.name for p in analysis.all_params()}
	if "as_of" in names and not params.get("as_of"):
		params["as_of"] = _today(session).isoformat()
	if "fiscal_year" in names:
		# A budget compares one fiscal year: its dates bound the ledger read.
		year = _fiscal_year(session, params.get("fiscal_year"))
		params.update(fiscal_year=year["name"], start=str(year["start_date"]), end=str(year["end_date"]))
	return params


def _cost_only(rows: list[dict], dataset: str) -> tuple[list[dict], list[str]]:
	"""Lines with a stock ledger cost; the rest are named, never costed from the item master."""
	costed = [r for r in rows if isinstance(r.get("cost"), int | float)]
	left = len(rows) - len(costed)
	if rows and not costed:
		raise ToolError(
			f"None of the {len(rows):,} {dataset} lines has a cost in the stock ledger (nothing was delivered "
			"from stock, or the ledger cannot be read as this person), so margins cannot be computed; "
			"they are not estimated from item master rates."
		)
	if not left:
		return rows, []
	amount = sum(float(r.get("amount") or 0) for r in rows if r not in costed)
	return costed, [
		f"{dataset}: {left:,} line(s) worth {amount:,.2f} have no stock ledger cost (services, or not "
		"delivered from stock) and are left out of the margins."
	]


def fetch_all(session, analysis, params: dict, scope: Scope) -> tuple[dict, list[str]]:
	"""Every dataset an analysis reads, for its scope and period, and the notes about them."""
	data, notes = {}, []
	for dataset in analysis.needs:
		session.notify({"event": "analytics_fetch", "dataset": dataset, "rows": 0})
		rows, more = reader.fetch(
			session,
			dataset,
			_columns_wanted(analysis, dataset),
			params,
			scope=scope,
			today=_today(session),
			required=analysis.needs[dataset],
			# Analyses that apply start/end themselves (new customers, headcount) need the history before it.
			full_history=not analysis.period_filter,
		)
		if "cost" in analysis.needs[dataset]:
			rows, costed = _cost_only(rows, dataset)
			more += costed
		data[dataset] = rows
		notes += more
	return data, notes


def compute(session, key: str, params: dict | None = None, company: str | None = None, combine=None) -> dict:
	"""Fetch the datasets of analysis `key` as the person, for one company, and compute it."""
	analysis = _analysis(key)
	scope = reader.resolve_scope(session, company, combine)
	params = _with_defaults(session, analysis, params)
	try:
		analysis.resolve(params)
	except AnalyticsError as exc:
		raise ToolError(str(exc)) from None
	data, notes = fetch_all(session, analysis, params, scope)
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
	result.update(scope.describe())
	result["period"] = period_of(analysis, params, _today(session))
	if result.get("chart"):  # the chart's title names the company, currency and period too
		result["chart"] = charts.scoped(result["chart"], result)
	return result


def period_of(analysis, params: dict, today) -> dict:
	"""The dates a result covers, as read: the start and end asked for, else the default look-back
	of its data up to today; a period that runs to today ends in a partial (unfinished) one; an
	as-of analysis (ageing, balances) names its day."""
	if params.get("as_of") and not params.get("start"):
		return {"as_of": str(params["as_of"])}
	start, end = params.get("start"), params.get("end")
	if not start and analysis.period_filter:
		for dataset in analysis.needs:
			src = reader.source(dataset)
			if src.date and src.default_months:
				start = reader.months_back(today, src.default_months).isoformat()
				break
	end = str(end) if end else today.isoformat()
	return {"start": str(start) if start else None, "end": end, "partial": end >= today.isoformat()}


def _store(session, result: dict, kind: str = "analysis") -> str:
	result_id = f"a_{secrets.token_urlsafe(9)}"
	session.results.put(result_id, {"kind": kind, "user": session.user, "result": result}, RESULT_TTL_SECONDS)
	return result_id


def _stored(session, result_id: str) -> dict:
	record = session.results.get(result_id)
	if not isinstance(record, dict) or record.get("user") != session.user:
		raise NotFound("That result is no longer available; build the analysis again.")
	return record


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


def _answer(result: dict, result_id: str) -> dict:
	"""What the model reads: the bounded summary, whose books it covers, the result id and the chart."""
	scope = {
		k: result[k]
		for k in ("company", "currency", "other_companies", "scope_note", "period")
		if k in result
	}
	return {**scope, **summary_for_model(result), "result_id": result_id, "chart": result.get("chart")}


def build_tool(
	session, key: str, params: dict | None = None, company: str = "", combine: list[str] | None = None
) -> dict:
	"""Compute a standard analysis on one company's books and get its KPIs, findings and chart.

	Every number is computed in code over the complete period (forecasts, anomalies and change
	points included); quote them rather than estimating, and say the company and currency given
	with them. The full result is kept under result_id for charts and dashboards. Parameters:
	start/end dates (YYYY-MM-DD) and those listed by analytics.catalog.

	Args:
		key: The analysis key from analytics.catalog, e.g. "sales.monthly_trend".
		params: Parameters, e.g. {"start": "2024-01-01", "end": "2024-12-31", "horizon": 3}.
		company: The company whose books to read; empty for the person's default company.
		combine: Several companies to add together, only when the person asks for it; they must keep their books in one currency.
	"""
	analysis = _analysis(key)
	scope = reader.resolve_scope(session, company or None, combine)
	enqueue_analysis = session.enqueue_analysis
	if enqueue_analysis is not None:
		rows = estimate_rows(session, analysis, _with_defaults(session, analysis, params), scope)
		if rows > IN_TURN_ROWS:
			job = enqueue_analysis(key, params or {}, list(scope.companies))
			return {
				"status": "running",
				"job": job,
				"rows": rows,
				**scope.describe(),
				"message": f"{rows:,} records to read: the analysis runs in the background and the person is told when it is ready.",
			}
	result = compute(session, key, params, combine=list(scope.companies))
	return _answer(result, _store(session, result))


def background_build(
	session, key: str, params: dict | None = None, companies: list[str] | None = None
) -> dict:
	"""The body of a background analysis job: compute, keep the result, tell the person it is ready."""
	result = compute(session, key, params, combine=companies)
	result_id = _store(session, result)
	session.notify(
		{"event": "analytics_ready", "key": key, "result_id": result_id, "title": result.get("title")}
	)
	return _answer(result, result_id)


def _scoped_data(session, analysis, params: dict, company: str, combine) -> tuple[dict, Scope]:
	scope = reader.resolve_scope(session, company or None, combine)
	data, _ = fetch_all(session, analysis, params, scope)
	return data, scope


def compare_periods_tool(
	session,
	key: str,
	period_a: list[str],
	period_b: list[str],
	params: dict | None = None,
	company: str = "",
) -> dict:
	"""Compare one analysis over two date ranges and get what changed and which customers, items... drove it.

	Args:
		key: The analysis key, e.g. "sales.monthly_trend".
		period_a: [start, end] of the first period (YYYY-MM-DD), usually the earlier one.
		period_b: [start, end] of the second period.
		params: Other parameters of the analysis.
		company: The company whose books to read; empty for the person's default company.
	"""
	analysis = _analysis(key)
	if len(period_a) != 2 or len(period_b) != 2:
		raise ToolError("period_a and period_b are each [start, end] dates.")
	params = _with_defaults(session, analysis, params)
	span = {"start": min(period_a[0], period_b[0]), "end": max(period_a[1], period_b[1])}
	data, scope = _scoped_data(session, analysis, {**params, **span}, company, None)
	try:
		result = compare_periods(key, data, tuple(period_a), tuple(period_b), params)
	except AnalyticsError as exc:
		raise ToolError(str(exc)) from None
	return _compare_answer(session, {**result, **scope.describe()})


def compare_segments_tool(
	session,
	key: str,
	column: str,
	segment_a: str,
	segment_b: str,
	params: dict | None = None,
	company: str = "",
) -> dict:
	"""Compare one analysis between two segments (e.g. territory North vs South) and what drives the gap.

	Args:
		key: The analysis key, e.g. "sales.monthly_trend".
		column: The column that splits the segments, e.g. "territory", "item_group", "party".
		segment_a: The first segment's value.
		segment_b: The second segment's value.
		params: Other parameters of the analysis.
		company: The company whose books to read; empty for the person's default company.
	"""
	analysis = _analysis(key)
	params = _with_defaults(session, analysis, params)
	data, scope = _scoped_data(session, analysis, params, company, None)
	try:
		result = compare_segments(key, data, column, segment_a, segment_b, params)
	except AnalyticsError as exc:
		raise ToolError(str(exc)) from None
	return _compare_answer(session, {**result, **scope.describe()})


def _compare_answer(session, result: dict) -> dict:
	if result.get("chart"):
		result["chart"] = charts.scoped(result["chart"], result)
	full = {**result}
	sides = full.pop("results", [])
	result_id = _store(session, {**full, "sides": sides}, kind="comparison")
	summary = {
		"company": result.get("company"),
		"currency": result.get("currency"),
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
	filters: list[dict] | None = None,
	order_by: str | None = None,
	limit: int = 20,
	company: str = "",
) -> dict:
	"""Totals, counts and averages of any entity grouped by fields, computed by the system as the person.

	Use for ad-hoc questions ("sales per customer this year", "open orders per status")
	instead of listing records and adding them up.

	Args:
		entity: Canonical entity, e.g. "sales_invoice".
		metrics: [{"fn": "sum", "field": "total", "as": "revenue"}, {"fn": "count"}]; fn is sum, count, avg, min or max.
		group_by: Fields to group by, e.g. ["customer"]; child fields as items.item.
		filters: Conditions, e.g. [{"field": "date", "op": ">=", "value": "2025-01-01"}].
		order_by: e.g. "revenue desc".
		limit: Most groups to return.
		company: The company whose records to total; empty: sums and averages for the person's default company, counts over every company the person can read.
	"""
	for metric in metrics:
		if not isinstance(metric, dict) or metric.get("fn") not in AGGREGATE_FUNCTIONS:
			raise ToolError(f"Each metric needs fn in {', '.join(AGGREGATE_FUNCTIONS)}; got {metric!r}.")
		if metric["fn"] != "count" and not metric.get("field"):
			raise ToolError(f"Metric {metric['fn']} needs a field.")
	limit = max(1, min(int(limit), AGGREGATE_MAX_ROWS))
	filters, scope = scoped_aggregate_filters(session, entity, metrics, group_by or [], filters, company)
	rows = (
		session.connector.aggregate(
			entity,
			metrics=metrics,
			group_by=group_by or [],
			filters=filters,
			order_by=order_by,
			limit=limit + 1,
		)
		if filters is not None
		else []
	)
	more = len(rows) > limit
	rows = rows[:limit]
	keys = list(rows[0]) if rows else [*(group_by or []), *(m.get("as") or m["fn"] for m in metrics)]
	answer = {
		"entity": entity,
		**(scope.describe() if scope else {}),
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


def scoped_aggregate_filters(
	session, entity: str, metrics: list[dict], group_by: list[str], filters, company: str = ""
) -> tuple[list | None, Scope | None]:
	"""The filters an aggregate really runs with: one company's records, each document counted once.

	A document-level amount (an invoice's total) summed over a join with its lines would be added
	once per line: grouped by a line field it is refused, filtered by one it is totalled over the
	matching documents instead. None as filters means no document matches.
	"""
	ent = load_model().entity(entity)
	# Money is added up one company (and currency) at a time; counting documents covers every
	# company the person can read, as the desk's list does, unless a company is named.
	counts_only = all(str(m.get("fn", "")).lower() == "count" for m in metrics)
	triples, scope = reader.company_filters(
		session, entity, filters, company or None, required=not counts_only
	)
	conditions = parse_filters(ent, triples)
	per_document = [
		m for m in metrics if m.get("fn") in ("sum", "avg") and m.get("field") and "." not in m["field"]
	]
	if not per_document:
		return triples, scope
	line_fields = [g for g in group_by if "." in g] + [
		m["field"] for m in metrics if "." in (m.get("field") or "")
	]
	if line_fields:
		raise ToolError(
			f"{per_document[0]['field']} is a whole-document amount; next to the line field {line_fields[0]} "
			"it would be added once per line. Total a line amount instead (e.g. items.net_amount), "
			"or leave the line field out."
		)
	if not any(c.child for c in conditions):
		return triples, scope
	names = list(dict.fromkeys(r["name"] for r in reader.pages(session, entity, ["name"], triples, ["name"])))
	if len(names) > AGGREGATE_MAX_DOCUMENTS:
		raise ToolError(
			f"{len(names):,} documents match the line conditions; narrow the filters (a date range) to total them."
		)
	if not names:
		return None, scope
	# The documents that have a matching line, each once; the line conditions are already applied.
	return [t for t, c in zip(triples, conditions, strict=True) if c.child is None] + [
		["name", "in", names]
	], scope


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
	if record.get("kind") in ("analysis", "comparison"):
		figure = charts.scoped(figure, record["result"])
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


def dashboard_pdf(session, result_id: str, meta: dict | None = None) -> bytes:
	"""The PDF of a stored dashboard (or of one analysis), for the edge to send to the person.
	`meta`: the site's letter head, company, currency, who and when, and its number formatter."""
	from analytics.pdf import render

	record = _stored(session, result_id)
	try:
		if record.get("kind") == "dashboard":
			return render(record["result"], meta)
		if record.get("kind") == "analysis":
			title = record["result"].get("title") or "Analysis"
			return render(build_dashboard([record["result"]], title), meta)
	except AnalyticsError as exc:  # the pdf extra is not installed: the message says how to add it
		raise ToolError(str(exc)) from None
	raise ToolError("Only dashboards and analyses can be exported as PDF.")


RULES = (
	"For how the business is doing, trends, forecasts, rankings, ageing or margins, find a standard analysis "
	"with analytics.catalog and run it with analytics.build; never add up rows or estimate numbers yourself. "
	"Quote KPIs and observations as given; say which company, currency and period they cover. Every figure "
	"is one company's: the person's default unless they name another; combine companies only when asked."
)


def tools() -> list[Tool]:
	from noviz_agent.engine.tools import function_tool

	catalog = function_tool(
		"analytics.catalog", "analytics", tags=("spine",), prompt_rules=RULES, trusted_output=True
	)(catalog_tool)
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
	aggregate.parameters["properties"]["filters"] = filters_schema()
	chart = function_tool("chart.build", "analytics")(chart_tool)
	chart.parameters["properties"]["kind"]["enum"] = list(CHART_KINDS)
	board = function_tool("analytics.dashboard", "analytics")(dashboard_tool)
	return [catalog, build, periods, segments, aggregate, chart, board]
