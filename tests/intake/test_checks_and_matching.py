"""Arithmetic, dates and currency checked in code; party and items matched with confidence and runner-up."""

from __future__ import annotations

from noviz_agent.intake import checks, matching
from noviz_agent.intake.proposal import read_document
from noviz_agent.testing.invoices import InvoiceSpec, Line, render_pdf

from .fakes import ITEMS, SUPPLIERS

GOOD = InvoiceSpec(
	party_name="Seed Supplier 01",
	number="INV-5",
	lines=[Line("Office Chair", 2, 180), Line("Standing Desk", 1, 640)],
	tax_rate=0.1,
)


def failed(doc, currencies=None):
	return {r["check"]: r["message"] for r in checks.failures(checks.check(doc, currencies))}


def test_a_correct_document_passes_every_check():
	doc, _ = read_document(render_pdf(GOOD), "ok.pdf")
	assert failed(doc, {"USD"}) == {}
	assert checks.totals_accepted(checks.check(doc))


def test_wrong_total_on_the_document_is_caught_and_not_corrected():
	bad = InvoiceSpec(**{**GOOD.__dict__, "total_error": 10.0})
	doc, _ = read_document(render_pdf(bad), "bad.pdf")
	assert doc["total"] == GOOD.total + 10.0  # kept as printed
	problems = failed(doc)
	assert set(problems) == {"total"}
	assert (
		"Subtotal 1,000.00 + taxes 100.00 = 1,100.00, but the total printed is 1,110.00" in problems["total"]
	)
	assert not checks.totals_accepted(checks.check(doc))


def test_line_whose_quantity_times_rate_is_not_its_amount_is_caught():
	doc = GOOD.expected()
	doc["lines"][1]["amount"] = 604.0
	problems = failed(doc)
	assert "line_amount" in problems and "prints 604.00" in problems["line_amount"]
	assert "subtotal" in problems


def test_unreadable_date_and_unknown_currency_are_reported():
	doc = GOOD.expected() | {"date": "03/04/2026", "currency": "XYZ"}
	problems = failed(doc, {"USD", "EUR"})
	assert "date" in problems and "currency" in problems


def test_party_by_tax_id_wins_over_a_different_printed_name():
	m = matching.match_party("ACME GmbH", "DE 811 122 233", SUPPLIERS)
	assert (m["status"], m["name"], m["by"], m["confidence"]) == (
		"matched",
		"Acme Office Supplies",
		"tax_id",
		1.0,
	)


def test_party_exact_name_ignores_case_punctuation_and_legal_form():
	m = matching.match_party("SEED SUPPLIER 02, Ltd.", None, SUPPLIERS)
	assert (m["name"], m["by"]) == ("Seed Supplier 02", "exact_name")


def test_party_fuzzy_name_carries_confidence_and_runner_up():
	m = matching.match_party("Seed Suplier 01", None, SUPPLIERS)
	assert (m["name"], m["by"]) == ("Seed Supplier 01", "fuzzy_name")
	assert 0.9 < m["confidence"] < 1.0
	assert m["runner_up"]["name"] == "Seed Supplier 02" and m["runner_up"]["score"] < m["confidence"]


def test_unknown_party_is_unmatched_with_the_closest_shown():
	m = matching.match_party("Globex Corporation", None, SUPPLIERS)
	assert m["status"] == "unmatched" and m["name"] is None and "closest" in m


def test_too_close_to_call_is_unmatched_rather_than_guessed():
	m = matching.match_party("Seed Supplier", None, SUPPLIERS)
	assert m["status"] == "unmatched"


def test_items_by_supplier_part_number_then_code_then_description():
	by_part = matching.match_item({"description": "Chair", "item_code": "OC-100"}, ITEMS, "Seed Supplier 01")
	assert (by_part["name"], by_part["by"]) == ("SEED-01", "supplier_part_no")
	# Another supplier's part number is not this supplier's.
	assert (
		matching.match_item({"description": "zzz", "item_code": "OC-100"}, ITEMS, "Seed Supplier 02")[
			"status"
		]
		== "unmatched"
	)
	by_code = matching.match_item({"description": "whatever", "item_code": "seed-02"}, ITEMS)
	assert (by_code["name"], by_code["by"]) == ("SEED-02", "item_code")
	fuzzy = matching.match_item({"description": "Toner cartridge, black", "item_code": None}, ITEMS)
	assert (fuzzy["name"], fuzzy["by"]) == ("SEED-10", "fuzzy_description") and fuzzy["runner_up"]
	unknown = matching.match_item({"description": "Espresso machine", "item_code": None}, ITEMS)
	assert unknown["status"] == "unmatched"
