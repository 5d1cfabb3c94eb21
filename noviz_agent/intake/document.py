"""The extracted document: one schema for every reader (e-invoice, model, fallback, vision), and page merge.

Amounts and dates are parsed (by `values`) from what the document printed; nothing is corrected.
A value that cannot be read stays None and the checks say so.
"""

from __future__ import annotations

from noviz_agent.intake.values import currency_code, parse_amount, parse_date

__all__ = [
	"DOCUMENT_SCHEMA",
	"DOCUMENT_TYPES",
	"currency_code",
	"empty_document",
	"merge_pages",
	"normalise",
	"parse_amount",
	"parse_date",
]

DOCUMENT_TYPES = ("supplier_invoice", "purchase_receipt", "customer_order", "expense_receipt", "other")

# The answer every extraction produces; the vision model is asked for exactly this (strict JSON schema).
_NUMBER = {"type": ["number", "null"]}
_TEXT = {"type": ["string", "null"]}
LINE_SCHEMA = {
	"type": "object",
	"properties": {
		"description": {"type": "string"},
		"quantity": _NUMBER,
		"rate": _NUMBER,
		"amount": _NUMBER,
		"item_code": _TEXT,
	},
	"required": ["description", "quantity", "rate", "amount", "item_code"],
	"additionalProperties": False,
}
DOCUMENT_SCHEMA = {
	"type": "object",
	"properties": {
		"document_type": {"type": "string", "enum": list(DOCUMENT_TYPES)},
		"party_name": _TEXT,
		"party_tax_id": _TEXT,
		"document_number": _TEXT,
		"date": {**_TEXT, "description": "as printed"},
		"due_date": {**_TEXT, "description": "as printed"},
		"currency": {**_TEXT, "description": "ISO 4217 code or the symbol printed"},
		"lines": {"type": "array", "items": LINE_SCHEMA},
		"taxes": {
			"type": "array",
			"items": {
				"type": "object",
				"properties": {"description": {"type": "string"}, "amount": _NUMBER},
				"required": ["description", "amount"],
				"additionalProperties": False,
			},
		},
		"subtotal": _NUMBER,
		"total": _NUMBER,
	},
	"required": [
		"document_type",
		"party_name",
		"party_tax_id",
		"document_number",
		"date",
		"due_date",
		"currency",
		"lines",
		"taxes",
		"subtotal",
		"total",
	],
	"additionalProperties": False,
}


def empty_document() -> dict:
	return {key: ([] if key in ("lines", "taxes") else None) for key in DOCUMENT_SCHEMA["required"]} | {
		"document_type": "other"
	}


def merge_pages(pages: list[dict]) -> dict:
	"""One document from its pages: header fields from the first page that has them, lines in page order,
	taxes and totals from the last page that prints them."""
	merged = empty_document()
	for page in pages:
		for key in ("party_name", "party_tax_id", "document_number", "date", "due_date", "currency"):
			if merged[key] in (None, "") and page.get(key) not in (None, ""):
				merged[key] = page[key]
		if merged["document_type"] == "other" and page.get("document_type") not in (None, "other"):
			merged["document_type"] = page["document_type"]
		merged["lines"].extend(page.get("lines") or [])
		if page.get("taxes"):
			merged["taxes"] = list(page["taxes"])
		for key in ("subtotal", "total"):
			if page.get(key) is not None:
				merged[key] = page[key]
	return merged


def normalise(doc: dict, order: str | None = None) -> dict:
	"""Dates as ISO and the currency as a code where they can be read; what cannot be read is kept as
	printed (the checks report it), never guessed. `order` (DMY or MDY) reads an ambiguous date."""
	out = {**doc, "lines": [dict(x) for x in doc.get("lines") or []], "taxes": list(doc.get("taxes") or [])}
	for key in ("date", "due_date"):
		parsed = parse_date(doc.get(key), order)
		if parsed is not None:
			out[key] = parsed.isoformat()
	out["currency"] = currency_code(doc.get("currency")) or doc.get("currency")
	for key in ("party_name", "party_tax_id", "document_number"):
		if isinstance(out.get(key), str):
			out[key] = " ".join(out[key].split()) or None
	return out
