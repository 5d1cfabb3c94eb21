"""E-invoices read exactly: official Factur-X/ZUGFeRD, XRechnung, Peppol and EN 16931 samples, and hostile XML.

The samples' truth files are derived from their XML by explicit XPath (benchmarks/intake_truth.py),
not by the reader under test.
"""

from __future__ import annotations

import importlib.util
import io
import json
import time
from pathlib import Path

import pypdf
import pytest

from noviz_agent.engine import gateway
from noviz_agent.intake import checks, einvoice
from noviz_agent.intake.files import IntakeError, check_file
from noviz_agent.intake.proposal import build, draft, read_document
from noviz_agent.testing.invoices import InvoiceSpec, Line, render_pdf

from .fakes import FakeSystem, make_session

ROOT = Path(__file__).parents[2]
SAMPLES = ROOT / "benchmarks" / "data" / "intake_real" / "einvoice"
TRUTHS = sorted(SAMPLES.glob("*.json"))
FERD = SAMPLES / "ferd22-EN16931_Einfach.pdf"


def _close(a, b, tolerance=0.005) -> bool:
	return a is not None and b is not None and abs(a - b) <= tolerance


@pytest.mark.parametrize("truth_file", TRUTHS, ids=[t.name.removesuffix(".json") for t in TRUTHS])
def test_official_sample_einvoice_is_read_exactly_as_its_xml_states(truth_file):
	record = json.loads(truth_file.read_text(encoding="utf-8"))
	truth = record["truth"]
	path = SAMPLES / record["file"]
	doc, meta = read_document(path.read_bytes(), path.name)
	assert meta["read_by"] == ["einvoice"]
	assert doc["document_number"] == truth["document_number"]
	assert doc["date"] == truth["date"]
	assert doc["currency"] == truth["currency"]
	assert doc["party_name"] == truth["issuer"]
	assert doc["einvoice"]["seller"]["vat_id"] == truth["tax_id"] or doc["party_tax_id"] == truth["tax_id"]
	assert _close(doc["total"], truth["total"])
	assert len(doc["lines"]) == len(truth["lines"])
	for line, full, want in zip(doc["lines"], doc["einvoice"]["lines"], truth["lines"], strict=True):
		assert _close(line["quantity"], want["quantity"], 1e-9) and _close(line["rate"], want["rate"], 1e-9)
		assert _close(line["amount"], want["amount"])
		assert (full["tax_category"], full["tax_rate"]) == (want["tax_category"], want["tax_rate"])
	got = [(t["category"], t["rate"], t["basis"], t["amount"]) for t in doc["einvoice"]["tax_breakdown"]]
	assert got == [(t["category"], t["rate"], t["basis"], t["amount"]) for t in truth["taxes"]]


def test_truth_files_are_what_the_xpath_route_derives_from_the_samples():
	spec = importlib.util.spec_from_file_location("intake_truth", ROOT / "benchmarks" / "intake_truth.py")
	module = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(module)
	for truth_file in TRUTHS:
		sample = SAMPLES / truth_file.name.removesuffix(".json")
		assert module.truth(sample) == json.loads(truth_file.read_text(encoding="utf-8")), sample.name
	assert len(TRUTHS) >= 25


def test_factur_x_pdf_proposal_says_it_was_read_from_the_einvoice_with_its_taxes():
	system = FakeSystem()
	system.add_file("F-1", FERD.read_bytes(), filename=FERD.name)
	result = gateway.call_tool(make_session(system), "documents.intake", {"file": "F-1"})
	assert result.status == "proposal", result.error
	shown = result.proposal["values"]
	assert "read exactly from the e-invoice" in shown["Document"] and "factur-x.xml" in shown["Document"]
	assert shown["Seller tax id"] == "DE123456789" and shown["Buyer"].startswith("Kunden AG Mitte")
	assert (
		"S 7%: 19.25 on 275.00" in shown["Tax breakdown"]
		and "S 19%: 37.62 on 198.00" in shown["Tax breakdown"]
	)
	assert system.inserted == []  # nothing is written before Confirm


def test_xml_upload_is_known_by_its_content_whatever_its_name():
	xml = (SAMPLES / "peppol-base-example.xml").read_bytes()
	assert check_file(xml, "invoice.bin") == "xml"
	assert check_file(b"\xef\xbb\xbf" + xml, "with-bom.txt") == "xml"
	utf16 = xml.decode("utf-8").replace('encoding="UTF-8"', 'encoding="UTF-16"').encode("utf-16")
	assert check_file(utf16, "utf16.xml") == "xml"
	doc, _ = read_document(utf16, "utf16.xml")
	assert doc["document_number"] == "Snippet1"


