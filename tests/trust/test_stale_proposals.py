"""A confirm is refused when the document changed after the person saw the proposal."""

from __future__ import annotations

import pytest

from noviz_agent.engine import turn
from noviz_agent.engine.gateway import call_tool, confirm
from noviz_agent.engine.tools import Registry
from noviz_agent.tools import entities, workflow
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

pytestmark = pytest.mark.attack("writes")

DRAFT = {
	"name": "SO-DRAFT",
	"customer": "Acme",
	"date": "2024-03-01",
	"status": "Draft",
	"total": 5.0,
	"docstatus": 0,
	"modified": "2024-03-01 10:00:00.000000",
}


@pytest.fixture(scope="module")
def registry():
	return Registry(entities.tools() + workflow.tools())


def _session(registry, user="sam@example.com"):
	conn = MemoryConnector(
		user,
		{"sales_order": [dict(DRAFT)]},
		{"sales_order": {"read", "write", "submit", "cancel"}},
		roles={"Sales User"},
	)
	return make_session(conn, registry=registry)


def test_submit_confirmed_after_someone_edited_the_document_is_refused_with_a_fresh_preview(registry):
	session = _session(registry)
	shown = call_tool(session, "sales_order.submit", {"name": "SO-DRAFT"})
	assert shown.status == "proposal" and shown.proposal["version"] == DRAFT["modified"]
	# Someone else changes the draft after the preview was shown.
	session.connector.update("sales_order", "SO-DRAFT", {"po_no": "CHANGED"})
	session.connector.calls.clear()

	result = confirm(session, shown.proposal["token"])

	assert result.status == "proposal"
	assert "was changed since this proposal was shown, so nothing was done" in result.error
	assert ("submit", "sales_order") not in session.connector.calls
	assert session.connector.get("sales_order", "SO-DRAFT")["docstatus"] == 0
	fresh = result.proposal
	assert fresh["token"] != shown.proposal["token"] and fresh["version"] != shown.proposal["version"]
	# The old token is spent; the fresh one carries out the submission.
	assert confirm(session, shown.proposal["token"]).status == "refused"
	done = confirm(session, fresh["token"])
	assert done.ok and session.connector.get("sales_order", "SO-DRAFT")["docstatus"] == 1


def test_update_confirmed_after_a_concurrent_change_is_refused(registry):
	session = _session(registry)
	shown = call_tool(session, "sales_order.update", {"name": "SO-DRAFT", "values": {"po_no": "PO-1"}})
	session.connector.update("sales_order", "SO-DRAFT", {"po_no": "PO-OTHER"})
	result = confirm(session, shown.proposal["token"])
	assert result.status == "proposal"
	assert session.connector.get("sales_order", "SO-DRAFT")["po_no"] == "PO-OTHER"
	before = {f["key"]: f.get("before") for f in result.proposal["fields"]}
	assert before["po_no"] == "PO-OTHER"  # the fresh preview shows the document as it is now


@pytest.mark.attack(None)  # not an attack: the ordinary path
def test_unchanged_document_is_written_and_leaves_no_extra_open_proposal(registry):
	session = _session(registry)
	shown = call_tool(session, "sales_order.submit", {"name": "SO-DRAFT"})
	before = dict(session.proposals._data)
	done = confirm(session, shown.proposal["token"])
	assert done.ok
	assert len(session.proposals._data) == len(before) - 1


def test_a_token_cannot_be_rebound_to_another_version(registry):
	session = _session(registry)
	shown = call_tool(session, "sales_order.submit", {"name": "SO-DRAFT"})
	nonce = shown.proposal["token"].split(".")[0]
	record = session.proposals.get(nonce)
	record["version"] = "forged"
	session.proposals.put(nonce, record, 60)
	result = confirm(session, shown.proposal["token"])
	assert result.status == "refused" and "does not match" in result.error


