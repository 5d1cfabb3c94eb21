"""``bench --site S noviz-agent eval``: the labelled questions against this site, through the real turn.

The questions are the shipped set (``noviz_agent/evaluation/questions.json``) over data seeded
with ``benchmarks/bench_seed.py``. Expected figures are read from the site here, as the
Administrator and straight from the DocTypes (``frappe.get_list``), never through the agent's
tools; each question then runs as its person (a site user with one role) through
``engine.turn.run_turn`` with the site's provider, or with the oracle. Nothing is written:
write questions end as proposals that are never confirmed, and every turn is rolled back.
"""

from __future__ import annotations

from collections import defaultdict

import frappe

from noviz_agent.connectors.model import load_model
from noviz_agent.edge.frappe_session import default_company
from noviz_agent.engine.errors import NotFound
from noviz_agent.evaluation.harness import EvaluationError, TurnRecord

STANDARD = {"name", "docstatus", "owner", "creation", "modified", "parent", "idx"}


class SiteFacts:
	"""Canonical rows of one entity read from the site as the Administrator (for expectations only)."""

	def __init__(self, company: str | None = None, person: str | None = None):
		self.model = load_model()
		self._cache: dict[str, list[dict]] = {}
		# Amounts are one company's, as the agent adds them up: the default company ERPNext presets for
		# the person the evaluation runs as (the same function the turns use); counts and lists cover
		# every company, as the desk's lists do (evaluation.expected).
		self.company = company or default_company(person or frappe.session.user)

	def rows(self, entity: str) -> list[dict]:
		if entity not in self._cache:
			self._cache[entity] = self._read(entity)
		return self._cache[entity]

	def _read(self, key: str) -> list[dict]:
		ent = self.model.entity(key)
		if not frappe.db.exists("DocType", ent.doctype):
			return []
		fields = _present(ent.doctype, {name: f.field for name, f in ent.fields.items()})
		rows = frappe.get_list(ent.doctype, fields=list(fields.values()), limit_page_length=0)
		out = {row.name: {name: row.get(docfield) for name, docfield in fields.items()} for row in rows}
		for row in out.values():
			row["name"] = row.get("name") or ""
		for child in ent.children.values():
			child_fields = _present(child.doctype, {name: f.field for name, f in child.fields.items()})
			lines = frappe.get_list(
				child.doctype,
				fields=["parent", *child_fields.values()],
				parent_doctype=ent.doctype,
				limit_page_length=0,
				order_by="idx asc",
			)
			grouped: dict[str, list[dict]] = defaultdict(list)
			for line in lines:
				grouped[line.parent].append(
					{name: line.get(docfield) for name, docfield in child_fields.items()}
				)
			for name, row in out.items():
				row[child.name] = grouped.get(name, [])
		return list(out.values())


def _present(doctype: str, fields: dict[str, str]) -> dict[str, str]:
	meta = frappe.get_meta(doctype)
	return {
		name: docfield
		for name, docfield in fields.items()
		if docfield in STANDARD or meta.has_field(docfield)
	}


def site_runner(values: dict, users: dict[str, str], provider_for, *, rollback: bool = True):
	"""A runner that answers each question as its person's site user, rolling every turn back.

	``rollback=False`` leaves that to the caller (a site test rolls back in its tearDown).
	"""
	from noviz_agent.edge.frappe_session import build_session
	from noviz_agent.engine import turn

	missing = sorted({user for user in users.values() if not frappe.db.exists("User", user)})
	if missing:
		raise EvaluationError(
			f"no user {', '.join(missing)} on this site: create them (one role each: Accounts User, Sales User) "
			"or name existing users with --user accounts=EMAIL --user sales=EMAIL"
		)

	def run(question: dict) -> TurnRecord:
		user = users.get(question["person"])
		if user is None:
			raise EvaluationError(
				f"no user for person {question['person']!r}; pass --user {question['person']}=EMAIL"
			)
		expect = question["expect"].get("proposal")
		doctype = _doctype_of(expect["tool"]) if expect else None
		before = frappe.db.count(doctype) if doctype else None
		frappe.set_user(user)
		try:
			session = build_session(values, progress=False)
			# Proposals are graded, never confirmed: let the model propose even where writes are off.
			session.writes_enabled = True
			outcome = turn.run_turn(session, provider_for(question, session), question["question"])
			offered = list(session.offer_order)
		finally:
			frappe.set_user("Administrator")
		written = doctype is not None and frappe.db.count(doctype) != before
		if rollback:
			frappe.db.rollback()
		return TurnRecord(outcome, written, offered)

	return run


def _doctype_of(tool: str) -> str | None:
	key = tool.rsplit(".", 1)[0]
	try:
		return load_model().entity(key).doctype
	except NotFound:
		return None


def facts_for(people: dict[str, str]) -> SiteFacts:
	"""The expectations of an evaluation run as these people: their default company must be one."""
	companies = {who: default_company(email) for who, email in people.items()}
	if len(set(companies.values())) > 1:
		shown = ", ".join(f"{who} ({people[who]}): {c}" for who, c in companies.items())
		raise EvaluationError(
			f"The people evaluated have different default companies ({shown}); give them one "
			"(their User default, or the site's) so their figures can be expected alike."
		)
	return SiteFacts(company=next(iter(companies.values()), None))
