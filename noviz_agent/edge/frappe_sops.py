"""Procedures on a site: the `Agent SOP` records as specs, runs kept in `Agent SOP Run`, the turn's hooks.

Everything is read as the signed-in person (`frappe.get_list`); a run row is the agent's own
record of the person's conversation (like the conversation itself) and is written by the
agent, not by the person. A failure here never breaks a turn: the ordinary turn runs instead.
"""

from __future__ import annotations

import json

import frappe

from noviz_agent.sops.actions import ActionRepository
from noviz_agent.sops.controllers import BaselineController, ModelController
from noviz_agent.sops.matching import Matcher, settings_embedder
from noviz_agent.sops.memory import RunState
from noviz_agent.sops.parser import Problem
from noviz_agent.sops.procedures import SopSpec, validate
from noviz_agent.sops.service import ProcedureDesk

SOP = "Agent SOP"
RUN = "Agent SOP Run"
CONVERSATION = "Agent Conversation"
# One matcher per site and embedder choice: a bench serves several sites from one process, each
# with its own Agent Settings.
_matchers: dict[tuple[str, str], Matcher] = {}


def matcher() -> Matcher:
	"""The matcher over the full registry for this site's settings: validation and runs resolve
	steps the same way."""
	from noviz_agent.edge.frappe_session import load_settings
	from noviz_agent.tools import registry

	# The built-in embedder is the same for every site (a worker builds it before any site: warm).
	embedder, choice = settings_embedder({})
	site = ""
	if choice != "builtin":
		site = frappe.local.site
		try:
			embedder, choice = settings_embedder(load_settings(with_secrets=True))
		except Exception:  # unreadable settings leave lexical matching, never an error
			embedder, choice = None, "lexical"
	key = (site, choice)
	if key not in _matchers:
		_matchers[key] = Matcher(ActionRepository.from_registry(registry()), embedder)
	return _matchers[key]


def problems(text: str) -> list[Problem]:
	"""Structure and unknown actions of a procedure text, each with its line number."""
	return validate(text, matcher())


PROCEDURES_CACHED = "procedures"  # each person's readable procedures (frappe_allowance.cached)


def load_specs() -> list[SopSpec]:
	"""The enabled procedures this person can read, with their roles (kept in Redis per person
	until a procedure, a role or a permission changes)."""
	from noviz_agent.edge.frappe_allowance import cached

	rows = cached(PROCEDURES_CACHED, _readable_procedures, user=frappe.session.user)
	return [
		SopSpec(
			name=row["name"],
			title=row["title"],
			applies_when=row["applies_when"] or "",
			procedure=row["procedure"] or "",
			roles=tuple(row["roles"]),
		)
		for row in rows
	]


def _readable_procedures() -> list[dict]:
	rows = frappe.get_list(
		SOP,
		filters={"enabled": 1},
		fields=["name", "title", "applies_when", "procedure"],
		limit_page_length=0,
	)
	if not rows:
		return []
	roles: dict[str, list[str]] = {}
	for row in frappe.get_list(
		SOP,
		filters={"enabled": 1},
		fields=["name", "`tabAgent SOP Role`.role as role"],
		limit_page_length=0,
	):
		if row.get("role"):
			roles.setdefault(row["name"], []).append(row["role"])
	return [
		{
			"name": row["name"],
			"title": row["title"],
			"applies_when": row["applies_when"],
			"procedure": row["procedure"],
			"roles": roles.get(row["name"], []),
		}
		for row in rows
	]