def test_turn_shows_the_fresh_proposal_when_the_document_changed(registry):
	session = _session(registry)
	shown = call_tool(session, "sales_order.submit", {"name": "SO-DRAFT"})
	session.connector.update("sales_order", "SO-DRAFT", {"po_no": "X"})
	outcome = turn.confirm_proposal(session, shown.proposal["token"])
	assert outcome.response["type"] == "proposal"
	assert "changed since" in outcome.response["text"]
	assert outcome.response["proposal"]["token"] != shown.proposal["token"]
	assert outcome.log["error"]


def test_a_proposal_is_confirmed_only_in_the_conversation_that_made_it(registry):
	session = _session(registry)
	session.conversation = "conv-a"
	shown = call_tool(session, "sales_order.submit", {"name": "SO-DRAFT"})
	for elsewhere in ("conv-b", None):
		session.conversation = elsewhere
		result = confirm(session, shown.proposal["token"])
		assert result.status == "refused" and "another conversation" in result.error
	assert session.connector.get("sales_order", "SO-DRAFT")["docstatus"] == 0
	session.conversation = "conv-a"
	assert confirm(session, shown.proposal["token"]).ok


TEXT_TYPES = ("Data", "Small Text", "Text", "Long Text", "Text Editor", "Link", "Dynamic Link")


def _updatable_entities():
	"""Every entity the agent may change, with a plain text field to change (the entity maps decide)."""
	from noviz_agent.connectors.model import load_model

	found = []
	for ent in load_model():
		if "update" not in ent.actions:
			continue
		field = next(
			(
				n
				for n in ent.writable
				if n in ent.fields and ent.fields[n].type in TEXT_TYPES and not ent.fields[n].choices
			),
			None,
		)
		if field is not None:
			found.append((ent.key, field))
	return found


UPDATABLE = _updatable_entities()


@pytest.mark.attack(None)  # not an attack: the ordinary path
def test_the_updatable_entities_include_those_whose_map_lists_no_modified_field():
	from noviz_agent.connectors.model import load_model

	model = load_model()
	keys = {key for key, _field in UPDATABLE}
	unmapped = {k for k in keys if "modified" not in model.entity(k).fields}
	# Contact, address, bank account and the other maps without `modified` are part of what is tried.
	assert {"contact", "address", "bank_account", "warranty_claim"} <= unmapped
	assert len(keys) > 40


@pytest.mark.parametrize("entity, field", UPDATABLE, ids=[key for key, _ in UPDATABLE])
def test_an_update_confirmed_after_someone_else_changed_the_record_never_overwrites_it(entity, field):
	registry = Registry(entities.tools())
	conn = MemoryConnector(
		"sam@example.com",
		{entity: [{"name": "REC-1", field: "as first seen", "docstatus": 0}]},
		{entity: {"read", "write"}},
		roles={"Sales User"},
	)
	session = make_session(conn, registry=registry)
	shown = call_tool(session, f"{entity}.update", {"name": "REC-1", "values": {field: "the agent's value"}})
	assert shown.status == "proposal", shown.error
	assert shown.proposal["version"]
	# Someone else edits the record in the desk after the proposal was shown.
	conn.update(entity, "REC-1", {field: "someone else's value"})

	result = confirm(session, shown.proposal["token"])

	assert result.status == "proposal", "the confirm must be refused with the record as it is now"
	assert "was changed since this proposal was shown" in result.error
	assert conn.get(entity, "REC-1")[field] == "someone else's value"


def test_a_proposal_for_a_record_the_person_cannot_read_is_refused_when_its_version_is_read():
	registry = Registry(entities.tools())
	conn = MemoryConnector(
		"sam@example.com",
		{"contact": [{"name": "C-1", "first_name": "Ann", "company_name": "Beta"}]},
		{"contact": {"read", "write"}},
		roles={"Sales User"},
		restrictions={"company_name": {"Alpha"}},
	)
	session = make_session(conn, registry=registry)
	result = call_tool(session, "contact.update", {"name": "C-1", "values": {"first_name": "Eve"}})
	assert result.status == "refused"
	assert ("update", "contact") not in conn.calls
