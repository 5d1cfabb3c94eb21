"""Writes asked with any verb reach `<entity>.create/update/submit`; business words reach their entity.

The sentences here are invented for these tests (none is in the labelled question sets) and the
router is the shipped one over the full canonical model, keywords only (no embedder).
"""

from __future__ import annotations

import pytest

from noviz_agent.engine.routing import router_for
from noviz_agent.engine.selection import select
from noviz_agent.engine.session import Person, Session
from noviz_agent.tools import registry as shared_registry


@pytest.fixture(scope="module")
def registry():
	return shared_registry()


def offered(registry, question: str) -> tuple[str, ...]:
	session = Session(
		person=Person(user="everyone"), connector=None, registry=registry, allowed=frozenset(registry.names())
	)
	return select(session, question, similarity=None).tools


@pytest.mark.parametrize(
	"question, tool",
	[
		("Raise a purchase order for 30 pallets from Beta Metals", "purchase_order.create"),
		("Book a supplier invoice from Contoso for 980", "purchase_invoice.create"),
		("Log two hours on the Alpha project timesheet", "timesheet.create"),
		("Record an expense claim for the hotel in Lyon", "expense_claim.create"),
		("File a warranty claim for the broken kettle", "warranty_claim.create"),
		("Put in a material request for 12 gloves", "material_request.create"),
		("Enter a stock reconciliation for the cold store", "stock_reconciliation.create"),
		("Key in a new BOM for the garden bench", "bom.create"),
		("Lodge a quality inspection on the fabric rolls", "quality_inspection.create"),
		("Jot down a maintenance visit at Fabrikam", "maintenance_visit.create"),
		("Issue an RFQ for aluminium sheets", "request_for_quotation.create"),
		("Kick off a job card for the painting step", "job_card.create"),
		("Could you please draft a payment request to Initech", "payment_request.create"),
		("Whip up a supplier quotation from Beta Metals", "supplier_quotation.create"),
		("Throw together an employee advance of 200 for Lars", "employee_advance.create"),
	],
)
def test_a_write_asked_with_any_verb_offers_the_create_tool(registry, question, tool):
	assert tool in offered(registry, question)


@pytest.mark.parametrize(
	"question, tool",
	[
		("Ship the cartons on SO SAL-ORD-2024-00090", "delivery_note.create"),
		("Bill Fabrikam for the June retainer", "sales_invoice.create"),
		("Pay Beta Metals what we owe them", "payment_entry.create"),
		("Clock me in for the late shift", "employee_checkin.create"),
		("Receive the pallets from Contoso into the yard", "purchase_receipt.create"),
		("We counted the shelves, do a stocktake for Widget D", "stock_reconciliation.create"),
	],
)
def test_an_action_word_names_its_entity(registry, question, tool):
	assert tool in offered(registry, question)


@pytest.mark.parametrize(
	"question, tool",
	[
		("Finalise SINV ACC-SINV-2024-00031", "sales_invoice.submit"),
		("Tweak the qty on PUR-ORD-2024-00011 to 12", "purchase_order.update"),
		("Void journal ACC-JV-2024-00002", "journal_entry.cancel"),
	],
)
def test_an_imperative_with_a_document_id_offers_its_action(registry, question, tool):
	assert tool in offered(registry, question)


@pytest.mark.parametrize(
	"question",
	[
		"Which invoices of Globex are overdue?",
		"Show me the open purchase orders",
		"How many leave applications are pending?",
		"Top five customers by revenue this year",
		"I wonder what our stock of Widget A is",
	],
)
def test_a_read_question_is_not_taken_for_a_write(registry, question):
	route = router_for(shared_registry()).route(question)
	assert not route.imperative
	assert not [t for t in offered(registry, question) if t.endswith((".create", ".update", ".submit"))]


def test_lower_case_two_letter_words_that_are_english_are_no_abbreviation():
	route = router_for(shared_registry()).route("so do we have mr Smith on pr leave?")
	assert not {"sales_order", "purchase_receipt", "material_request"} & set(route.entities)


def test_a_polite_prefix_is_not_the_verb():
	route = router_for(shared_registry()).route("Could you please show me the open quotations")
	assert not route.imperative
	assert router_for(shared_registry()).route("Could you please raise a quotation for Acme").imperative


def test_the_second_clause_of_a_request_can_ask_for_the_write():
	route = router_for(shared_registry()).route("We got the steel from Beta Metals, make the GRN")
	assert route.imperative and "create" in route.intents
	assert "purchase_receipt" in route.entities


@pytest.mark.parametrize(
	"question, entity",
	[
		("list every PO from March", "purchase_order"),
		("SOs booked yesterday", "sales_order"),
		("DN for Globex", "delivery_note"),
		("which PR came in today", "purchase_receipt"),
		("the PI from Contoso", "purchase_invoice"),
		("SI totals", "sales_invoice"),
		("JE for the accrual", "journal_entry"),
		("GRN numbers this week", "purchase_receipt"),
		("open RFQs", "request_for_quotation"),
		("BOM of the bench", "bom"),
		("AR over 90 days", "sales_invoice"),
		("AP due Friday", "purchase_invoice"),
		("NCR raised on line 2", "non_conformance"),
		("which AMC contracts renew soon", "maintenance_schedule"),
		("unmatched deposits on the HDFC account", "bank_transaction"),
		("items running low in the main store", "stock_balance"),
		("raise a jv for the accrual", "journal_entry"),
		("wo for 12 benches", "work_order"),
		("debtors above 10k", "sales_invoice"),
		("proforma for Fabrikam", "quotation"),
	],
)
def test_business_abbreviations_and_synonyms_reach_their_entity(question, entity):
	assert entity in router_for(shared_registry()).route(question).entities
