"""`workflow.describe` and `workflow.apply`: the organisation's live approval process, read and acted on as the person.

The connector reads the workflow with Frappe's own functions in the person's session
(`get_transitions` decides which actions they may take now), so no rule here decides who
may approve: this module only lays the answer out, and explains the plain docstatus path
when a DocType has no workflow. `workflow.apply` is a write: the gateway turns it into a
proposal the person confirms, and the connector then applies the action as that person.
"""

from __future__ import annotations

from noviz_agent.connectors.model import Entity, doc_url, load_model
from noviz_agent.engine.errors import NotFound, PermissionDenied, ToolError
from noviz_agent.engine.tools import Tool

DOCSTATUS = {0: "Draft", 1: "Submitted", 2: "Cancelled"}

RULES = (
	"workflow.describe answers who must act on a document and why a person cannot submit or approve it: "
	"read it before explaining an approval, and name the state, the action and the role it shows. "
	"workflow.apply only proposes the action; the person confirms it themselves. Never suggest that someone "
	"take an action for another person or route around an approval."
)


def _entity(session, key: str) -> Entity:
	ent = load_model().entity(key)  # NotFound with close matches for an unknown key
	conn = session.connector
	if key not in conn.entities():
		raise NotFound(f"{ent.label} ({ent.doctype}) is not installed on this site.")
	if "read" not in conn.permissions(key):
		raise PermissionDenied(f"{session.user} does not have permission to read {ent.doctype}.")
	return ent


def _docstatus(value) -> int | None:
	try:
		return int(value)
	except (TypeError, ValueError):
		return None


def _states(raw: dict) -> list[dict]:
	out = []
	for state in raw.get("states", []):
		status = _docstatus(state.get("doc_status", state.get("docstatus")))
		item = {"state": state.get("state"), "docstatus": status, "meaning": DOCSTATUS.get(status, "unknown")}
		if state.get("allow_edit"):
			item["editable_by_role"] = state["allow_edit"]
		out.append(item)
	return out


def _transitions(raw: dict) -> list[dict]:
	out = []
	for t in raw.get("transitions", []):
		item = {
			"from": t.get("state"),
			"action": t.get("action"),
			"to": t.get("next_state"),
			"allowed_role": t.get("allowed"),
		}
		if t.get("condition"):
			item["condition"] = t["condition"]
		if "allow_self_approval" in t:
			item["self_approval"] = bool(t["allow_self_approval"])
		out.append(item)
	return out


def _waiting_on(transitions: list[dict], state: str | None, actions: list[dict], roles) -> dict:
	"""Who can move the document on from its state, and why this person may not be among them."""
	leaving = [t for t in transitions if t["from"] == state]
	out = {
		"actions_from_this_state": [
			{k: t[k] for k in ("action", "to", "allowed_role", "condition", "self_approval") if k in t}
			for t in leaving
		]
	}
	mine = {a["action"] for a in actions}
	held_but_unavailable = [t for t in leaving if t["allowed_role"] in roles and t["action"] not in mine]
	if not leaving:
		out["note"] = f"'{state}' is a final state of this workflow: no action leads out of it."
	elif not actions:
		roles_needed = sorted({t["allowed_role"] for t in leaving if t["allowed_role"]})
		out["note"] = (
			f"Waiting for someone with the role {' or '.join(roles_needed)}; this person can take no action now."
		)
	if held_but_unavailable:
		names = ", ".join(sorted({t["action"] for t in held_but_unavailable}))
		out["why_not_available"] = (
			f"This person holds the role for {names} but the site does not offer it now: its condition is not met "
			"for this document, or self approval is not allowed and they created it."
		)
	return out


def _no_workflow(session, ent: Entity, name: str | None) -> dict:
	granted = session.connector.permissions(ent.key)
	out = {"entity": ent.key, "doctype": ent.doctype, "workflow": None}
	if not ent.submittable:
		out["explanation"] = (
			f"{ent.doctype} has no approval workflow and is not submitted: records are saved and edited directly "
			"by anyone with write permission."
		)
		return out
	out["explanation"] = (
		f"{ent.doctype} has no active approval workflow, so it follows the standard docstatus path: Draft (0) is "
		"saved and still editable; Submit makes it Submitted (1), which posts its effects and locks it; Cancel "
		"makes it Cancelled (2) and reverses them; Amend copies a cancelled document into a new draft. Each step "
		"needs the matching role permission."
	)
	out["you_may"] = sorted(granted & {"write", "submit", "cancel"})
	if name is not None:
		record = session.connector.get(ent.key, name)
		status = _docstatus(record.get("docstatus")) or 0
		out.update(
			name=name, _link=doc_url(ent.doctype, name), docstatus=status, meaning=DOCSTATUS.get(status)
		)
		possible = {
			0: ["submit"] if "submit" in granted else [],
			1: ["cancel"] if "cancel" in granted else [],
		}
		out["actions_now"] = possible.get(status, [])
		if status == 2:
			out["note"] = "Cancelled: it can only be amended into a new draft (needs the Amend permission)."
		elif not out["actions_now"]:
			needed = {0: "Submit", 1: "Cancel"}[status]
			out["note"] = f"This person lacks the {needed} permission on {ent.doctype}."
	return out


