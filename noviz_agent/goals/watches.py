"""The watches a goal resolves to: each is an analysis of the catalogue, run through the gateway as the
owner, and a rule that turns its full result into findings.

A watch never computes a figure itself: it calls `analytics.build` (and, for the records behind a
finding, a list tool) exactly as a turn would, reads the full result the tool kept in the owner's
result store, and only selects and labels. Adding a watch kind is adding a row to `KINDS`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from noviz_agent.connectors.model import desk_path, doc_url
from noviz_agent.engine import gateway
from noviz_agent.engine.gateway import ToolResult
from noviz_agent.goals.findings import LASTING, Finding
from noviz_agent.goals.spec import WatchSpec


class WatchFailed(Exception):
	"""A watch could not be computed this time (the tool's own words); the run reports it."""


class WatchRefused(WatchFailed):
	"""The owner may no longer read what the watch needs: the goal stops."""


@dataclass(frozen=True)
class Param:
	name: str
	kind: type
	default: float | int | str | None
	minimum: float | None = None
	maximum: float | None = None
	description: str = ""
	choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class WatchKind:
	key: str
	title: str
	description: str
	analyses: tuple[str, ...]
	evaluate: Callable[[WatchContext, dict], list[Finding]]
	params: tuple[Param, ...] = ()
	# Write tools whose proposals fit this watch's findings (offered only when the owner may use them).
	proposes: tuple[str, ...] = ()
	# The list tool that shows the records behind a finding, when the owner may use it.
	records_tool: str | None = None


@dataclass
class WatchContext:
	"""One run's access to the books, as the goal's owner; every call goes through the gateway."""

	session: object
	company: str | None
	today: dt.date
	calls: list[ToolResult] = field(default_factory=list)

	def build(self, key: str, params: dict) -> dict:
		"""The full result of analysis `key` for the goal's company (KPIs, table, series, scope)."""
		args = {"key": key, "params": params, "company": self.company or ""}
		result = gateway.call_tool(self.session, "analytics.build", args)
		self.calls.append(result)
		if result.status == "refused" or (
			result.status == "error" and not self.session.may_use("analytics.build")
		):
			raise WatchRefused(result.error or f"{key} was refused.")
		if result.status != "ok":
			raise WatchFailed(result.error or f"{key} could not be computed.")
		data = result.data if isinstance(result.data, dict) else {}
		kept = self.session.results.get(data.get("result_id") or "")
		if not isinstance(kept, dict) or kept.get("user") != self.session.user:
			raise WatchFailed(f"The result of {key} was not kept; it is computed again next run.")
		return kept["result"]

	def rows(self, tool: str, args: dict) -> list[dict]:
		"""Rows of a list tool, or none when the owner may not use it (records are a courtesy, not a need)."""
		if not self.session.may_use(tool):
			return []
		result = gateway.call_tool(self.session, tool, args)
		self.calls.append(result)
		if result.status != "ok" or not isinstance(result.data, dict):
			return []
		return [r for r in result.data.get("rows") or [] if isinstance(r, dict)]


# --- small helpers ------------------------------------------------------------------------------


def link(doctype: str, name: str) -> dict:
	return {"doctype": doctype, "name": name, "link": doc_url(doctype, name)}


def _column(result: dict, name: str) -> int:
	columns = [str(c).lower() for c in (result.get("table") or {}).get("columns") or []]
	if name not in columns:
		raise WatchFailed(
			f"{result.get('key')} has no column {name!r}; its columns are {', '.join(columns)}."
		)
	return columns.index(name)


def _rows(result: dict) -> list[list]:
	return [list(r) for r in (result.get("table") or {}).get("rows") or []]


def _scope(result: dict) -> dict:
	return {"company": result.get("company"), "currency": result.get("currency")}


def money(value: float) -> str:
	return f"{value:,.2f}"


def last_complete_month(today: dt.date) -> tuple[dt.date, dt.date]:
	"""First and last day of the last month that has ended before `today`."""
	end = today.replace(day=1) - dt.timedelta(days=1)
	return end.replace(day=1), end


def _overdue_invoices(ctx: WatchContext, days: int, customer: str | None = None) -> list[dict]:
	cutoff = (ctx.today - dt.timedelta(days=days)).isoformat()
	filters = [
		{"field": "docstatus", "op": "=", "value": 1},
		{"field": "outstanding", "op": ">", "value": 0},
		{"field": "due_date", "op": "<", "value": cutoff},
	]
	if customer:
		filters.append({"field": "customer", "op": "=", "value": customer})
	if ctx.company:
		filters.append({"field": "company", "op": "=", "value": ctx.company})
	args = {"filters": filters, "order_by": "due_date asc", "fields": ["name"]}
	rows = ctx.rows("sales_invoice.list", args)
	return [link("Sales Invoice", r["name"]) for r in rows[:10] if r.get("name")]


# --- the watch kinds --------------------------------------------------------------------------


def receivables_over(ctx: WatchContext, p: dict) -> list[Finding]:
	days, limit = int(p["days"]), float(p["limit"])
	result = ctx.build("receivables.ageing", {"buckets": str(days), "as_of": ctx.today.isoformat()})
	rows = _rows(result)
	if not rows:
		return []
	over = float(rows[-1][_column(result, "amount")] or 0)
	documents = int(rows[-1][_column(result, "documents")] or 0)
	if over <= limit:
		return []
	# A new report when the excess grows by another quarter of the limit, not on every day's drift.
	band = int((over - limit) // (limit * 0.25))
	return [
		Finding(
			key=f"receivables_over:{days}",
			watch="receivables_over",
			title=f"Receivables more than {days} days overdue are {money(over)}, over the limit of {money(limit)}",
			state=f"over the limit, band {band}",
			why=f"The goal keeps what is more than {days} days overdue under {money(limit)}; it is "
			f"{money(over - limit)} above it.",
			figures=[
				{"label": f"More than {days} days overdue", "value": over, "unit": "currency"},
				{"label": "Limit", "value": limit, "unit": "currency"},
				{"label": "Documents", "value": documents, "unit": "count"},
			],
			period={"as_of": ctx.today.isoformat()},
			records=_overdue_invoices(ctx, days),
			subject={"days": days, "limit": limit},
			**_scope(result),
		)
	]


def overdue_customers(ctx: WatchContext, p: dict) -> list[Finding]:
	days = int(p["days"])
	result = ctx.build("receivables.overdue_by_customer", {"top_n": 100, "as_of": ctx.today.isoformat()})
	if not _rows(result):
		return []
	who, amount = _column(result, "customer"), _column(result, "overdue")
	count, oldest = _column(result, "documents"), _column(result, "oldest days")
	found = []
	for row in _rows(result):
		age = float(row[oldest] or 0)
		if age <= days:
			continue
		customer, owed = str(row[who]), float(row[amount] or 0)
		# Reported again as the oldest invoice passes twice and three times the limit.
		band = min(int(age // days), 3)
		found.append(
			Finding(
				key=f"overdue_customers:{customer}",
				watch="overdue_customers",
				title=f"{customer} owes {money(owed)} overdue; the oldest invoice is {age:.0f} days past due",
				state=f"oldest invoice more than {band * days} days overdue",
				why=f"An invoice more than {days} days past due usually means the customer has stopped paying or "
				"disputes it; a follow-up now keeps it collectable.",
				figures=[
					{"label": "Overdue", "value": owed, "unit": "currency"},
					{"label": "Overdue documents", "value": int(row[count] or 0), "unit": "count"},
					{"label": "Oldest, days past due", "value": age, "unit": "days"},
				],
				period={"as_of": ctx.today.isoformat()},
				records=[link("Customer", customer), *_overdue_invoices(ctx, days, customer)],
				subject={"customer": customer, "overdue": owed},
				**_scope(result),
			)
		)
	return found


def stock_cover(ctx: WatchContext, p: dict) -> list[Finding]:
	days, window = int(p["days"]), int(p["window"])
	result = ctx.build(
		"inventory.days_of_cover", {"days": window, "min_days": days, "as_of": ctx.today.isoformat()}
	)
	if not _rows(result):
		return []
	item, on_hand = _column(result, "item"), _column(result, "on hand")
	rate, cover = _column(result, "sold per day"), _column(result, "days of cover")
	found = []
	for row in _rows(result):
		left, daily = float(row[cover] or 0), float(row[rate] or 0)
		if left >= days or daily <= 0:
			continue
		code, held = str(row[item]), float(row[on_hand] or 0)
		runs_out = ctx.today + dt.timedelta(days=max(0, math.floor(left)))
		found.append(
			Finding(
				key=f"stock_cover:{code}",
				watch="stock_cover",
				title=f"{code} runs out in about {left:.0f} days ({held:,.0f} on hand, {daily:,.1f} sold a day)"
				if held > 0
				else f"{code} is out of stock ({daily:,.1f} sold a day)",
				state="out of stock" if held <= 0 else f"under {days} days of cover",
				why=f"At the last {window} days' rate it runs out around {runs_out.isoformat()}, within the "
				f"{days} days the goal watches; ordering now keeps it in stock.",
				figures=[
					{"label": "On hand", "value": held, "unit": "quantity"},
					{"label": "Sold per day", "value": daily, "unit": "quantity"},
					{"label": "Days of cover", "value": left, "unit": "days"},
				],
				period={"as_of": ctx.today.isoformat(), "rate_over_days": window},
				records=[link("Item", code)],
				subject={
					"item": code,
					"on_hand": held,
					"daily": daily,
					# Enough for twice the watched span at the current rate, less what is on hand.
					"suggested_qty": max(1, math.ceil(daily * days * 2 - max(held, 0))),
				},
				**_scope(result),
			)
		)
	return found


def below_reorder(ctx: WatchContext, p: dict) -> list[Finding]:
	result = ctx.build("inventory.below_reorder", {})
	if not _rows(result):
		return []
	item, where = _column(result, "item"), _column(result, "warehouse")
	held, level, short = (
		_column(result, "on hand"),
		_column(result, "re-order level"),
		_column(result, "shortfall"),
	)
	found = []
	for row in _rows(result):
		code, warehouse = str(row[item]), str(row[where])
		quantity = float(row[held] or 0)
		found.append(
			Finding(
				key=f"below_reorder:{code}:{warehouse}",
				watch="below_reorder",
				title=f"{code} in {warehouse} is below its re-order level ({quantity:,.0f} of {float(row[level]):,.0f})",
				state="out of stock" if quantity <= 0 else "below re-order level",
				why="Its re-order level says a new order is due; below it the item may run out before goods arrive.",
				figures=[
					{"label": "On hand", "value": quantity, "unit": "quantity"},
					{"label": "Re-order level", "value": float(row[level] or 0), "unit": "quantity"},
					{"label": "Shortfall", "value": float(row[short] or 0), "unit": "quantity"},
				],
				period={"as_of": ctx.today.isoformat()},
				records=[link("Item", code), link("Warehouse", warehouse)],
				subject={
					"item": code,
					"warehouse": warehouse,
					"suggested_qty": max(1, math.ceil(float(row[short] or 1))),
				},
				**_scope(result),
			)
		)
	return found


def sales_forecast(ctx: WatchContext, p: dict) -> list[Finding]:
	start, end = last_complete_month(ctx.today)
	label = f"{start:%Y-%m}"
	before = start - dt.timedelta(days=1)
	# The forecast as it stood before the month (fit on the months before it), then the month itself.
	prior = ctx.build("sales.monthly_trend", {"end": before.isoformat(), "horizon": 1})
	forecast = ((prior.get("series") or {}).get("forecast")) or {}
	if label not in (forecast.get("labels") or []):
		return []
	at = forecast["labels"].index(label)
	low, high, point = forecast["lower"][at], forecast["upper"][at], forecast["point"][at]
	actual_result = ctx.build("sales.monthly_trend", {"end": end.isoformat(), "horizon": 1})
	series = actual_result.get("series") or {}
	if label not in (series.get("labels") or []):
		return []
	actual = float(series["values"][series["labels"].index(label)] or 0)
	if low is None or high is None or low <= actual <= high:
		return []
	below = actual < low
	gap = (low - actual) if below else (actual - high)
	return [
		Finding(
			key=f"sales_forecast:{label}",
			watch="sales_forecast",
			title=f"Sales in {label} were {money(actual)}, {'below' if below else 'above'} the forecast's 80% range "
			f"({money(low)} to {money(high)})",
			state="below the 80% range" if below else "above the 80% range",
			why=f"The forecast made from the months before put {label} in that range 80% of the time; "
			f"{money(gap)} {'short of' if below else 'over'} its {'lower' if below else 'upper'} end is worth explaining.",
			figures=[
				{"label": f"Sales {label}", "value": actual, "unit": "currency"},
				{"label": "Forecast", "value": point, "unit": "currency"},
				{"label": "80% range, low", "value": low, "unit": "currency"},
				{"label": "80% range, high", "value": high, "unit": "currency"},
			],
			period={"start": start.isoformat(), "end": end.isoformat(), "label": label, "partial": False},
			records=[
				{
					"doctype": "Report",
					"name": "Sales Analytics",
					"link": desk_path("query-report/Sales Analytics"),
				}
			],
			subject={"month": label, "direction": "below" if below else "above"},
			kind=LASTING,
			**_scope(actual_result),
		)
	]


def demand_change(ctx: WatchContext, p: dict) -> list[Finding]:
	percent, direction = float(p["percent"]), str(p["direction"])
	_, end = last_complete_month(ctx.today)
	result = ctx.build("items.movers", {"months": 1, "end": end.isoformat(), "top_n": 100})
	if not _rows(result):
		return []
	item, before, after = _column(result, "item"), _column(result, "before"), _column(result, "after")
	window = f"{end:%Y-%m}"
	found = []
	for row in _rows(result):
		was, now = float(row[before] or 0), float(row[after] or 0)
		if was <= 0:
			continue
		change = (now - was) / was * 100
		up = change >= percent and direction in ("up", "both")
		down = change <= -percent and direction in ("down", "both")
		if not (up or down):
			continue
		code = str(row[item])
		found.append(
			Finding(
				key=f"demand_change:{code}:{window}",
				watch="demand_change",
				title=f"Sales of {code} {'rose' if up else 'fell'} {abs(change):.0f}% in {window} "
				f"({money(now)} against {money(was)} the month before)",
				state="rising" if up else "falling",
				why="A jump in demand empties stock faster than the usual re-orders refill it"
				if up
				else "A fall in demand leaves stock that sells slowly",
				figures=[
					{"label": "Month before", "value": was, "unit": "currency"},
					{"label": window, "value": now, "unit": "currency"},
					{"label": "Change", "value": round(change, 1), "unit": "%"},
				],
				period={"label": window, "end": end.isoformat(), "partial": False},
				records=[link("Item", code)],
				subject={"item": code, "change_percent": round(change, 1)},
				kind=LASTING,
				**_scope(result),
			)
		)
	return found


TREND_ANALYSES = (
	"sales.weekly_trend",
	"sales.monthly_trend",
	"sales.invoice_count_trend",
	"customers.active_trend",
	"purchasing.spend_trend",
	"cash.net_flow_trend",
	"cash.receipts_trend",
	"finance.expense_trend",
)


def trend_anomalies(ctx: WatchContext, p: dict) -> list[Finding]:
	key = str(p["analysis"])
	result = ctx.build(key, {"horizon": 0})
	series = result.get("series") or {}
	title = result.get("title") or key
	found = []
	for anomaly in series.get("anomalies") or []:
		label, z = str(anomaly.get("label")), float(anomaly.get("z") or 0)
		found.append(
			Finding(
				key=f"trend_anomalies:{key}:{label}",
				watch="trend_anomalies",
				title=f"{title}: {label} was unusually {'high' if z > 0 else 'low'} ({anomaly.get('value'):,.2f})",
				state="unusually high" if z > 0 else "unusually low",
				why="A period this far from the usual pattern often has one cause worth knowing (a large order, a "
				"missed billing run, a data error).",
				figures=[
					{"label": label, "value": anomaly.get("value"), "unit": "currency"},
					{"label": "Robust z-score", "value": z},
				],
				period={"label": label, "partial": False},
				subject={"analysis": key, "label": label},
				kind=LASTING,
				**_scope(result),
			)
		)
	shifts = list(series.get("change_points") or []) or [series.get("change_point")]
	for shift in [s for s in shifts if isinstance(s, dict) and s.get("label")]:
		label = str(shift["label"])
		found.append(
			Finding(
				key=f"trend_anomalies:{key}:shift:{label}",
				watch="trend_anomalies",
				title=f"{title}: the level shifted from {label}",
				state="level shift",
				why="A lasting change of level from one period on (a customer won or lost, a price change) changes "
				"what to expect next.",
				figures=[{"label": "p-value", "value": shift.get("p_value")}],
				period={"label": label, "partial": False},
				subject={"analysis": key, "label": label},
				kind=LASTING,
				**_scope(result),
			)
		)
	return found


KINDS: dict[str, WatchKind] = {
	kind.key: kind
	for kind in (
		WatchKind(
			"receivables_over",
			"Receivables past a number of days stay under a limit",
			"The amount more than `days` days overdue (ageing as ERPNext buckets it) against `limit` in the "
			"company's currency.",
			("receivables.ageing",),
			receivables_over,
			(
				Param("days", int, 60, 1, 365, "days past due"),
				Param("limit", float, None, 0.01, None, "the most that may be that far overdue"),
			),
			("task.create", "dunning.create"),
			"sales_invoice.list",
		),
		WatchKind(
			"overdue_customers",
			"Customers with invoices long overdue",
			"Each customer whose oldest open invoice is more than `days` days past due (a customer who stops paying).",
			("receivables.overdue_by_customer",),
			overdue_customers,
			(Param("days", int, 30, 1, 365, "days past due"),),
			("task.create", "dunning.create"),
			"sales_invoice.list",
		),
		WatchKind(
			"stock_cover",
			"Items that will run out",
			"Each selling item whose stock lasts less than `days` days at the rate of the last `window` days.",
			("inventory.days_of_cover",),
			stock_cover,
			(
				Param("days", int, 14, 1, 180, "days of stock left"),
				Param("window", int, 28, 7, 365, "days of sales the rate is taken over"),
			),
			("material_request.create",),
		),
		WatchKind(
			"below_reorder",
			"Items below their re-order level",
			"Each item and warehouse whose stock is under the re-order level set on the item.",
			("inventory.below_reorder",),
			below_reorder,
			(),
			("material_request.create",),
		),
		WatchKind(
			"sales_forecast",
			"Monthly sales against the forecast's range",
			"The last complete month's sales against the 80% range the forecast gave for it from the months before.",
			("sales.monthly_trend",),
			sales_forecast,
			(),
			("task.create",),
		),
		WatchKind(
			"demand_change",
			"Items whose demand jumps or falls",
			"Each item whose sales in the last complete month changed by at least `percent`% against the month before.",
			("items.movers",),
			demand_change,
			(
				Param("percent", float, 50.0, 5, 1000, "percent change"),
				Param("direction", str, "up", choices=("up", "down", "both")),
			),
			("material_request.create",),
		),
		WatchKind(
			"trend_anomalies",
			"Unusual periods and level shifts in a trend",
			"Unusual periods (robust z-score) and change points of a trend analysis, e.g. sales.weekly_trend.",
			TREND_ANALYSES,
			trend_anomalies,
			(Param("analysis", str, "sales.weekly_trend", choices=TREND_ANALYSES),),
			("task.create",),
		),
	)
}


def check_watch(spec: WatchSpec) -> str | None:
	"""Why this watch cannot run, in words to act on; None when it can. Fills no defaults (see `params_of`)."""
	kind = KINDS.get(spec.kind)
	if kind is None:
		return f"there is no watch {spec.kind!r}; use one of {', '.join(KINDS)}."
	known = {p.name for p in kind.params}
	extra = sorted(set(spec.params) - known)
	if extra:
		return f"{spec.kind} takes {', '.join(sorted(known)) or 'no parameters'}, not {', '.join(extra)}."
	try:
		params_of(spec)
	except ValueError as exc:
		return f"{spec.kind}: {exc}"
	return None


def params_of(spec: WatchSpec) -> dict:
	"""The watch's parameters with defaults filled and each checked against its bounds."""
	kind = KINDS[spec.kind]
	out = {}
	for param in kind.params:
		value = spec.params.get(param.name, param.default)
		if value in (None, ""):
			raise ValueError(f"give {param.name} ({param.description or param.name}).")
		try:
			value = param.kind(value)
		except (TypeError, ValueError):
			raise ValueError(f"{param.name} must be a {param.kind.__name__}, not {value!r}.") from None
		if param.choices and value not in param.choices:
			raise ValueError(f"{param.name} is one of {', '.join(param.choices)}, not {value!r}.")
		if param.minimum is not None and value < param.minimum:
			raise ValueError(f"{param.name} must be at least {param.minimum:g}.")
		if param.maximum is not None and value > param.maximum:
			raise ValueError(f"{param.name} must be at most {param.maximum:g}.")
		out[param.name] = value
	return out


def analyses_of(spec: WatchSpec) -> tuple[str, ...]:
	kind = KINDS[spec.kind]
	if spec.kind == "trend_anomalies":
		return (params_of(spec)["analysis"],)
	return kind.analyses


def describe(spec: WatchSpec) -> str:
	"""The watch in a line a person reads before confirming."""
	kind = KINDS[spec.kind]
	params = params_of(spec)
	shown = ", ".join(f"{k} {v:,g}" if isinstance(v, float) else f"{k} {v}" for k, v in params.items())
	return f"{kind.title}" + (f" ({shown})" if shown else "")


# --- a plain-language goal to watches ----------------------------------------------------------

_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}


def _span_days(text: str, default: int) -> int:
	match = re.search(r"(\d+|one|two|three|four|five|six|ten)\s*(day|week|month)s?", text)
	if not match:
		return default
	number = int(match.group(1)) if match.group(1).isdigit() else _NUMBER_WORDS[match.group(1)]
	return number * {"day": 1, "week": 7, "month": 30}[match.group(2)]


def _amount(text: str) -> float | None:
	match = re.search(r"(?:under|below|less than|at most)\s*[$€£]?\s*([\d][\d,]*(?:\.\d+)?)\s*(k|m)?\b", text)
	if not match:
		return None
	value = float(match.group(1).replace(",", ""))
	return value * {"k": 1e3, "m": 1e6}.get(match.group(2) or "", 1)


def suggest(goal: str) -> list[WatchSpec]:
	"""Watches for a goal said in words, by the words it uses; none when nothing fits (then ask)."""
	text = " ".join(goal.lower().split())
	found: list[WatchSpec] = []
	if re.search(r"run(ning)? out|out of stock|stock cover|days of (stock|cover)", text):
		found.append(WatchSpec("stock_cover", {"days": _span_days(text, 14)}))
	if re.search(r"re-?order", text):
		found.append(WatchSpec("below_reorder"))
	receivable = re.search(r"receivables?\D*?(\d+)\s*days", text)
	limit = _amount(text)
	if receivable and limit:
		found.append(WatchSpec("receivables_over", {"days": int(receivable.group(1)), "limit": limit}))
	if re.search(r"overdue|stop(ped|s)? paying|late pay|not paying|unpaid", text) and not (
		receivable and limit
	):
		found.append(WatchSpec("overdue_customers", {"days": _span_days(text, 30)}))
	if "forecast" in text:
		found.append(WatchSpec("sales_forecast"))
	if re.search(r"demand|jump|spike|surge", text):
		found.append(WatchSpec("demand_change"))
	if re.search(r"unusual|anomal|change point|level shift|outlier", text):
		found.append(WatchSpec("trend_anomalies"))
	return found


def needs(watches) -> tuple[set[str], set[str]]:
	"""(tools, entities) the watches read: what the owner must still be allowed for the goal to run."""
	from analytics import catalog
	from noviz_agent.connectors.dataset_reader import source

	tools, entities = {"analytics.build"}, set()
	for spec in watches:
		for key in analyses_of(spec):
			for dataset in catalog.get(key).needs:
				entities.add(source(dataset).entity)
	return tools, entities
