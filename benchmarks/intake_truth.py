"""Truth files for the e-invoices of the intake benchmark, read from their XML by explicit XPath.

This is the independent route: each business term is taken at the XPath EN 16931's syntax
bindings give it (CII and UBL 2.1), written out here by hand, with lxml alone; the reader under
test uses the factur-x library's mapping instead. A Factur-X/ZUGFeRD PDF's XML is its embedded
file. Writes one `<file>.json` beside each file in benchmarks/data/intake_real/einvoice/.

	python benchmarks/intake_truth.py [--check]   # --check: fail if a truth file differs
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import pypdf
from lxml import etree

FOLDER = Path(__file__).parent / "data" / "intake_real" / "einvoice"
NS = {
	"rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
	"ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
	"udt": "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100",
	"cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
	"cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
}
CII_HEAD = "/rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction"
CII_AGREEMENT = f"{CII_HEAD}/ram:ApplicableHeaderTradeAgreement"
CII_SETTLEMENT = f"{CII_HEAD}/ram:ApplicableHeaderTradeSettlement"
CII_SUM = f"{CII_SETTLEMENT}/ram:SpecifiedTradeSettlementHeaderMonetarySummation"


def xml_of(path: Path) -> bytes:
	if path.suffix.lower() == ".pdf":
		reader = pypdf.PdfReader(io.BytesIO(path.read_bytes()))
		for attachment in reader.attachment_list:
			if attachment.name.lower().endswith(".xml"):
				return attachment.content
		raise SystemExit(f"{path.name}: no XML attachment")
	return path.read_bytes()


def one(node, xpath: str) -> str | None:
	found = node.xpath(xpath, namespaces=NS)
	if not found:
		return None
	value = found[0] if isinstance(found[0], str) else found[0].text
	return " ".join(value.split()) if value else None


def number(node, xpath: str) -> float | None:
	value = one(node, xpath)
	return float(value) if value not in (None, "") else None


def cii(root) -> dict:
	seller = f"{CII_AGREEMENT}/ram:SellerTradeParty"
	raw_date = one(
		root, "/rsm:CrossIndustryInvoice/rsm:ExchangedDocument/ram:IssueDateTime/udt:DateTimeString"
	)
	lines = []
	for item in root.xpath(f"{CII_HEAD}/ram:IncludedSupplyChainTradeLineItem", namespaces=NS):
		price = number(item, "ram:SpecifiedLineTradeAgreement/ram:NetPriceProductTradePrice/ram:ChargeAmount")
		base = (
			number(item, "ram:SpecifiedLineTradeAgreement/ram:NetPriceProductTradePrice/ram:BasisQuantity")
			or 1.0
		)
		lines.append(
			{
				"quantity": number(item, "ram:SpecifiedLineTradeDelivery/ram:BilledQuantity"),
				"rate": price / base if price is not None else None,
				"amount": number(
					item,
					"ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount",
				),
				"tax_category": one(
					item, "ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax/ram:CategoryCode"
				),
				"tax_rate": number(
					item, "ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax/ram:RateApplicablePercent"
				),
			}
		)
	taxes = [
		{
			"category": one(t, "ram:CategoryCode"),
			"rate": number(t, "ram:RateApplicablePercent"),
			"basis": number(t, "ram:BasisAmount"),
			"amount": number(t, "ram:CalculatedAmount"),
		}
		for t in root.xpath(f"{CII_SETTLEMENT}/ram:ApplicableTradeTax", namespaces=NS)
	]
	return {
		"syntax": "CII",
		"document_number": one(root, "/rsm:CrossIndustryInvoice/rsm:ExchangedDocument/ram:ID"),
		"date": f"{raw_date[:4]}-{raw_date[4:6]}-{raw_date[6:8]}" if raw_date else None,
		"currency": one(root, f"{CII_SETTLEMENT}/ram:InvoiceCurrencyCode"),
		"issuer": one(root, f"{seller}/ram:Name"),
		"tax_id": one(root, f"{seller}/ram:SpecifiedTaxRegistration/ram:ID[@schemeID='VA']")
		or one(root, f"{seller}/ram:SpecifiedTaxRegistration/ram:ID[@schemeID='FC']"),
		"total": number(root, f"{CII_SUM}/ram:GrandTotalAmount"),
		"lines": lines,
		"taxes": taxes,
	}


def ubl(root) -> dict:
	kind = etree.QName(root).localname  # Invoice or CreditNote
	party = "/*/cac:AccountingSupplierParty/cac:Party"
	lines = []
	line_tag, quantity_tag = (
		("cac:CreditNoteLine", "cbc:CreditedQuantity")
		if kind == "CreditNote"
		else (
			"cac:InvoiceLine",
			"cbc:InvoicedQuantity",
		)
	)
	for item in root.xpath(f"/*/{line_tag}", namespaces=NS):
		price = number(item, "cac:Price/cbc:PriceAmount")
		base = number(item, "cac:Price/cbc:BaseQuantity") or 1.0
		lines.append(
			{
				"quantity": number(item, quantity_tag),
				"rate": price / base if price is not None else None,
				"amount": number(item, "cbc:LineExtensionAmount"),
				"tax_category": one(item, "cac:Item/cac:ClassifiedTaxCategory/cbc:ID"),
				"tax_rate": number(item, "cac:Item/cac:ClassifiedTaxCategory/cbc:Percent"),
			}
		)
	taxes = [
		{
			"category": one(t, "cac:TaxCategory/cbc:ID"),
			"rate": number(t, "cac:TaxCategory/cbc:Percent"),
			"basis": number(t, "cbc:TaxableAmount"),
			"amount": number(t, "cbc:TaxAmount"),
		}
		for t in root.xpath("/*/cac:TaxTotal/cac:TaxSubtotal", namespaces=NS)
	]
	return {
		"syntax": f"UBL {kind}",
		"document_number": one(root, "/*/cbc:ID"),
		"date": one(root, "/*/cbc:IssueDate"),
		"currency": one(root, "/*/cbc:DocumentCurrencyCode"),
		"issuer": one(root, f"{party}/cac:PartyLegalEntity/cbc:RegistrationName"),
		"tax_id": one(root, f"{party}/cac:PartyTaxScheme[cac:TaxScheme/cbc:ID='VAT']/cbc:CompanyID")
		or one(root, f"{party}/cac:PartyTaxScheme/cbc:CompanyID"),
		"total": number(root, "/*/cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount"),
		"lines": lines,
		"taxes": taxes,
	}


def truth(path: Path) -> dict:
	root = etree.fromstring(xml_of(path), parser=etree.XMLParser(resolve_entities=False, no_network=True))
	values = cii(root) if etree.QName(root).localname == "CrossIndustryInvoice" else ubl(root)
	return {"file": path.name, "syntax": values.pop("syntax"), "truth": values}


def main() -> None:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--check", action="store_true")
	args = parser.parse_args()
	changed = 0
	for path in sorted(FOLDER.iterdir()):
		if path.suffix.lower() not in (".pdf", ".xml"):
			continue
		text = json.dumps(truth(path), indent=1, ensure_ascii=False) + "\n"
		target = path.with_name(path.name + ".json")
		if args.check:
			if not target.exists() or target.read_text(encoding="utf-8") != text:
				print(f"differs: {target.name}")
				changed += 1
		else:
			target.write_text(text, encoding="utf-8")
	if args.check and changed:
		sys.exit(1)


if __name__ == "__main__":
	main()