class FrappeRunStore:
	"""Runs as `Agent SOP Run` rows, one per conversation; the person reads their own.

	The conversation names its run (`procedure_run`, set when the first one is stored), so a
	conversation that never started a procedure - most of them - is not searched for one.
	"""

	def __init__(self, none_yet: bool = False):
		self.none_yet = none_yet

	def _row(self, conversation: str) -> dict | None:
		if self.none_yet:
			return None
		rows = frappe.get_list(
			RUN,
			filters={"conversation": conversation},
			fields=["name"],
			order_by="modified desc",
			limit_page_length=1,
		)
		if not rows:
			return None
		# The run's memory is no one's to read in the desk (it is audited: frappe_governance); the
		# agent reads it for the person whose own conversation the list above found it in.
		return {"name": rows[0]["name"], "state": frappe.db.get_value(RUN, rows[0]["name"], "state")}

	def load(self, conversation: str) -> RunState | None:
		row = self._row(conversation)
		if not row or not row.get("state"):
			return None
		state = row["state"] if isinstance(row["state"], dict) else json.loads(row["state"])
		return RunState.from_dict(state)

	def save(self, conversation: str, state: RunState) -> None:
		row = self._row(conversation)
		values = {
			"conversation": conversation,
			"sop": state.sop,
			"person": frappe.session.user,
			"status": state.status,
			"state": json.dumps(state.to_dict(), default=str, ensure_ascii=False),
		}
		doc = frappe.get_doc(RUN, row["name"]) if row else frappe.get_doc({"doctype": RUN, **values})
		doc.update(values)
		# The agent's own record of the person's conversation: people read it, never write it.
		# (A document made from a dict is not marked new: whether a row was found says it.)
		if row is None:
			doc.insert(ignore_permissions=True)
			frappe.db.set_value(CONVERSATION, conversation, "procedure_run", doc.name, update_modified=False)
			self.none_yet = False
		else:
			doc.save(ignore_permissions=True)


def link_existing_runs() -> None:
	"""Name each conversation's latest run on the conversation (the upgrade to `procedure_run`).

	Plain reads and per-row updates, so it runs the same on MariaDB and PostgreSQL.
	"""
	if not frappe.db.table_exists(RUN):
		return
	# Our own tables: each conversation's latest run, as FrappeRunStore reads it.
	latest: dict[str, str] = {}
	for run in frappe.get_all(
		RUN, fields=["name", "conversation"], order_by="modified desc", limit_page_length=0
	):
		if run.conversation:
			latest.setdefault(run.conversation, run.name)
	if not latest:
		return
	unlinked = frappe.get_all(
		CONVERSATION,
		filters=[["name", "in", list(latest)], ["procedure_run", "is", "not set"]],
		pluck="name",
		limit_page_length=0,
	)
	for conversation in unlinked:
		frappe.db.set_value(
			CONVERSATION, conversation, "procedure_run", latest[conversation], update_modified=False
		)


def desk_for(conversation_doc, provider) -> ProcedureDesk | None:
	"""The turn's procedure hook for this conversation, or None when the site has no procedures."""
	try:
		specs = load_specs()
	except Exception:
		frappe.log_error(title="Noviz agent: procedures could not be loaded")
		return None
	if not specs:
		return None
	return ProcedureDesk(
		specs,
		FrappeRunStore(none_yet=conversation_doc is None or not conversation_doc.get("procedure_run")),
		conversation_doc.name if conversation_doc else None,
		controller_for=lambda p: ModelController(p) if p is not None else BaselineController(),
		shared_matcher=matcher(),
	)


def handled(desk: ProcedureDesk | None) -> bool:
	"""Whether a procedure answered this turn (such answers are never cached)."""
	return desk is not None and desk.state is not None


def remember(desk: ProcedureDesk | None, conversation_doc) -> None:
	"""Store the run after the turn is recorded (a first turn's conversation has a name only now)."""
	if desk is None or conversation_doc is None:
		return
	desk.save(conversation_doc.name)


def after_settle(conversation_doc, session, token: str, confirmed: bool, outcome, values: dict):
	"""After a proposal is confirmed or cancelled, the run that waited on it goes on; its words are added."""
	if conversation_doc is None or not outcome.results:
		return outcome
	provider = None
	try:
		from noviz_agent.edge.frappe_governance import metered
		from noviz_agent.edge.frappe_session import load_settings, make_provider

		# With its keys (a hosted model refuses a call without them), and like every model call
		# rate-gated and held against the person's budgets.
		values = load_settings(with_secrets=True)
		provider = metered(make_provider(values), values, session.user)
	except Exception:
		provider = None  # without a model the baseline carries the run on
	desk = desk_for(conversation_doc, provider)
	if desk is None:
		return outcome
	handled = desk.settled(session, provider, token, confirmed, outcome.results[0])
	if handled is None:
		return outcome
	more = (handled.response.get("text") or "").strip()
	if more:
		outcome.response["text"] = f"{outcome.response.get('text') or ''}\n\n{more}".strip()
		outcome.history_entry["answer"] = outcome.response["text"]
	if handled.response.get("type") == "proposal":
		outcome.response.update(type="proposal", proposal=handled.response["proposal"])
	desk.save(conversation_doc.name)
	return outcome