def describe(args: dict, session) -> dict:
	ent = _entity(session, args["entity"])
	name = args.get("name") or None
	raw = session.connector.workflow(ent.key, name)
	if raw is None:
		return _no_workflow(session, ent, name)
	transitions = _transitions(raw)
	out = {
		"entity": ent.key,
		"doctype": ent.doctype,
		"workflow": raw.get("workflow"),
		"state_field": raw.get("state_field"),
		"states": _states(raw),
		"transitions": transitions,
	}
	if name is not None:
		actions = [{"action": a["action"], "next_state": a.get("next_state")} for a in raw.get("actions", [])]
		state = raw.get("state")
		out.update(
			name=name,
			_link=doc_url(ent.doctype, name),
			current_state=state,
			your_actions=actions,
			**_waiting_on(transitions, state, actions, session.person.roles),
		)
	return out


def _available(session, ent: Entity, name: str, action: str) -> tuple[dict, dict]:
	raw = session.connector.workflow(ent.key, name)
	if raw is None:
		raise ToolError(
			f"{ent.doctype} has no active workflow; use {ent.key}.submit or {ent.key}.cancel for the docstatus path."
		)
	actions = raw.get("actions", [])
	match = next((a for a in actions if a["action"] == action), None)
	if match is None:
		offered = ", ".join(a["action"] for a in actions) or "none"
		raise ToolError(
			f"'{action}' is not available to {session.user} on {ent.doctype} {name} in state "
			f"'{raw.get('state')}'. Actions available to them now: {offered}. Call workflow.describe to see who can act."
		)
	return raw, match


def preview(args: dict, session) -> dict:
	ent = _entity(session, args["entity"])
	name, action = args["name"], args["action"]
	raw, match = _available(session, ent, name, action)
	states = {s["state"]: s for s in _states(raw)}
	before, after = raw.get("state"), match.get("next_state")
	fields = [
		{
			"key": raw.get("state_field") or "workflow_state",
			"label": "Workflow state",
			"before": before,
			"value": after,
		}
	]
	old, new = (states.get(before) or {}).get("docstatus"), (states.get(after) or {}).get("docstatus")
	if old is not None and new is not None and old != new:
		fields.append(
			{
				"key": "docstatus",
				"label": "Document status",
				"before": DOCSTATUS[old],
				"value": DOCSTATUS[new],
			}
		)
	return {
		"action": "workflow",
		"entity": ent.key,
		"doctype": ent.doctype,
		"name": name,
		"_link": doc_url(ent.doctype, name),
		"summary": f"{action} {ent.label} {name}: {before} → {after}",
		"fields": fields,
	}


def apply(args: dict, session) -> dict:
	ent = _entity(session, args["entity"])
	name, action = args["name"], args["action"]
	session.connector.apply_workflow(ent.key, name, action)
	after = session.connector.workflow(ent.key, name) or {}
	return {
		"entity": ent.key,
		"doctype": ent.doctype,
		"name": name,
		"_link": doc_url(ent.doctype, name),
		"state": after.get("state"),
		"next_actions": [a["action"] for a in after.get("actions", [])],
		"message": f"{action} applied to {ent.label} {name}; it is now '{after.get('state')}'.",
	}


def tools() -> list[Tool]:
	keys = list(load_model().entities)
	entity = {"enum": keys, "description": "Canonical entity key, e.g. purchase_order"}
	return [
		Tool(
			name="workflow.describe",
			description=(
				"Read the site's live approval workflow for an entity: its states (with docstatus), transitions "
				"(action, role allowed, condition, self approval). With a record name, also its current state, the "
				"actions this person may take now, and who the document is waiting for. Without a workflow it "
				"explains the Draft → Submitted → Cancelled path and this person's submit/cancel rights. Use it to "
				"answer 'why can't I submit/approve this?' and 'who has to approve it?'."
			),
			module="workflow",
			parameters={
				"type": "object",
				"properties": {
					"entity": entity,
					"name": {
						"type": "string",
						"description": "A record's name (ID), e.g. PUR-ORD-2026-00042",
					},
				},
				"required": ["entity"],
				"additionalProperties": False,
			},
			handler=describe,
			prompt_rules=RULES,
			tags=("workflow", "approval", "status"),
			# The administrator's workflow (states, roles, conditions): configuration, not records.
			trusted_output=True,
		),
		Tool(
			name="workflow.apply",
			description=(
				"Take a workflow action (e.g. Approve, Reject) on one record as this person. Only actions that "
				"workflow.describe lists under your_actions are possible. The person sees a proposal and confirms "
				"it; the site then applies the action with its own checks."
			),
			module="workflow",
			parameters={
				"type": "object",
				"properties": {
					"entity": entity,
					"name": {"type": "string", "description": "The record's name (ID)"},
					"action": {"type": "string", "description": "The action exactly as listed, e.g. Approve"},
				},
				"required": ["entity", "name", "action"],
				"additionalProperties": False,
			},
			handler=apply,
			writes=True,
			preview=preview,
			tags=("workflow", "approval"),
		),
	]
