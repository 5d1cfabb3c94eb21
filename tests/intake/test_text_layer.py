"""PDFs with a text layer, written by fpdf2 inside the tests, read back field by field."""

from __future__ import annotations

import pytest

from noviz_agent.intake.proposal import read_document
from noviz_agent.testing.invoices import LAYOUTS, InvoiceSpec, Line, render_pdf


def spec(layout: str, n: int = 3, **kw) -> InvoiceSpec:
	catalogue = [
		("Office Chair", 180.0, "SEED-01"),
		("Standing Desk", 640.5, "SEED-02"),
		("Toner Cartridge", 76.0, None),
	]
	lines = [
		Line(d, q, r, c)
		for (d, r, c), q in zip(catalogue * n, [2, 1, 12, 3, 5, 1, 7, 2.5, 4] * n, strict=False)
	][:n]
	return InvoiceSpec(
		party_name="Seed Supplier 01",
		tax_id="US-11-1111111",
		number="INV-2207",
		lines=lines,
		tax_rate=0.08,
		layout=layout,
		**kw,
	)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_reads_to_the_schema(layout):
	s = spec(layout, currency="EUR" if layout == "european" else "USD")
	doc, meta = read_document(render_pdf(s), "invoice.pdf")
	assert meta == {"pages": 1, "read_by": ["text"]}
	assert doc == s.expected()


def test_two_page_invoice_is_merged_with_lines_in_order_and_totals_from_the_last_page():
	s = spec("classic", n=45)
	doc, meta = read_document(render_pdf(s), "long.pdf")
	assert meta["pages"] == 2 and meta["read_by"] == ["text", "text"]
	assert [x["description"] for x in doc["lines"]] == [x.description for x in s.lines]
	assert doc["total"] == s.total and doc["subtotal"] == s.subtotal


def test_european_numbers_and_dates_are_read_as_printed_not_swapped():
	s = InvoiceSpec(
		party_name="Acme Office Supplies",
		number="F-1",
		lines=[Line("Standing Desk", 2, 1234.56)],
		layout="european",
		currency="EUR",
		tax_rate=0.2,
	)
	doc, _ = read_document(render_pdf(s), "f.pdf")
	assert doc["lines"][0]["rate"] == 1234.56 and doc["lines"][0]["amount"] == 2469.12
	assert doc["date"] == "2026-11-20" and doc["currency"] == "EUR"


def test_customer_order_names_the_buyer_not_the_vendor_it_is_addressed_to():
	s = InvoiceSpec(
		party_name="Seed Customer 01", number="PO-77", lines=[Line("Office Chair", 4, 180)], layout="order"
	)
	doc, _ = read_document(render_pdf(s), "po.pdf")
	assert doc["document_type"] == "customer_order"
	assert doc["party_name"] == "Seed Customer 01" and doc["document_number"] == "PO-77"


def test_number_that_starts_like_a_number_marker_is_read_whole():
	s = spec("classic", n=1)
	s.number = "NOVIZ-TEST-42"
	doc, _ = read_document(render_pdf(s), "invoice.pdf")
	assert doc["document_number"] == "NOVIZ-TEST-42"
