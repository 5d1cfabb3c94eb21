"""The frappe connector: the connector contract in the signed-in person's own session.

Reads go through `frappe.get_list` and `frappe.get_doc` + a permission check, writes through
the document API as that person, reports through `frappe.desk.query_report.run` after the
same checks the desk makes. Nothing here widens access: no `ignore_permissions`, no service
user, no SQL built from model text (the arguments come from `translate`, which checks every
name against the entity map first). Frappe's refusals become the engine's named errors
carrying the system's own message.
"""

from __future__ import annotations

import html
import os
import re
from contextlib import contextmanager

import frappe
from frappe.model.workflow import apply_workflow, get_transitions, get_workflow_name

from noviz_agent.connectors.base import PERMISSION_TYPES, workflow_refusal
from noviz_agent.connectors.model import Entity, Model, load_model
from noviz_agent.connectors.translate import (
	aggregate_query,
	count_query,
	doc_to_canonical,
	list_args,
	parse_js_filters,
	report_to_canonical,
	rows_to_canonical,
	to_frappe_values,
	to_report_filters,
)
from noviz_agent.edge.frappe_versions import AGGREGATE_SYNTAX
from noviz_agent.engine.errors import NotFound, PermissionDenied, ToolError, ValidationFailed

REPORT_TYPES = ("Query Report", "Script Report")
_TAG = re.compile(r"<[^>]+>")


def clean_message(exc: Exception, fallback: str) -> str:
	"""The system's message without HTML: the exception's text, else what frappe set aside for the desk."""
	text = str(exc.args[0]) if exc.args else ""
	if not text.strip():
		# has_permission raises a bare PermissionError and leaves its words in flags.error_message.
		text = frappe.flags.error_message or ""
	if not text.strip():
		log = getattr(frappe.local, "message_log", None) or []
		if log:
			last = log[-1]
			text = last.get("message", "") if isinstance(last, dict) else str(last)
	text = html.unescape(_TAG.sub("", str(text))).strip()
	return re.sub(r"\s+", " ", text) or fallback


@contextmanager
def frappe_errors(what: str):
	"""Translate frappe's exceptions into the engine's, keeping the system's words."""
	try:
		yield
	except frappe.PermissionError as exc:
		raise PermissionDenied(_consume(exc, f"Not permitted: {what}")) from None
	except frappe.DoesNotExistError as exc:
		raise NotFound(_consume(exc, f"Not found: {what}")) from None
	except frappe.ValidationError as exc:
		raise ValidationFailed(_consume(exc, f"The system refused {what}")) from None


def _consume(exc: Exception, fallback: str) -> str:
	"""The message, taken off frappe's queue so the desk does not show it a second time."""
	message = clean_message(exc, fallback)
	frappe.flags.error_message = None
	if getattr(frappe.local, "message_log", None):
		frappe.clear_last_message()
	return message


def companies_cached(limit: int) -> str:
	"""The name a person's readable companies are kept under (frappe_allowance.cached)."""
	return f"companies:{limit}"