def test_malformed_xml_is_refused_with_what_to_do():
	xml = (SAMPLES / "peppol-base-example.xml").read_bytes()
	with pytest.raises(IntakeError, match="not well-formed XML .* Ask the supplier"):
		read_document(xml[: len(xml) // 2], "cut.xml")


def test_external_entity_is_refused_and_never_resolved(tmp_path, monkeypatch):
	secret = tmp_path / "secret.txt"
	secret.write_text("top secret")
	xxe = (
		f'<?xml version="1.0"?><!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file://{secret}">]>'
		'<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" '
		'xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">'
		"<cbc:ID>&xxe;</cbc:ID></Invoice>"
	).encode()
	for content in (
		xxe,
		xxe.decode().replace('version="1.0"', 'version="1.0" encoding="UTF-16"').encode("utf-16"),
	):
		with pytest.raises(IntakeError, match="declares a DOCTYPE") as refused:
			read_document(content, "xxe.xml")
		assert "top secret" not in str(refused.value)
	# Without the up-front look for a DOCTYPE, the parser neither reads the file nor lets it through.
	monkeypatch.setattr(einvoice, "_declares_dtd", lambda content: False)
	with pytest.raises(IntakeError, match="declares a DOCTYPE") as refused:
		einvoice.parse_xml(xxe, "xxe.xml")
	assert "top secret" not in str(refused.value)


def test_entity_expansion_bomb_is_refused_without_expanding_it(monkeypatch):
	entities = '<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
	bomb = f'<?xml version="1.0"?><!DOCTYPE r [{entities}]><r>&l9;</r>'.encode()  # 10^9 "lol"s
	started = time.process_time()
	with pytest.raises(IntakeError, match="declares a DOCTYPE"):
		read_document(bomb, "bomb.xml")
	# Without the up-front look for a DOCTYPE, the hardened parser still refuses it, unexpanded.
	monkeypatch.setattr(einvoice, "_declares_dtd", lambda content: False)
	with pytest.raises(IntakeError, match="not well-formed XML|declares a DOCTYPE"):
		einvoice.parse_xml(bomb, "bomb.xml")
	assert time.process_time() - started < 5  # generous: an expanded bomb takes gigabytes, not seconds


def test_xml_that_is_not_an_invoice_is_refused():
	svg = b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><text>Invoice 42</text></svg>'
	with pytest.raises(IntakeError, match="not an e-invoice"):
		read_document(svg, "drawing.xml")


def test_zugferd_1_xml_upload_is_refused_with_what_to_do():
	old = b'<?xml version="1.0"?><rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"/>'
	with pytest.raises(IntakeError, match="ZUGFeRD 1.0 .* Upload the PDF"):
		read_document(old, "zugferd1.xml")


def with_attachment(pdf: bytes, name: str, data: bytes) -> bytes:
	writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf)))
	writer.add_attachment(name, data)
	out = io.BytesIO()
	writer.write(out)
	return out.getvalue()


def test_pdf_with_a_broken_embedded_xml_is_read_from_its_pages_and_says_why():
	spec = InvoiceSpec(party_name="Seed Supplier 01", number="INV-5", lines=[Line("Office Chair", 2, 180.0)])
	pdf = with_attachment(render_pdf(spec), "factur-x.xml", b"<rsm:CrossIndustryInvoice")
	doc, meta = read_document(pdf, "broken.pdf")
	assert meta["read_by"] == ["text"] and doc["document_number"] == "INV-5"
	assert "The XML embedded in broken.pdf was not read" in meta["notes"][0]


def test_embedded_xml_wins_over_what_the_page_prints():
	spec = InvoiceSpec(party_name="Seed Supplier 01", number="PAGE-1", lines=[Line("Office Chair", 2, 180.0)])
	xml = (SAMPLES / "en16931-CII_example1.xml").read_bytes()
	doc, meta = read_document(with_attachment(render_pdf(spec), "factur-x.xml", xml), "mixed.pdf")
	assert meta["read_by"] == ["einvoice"] and doc["document_number"] == "12115118"


class Accounts(FakeSystem):
	def __init__(self, accounts, **kw):
		super().__init__(**kw)
		self.accounts = accounts

	def tax_accounts(self):
		return self.accounts


def test_einvoice_taxes_become_actual_tax_rows_on_accounts_of_the_same_rate():
	doc, _ = read_document(FERD.read_bytes(), FERD.name)
	system = Accounts([{"name": "VAT 7 - C", "tax_rate": 7.0}, {"name": "VAT 19 - C", "tax_rate": 19.0}])
	values = draft(build(doc, system))["values"]
	assert values["taxes"] == [
		{
			"charge_type": "Actual",
			"account_head": "VAT 7 - C",
			"description": "VAT S 7% (e-invoice)",
			"tax_amount": 19.25,
		},
		{
			"charge_type": "Actual",
			"account_head": "VAT 19 - C",
			"description": "VAT S 19% (e-invoice)",
			"tax_amount": 37.62,
		},
	]
	assert round(sum(r["qty"] * r["rate"] for r in values["items"]) + 19.25 + 37.62, 2) == doc["total"]


def test_einvoice_rate_without_a_single_account_leaves_every_tax_to_the_person():
	doc, _ = read_document(FERD.read_bytes(), FERD.name)
	result = build(doc, Accounts([{"name": "VAT 19 - C", "tax_rate": 19.0}]))
	layout = draft(result)
	assert "taxes" not in layout["values"]
	assert any("VAT at 7%" in note for note in layout["notes"])


def test_einvoice_credit_note_becomes_a_return_with_negative_quantities():
	path = SAMPLES / "fnfe-Avoir_FR_type381_BASIC.pdf"
	doc, _ = read_document(path.read_bytes(), path.name)
	assert doc["einvoice"]["credit_note"] is True
	values = draft(build(doc, FakeSystem()))["values"]
	assert values["is_return"] == 1 and all(row["qty"] < 0 for row in values["items"])


def test_einvoice_with_document_allowances_and_charges_passes_its_own_arithmetic():
	path = SAMPLES / "ferd22-EN16931_Rabatte.pdf"
	doc, _ = read_document(path.read_bytes(), path.name)
	assert doc["allowance_total"] == 14.73 and doc["charge_total"] == 5.8
	results = checks.check(doc, {"EUR"})
	assert checks.totals_accepted(results), checks.failures(results)
	doc["total"] += 1  # the same document with a total that does not add up is flagged
	assert not checks.totals_accepted(checks.check(doc, {"EUR"}))
