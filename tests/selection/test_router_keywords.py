"""The deterministic router: words, plurals, abbreviations, IDs, widening, and data from the model."""

from __future__ import annotations

import pytest

from noviz_agent.engine.routing import EntityWords, Router, load_data, router_for, stems
from noviz_agent.tools.vocabulary import entity_words
from tests.selection.fake_tools import fake_registry


@pytest.fixture(scope="module")
def router() -> Router:
	return router_for(fake_registry())


def test_plural_and_singular_name_the_same_entity(router):
	assert "sales_invoice" in router.route("show the invoice of Acme").entities
	assert "sales_invoice" in router.route("show all Invoices of Acme").entities
	assert "sales_order" in router.route("Sales Orders due this week").entities
	assert "leave_application" in router.route("leave applications waiting").entities


@pytest.mark.parametrize(
	"question, entity",
	[
		("open SO for Acme", "sales_order"),
		("which PO is late", "purchase_order"),
		("print DN 12 please", "delivery_note"),
		("post the GRN for yesterday's delivery", "purchase_receipt"),
		("reverse that JV", "journal_entry"),
		("list open POs", "purchase_order"),
		("what's in the bom for the chair", "bom"),
	],
)
def test_abbreviations_name_their_entity(router, question, entity):
	assert entity in router.route(question).entities


def test_lower_case_so_is_an_english_word_not_a_sales_order(router):
	route = router.route("so, what did we buy last week?")
	assert "sales_order" not in route.entities


def test_a_longer_entity_phrase_hides_the_shorter_one_inside_it(router):
	entities = router.route("unpaid purchase invoices").entities
	assert "purchase_invoice" in entities
	assert "sales_invoice" not in entities


def test_document_ids_name_the_entity_and_ask_for_that_record(router):
	route = router.route("what is the status of ACC-SINV-2024-00012?")
	assert route.ids == ("sales_invoice",)
	assert "get" in route.intents
	assert router.route("open SAL-ORD-2024-00003").ids == ("sales_order",)
	assert router.route("the word ACC-SINV alone is no id").ids == ()


def test_an_invoice_question_about_a_customer_loads_selling_and_accounting(router):
	route = router.route("which invoices of customer Globex are overdue?")
	assert {"selling", "accounting"} <= set(route.modules)
	route = router.route("bills from supplier Foo")
	assert {"buying", "accounting"} <= set(route.modules)


def test_modules_come_in_the_canonical_order_whatever_the_word_order(router):
	a = router.route("employees and their timesheets and sales orders")
	b = router.route("sales orders, timesheets and employees")
	assert a.modules == b.modules
	order = load_data()["order"]
	assert list(a.modules) == sorted(a.modules, key=order.index)


def test_write_intents_are_found(router):
	assert "create" in router.route("make a new quotation for Acme").intents
	assert "update" in router.route("change the delivery date of SO 4").intents
	assert "cancel" in router.route("cancel that sales order").intents
	assert "submit" in router.route("submit the draft invoice").intents
	assert not router.route("list sales orders").intents & {"create", "update", "submit", "cancel"}


def test_an_entity_added_to_the_model_is_routable_without_keyword_edits():
	router = Router(
		load_data(), [EntityWords("gizmo_plan", "manufacturing", "Gizmo Plan", ("widget schedule",))]
	)
	route = router.route("show me the widget schedules for May")
	assert route.entities == {"gizmo_plan": 1}
	assert "manufacturing" in route.modules
	assert "gizmo_plan" in router.route("any gizmo plans left?").entities


def test_capital_synonyms_of_the_model_become_case_sensitive_abbreviations():
	router = Router(load_data(), [EntityWords("sales_order", "selling", "Sales Order", ("SO", "SOs"))])
	assert "sales_order" in router.route("my SOs").entities
	assert "sales_order" not in router.route("so it goes").entities


def test_every_model_entity_is_routable_by_its_label():
	entities = entity_words()
	if not entities:
		pytest.skip("no entity maps shipped yet")
	router = Router(load_data(), entities)
	missed = [e.key for e in entities if e.key not in router.route(f"show {e.label}").entities]
	assert missed == []


def test_routing_data_names_only_known_modules():
	data = load_data()
	order = set(data["order"])
	assert set(data["modules"]) <= order
	assert {m for rule in data["related"] for m in rule["add"]} <= order
	assert set(data["primary"]) <= order
	assert len(data["spine"]) == len(set(data["spine"]))


def test_analysis_words_do_not_stem_into_entity_names():
	# "projection" once stemmed to "project" and sent every forecast to the projects module
	entity_stems = {tuple(stems(e.key.replace("_", " "))) for e in entity_words()}
	entity_stems |= {tuple(stems(key.replace("_", " "))) for key in load_data()["entity_words"]}
	data = load_data()["modules"]
	words = [w for m in ("analytics", "knowledge", "workflow", "reports") for w in data[m]["words"]]
	assert [w for w in words if tuple(stems(w)) in entity_stems] == []
