"""`goals.propose`: a standing goal asked for in the chat, prepared as a proposal the person confirms.

"Remind me every Monday which items will run out within two weeks" becomes an Agent Goal that runs on
that schedule as the person; it is never created on the model's say-so: the gateway turns the call
into a proposal, and only the person's Confirm creates it (through `session.goals`, the site's goal
store acting as the person, or a fake in tests).
"""

from __future__ import annotations

from noviz_agent.engine.errors import PermissionDenied, ToolError
from noviz_agent.engine.tools import Tool
from noviz_agent.goals import watches
from noviz_agent.goals.schedule import EVERY, WEEKDAYS
from noviz_agent.goals.spec import DELIVERY, MAY_DO, GoalError, GoalSpec

RULES = (
	'When the person asks to be told, reminded or alerted regularly or when something happens ("every Monday", '
	'"tell me when", "keep an eye on"), call goals.propose with the watches that compute it and the schedule '
	"they said; the person confirms the goal before it exists. Never promise to remember or check something "
	"later yourself."
)

WATCH_PARAMS = {
	"days": {
		"type": "integer",
		"description": "Days: past due (receivables), or of stock left (stock_cover)",
	},
	"limit": {"type": "number", "description": "receivables_over: the most that may be that far overdue"},
	"window": {"type": "integer", "description": "stock_cover: days of sales the rate is taken over"},
	"percent": {"type": "number", "description": "demand_change: the percent change that counts"},
	"direction": {"enum": ["up", "down", "both"], "description": "demand_change: rises, falls or both"},
	"analysis": {"enum": list(watches.TREND_ANALYSES), "description": "trend_anomalies: the trend to watch"},
}


def _session_goals(session):
	if getattr(session, "goals", None) is None:
		raise ToolError("Standing goals are not available in this session; they are made in the desk chat.")
	return session.goals


def spec_from(args: dict, session) -> GoalSpec:
	"""The goal these arguments describe, for this person; ToolError listing what to fix."""
	kinds = []
	for item in args.get("watches") or []:
		kind = watches.KINDS.get(item.get("kind"))
		params = {p.name: item[p.name] for p in (kind.params if kind else ()) if item.get(p.name) is not None}
		kinds.append({"kind": item.get("kind"), "params": params})
	if not kinds:
		kinds = [w.to_dict() for w in watches.suggest(args.get("goal") or "")]
		if not kinds:
			raise ToolError(
				"Say which figures the goal should watch: pass watches with a kind from "
				f"{', '.join(watches.KINDS)} (see this tool's description)."
			)
	raw = {
		**{k: v for k, v in args.items() if k != "watches"},
		"owner": session.user,
		"company": args.get("company") or getattr(session.person, "company", None),
		"watches": kinds,
	}
	try:
		return GoalSpec.from_dict(raw)
	except GoalError as exc:
		raise ToolError("This goal cannot be kept as asked: " + " ".join(exc.problems)) from None


def _check_access(spec: GoalSpec, session) -> None:
	"""The person must be able to read what the watches read, now: a goal runs as them."""
	from noviz_agent.connectors.model import load_model

	tools, entities = watches.needs(spec.watches)
	for tool in sorted(tools):
		if not session.may_use(tool):
			raise PermissionDenied(f"{session.user} may not use {tool}, which this goal's watches need.")
	model = load_model()
	for entity in sorted(entities):
		if "read" not in (session.connector.permissions(entity) or set()):
			raise PermissionDenied(
				f"{session.user} cannot read {model.entity(entity).doctype}, which this goal's watches need."
			)


def describe(spec: GoalSpec) -> list[dict]:
	"""The goal as the labelled fields a person reads before confirming it."""
	caps = spec.caps
	costs = f"at most {caps.run_tokens:,} tokens a run"
	costs += f" and {caps.month_tokens:,} a month" if caps.month_tokens else ", no monthly token cap"
	if caps.run_cost or caps.month_cost:
		costs += f"; cost at most {caps.run_cost:g} a run and {caps.month_cost:g} a month"
	return [
		{"key": "goal", "label": "Goal", "value": spec.goal},
		{"key": "schedule", "label": "Runs", "value": spec.schedule.describe()},
		{"key": "company", "label": "Company", "value": spec.company or "your default company"},
		{"key": "watches", "label": "Watches", "value": "; ".join(watches.describe(w) for w in spec.watches)},
		{
			"key": "may_do",
			"label": "May",
			"value": "report what changed and prepare next steps for you to confirm"
			if spec.may_do == "propose"
			else "report what changed (it changes nothing)",
		},
		{"key": "delivery", "label": "Findings go to", "value": ", ".join(spec.delivery)},
		{"key": "costs", "label": "Model use", "value": costs + "; a run with nothing new costs nothing"},
	]


