"""E-invoices read exactly: Factur-X/ZUGFeRD 2.x PDFs (the CII XML they carry) and UBL or CII XML uploads.

XRechnung and Peppol BIS Billing 3 are UBL or CII; every EN 16931 invoice is read the same way.
The XML is parsed with a hardened lxml parser (no DTD, no entities, no network, no huge trees),
its business terms (BT-1, BT-2, ... of EN 16931) are read with the factur-x library's UBL/CII
parser, and they are laid onto the extraction schema: nothing is taken from the printed page.
What the schema has no place for (the buyer, each line's tax category, the tax breakdown, all the
totals, the syntax and the standard) goes into the document's `einvoice` block, which the
proposal shows. An XML that is not an invoice, or not well-formed, is refused in words.
"""

from __future__ import annotations

import io
import logging

from noviz_agent.intake.document import empty_document
from noviz_agent.intake.files import IntakeError

MAX_XML_BYTES = 20 * 1024 * 1024
CII = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
UBL_INVOICE = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
UBL_CREDIT_NOTE = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
ZUGFERD_1 = "urn:ferd:CrossIndustryDocument:invoice:1p0"
# (namespace, root element) -> (syntax shown to the person, factur-x's name for it)
SYNTAXES = {
	(CII, "CrossIndustryInvoice"): ("UN/CEFACT CII", "factur-x"),
	(UBL_INVOICE, "Invoice"): ("UBL 2.1 Invoice", "ubl-2.1-invoice"),
	(UBL_CREDIT_NOTE, "CreditNote"): ("UBL 2.1 Credit Note", "ubl-2.1-creditnote"),
}
# UNTDID 1001 document types that are credit notes (the amounts are credited, not owed).
CREDIT_NOTE_TYPES = {"81", "83", "261", "262", "296", "308", "381", "396", "420", "458", "532"}
# The standards an EN 16931 customisation id names, for the person.
STANDARDS = (
	("xrechnung", "XRechnung"),
	("peppol", "Peppol BIS Billing 3"),
	("factur-x", "Factur-X"),
	("zugferd", "ZUGFeRD"),
	("en16931", "EN 16931"),
)


def _parser():
	from lxml import etree

	# No DTD is loaded and no entity is expanded, so neither XXE nor "billion laughs" can work; a
	# document that declares a DOCTYPE at all is refused after parsing (e-invoices never have one).
	return etree.XMLParser(
		resolve_entities=False,
		no_network=True,
		load_dtd=False,
		dtd_validation=False,
		huge_tree=False,
		remove_comments=True,
		remove_pis=True,
	)


def parse_xml(content: bytes, filename: str = "the XML file"):
	"""The XML's root element, parsed safely; IntakeError when it is malformed, hostile or too large."""
	from lxml import etree

	if len(content) > MAX_XML_BYTES:
		raise IntakeError(
			f"{filename} is {len(content) / 1048576:.0f} MB of XML; an e-invoice is far smaller. Upload the "
			"invoice's own XML file."
		)
	if _declares_dtd(content):
		raise IntakeError(
			f"{filename} declares a DOCTYPE or entities, which e-invoices never do, so it was not read. "
			"Upload the XML exactly as the supplier's system produced it."
		)
	try:
		root = etree.fromstring(content, parser=_parser())
	except etree.XMLSyntaxError as exc:
		raise IntakeError(
			f"{filename} is not well-formed XML ({exc.msg}), so it cannot be read as an e-invoice. Ask the "
			"supplier for the invoice file again, or upload the PDF."
		) from None
	if root.getroottree().docinfo.doctype:
		raise IntakeError(
			f"{filename} declares a DOCTYPE, which e-invoices never do, so it was not read. Upload the XML "
			"exactly as the supplier's system produced it."
		)
	return root


