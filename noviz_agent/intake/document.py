"""The extracted document: one schema for the text-layer and the vision path, parsing and page merge.

Amounts and dates are parsed here from what the page printed; nothing is corrected. A value that
cannot be read stays None and the checks say so.
"""

from __future__ import annotations

import datetime as dt
import re

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

CURRENCY_SYMBOLS = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "CHF": "CHF"}

MONTHS = {
	name: i + 1
	for i, names in enumerate(
		(
			("january", "jan"),
			("february", "feb"),
			("march", "mar"),
			("april", "apr"),
			("may",),
			("june", "jun"),
			("july", "jul"),
			("august", "aug"),
			("september", "sep", "sept"),
			("october", "oct"),
			("november", "nov"),
			("december", "dec"),
		)
	)
	for name in names
}


def empty_document() -> dict:
	return {key: ([] if key in ("lines", "taxes") else None) for key in DOCUMENT_SCHEMA["required"]} | {
		"document_type": "other"
	}


_AMOUNT = re.compile(r"^\(?-?[\d\s.,']+\)?-?$")


def parse_amount(text) -> float | None:
	"""A printed amount as a number: 1,234.56 / 1.234,56 / 1 234,56 / (12.00) / 12.00-; None if not one."""
	if text is None:
		return None
	if isinstance(text, int | float):
		return float(text)
	raw = str(text).strip()
	for symbol in sorted(CURRENCY_SYMBOLS, key=len, reverse=True):
		raw = raw.replace(symbol, "")
	raw = re.sub(r"\b[A-Z]{3}\b", "", raw).strip()
	if not raw or not _AMOUNT.match(raw) or not re.search(r"\d", raw):
		return None
	negative = raw.startswith(("(", "-")) or raw.endswith("-")
	digits = raw.strip("()-").replace(" ", "").replace("'", "")
	last_dot, last_comma = digits.rfind("."), digits.rfind(",")
	if last_dot >= 0 and last_comma >= 0:
		decimal = "." if last_dot > last_comma else ","
	elif last_comma >= 0:
		# "1,234" and "1,234,567" are thousands; "12,50" is twelve and a half.
		decimal = None if digits.count(",") > 1 or len(digits) - last_comma - 1 == 3 else ","
	elif last_dot >= 0:
		decimal = None if digits.count(".") > 1 else "."
	else:
		decimal = None
	if decimal is None:
		number = digits.replace(".", "").replace(",", "")
	else:
		thousands = "," if decimal == "." else "."
		number = digits.replace(thousands, "").replace(decimal, ".")
	try:
		value = float(number)
	except ValueError:
		return None
	return -value if negative else value


def parse_date(text) -> dt.date | None:
	"""A printed date: 2026-03-14, 14 March 2026, March 14, 2026, 14.03.2026, 14-Mar-2026; None if not one.

	Slash dates (03/04/2026) are ambiguous between countries and are not guessed.
	"""
	if text is None:
		return None
	if isinstance(text, dt.date):
		return text
	raw = str(text).strip().rstrip(".")
	try:
		if m := re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", raw):
			return dt.date(int(m[1]), int(m[2]), int(m[3]))
		if m := re.fullmatch(r"(\d{1,2})\.(\d{1,2})\.(\d{4})", raw):
			return dt.date(int(m[3]), int(m[2]), int(m[1]))
		if m := re.fullmatch(r"(\d{1,2})[ -]([A-Za-z]+)\.?[ -](\d{4})", raw):
			month = MONTHS.get(m[2].lower())
			return dt.date(int(m[3]), month, int(m[1])) if month else None
		if m := re.fullmatch(r"([A-Za-z]+)\.? (\d{1,2}),? (\d{4})", raw):
			month = MONTHS.get(m[1].lower())
			return dt.date(int(m[3]), month, int(m[2])) if month else None
	except ValueError:
		return None
	return None


def currency_code(text) -> str | None:
	"""An ISO code as printed, or the code of a symbol; None when neither."""
	if not text:
		return None
	raw = str(text).strip()
	if raw in CURRENCY_SYMBOLS:
		return CURRENCY_SYMBOLS[raw]
	if re.fullmatch(r"[A-Za-z]{3}", raw):
		return raw.upper()
	return None


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


def normalise(doc: dict) -> dict:
	"""Dates as ISO and the currency as a code where they can be read; what cannot be read is kept as
	printed (the checks report it), never guessed."""
	out = {**doc, "lines": [dict(x) for x in doc.get("lines") or []], "taxes": list(doc.get("taxes") or [])}
	for key in ("date", "due_date"):
		parsed = parse_date(doc.get(key))
		if parsed is not None:
			out[key] = parsed.isoformat()
	out["currency"] = currency_code(doc.get("currency")) or doc.get("currency")
	for key in ("party_name", "party_tax_id", "document_number"):
		if isinstance(out.get(key), str):
			out[key] = " ".join(out[key].split()) or None
	return out
