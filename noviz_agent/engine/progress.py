"""What a person reads while a turn runs: one short sentence per tool step.

`describe(tool, args)` turns a tool name (and, for analyses, its key) into a label template and
its arguments, e.g. ("Reading {0}…", ["sales invoices"]). The template is an English UI string
the chat translates (`__(template, args)`), so the server never needs the person's language.
"""

from __future__ import annotations

from typing import Any

# Entity actions: the verb of each step, by the tool name's last part.
ENTITY_ACTIONS = {
	"list": "Reading {0}…",
	"get": "Opening {0}…",
	"count": "Counting {0}…",
	"create": "Preparing a new {0}…",
	"update": "Preparing a change to {0}…",
	"submit": "Preparing to submit {0}…",
	"cancel": "Preparing to cancel {0}…",
}

# Tools that are not entity actions: a fixed sentence each.
FIXED = {
	"analytics.catalog": "Choosing an analysis…",
	"analytics.build": "Computing the analysis…",
	"analytics.compare_periods": "Comparing periods…",
	"analytics.compare_segments": "Comparing groups…",
	"analytics.aggregate": "Adding up the figures…",
	"analytics.dashboard": "Building the dashboard…",
	"chart.build": "Drawing the chart…",
	"report.find": "Looking for a report…",
	"report.run": "Running the report…",
	"tools.search": "Looking for the right tool…",
	"schema.describe": "Reading the fields…",
	"knowledge.search": "Looking it up in the guides…",
	"workflow.describe": "Reading the workflow…",
	"workflow.apply": "Preparing a workflow step…",
}

THINKING = "Thinking…"
GENERIC = "Working…"


def plural(noun: str) -> str:
	"""English plural of the last word (invoice -> invoices, territory -> territories)."""
	if noun.endswith("y") and noun[-2:-1] not in "aeiou":
		return noun[:-1] + "ies"
	if noun.endswith(("s", "x", "ch", "sh")):
		return noun + "es"
	return noun + "s"


def _noun(entity: str) -> str:
	return entity.replace("_", " ").strip()


def describe(tool: str | None, args: Any = None) -> tuple[str, list[str]]:
	"""The label template and its arguments for one tool step."""
	if not isinstance(tool, str) or not tool:
		return THINKING, []
	if tool == "analytics.build" and isinstance(args, dict) and isinstance(args.get("key"), str):
		title = _analysis_title(args["key"])
		if title:
			return "Computing {0}…", [title[:1].lower() + title[1:]]
	if tool in FIXED:
		return FIXED[tool], []
	entity, _, action = tool.rpartition(".")
	if entity and action in ENTITY_ACTIONS:
		noun = _noun(entity)
		return ENTITY_ACTIONS[action], [plural(noun) if action in ("list", "count") else noun]
	return GENERIC, []


def label(tool: str | None, args: Any = None) -> str:
	"""The English sentence (templates filled in), for logs and tests."""
	template, values = describe(tool, args)
	for index, value in enumerate(values):
		template = template.replace("{" + str(index) + "}", value)
	return template


def event_fields(tool: str | None, args: Any = None) -> dict:
	"""Keys to add to a "tool" progress event so the chat can show (and translate) the step."""
	template, values = describe(tool, args)
	return {"label": template, "label_args": values}


def _analysis_title(key: str) -> str | None:
	try:
		from analytics import catalog
	except ImportError:  # pragma: no cover - analytics ships with the app
		return None
	analysis = catalog.ANALYSES.get(key)
	return analysis.title if analysis is not None else None