def _declares_dtd(content: bytes) -> bool:
	"""Whether the text before the root element declares a DOCTYPE or entities (in any encoding)."""
	head = content[:4096]
	texts = [head]
	if head[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00<" in head[:4] or b"<\x00" in head[:4]:
		texts = [head.decode("utf-16", "ignore").encode()]
	return any(b"<!DOCTYPE" in t.upper() or b"<!ENTITY" in t.upper() for t in texts)


def syntax_of(root) -> tuple[str, str] | None:
	"""(syntax for the person, factur-x flavour) of an invoice root; None for any other XML."""
	from lxml import etree

	name = etree.QName(root)
	return SYNTAXES.get((name.namespace, name.localname))


def is_zugferd_1(root) -> bool:
	from lxml import etree

	return etree.QName(root).namespace == ZUGFERD_1


def embedded_xml(content: bytes) -> tuple[str, bytes] | None:
	"""The XML file a Factur-X/ZUGFeRD PDF carries, as (attachment name, bytes); None when it has none."""
	import pypdf

	try:
		reader = pypdf.PdfReader(io.BytesIO(content))
		attachments = list(reader.attachment_list)
	except Exception:  # noqa: BLE001 - a PDF pypdf cannot list is read from its pages instead
		return None
	for attachment in attachments:
		name = attachment.name or ""
		if not name.lower().endswith(".xml"):
			continue
		try:
			data = attachment.content
		except Exception:  # noqa: BLE001 - an unreadable attachment is skipped, the pages remain
			continue
		if data and len(data) <= MAX_XML_BYTES:
			return name, data
	return None


def _text(value) -> str | None:
	if isinstance(value, list):
		value = value[0] if value else None
	if value is None:
		return None
	value = " ".join(str(value).split())
	return value or None


def _number(value) -> float | None:
	if isinstance(value, list):
		value = value[0] if value else None
	if value in (None, ""):
		return None
	return float(value)


def _date(value) -> str | None:
	if isinstance(value, list):
		value = min(value) if value else None
	return str(value) if value else None


def _party(data: dict | None) -> dict:
	data = data or {}
	return {
		"name": _text(data.get("name")) or _text(data.get("biz_name")),
		"trading_name": _text(data.get("biz_name")),
		"vat_id": _text(data.get("vat_identifier")),
		"tax_number": _text(data.get("tax_identifier")),
		"legal_id": _text(data.get("legal_identifier")),
		"country": _text(data.get("country_code")),
	}


def _standard(customization: str | None) -> str:
	text = (customization or "").lower()
	return next((label for key, label in STANDARDS if key in text), "EN 16931")


def _line(data: dict) -> tuple[dict, dict]:
	"""A line in the extraction schema and in full (tax category, unit, base quantity)."""
	quantity = _number(data.get("BT-129"))
	base = _number(data.get("BT-149")) or 1.0
	price = _number(data.get("BT-146"))
	rate = price / base if price is not None else None
	name = _text(data.get("BT-153")) or _text(data.get("BT-154")) or ""
	line = {
		"description": name,
		"quantity": quantity,
		"rate": rate,
		"amount": _number(data.get("BT-131")),
		"item_code": _text(data.get("BT-155")),
	}
	# Line allowances and charges (BG-27, BG-28): the line's amount is quantity × price − these + those.
	allowance = round(sum(_number(a.get("amount")) or 0 for a in data.get("BG-27") or []), 2)
	charge = round(sum(_number(c.get("amount")) or 0 for c in data.get("BG-28") or []), 2)
	if allowance:
		line["allowance"] = allowance
	if charge:
		line["charge"] = charge
	full = {
		"id": _text(data.get("BT-126")),
		"name": name,
		"description": _text(data.get("BT-154")),
		"quantity": quantity,
		"unit": _text(data.get("BT-130")),
		"net_price": price,
		"base_quantity": base,
		"amount": line["amount"],
		"tax_category": _text(data.get("BT-151")),
		"tax_rate": _number(data.get("BT-152")),
		"seller_item_id": line["item_code"],
		"buyer_item_id": _text(data.get("BT-156")),
		"standard_id": _text(data.get("BT-157")),
	}
	return line, full


def _tax_label(category: str | None, rate: float | None) -> str:
	return f"VAT {category or '?'} {rate:g}%" if rate is not None else f"VAT {category or '?'}"


def read(root, source: str) -> dict:
	"""The document an e-invoice's XML states, in the extraction schema with its `einvoice` block."""
	from facturx.parse_xml import parse_ubl_cii_xml

	syntax = syntax_of(root)
	if syntax is None:
		raise IntakeError(
			f"{source} is XML but not an e-invoice (UBL Invoice or Credit Note, or a UN/CEFACT Cross Industry "
			"Invoice), so it cannot be read. Upload the invoice's XML or its PDF."
		)
	label, flavour = syntax
	logging.getLogger("factur-x").setLevel(logging.ERROR)  # its per-field info lines are not for our logs
	try:
		data = parse_ubl_cii_xml(
			root, flavor=flavour, level="extended", float_as="float", date_as="string", check_xsd=False
		)
	except (ValueError, TypeError, AssertionError) as exc:
		raise IntakeError(
			f"{source} is a {label} file, but a value in it cannot be read ({exc}). Ask the supplier for a valid "
			"e-invoice, or upload the PDF."
		) from None
	seller, buyer = _party(data.get("BG-4")), _party(data.get("BG-7"))
	lines, full_lines = [], []
	for entry in data.get("BG-25") or []:
		line, full = _line(entry)
		lines.append(line)
		full_lines.append(full)
	breakdown = [
		{
			"category": _text(t.get("BT-118")),
			"rate": _number(t.get("BT-119")),
			"basis": _number(t.get("BT-116")),
			"amount": _number(t.get("BT-117")),
			"exemption_reason": _text(t.get("BT-120")),
		}
		for t in data.get("BG-23") or []
	]
	totals = {
		"line_total": _number(data.get("BT-106")),
		"allowance_total": _number(data.get("BT-107")),
		"charge_total": _number(data.get("BT-108")),
		"tax_exclusive": _number(data.get("BT-109")),
		"tax_total": _number(data.get("BT-110")),
		"grand_total": _number(data.get("BT-112")),
		"prepaid": _number(data.get("BT-113")),
		"rounding": _number(data.get("BT-114")),
		"due_payable": _number(data.get("BT-115")),
	}
	type_code = _text(data.get("BT-3"))
	doc = empty_document()
	doc.update(
		document_type="supplier_invoice",
		party_name=seller["name"],
		party_tax_id=seller["vat_id"] or seller["tax_number"] or seller["legal_id"],
		document_number=_text(data.get("BT-1")),
		date=_date(data.get("BT-2")),
		due_date=_date(data.get("BT-9")),
		currency=_text(data.get("BT-5")),
		lines=lines,
		taxes=[
			{"description": _tax_label(t["category"], t["rate"]), "amount": t["amount"]} for t in breakdown
		],
		subtotal=totals["line_total"],
		total=totals["grand_total"],
	)
	doc["allowance_total"] = totals["allowance_total"] or 0.0
	doc["charge_total"] = totals["charge_total"] or 0.0
	doc["einvoice"] = {
		"syntax": label,
		"standard": _standard(_text(data.get("BT-24"))),
		"customization_id": _text(data.get("BT-24")),
		"source": source,
		"type_code": type_code,
		"credit_note": flavour == "ubl-2.1-creditnote" or type_code in CREDIT_NOTE_TYPES,
		"seller": seller,
		"buyer": buyer,
		"lines": full_lines,
		"tax_breakdown": breakdown,
		"totals": totals,
		"payment_terms": _text(data.get("BT-20")),
		"buyer_reference": _text(data.get("BT-10")),
		"order_reference": _text(data.get("BT-13")),
	}
	return doc


def from_xml(content: bytes, filename: str) -> dict:
	"""An uploaded UBL or CII file read as an e-invoice."""
	root = parse_xml(content, filename)
	if is_zugferd_1(root):
		raise IntakeError(
			f"{filename} is a ZUGFeRD 1.0 invoice, an older format that is not read as XML. Upload the PDF it came "
			"with, which is read from its pages."
		)
	return read(root, filename)


def from_pdf(content: bytes, filename: str) -> tuple[dict | None, str | None]:
	"""The e-invoice a PDF carries, or (None, why it is read from its pages instead)."""
	found = embedded_xml(content)
	if found is None:
		return None, None
	name, xml = found
	source = f"{name} embedded in {filename}"
	try:
		root = parse_xml(xml, source)
	except IntakeError as exc:
		return None, f"The XML embedded in {filename} was not read: {exc}"
	if is_zugferd_1(root):
		return None, f"{filename} carries a ZUGFeRD 1.0 XML, which is not read; the pages were read instead."
	if syntax_of(root) is None:
		return None, None  # some other attachment: the pages are the document
	return read(root, source), None
