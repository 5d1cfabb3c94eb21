"""Small fake registries for the selection tests: real Tool objects, canned handlers."""

from __future__ import annotations

from noviz_agent.connectors.model import ACTION_PERMISSION
from noviz_agent.engine.session import Limits, Person, Session
from noviz_agent.engine.tools import Registry, Tool
from noviz_agent.tools import discovery
from noviz_agent.tools.vocabulary import vocabulary

ENTITIES = {
	"customer": ("selling", False),
	"quotation": ("selling", True),
	"sales_order": ("selling", True),
	"supplier": ("buying", False),
	"purchase_order": ("buying", True),
	"item": ("stock", False),
	"warehouse": ("stock", False),
	"delivery_note": ("stock", True),
	"purchase_receipt": ("stock", True),
	"stock_entry": ("stock", True),
	"material_request": ("buying", True),
	"sales_invoice": ("selling", True),
	"purchase_invoice": ("buying", True),
	"payment_entry": ("accounting", True),
	"journal_entry": ("accounting", True),
	"gl_entry": ("accounting", False),
	"lead": ("crm", False),
	"opportunity": ("crm", False),
	"employee": ("hr", False),
	"leave_application": ("hr", True),
	"project": ("projects", False),
	"task": ("projects", False),
	"timesheet": ("projects", True),
	"issue": ("support", False),
	"work_order": ("manufacturing", True),
	"bom": ("manufacturing", True),
	"asset": ("assets", True),
	"quality_inspection": ("quality", True),
}
LIST_RULES = "A list returns one page; use analytics.aggregate for totals."
HAND_WRITTEN = {
	"analytics.catalog": "analytics",
	"analytics.aggregate": "analytics",
	"analytics.build": "analytics",
	"analytics.compare_periods": "analytics",
	"chart.build": "analytics",
	"report.find": "reports",
	"report.run": "reports",
	"schema.describe": "schema",
	"knowledge.search": "knowledge",
	"workflow.describe": "workflow",
	"workflow.apply": "workflow",
}
OBJECT = {"type": "object", "properties": {}, "additionalProperties": True}


def _handler(args, session):
	return {"ok": True}


def entity_tools(entities=ENTITIES) -> list[Tool]:
	out = []
	for key, (module, submittable) in entities.items():
		label = key.replace("_", " ")
		actions = ["list", "get", "count", "create", "update"] + (["submit", "cancel"] if submittable else [])
		for action in actions:
			out.append(
				Tool(
					name=f"{key}.{action}",
					description=f"{action.title()} {label} records as the person.",
					module=module,
					parameters=OBJECT,
					handler=_handler,
					writes=action in ("create", "update", "submit", "cancel"),
					prompt_rules=LIST_RULES if action == "list" else None,
					entity=key,
					action=action,
					permission=ACTION_PERMISSION[action],
				)
			)
	return out


def hand_written_tools() -> list[Tool]:
	return [
		Tool(name=name, description=f"The {name} tool.", module=module, parameters=OBJECT, handler=_handler)
		for name, module in HAND_WRITTEN.items()
	]


def fake_registry() -> Registry:
	return Registry([*discovery.tools(), *hand_written_tools(), *entity_tools()], vocabulary())


def make_session(
	registry=None, allowed=None, *, user="alice@example.com", roles=("Sales User",), max_tools=40
):
	registry = registry or fake_registry()
	return Session(
		person=Person(
			user=user, roles=frozenset(roles), full_name=user.split("@")[0].title(), company="Acme"
		),
		connector=None,
		registry=registry,
		allowed=frozenset(registry.names()) if allowed is None else frozenset(allowed),
		limits=Limits(max_tools=max_tools),
	)


ANALYTICS = (
	"analytics.catalog",
	"analytics.build",
	"analytics.compare_periods",
	"analytics.compare_segments",
)


def model_registry() -> Registry:
	"""Entity tools for every entity and action of the canonical model, plus the hand-written names."""
	from noviz_agent.connectors.model import load_model

	tools = [*discovery.tools(), *hand_written_tools()]
	tools += [
		Tool(name=n, description=f"The {n} tool.", module="analytics", parameters=OBJECT, handler=_handler)
		for n in ANALYTICS
		if n not in HAND_WRITTEN
	]
	for ent in load_model():
		for action in ent.actions:
			tools.append(
				Tool(
					name=f"{ent.key}.{action}",
					description=f"{action.title()} {ent.label} records. {ent.description}",
					module=ent.module,
					parameters=OBJECT,
					handler=_handler,
					writes=action in ("create", "update", "submit", "cancel"),
					entity=ent.key,
					action=action,
					permission=ACTION_PERMISSION[action],
				)
			)
	return Registry(tools, vocabulary())