def preview(args: dict, session) -> dict:
	_session_goals(session)
	spec = spec_from(args, session)
	_check_access(spec, session)
	return {
		"action": "create",
		"doctype": "Agent Goal",
		"summary": f"Create the standing goal “{spec.label}”",
		"effect": f"Runs {spec.schedule.describe()} as you, computes its watches from your books and tells you "
		"what changed; it writes nothing without your confirmation. You can pause or delete it any time.",
		"fields": describe(spec),
	}


def propose(args: dict, session) -> dict:
	"""Confirmed: the goal is created as the person."""
	spec = spec_from(args, session)
	_check_access(spec, session)
	created = _session_goals(session).create(spec.to_dict())
	return {
		"doctype": "Agent Goal",
		"name": created["name"],
		"_link": created.get("_link"),
		"message": f"The goal “{spec.label}” is on: it runs {spec.schedule.describe()}.",
	}


SUMMARY = {
	"stock_cover": "items running out within `days` (rate over `window` days)",
	"below_reorder": "items under their re-order level",
	"overdue_customers": "customers with invoices more than `days` past due",
	"receivables_over": "the amount more than `days` past due above `limit`",
	"sales_forecast": "last month's sales outside the forecast's 80% range",
	"demand_change": "item sales up or down by `percent` in a month",
	"trend_anomalies": "unusual periods and level shifts of `analysis`",
}


def _description() -> str:
	kinds = "; ".join(f"{key}: {SUMMARY[key]}" for key in watches.KINDS)
	return (
		"Prepare a standing goal: on its schedule the agent computes the goal's watches from the person's books, "
		"as them, and tells them what changed (desk notification, e-mail digest or its own conversation); with "
		"may_do propose it also prepares next steps they confirm. Returns a proposal the person confirms; nothing "
		f"exists until then. Watches: {kinds}."
	)


def tools() -> list[Tool]:
	watch = {
		"type": "object",
		"properties": {
			"kind": {"enum": list(watches.KINDS), "description": "The watch kind"},
			**WATCH_PARAMS,
		},
		"required": ["kind"],
		"additionalProperties": False,
	}
	schedule = {
		"type": "object",
		"properties": {
			"every": {"enum": list(EVERY), "description": "day, week, month, or cron for an expression"},
			"hour": {"type": "integer", "minimum": 0, "maximum": 23, "description": "Hour of the day, 0-23"},
			"weekday": {"enum": list(WEEKDAYS), "description": "For every week"},
			"day": {"type": "integer", "minimum": 1, "maximum": 28, "description": "For every month"},
			"cron": {"type": "string", "description": "Five-field cron expression, for every cron"},
		},
		"required": ["every"],
		"additionalProperties": False,
	}
	parameters = {
		"type": "object",
		"properties": {
			"goal": {"type": "string", "description": "The goal in the person's own words"},
			"title": {"type": "string", "description": "A short title"},
			"watches": {"type": "array", "items": watch, "maxItems": 6, "description": "What to compute"},
			"schedule": schedule,
			"company": {
				"type": "string",
				"description": "The company whose books to watch; empty for the default",
			},
			"may_do": {"enum": list(MAY_DO), "description": "report only, or also propose next steps"},
			"delivery": {
				"type": "array",
				"items": {"enum": list(DELIVERY)},
				"description": "Where findings go",
			},
			"run_tokens": {
				"type": "integer",
				"minimum": 1000,
				"description": "Most model tokens one run may use",
			},
			"month_tokens": {"type": "integer", "minimum": 0, "description": "Most model tokens a month"},
		},
		"required": ["goal", "schedule"],
		"additionalProperties": False,
	}
	return [
		Tool(
			name="goals.propose",
			description=_description(),
			module="goals",
			parameters=parameters,
			handler=propose,
			writes=True,
			preview=preview,
			prompt_rules=RULES,
			tags=(
				"remind",
				"reminder",
				"schedule",
				"notify",
				"alert",
				"watch",
				"monitor",
				"goal",
				"every week",
			),
		)
	]
