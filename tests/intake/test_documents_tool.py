"""`documents.intake` through the gateway: the proposal, duplicates, edits, permissions and Confirm."""

from __future__ import annotations

from noviz_agent.engine import gateway
from noviz_agent.testing.invoices import InvoiceSpec, Line, render_pdf

from .fakes import FakeSystem, make_session

SPEC = InvoiceSpec(
	party_name="Seed Supplier 01",
	tax_id="US-11-1111111",
	number="INV-9001",
	lines=[Line("Office Chair", 2, 180, "OC-100"), Line("Espresso Machine", 1, 450)],
	tax_rate=0.05,
)


def propose(system=None, changes=None):
	system = system or FakeSystem()
	system.add_file("F-1", render_pdf(SPEC))
	session = make_session(system)
	args = {"file": "F-1"} | ({"changes": changes} if changes else {})
	return system, session, gateway.call_tool(session, "documents.intake", args)


def test_proposal_holds_the_draft_matches_and_new_records_and_writes_nothing():
	system, _, result = propose()
	assert result.status == "proposal" and system.inserted == []
	draft = result.proposal["draft"]
	assert draft["doctype"] == "Purchase Invoice"
	values = draft["values"]
	assert values["supplier"] == "Seed Supplier 01" and values["bill_no"] == "INV-9001"
	assert values["bill_date"] == "2026-11-20" and values["currency"] == "USD"
	assert [r["item_code"] for r in values["items"]] == ["SEED-01", "ESPRESSOMACHINE"]
	assert [r["doctype"] for r in draft["new_records"]] == ["Item"]
	lines = result.proposal["tables"]["lines"]["rows"]
	assert "supplier part no, 100%" in lines[0]["match"] and "new record" in lines[1]["match"]
	assert "tax id" in result.proposal["values"]["Party"]
	assert "taxes of 40.50" in result.proposal["warning"]["message"]


def test_confirm_inserts_exactly_the_proposed_draft_with_the_file():
	system, session, result = propose()
	done = gateway.confirm(session, result.proposal["token"])
	assert done.status == "ok", done.error
	assert system.inserted == [(result.proposal["draft"], "F-1")]
	assert done.data["docstatus"] == 0


def test_same_supplier_invoice_number_already_entered_is_flagged_as_duplicate():
	system = FakeSystem(bills={("Seed Supplier 01", "INV-9001"): ["ACC-PINV-2026-00007"]})
	_, _, result = propose(system)
	assert result.proposal["duplicates"] == ["ACC-PINV-2026-00007"]
	assert "Likely duplicate" in result.proposal["warning"]["message"]


def test_edits_before_confirm_change_the_draft_without_reading_the_file_again():
	system, session, first = propose()
	system.files.clear()  # a second read would fail: edits must use what was read
	edited = gateway.call_tool(
		session,
		"documents.intake",
		{"file": "F-1", "changes": {"lines": [{"line": 2, "item_code": "SEED-11", "quantity": 3}]}},
	)
	assert edited.status == "proposal", edited.error
	items = edited.proposal["draft"]["values"]["items"]
	assert items[1]["item_code"] == "SEED-11" and items[1]["qty"] == 3
	assert edited.proposal["draft"]["new_records"] == []


def test_person_without_create_permission_is_refused_before_any_proposal():
	system = FakeSystem(creatable=("Item",))
	_, _, result = propose(system)
	assert result.status == "refused" and "permission to create Purchase Invoice" in result.error


def test_someone_elses_upload_cannot_be_read():
	system = FakeSystem()
	system.add_file("F-2", render_pdf(SPEC), owner="other@example.com")
	result = gateway.call_tool(make_session(system), "documents.intake", {"file": "F-2"})
	assert result.status == "error" and "not one of your uploads" in result.error
