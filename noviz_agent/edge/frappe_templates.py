"""The agent's own records start from the new-document templates a worker built for its last turns.

frappe's `Document.insert` fills a new document's missing fields from a template it builds per
DocType (`frappe.model.create_new.make_new_doc`: the DocType's static defaults, the person's
defaults and user permissions, and one `issingle` query) and keeps in `frappe.local`, that is for
one request or job. Every turn inserts its log, with its tool calls, and its turn, with a new
conversation the first time: each turn job built three or four templates again, about a tenth of
the engine's own time and three queries.

A template is reused only when everything frappe built it from is unchanged:
- the DocType's Meta is the very object the template was built with (a worker keeps a Meta as long
  as its cached bytes are unchanged, see frappe_recall; any change to the DocType, its custom fields
  or property setters makes a new one),
- the person's user permissions and defaults are equal to those the template was built with,
- and the template names no person: it is shared between people only when the DocType has no field
  whose default is the person (`__user`) or that takes the person's defaults for `user` or `owner`;
  its `owner` is set to the person it is used for.

Only the agent's own DocTypes, whose defaults are static. Values are never kept from a request
to the next beyond these templates, which frappe copies before each use.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import frappe

# The records a turn inserts, with their child tables.
AGENT_RECORDS = (
	"Agent Interaction Log",
	"Agent Tool Call",
	"Agent Conversation",
	"Agent Conversation Turn",
)
KEPT_PER_DOCTYPE = 4  # templates per (site, DocType): distinct defaults or user permissions
PERSON_FIELDS = frozenset({"user", "owner"})  # frappe's defaults name the person under these


@dataclass(frozen=True)
class _Kept:
	meta: object
	person: str | None  # None: the template names no person and serves anyone with the same inputs
	inputs: tuple
	template: dict


_kept: dict[tuple[str, str], list[_Kept]] = {}
# The template last given to a request per DocType: learnt already, not again.
_seeded: dict[str, dict] = {}


def _inputs() -> tuple:
	"""What frappe's template depends on besides the DocType: the person's user permissions and
	defaults (less the two entries that are the person's own name)."""
	from frappe.core.doctype.user_permission.user_permission import get_user_permissions

	defaults = {k: v for k, v in frappe.defaults.get_defaults().items() if k not in PERSON_FIELDS}
	return get_user_permissions(), defaults


def _names_person(meta) -> bool:
	return any(df.get("default") == "__user" or df.fieldname in PERSON_FIELDS for df in meta.get("fields"))


def seed(doctypes=AGENT_RECORDS) -> int:
	"""Put the kept templates of these DocTypes where frappe's `new_doc` looks first; how many."""
	templates = frappe.local.new_doc_templates
	user, site, inputs, seeded = frappe.session.user, frappe.local.site, None, 0
	for doctype in doctypes:
		kept = _kept.get((site, doctype))
		if doctype in templates or not kept:
			continue
		meta = frappe.get_meta(doctype)
		inputs = inputs if inputs is not None else _inputs()
		for entry in kept:
			if entry.meta is meta and entry.person in (None, user) and entry.inputs == inputs:
				# frappe's templates are `frappe._dict`s: its `new_doc` returns `template.update(...)`.
				templates[doctype] = _seeded[doctype] = frappe._dict(entry.template, owner=user)
				seeded += 1
				break
	return seeded


def learn(doctypes=AGENT_RECORDS) -> None:
	"""Keep the templates frappe built in this request for these DocTypes (after their inserts)."""
	templates = frappe.local.new_doc_templates
	user, site, inputs = frappe.session.user, frappe.local.site, None
	for doctype in doctypes:
		template = templates.get(doctype)
		if template is None or template is _seeded.get(doctype):
			continue  # none built, or the one kept here
		meta = frappe.get_meta(doctype)
		inputs = inputs if inputs is not None else _inputs()
		person = user if _names_person(meta) else None
		kept = _kept.setdefault((site, doctype), [])
		if any(e.meta is meta and e.person == person and e.inputs == inputs for e in kept):
			continue
		# Copies: the inputs are frappe's cached dicts, which a later request may change in place.
		entry = _Kept(meta, person, copy.deepcopy(inputs), frappe._dict(template))
		kept.insert(0, entry)
		del kept[KEPT_PER_DOCTYPE:]
