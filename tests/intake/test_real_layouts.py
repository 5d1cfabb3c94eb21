"""The built-in reader on real layouts: dates and amounts as people print them, labels in six languages.

The documents are real invoices from public sources (benchmarks/data/intake_real, with their
truth files); only those of the development split are used here.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from noviz_agent.engine import gateway
from noviz_agent.intake import checks, labels
from noviz_agent.intake.proposal import build, read_document
from noviz_agent.intake.values import parse_amount, parse_date, site_order

from .fakes import FakeSystem, make_session

TEXT = Path(__file__).parents[2] / "benchmarks" / "data" / "intake_real" / "text"
DEV = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(TEXT.glob("*.json"))]
DEV = [t for t in DEV if t["split"] == "dev"]


@pytest.mark.parametrize(
	("printed", "date"),
	[
		("28/11/2022", dt.date(2022, 11, 28)),  # a day above 12 says which part is the day
		("31/12/2017", dt.date(2017, 12, 31)),
		("15-10-2015", dt.date(2015, 10, 15)),
		("03/20/2023", dt.date(2023, 3, 20)),  # and so does a month-first date with a day above 12
		("August 3 , 2014", dt.date(2014, 8, 3)),
		("7. Mai 2014", dt.date(2014, 5, 7)),
		("02 Juillet 2015", dt.date(2015, 7, 2)),
		("1er juillet 2015", dt.date(2015, 7, 1)),
		("29 maart 2014", dt.date(2014, 3, 29)),
		("15 de marzo de 2024", dt.date(2024, 3, 15)),
		("12 dicembre 2021", dt.date(2021, 12, 12)),
		("5 févr. 2020", dt.date(2020, 2, 5)),
		("19.01.2016", dt.date(2016, 1, 19)),  # dots are only ever day.month.year
		("21.05.14", dt.date(2014, 5, 21)),
		("2014-05-19", dt.date(2014, 5, 19)),
	],
)
def test_dates_a_person_reads_without_hesitation_are_read(printed, date):
	assert parse_date(printed) == date


def test_truly_ambiguous_date_takes_the_site_order_and_is_not_guessed_without_one():
	assert parse_date("03/04/2026") is None
	assert parse_date("03/04/2026", site_order("dd-mm-yyyy")) == dt.date(2026, 4, 3)
	assert parse_date("03/04/2026", site_order("mm/dd/yyyy")) == dt.date(2026, 3, 4)
	assert site_order("yyyy-mm-dd") is None


@pytest.mark.parametrize(
	("printed", "amount"),
	[
		("€ 4.904,94", 4904.94),
		("2,076.76 €", 2076.76),
		("41,1765 €", 41.1765),
		("Rs 1939", 1939.0),
		("€ 189,00-", -189.0),
		("(12.00)", -12.0),
		("1 234,56", 1234.56),
		("CHF 1'234.50", 1234.5),
	],
)
def test_amounts_in_either_decimal_convention_are_read(printed, amount):
	assert parse_amount(printed) == amount


@pytest.mark.parametrize("text", ["INV-1234", "14.50%", "VF1005193039", "Seite 1 von 2"])
def test_references_and_percentages_are_not_amounts(text):
	assert parse_amount(text) is None


@pytest.mark.parametrize(
	("text", "kind"),
	[
		("Total TTC :", "grand_total"),
		("Total HT :", "subtotal"),
		("Totaal exclusief BTW", "subtotal"),
		("Factuur totaal", "grand_total"),
		("Rechnungssumme Brutto (inkl. USt.)", "grand_total"),
		("Rechnungssumme Netto (exkl. USt.)", "subtotal"),
		("Importe total", "grand_total"),
		("Totale fattura", "grand_total"),
		("Te betalen", "amount_due"),
	],
)
def test_totals_are_told_apart_by_their_longest_label_in_each_language(text, kind):
	assert labels.label_at(text, "totals").kind == kind


@pytest.mark.parametrize("truth", DEV, ids=[t["file"] for t in DEV])
def test_real_invoice_printed_total_is_read_or_left_empty_never_wrong_and_accepted(truth):
	path = TEXT / truth["file"]
	doc, _ = read_document(path.read_bytes(), path.name)
	accepted = checks.totals_accepted(build(doc, FakeSystem())["checks"])
	right = doc["total"] is not None and abs(doc["total"] - truth["truth"]["total"]) < 0.005
	assert right or not accepted


@pytest.mark.parametrize(
	"file",
	[
		"NetpresseInvoice.pdf",  # Total TTC : 56,02 €
		"QualityHosting.pdf",  # Total EUR 34,73, on page 2
		"coolblue1.pdf",  # Totaal € 717,97
		"free_fiber.pdf",  # Total facture 24.99 5.00 29.99
		"oyo.pdf",  # Grand Total Rs 1939
		"saeco.pdf",  # Factuur totaal EUR 49,99
		"AmazonWebServices.pdf",  # TOTAL AMOUNT DUE ON August 3 , 2014 $4.11
		"FlipkartInvoice.pdf",  # Grand Total 319.00
	],
)
def test_total_printed_plainly_in_another_language_or_currency_is_read(file):
	truth = next(t for t in DEV if t["file"] == file)["truth"]
	doc, _ = read_document((TEXT / file).read_bytes(), file)
	assert (doc["total"], doc["currency"]) == (truth["total"], truth["currency"])


def test_issuer_is_read_from_the_sender_line_when_no_label_names_it():
	doc, _ = read_document((TEXT / "hetzner-R0005532486.pdf").read_bytes(), "hetzner.pdf")
	assert doc["party_name"] == "Hetzner Online GmbH" and doc["document_number"] == "R0005532486"


def test_field_that_cannot_be_read_stays_empty_and_the_proposal_says_so():
	system = FakeSystem()
	system.add_file("F-1", (TEXT / "saeco.pdf").read_bytes(), filename="saeco.pdf")
	result = gateway.call_tool(make_session(system), "documents.intake", {"file": "F-1"})
	assert result.status == "proposal", result.error
	assert result.proposal["draft"]["values"].get("supplier") is None  # its name is only in an image
	assert "Not read from the document (left empty): issuer" in result.proposal["warning"]["message"]