class FrappeConnector:
	"""One person's view of the site, in canonical terms; must be built inside that person's session."""

	def __init__(self, user: str | None = None, model: Model | None = None):
		self.user = user or frappe.session.user
		if self.user != frappe.session.user:
			# Every call below runs as the session user; a connector for anyone else would lie.
			raise ValueError(f"FrappeConnector for {self.user} built in the session of {frappe.session.user}")
		self.model = model or load_model()
		self._installed: list[str] | None = None
		self._rights: dict[str, set[str]] | None = None

	# --- entities and permissions ----------------------------------------------------

	def _role_rights(self):
		"""What the person's roles allow on every DocType, built once the way the desk's boot does it."""
		if self._rights is None:
			from frappe.utils.user import UserPermissions

			rights = UserPermissions(self.user)
			rights.build_permissions()
			self._rights = {
				"doctypes": set(rights.doctype_map),
				# all_read also holds DocTypes marked "User Cannot Search" (GL Entry, Stock Ledger Entry).
				"read": set(rights.all_read),
				"create": set(rights.can_create),
				"write": set(rights.can_write),
				"submit": set(rights.can_submit),
				"cancel": set(rights.can_cancel),
			}
		return self._rights

	def entities(self) -> list[str]:
		if self._installed is None:
			from noviz_agent.edge.frappe_allowance import present_doctypes

			present = present_doctypes()
			self._installed = [e.key for e in self.model if e.doctype in present]
		return list(self._installed)

	def _entity(self, key: str) -> Entity:
		ent = self.model.entity(key)
		if key not in self.entities():
			raise NotFound(f"{ent.label} ({ent.doctype}) is not installed on this site.")
		return ent

	def permissions(self, entity: str) -> set[str]:
		"""Role-level rights, used to decide which tools to offer; each call is still checked by the site."""
		if entity not in self.entities():
			return set()
		ent = self.model.entity(entity)
		rights = self._role_rights()
		kinds = [p for p in PERMISSION_TYPES if ent.submittable or p not in ("submit", "cancel")]
		return {p for p in kinds if ent.doctype in rights[p]}

	# --- reading ------------------------------------------------------------------------

	def readable_companies(self, limit: int) -> list[dict]:
		"""`list("company")` by name with each currency, kept in Redis for this person until a
		company, a role or a permission changes: every request scoped by company reads it."""
		from noviz_agent.edge.frappe_allowance import cached

		def read() -> list[dict]:
			return self.list("company", fields=["name", "currency"], order_by="name asc", limit=limit)

		return cached(companies_cached(limit), read, user=self.user)

	def list(self, entity, *, fields=None, filters=None, order_by=None, limit=20, offset=0) -> list[dict]:
		ent = self._entity(entity)
		kwargs, keymap = list_args(
			ent, fields=fields, filters=filters, order_by=order_by, limit=limit, offset=offset
		)
		with frappe_errors(f"reading {ent.doctype}"):
			rows = frappe.get_list(**kwargs)
		return rows_to_canonical(rows, keymap)

	def count(self, entity: str, filters=None) -> int:
		ent = self._entity(entity)
		query = count_query(ent, filters, AGGREGATE_SYNTAX)
		with frappe_errors(f"counting {ent.doctype}"):
			rows = frappe.get_list(**query.kwargs)
		return query.finish(rows)

	def aggregate(
		self, entity, *, metrics, group_by=None, filters=None, order_by=None, limit=None
	) -> list[dict]:
		ent = self._entity(entity)
		query = aggregate_query(
			ent,
			metrics=metrics,
			group_by=group_by,
			filters=filters,
			order_by=order_by,
			limit=limit,
			syntax=AGGREGATE_SYNTAX,
		)
		with frappe_errors(f"totalling {ent.doctype}"):
			rows = frappe.get_list(**query.kwargs)
		return query.finish(rows)

	def _doc(self, ent: Entity, name: str, ptype: str = "read"):
		with frappe_errors(f"{ent.doctype} {name}"):
			doc = frappe.get_doc(ent.doctype, name)
			doc.check_permission(ptype)
		return doc

	def _canonical(self, ent: Entity, doc) -> dict:
		doc.apply_fieldlevel_read_permissions()
		return doc_to_canonical(ent, doc.as_dict())

	def get(self, entity: str, name: str) -> dict:
		ent = self._entity(entity)
		return self._canonical(ent, self._doc(ent, name))

	def version(self, entity: str, name: str) -> str:
		"""The record's `modified`, read from the record as the person (the desk's own list query)."""
		ent = self._entity(entity)
		with frappe_errors(f"{ent.doctype} {name}"):
			rows = frappe.get_list(
				ent.doctype, filters={"name": name}, fields=["modified"], limit_page_length=1
			)
		if not rows or not rows[0].get("modified"):
			raise NotFound(f"{ent.doctype} {name} was not found, or you cannot read it.")
		return str(rows[0]["modified"])

	def meta(self, entity: str) -> dict:
		"""Mapped fields as this site defines them: its labels, types and (possibly customised) options."""
		ent = self._entity(entity)
		return {
			"entity": ent.key,
			"doctype": ent.doctype,
			"fields": _describe_fields(ent.doctype, ent.fields),
			"children": {
				c.name: {"doctype": c.doctype, "fields": _describe_fields(c.doctype, c.fields)}
				for c in ent.children.values()
			},
		}

	# --- writing ------------------------------------------------------------------------

	def create(self, entity: str, values: dict) -> dict:
		ent = self._entity(entity)
		docvalues = to_frappe_values(ent, values, creating=True)
		with frappe_errors(f"creating {ent.doctype}"):
			doc = frappe.new_doc(ent.doctype)
			doc.update(docvalues)
			doc.insert()
		return self._canonical(ent, doc)

	def update(self, entity: str, name: str, values: dict) -> dict:
		ent = self._entity(entity)
		docvalues = to_frappe_values(ent, values, creating=False)
		doc = self._doc(ent, name, "write")
		if doc.docstatus != 0:
			raise ValidationFailed(f"{ent.doctype} {name} is submitted or cancelled and cannot be edited.")
		with frappe_errors(f"saving {ent.doctype} {name}"):
			doc.update(docvalues)
			doc.save()
		return self._canonical(ent, doc)

	def _refuse_under_workflow(self, ent: Entity, name: str, action: str) -> None:
		"""frappe's own API submits past a workflow; the desk does not offer it, and neither does the agent."""
		refusal = workflow_refusal(self.workflow(ent.key), action)
		if refusal:
			raise ValidationFailed(f"{ent.doctype} {name}: {refusal}")

	def submit(self, entity: str, name: str) -> dict:
		ent = self._entity(entity)
		doc = self._doc(ent, name, "submit")
		self._refuse_under_workflow(ent, name, "submit")
		with frappe_errors(f"submitting {ent.doctype} {name}"):
			doc.submit()
		return self._canonical(ent, doc)

	def cancel(self, entity: str, name: str) -> dict:
		ent = self._entity(entity)
		doc = self._doc(ent, name, "cancel")
		self._refuse_under_workflow(ent, name, "cancel")
		with frappe_errors(f"cancelling {ent.doctype} {name}"):
			doc.cancel()
		return self._canonical(ent, doc)

	# --- reports ------------------------------------------------------------------------

	def list_reports(self) -> list[dict]:
		from frappe.boot import get_allowed_reports

		allowed = list(get_allowed_reports())
		if not allowed:
			return []
		with frappe_errors("listing reports"):
			rows = frappe.get_list(
				"Report",
				fields=["name", "module", "report_type", "ref_doctype", "is_standard"],
				filters=[["name", "in", allowed], ["report_type", "in", REPORT_TYPES], ["disabled", "=", 0]],
				limit_page_length=0,
				order_by="name asc",
			)
		out = []
		for row in rows:
			if row.ref_doctype and not frappe.has_permission(row.ref_doctype, "report", user=self.user):
				continue
			out.append(
				{
					"name": row.name,
					"module": row.module,
					"type": row.report_type,
					"ref_doctype": row.ref_doctype,
					"filters": _report_filters(row),
				}
			)
		return out

	def run_report(self, report: str, filters: dict | None = None) -> dict:
		from frappe.desk.query_report import run

		with frappe_errors(f"report {report}"):
			doc = frappe.get_doc("Report", report)
			if doc.report_type not in REPORT_TYPES:
				raise ToolError(
					f"{report} is a {doc.report_type}; only query and script reports can be run here."
				)
			if not doc.is_permitted() or (
				doc.ref_doctype and not frappe.has_permission(doc.ref_doctype, "report", user=self.user)
			):
				raise frappe.PermissionError(f"You don't have access to Report: {report}")
			# Only reports built in the desk declare filters as data; standard ones keep them in JS.
			declared = [
				{"fieldname": f.fieldname, "reqd": f.mandatory, "default": f.default}
				for f in doc.get("filters") or []
			]
			clean = to_report_filters(declared, filters)
			# The site's own choice stands: a prepared report is read from its last completed run for
			# these filters, or queued for the person the way the desk does, never run inline.
			result = run(report, filters=dict(clean), user=self.user)
			if result.get("prepared_report") and not result.get("doc"):
				self._queue_prepared(report, clean)
		out = report_to_canonical(result)
		out.update(report=report, filters=clean)
		return out

	def _queue_prepared(self, report: str, filters: dict) -> None:
		"""Start (or find) the person's background run of a prepared report, then say so."""
		from frappe.core.doctype.prepared_report.prepared_report import (
			get_reports_in_queued_state,
			make_prepared_report,
		)

		waiting = get_reports_in_queued_state(report, filters)
		name = waiting[0].name if waiting else make_prepared_report(report, filters)["name"]
		raise ToolError(
			f"{report} is prepared in the background on this site, so it was not run inside the chat. "
			f"It is being prepared now (Prepared Report {name}); the desk tells you when it is ready. "
			"Ask again then, with the same filters, and the figures come from that run."
		)

	# --- workflow -----------------------------------------------------------------------

	def workflow(self, entity: str, name: str | None = None) -> dict | None:
		ent = self._entity(entity)
		workflow_name = get_workflow_name(ent.doctype)
		if not workflow_name:
			return None
		from frappe.model.workflow import get_workflow

		wf = get_workflow(ent.doctype)
		out = {
			"workflow": workflow_name,
			"state_field": wf.workflow_state_field,
			"states": [
				{"state": s.state, "doc_status": s.doc_status, "allow_edit": s.allow_edit} for s in wf.states
			],
			"transitions": [
				{
					"state": t.state,
					"action": t.action,
					"next_state": t.next_state,
					"allowed": t.allowed,
					"condition": t.condition or None,
					"allow_self_approval": bool(t.allow_self_approval),
				}
				for t in wf.transitions
			],
		}
		if name is not None:
			doc = self._doc(ent, name)
			with frappe_errors(f"workflow of {ent.doctype} {name}"):
				transitions = get_transitions(doc, wf)
			out["name"] = name
			out["state"] = doc.get(wf.workflow_state_field)
			out["actions"] = [{"action": t.action, "next_state": t.next_state} for t in transitions]
		return out

	def apply_workflow(self, entity: str, name: str, action: str) -> dict:
		ent = self._entity(entity)
		if not get_workflow_name(ent.doctype):
			raise ToolError(f"{ent.doctype} has no active workflow.")
		doc = self._doc(ent, name)
		with frappe_errors(f"{action} on {ent.doctype} {name}"):
			doc = apply_workflow(doc, action)
		return self._canonical(ent, doc)


