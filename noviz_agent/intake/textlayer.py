"""PDFs with a text layer: words and tables read with pdfplumber, fields found by their printed labels.

A page is read as lines of segments (runs of words with small gaps), so "Invoice No: 42" in a
right-hand block does not run into the letterhead on the left. Line items come from a ruled
table when pdfplumber finds one with a recognisable header, else from the columns under a header
line, by where each segment sits. Labels are data (the tables below), not branches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from noviz_agent.intake.document import currency_code, empty_document, parse_amount

SEGMENT_GAP = 12.0  # points between two words that belong to different cells or blocks
LINE_TOLERANCE = 3.0

DOCUMENT_TITLES = (
	("customer_order", r"\bpurchase\s+order\b|\border\s+confirmation\s+request\b"),
	("purchase_receipt", r"\bdelivery\s+note\b|\bpacking\s+slip\b|\bgoods\s+received\b"),
	("supplier_invoice", r"\b(tax\s+)?invoice\b|\bbill\b"),
	("expense_receipt", r"\breceipt\b"),
)
LABELS = {
	"document_number": r"invoice\s*(no\.?|number|#)|inv\.?\s*no\.?|bill\s*no\.?|po\s*(no\.?|number|#)|"
	r"order\s*(no\.?|number|#)|receipt\s*(no\.?|number|#)|document\s*(no\.?|number)",
	"date": r"invoice\s+date|order\s+date|issue\s+date|date\s+of\s+issue|po\s+date|date",
	"due_date": r"due\s+date|payment\s+due|due",
	"party_tax_id": r"tax\s*id|vat\s*(reg\.?\s*)?(no\.?|number|id)|tin|ein|gstin|abn|tax\s*no\.?",
	"currency": r"currency",
}
# The party is whoever issued the document: the seller on an invoice, the buyer on their order
# (which names us as its vendor).
PARTY_LABELS = {
	"customer_order": r"buyer|ordered\s+by|customer|from|issued\s+by",
	"other": r"from|issued\s+by|supplier|seller|vendor|bill\s+from",
}
COLUMNS = {
	"item_code": r"item\s*code|code|sku|part\s*no\.?|art\.?\s*no\.?|ref\.?|item\s*#",
	"description": r"description|item\s+description|product|details|article|item",
	"quantity": r"qty\.?|quantity|units|qnty",
	"rate": r"unit\s*price|rate|price|unit\s*cost|price/unit",
	"amount": r"amount|line\s+total|total|net",
}
TOTALS = (
	("subtotal", r"sub\s*-?\s*total|net\s+total|net\s+amount|total\s+net|total\s+before\s+tax"),
	("tax", r"vat|sales\s+tax|total\s+tax|tax|gst|hst|mwst|iva"),
	("total", r"grand\s+total|total\s+due|amount\s+due|balance\s+due|total\s+amount|invoice\s+total|total"),
)
SKIP_ROWS = r"carried\s+forward|brought\s+forward|continued|page\s+\d+"


@dataclass
class Segment:
	text: str
	x0: float
	x1: float
	top: float


def _segments(words: list[dict]) -> list[list[Segment]]:
	"""Words grouped into lines (by their top) and each line into segments (by the gaps between words)."""
	lines: list[list[dict]] = []
	for word in sorted(words, key=lambda w: (round(w["top"]), w["x0"])):
		if lines and abs(lines[-1][0]["top"] - word["top"]) <= LINE_TOLERANCE:
			lines[-1].append(word)
		else:
			lines.append([word])
	out = []
	for line in lines:
		line.sort(key=lambda w: w["x0"])
		segs: list[Segment] = []
		for word in line:
			if segs and word["x0"] - segs[-1].x1 <= SEGMENT_GAP:
				segs[-1].text += " " + word["text"]
				segs[-1].x1 = word["x1"]
			else:
				segs.append(Segment(word["text"], word["x0"], word["x1"], word["top"]))
		out.append(segs)
	return out


def _full(pattern: str) -> re.Pattern:
	return re.compile(rf"^(?:{pattern})\s*[:#.]?$", re.I)


def _prefixed(pattern: str) -> re.Pattern:
	# A colon or "#" is required: "Tin cans" in a description is not a tax id.
	return re.compile(rf"^(?:{pattern})\s*[:#]\s*(.+)$", re.I)


def _labelled_values(lines: list[list[Segment]], labels: dict) -> dict:
	"""Header fields: `Label: value` in one segment, or a label segment followed by its value."""
	found: dict = {}
	for i, segs in enumerate(lines):
		for j, seg in enumerate(segs):
			for key, pattern in labels.items():
				if key in found:
					continue
				m = _prefixed(pattern).match(seg.text)
				value = None
				if m:
					value = m.groups()[-1].strip()
				elif _full(pattern).match(seg.text):
					if j + 1 < len(segs):
						value = segs[j + 1].text
					elif i + 1 < len(lines):
						below = [s for s in lines[i + 1] if s.x0 < seg.x1 + 40 and s.x1 > seg.x0 - 5]
						value = below[0].text if below else None
				if value:
					found[key] = value.strip()
					break
	return found


def _title_type(text: str) -> str:
	for kind, pattern in DOCUMENT_TITLES:
		if re.search(pattern, text, re.I):
			return kind
	return "other"


def _column_kind(text: str) -> str | None:
	for kind, pattern in COLUMNS.items():
		if _full(pattern).match(text.strip()):
			return kind
	return None


def _header(cells: list[str]) -> list[str | None] | None:
	kinds = [_column_kind(c or "") for c in cells]
	if "item" in [(c or "").strip().lower() for c in cells] and kinds.count("description") > 1:
		kinds = [
			"item_code" if (c or "").strip().lower() == "item" else k
			for c, k in zip(cells, kinds, strict=False)
		]
	if "description" in kinds and "amount" in kinds and ("quantity" in kinds or "rate" in kinds):
		return kinds
	return None


def _line(values: dict) -> dict | None:
	description = " ".join((values.get("description") or "").split())
	line = {
		"description": description,
		"quantity": parse_amount(values.get("quantity")),
		"rate": parse_amount(values.get("rate")),
		"amount": parse_amount(values.get("amount")),
		"item_code": (values.get("item_code") or "").strip() or None,
	}
	if not description and line["amount"] is None:
		return None
	return line


def _is_total_row(text: str) -> bool:
	return any(re.match(rf"^(?:{p})\b", text.strip(), re.I) for _, p in TOTALS)


def _ruled_lines(page) -> tuple[list[dict], float | None]:
	"""Lines from a ruled table pdfplumber finds; the bottom of the table, to read totals below it."""
	for table in page.find_tables():
		rows = table.extract()
		for index, row in enumerate(rows):
			kinds = _header([(c or "").replace("\n", " ") for c in row])
			if kinds is None:
				continue
			lines = []
			for body in rows[index + 1 :]:
				cells = [(c or "").replace("\n", " ") for c in body]
				if cells and _is_total_row(cells[0] or next((c for c in cells if c), "")):
					break
				if re.search(SKIP_ROWS, " ".join(cells), re.I):
					continue
				values = {k: v for k, v in zip(kinds, cells, strict=False) if k}
				line = _line(values)
				if line:
					lines.append(line)
			return lines, table.bbox[3]
	return [], None


def _overlap(seg: Segment, col: Segment) -> float:
	return min(seg.x1, col.x1) - max(seg.x0, col.x0)


def _column_lines(lines: list[list[Segment]]) -> tuple[list[dict], int | None]:
	"""Lines read from the columns under a header line; the index of the line after the table."""
	for index, segs in enumerate(lines):
		kinds = _header([s.text for s in segs])
		if kinds is None:
			continue
		columns = [(k, s) for k, s in zip(kinds, segs, strict=False) if k]
		out: list[dict] = []
		end = index + 1
		for end in range(index + 1, len(lines)):
			row = lines[end]
			text = " ".join(s.text for s in row)
			if _is_total_row(row[0].text):
				break
			if re.search(SKIP_ROWS, text, re.I) or _header([s.text for s in row]):
				continue
			values: dict[str, str] = {}
			for seg in row:
				kind = max(columns, key=lambda c: (_overlap(seg, c[1]), -abs(seg.x0 - c[1].x0)))[0]
				values[kind] = (values.get(kind, "") + " " + seg.text).strip()
			if set(values) == {"description"} and out:
				out[-1]["description"] += " " + values["description"]  # a wrapped description
				continue
			line = _line(values)
			if line:
				out.append(line)
		else:
			end = len(lines)
		return out, end
	return [], None


def _totals(lines: list[list[Segment]]) -> tuple[dict, str | None]:
	out: dict = {"subtotal": None, "total": None, "taxes": []}
	currency = None
	for segs in lines:
		label = segs[0].text
		for key, pattern in TOTALS:
			if not re.match(rf"^(?:{pattern})\b", label, re.I):
				continue
			amount_text = (
				segs[-1].text
				if len(segs) > 1
				else re.sub(rf"^(?:{pattern})\S*\s*[:]?", "", label, flags=re.I)
			)
			amount = parse_amount(amount_text)
			if amount is None:
				break
			for token in re.findall(r"[A-Z]{3}|[$€£¥₹]", amount_text):
				currency = currency or currency_code(token)
			if key == "tax":
				out["taxes"].append(
					{"description": " ".join(s.text for s in segs[:-1]) or label, "amount": amount}
				)
			elif out[key] is None:
				out[key] = amount
			break
	return out, currency


def read_page(page) -> dict:
	"""One page of a text-layer PDF as the extraction schema (fields it does not print stay None)."""
	words = page.extract_words(keep_blank_chars=False, use_text_flow=False)
	lines = _segments(words)
	doc = empty_document()
	head = " ".join(s.text for segs in lines[:8] for s in segs)
	doc["document_type"] = _title_type(head)
	party = PARTY_LABELS.get(doc["document_type"], PARTY_LABELS["other"])
	labelled = _labelled_values(lines, {**LABELS, "party_name": party})
	for key in ("document_number", "date", "due_date", "party_tax_id", "party_name"):
		doc[key] = labelled.get(key)
	doc["currency"] = currency_code(labelled.get("currency"))
	ruled, bottom = _ruled_lines(page)
	if ruled:
		doc["lines"] = ruled
		after = [segs for segs in lines if segs[0].top > bottom]
	else:
		doc["lines"], end = _column_lines(lines)
		after = lines[end:] if end is not None else []
	totals, currency = _totals(after)
	doc.update(subtotal=totals["subtotal"], total=totals["total"], taxes=totals["taxes"])
	doc["currency"] = doc["currency"] or currency
	if doc["party_name"] is None and lines and doc["document_type"] != "other":
		first = lines[0][0].text
		if _title_type(first) == "other":
			doc["party_name"] = first  # the letterhead
	return doc


def page_has_text(page, min_words: int) -> bool:
	return len(page.extract_words()) >= min_words