def _describe_fields(doctype: str, fields: dict) -> list[dict]:
	meta = frappe.get_meta(doctype)
	out = []
	for field in fields.values():
		described = field.describe()
		df = meta.get_field(field.field)
		if df is not None:
			described.update(label=df.label or described["label"], type=df.fieldtype)
			if df.fieldtype == "Select" and df.options:
				options = [o for o in df.options.split("\n") if o.strip()]
				if options:
					described["options"] = options
			elif df.fieldtype == "Link" and df.options:
				described["link"] = df.options
		out.append(described)
	return out


def _report_filters(row) -> list[dict]:
	"""Filter names of a standard report, read from its JS so the model knows what to pass."""
	key = f"{row.name}"
	cached = frappe.cache.hget("noviz_agent:report_filters", key)
	if cached is not None:
		return cached
	filters: list[dict] = []
	if row.is_standard == "Yes" and row.module:
		scrubbed = frappe.scrub(row.name)
		try:
			path = os.path.join(frappe.get_module_path(row.module), "report", scrubbed, f"{scrubbed}.js")
		except Exception:  # a module whose app is gone: no filters to read
			path = ""
		if path and os.path.exists(path):
			with open(path, encoding="utf-8") as handle:
				filters = parse_js_filters(handle.read())
	frappe.cache.hset("noviz_agent:report_filters", key, filters)
	return filters
