"""PDFs with a text layer read without a model: words laid out with pdfplumber, fields found by labels.

A page is read as lines of segments (runs of words with small gaps), so "Invoice No: 42" in a
right-hand block does not run into the letterhead on the left. Labels come from
`data/labels.yaml` (English, German, French, Dutch, Spanish, Italian): a field's value is the rest
of its label's segment, the next segment, or the segment below it (a column header). Dates are
read by `values.find_dates` in the day/month order the document itself shows, else its
language's, else the site's. The issuer is whoever a label names, else the sender line above the
address window ("Hetzner Online GmbH • Industriestr. 25 • ..."), else a company name outside the
recipient's block, else the letterhead. Totals are found by their labels and ranked (a grand
total above a total above an amount due). Line items come from a ruled table pdfplumber finds,
else from the columns under a header line. What cannot be read stays None; nothing is guessed.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from noviz_agent.intake import labels
from noviz_agent.intake.document import empty_document
from noviz_agent.intake.values import (
	LANGUAGE_ORDER,
	currency_code,
	document_order,
	find_dates,
	parse_amount,
	parse_date,
	split_currency,
)

SEGMENT_GAP = 12.0  # points between two words that belong to different cells or blocks
LINE_TOLERANCE = 3.0
TOTAL_RANK = {"grand_total": 3, "total": 2, "amount_due": 1}
SKIP_ROWS = re.compile(
	r"carried\s+forward|brought\s+forward|continued|page\s+\d+|seite\s+\d+|übertrag|report|a\s+reporter", re.I
)
# A sender line: "Name • Street 1 • 12345 City" (bullets, bars or spaced dashes between parts).
SENDER_SEPARATORS = re.compile(r"\s*(?:[•●·|▪]|\s[-–—]\s)\s*")
NUMBER_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9/_\-.]*[A-Za-z0-9]$|^\d$")
NOT_A_VALUE = {"no", "nr", "n", "n°", "nº", "#", ":", "-", "."}
# Which labels mean what, by who issues the document: on a customer's order the buyer does.
COMMON_KINDS = ("due_date", "currency", "party_tax_id", "name", "payee")
# What may stand between a title and its number: "Rechnung Nr. 42", "Invoice # 7", "Facture n° 9".
NUMBER_MARKER = re.compile(
	r"(?:^|\s)(?:(?:nr|no|num|number|nummer|numero)(?![a-z])\.?|n°|nº|#)\s*:?\s*", re.I
)
ROLES = {
	"invoice": {
		"document_number": "document_number",
		"titled_number": "titled_number",
		"date": "date",
		"issuer": "issuer",
		"recipient": "recipient",
	},
	"order": {
		"document_number": "order_number",
		"titled_number": "titled_number",
		"date": "order_date",
		"issuer": "order_issuer",
		"recipient": "order_recipient",
	},
}


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


def page_lines(page) -> list[list[Segment]]:
	return _segments(page.extract_words(keep_blank_chars=False, use_text_flow=False))


def lines_text(lines: list[list[Segment]]) -> list[str]:
	return ["  ".join(s.text for s in segs) for segs in lines]


# -- header fields -------------------------------------------------------------------------------


def _below(lines: list[list[Segment]], i: int, seg: Segment, depth: int = 2) -> list[Segment]:
	return [s for _, _, s in _below_at(lines, i, seg, depth)]


def _below_at(lines, i: int, seg: Segment, depth: int = 2) -> list[tuple[int, int, Segment]]:
	"""The segments under a segment, in its column, with their line and place on it."""
	out = []
	for row_index in range(i + 1, min(i + 1 + depth, len(lines))):
		for k, s in enumerate(lines[row_index]):
			if s.x0 < seg.x1 + 40 and s.x1 > seg.x0 - 5:
				out.append((row_index, k, s))
	return out


def _candidates(lines, i: int, j: int, end: int) -> list[tuple[str, str]]:
	"""(where, text) for a label's value: the rest of its segment, the next one, the ones below."""
	seg = lines[i][j]
	out = []
	rest = seg.text[end:].strip()
	if rest:
		out.append(("rest", rest))
	if j + 1 < len(lines[i]):
		out.append(("next", lines[i][j + 1].text))
	out.extend(("below", s.text) for s in _below(lines, i, seg))
	return out


def _first_token(text: str) -> str | None:
	for token in text.split():
		token = token.strip(":,;()")
		if token.lower() in NOT_A_VALUE or not token:
			continue
		return token.lstrip("#:").strip() or None
	return None


def _number(text: str) -> str | None:
	marker = NUMBER_MARKER.search(text)
	token = _first_token(text[marker.end() :] if marker else text)
	if not token or not re.search(r"\d", token) or not NUMBER_TOKEN.match(token) or len(token) > 40:
		return None
	if parse_date(token, "DMY") is not None or re.fullmatch(r"\d+[.,]\d{1,2}", token):
		return None  # a date or an amount, not a number
	return token


def _tax_id(text: str) -> str | None:
	token = _first_token(text)
	if token and re.search(r"\d", token) and len(re.sub(r"\W", "", token)) >= 6:
		return token
	return None


def _currency(text: str) -> str | None:
	token = _first_token(text)
	return currency_code(token) if token else None


def _labelled(lines, order: str | None, roles: dict) -> tuple[dict, list, Counter]:
	"""Header fields by their labels; the recipients' blocks; the languages the labels are in."""
	found: dict = {}
	recipients: list[tuple[int, Segment]] = []
	languages: Counter = Counter()
	meaning = {label: role for role, label in roles.items()}
	allowed = (*COMMON_KINDS, *meaning)
	for i, segs in enumerate(lines):
		# A row of bare labels is a header: each value is in the row below ("Factuur datum  Factuur").
		bare = sum(
			1
			for s in segs
			if (lb := labels.label_at(s.text, "fields", allowed)) and not s.text[lb.end :].strip()
		)
		header_row = bare >= 2
		for j, seg in enumerate(segs):
			label = labels.label_at(seg.text, "fields", allowed)
			if label is not None:
				languages[label.language] += 1
				kind = meaning.get(label.kind, label.kind)
				if kind == "recipient":
					recipients.append((i, seg))
					continue
				if kind in ("issuer", "payee"):
					name = _issuer_below(lines, i, j, label.end)
					if name:
						found.setdefault(kind, name)
					continue
				_take(found, kind, _candidates(lines, i, j, label.end), order, header_row)
			# "Bank X – Titulaire du compte : NETPRESSE": a labelled value after a separator, with its colon.
			for piece in SENDER_SEPARATORS.split(seg.text)[1:]:
				inner = labels.label_at(piece, "fields", allowed)
				if inner and ":" in piece[: inner.end] and piece[inner.end :].strip():
					kind = meaning.get(inner.kind, inner.kind)
					if kind in ("issuer", "payee"):
						name = _clean_name(piece[inner.end :])
						if name:
							found.setdefault(kind, name)
					elif kind != "recipient":
						_take(found, kind, [("rest", piece[inner.end :])], order, False)
	return found, recipients, languages


def _take(found: dict, kind: str, candidates: list[tuple[str, str]], order, header_row: bool) -> None:
	"""The first candidate that is a valid value of the field, kept unless the field has one already."""
	if kind in ("document_number", "titled_number"):
		if kind == "titled_number" and not header_row:
			# A title's number is beside it, or below it only when marked as one ("# 42").
			candidates = [c for c in candidates if c[0] != "below" or NUMBER_MARKER.match(c[1])][:2]
		for _, text in candidates:
			number = _number(text)
			if number:
				found.setdefault(kind, number)
				# "Facture n°42 du 2 juillet 2015", "Rechnung # 42 vom 19.05.2014": the date beside it.
				dates = find_dates(text, order)
				if dates:
					found.setdefault("number_date", dates[0][0].isoformat())
				return
	elif kind in ("date", "due_date"):
		for _, text in candidates:
			dates = find_dates(text, order)
			if dates:
				found.setdefault(kind, dates[0][0].isoformat())
				return
	elif kind == "currency":
		for _, text in candidates:
			code = _currency(text)
			if code:
				found.setdefault("currency", code)
				return
	elif kind == "party_tax_id":
		for _, text in candidates[:2]:
			tax_id = _tax_id(text)
			if tax_id:
				found.setdefault("party_tax_id", tax_id)
				return


# -- the issuer ---------------------------------------------------------------------------------


def _clean_name(text: str) -> str | None:
	text = " ".join(text.split()).strip(" ,;:-–")
	if not re.search(r"[A-Za-zÀ-ÿ]{2}", text) or labels.is_label(text):
		return None
	return text


def _company_names(text: str) -> list[str]:
	"""Company names in a text: words ending in a legal form, without the words of a sentence before it."""
	out = []
	for m in labels.legal_form_pattern().finditer(text):
		words = m.group(1).split()
		if any(w[:1].isupper() for w in words):
			while words and not words[0][:1].isupper() and not words[0][:1].isdigit():
				words.pop(0)
		name = _clean_name(" ".join(words))
		if name:
			out.append(name)
	return out


def _issuer_below(lines, i: int, j: int, end: int) -> str | None:
	"""The name under an issuer label: on its line, or the first name-like line of its block."""
	seg = lines[i][j]
	rest = seg.text[end:].strip()
	if rest:
		return _clean_name(rest)
	if j + 1 < len(lines[i]) and not labels.is_label(lines[i][j + 1].text):
		return _clean_name(lines[i][j + 1].text)
	placed = _below_at(lines, i, seg, depth=5)
	block = [s for _, _, s in placed]
	for row, k, s in placed:
		label = labels.label_at(s.text, "fields", ("name",))
		if label is None:
			continue
		value = s.text[label.end :].strip() or (lines[row][k + 1].text if k + 1 < len(lines[row]) else "")
		if value:
			return _clean_name(value)
	for s in block:
		names = _company_names(s.text)
		if names:
			return names[0]
	for s in block:
		if not labels.label_at(s.text, "fields") and not re.search(r"\d{3}", s.text):
			return _clean_name(s.text)
	return None


def _in_block(i: int, seg: Segment, blocks: list[tuple[int, Segment]]) -> bool:
	"""Whether a segment sits in a recipient's block: below its label, in its column, a few lines down."""
	for row, label in blocks:
		if (
			row <= i <= row + 6
			and seg.x0 < label.x0 + max(label.x1 - label.x0, 120)
			and seg.x1 > label.x0 - 10
		):
			return True
	return False


def _sender_line(lines) -> str | None:
	"""The issuer from a sender line above the address window: "Acme GmbH | Europa-Allee 1 | 60486 Frankfurt"."""
	for segs in lines[:25]:
		for seg in segs:
			parts = [p for p in SENDER_SEPARATORS.split(seg.text) if p.strip()]
			if len(parts) >= 3 and re.search(r"\d{4,5}", " ".join(parts[1:])):
				name = _clean_name(parts[0])
				if name and not re.search(r"\d{3}", name):
					return name
	return None


def _issuer(lines, labelled: dict, recipients, doc_type: str) -> str | None:
	if labelled.get("issuer"):
		return labelled["issuer"]
	sender = _sender_line(lines)
	if sender:
		return sender
	names: list[str] = []
	for i, segs in enumerate(lines):
		for seg in segs:
			if _in_block(i, seg, recipients):
				continue
			names.extend(_company_names(seg.text))
	if names:
		counts = Counter(names)
		return max(names, key=lambda n: (counts[n] > 1, -names.index(n)))
	return labelled.get("payee") or _letterhead(lines, recipients, doc_type)


def _letterhead(lines, recipients, doc_type: str) -> str | None:
	"""The first name-like text at the top of the page, without a title word beside it."""
	for i, segs in enumerate(lines[:6]):
		for seg in segs:
			if _in_block(i, seg, recipients) or labels.label_at(seg.text, "fields"):
				continue
			text = seg.text
			title = _title_match(text)
			if title and title[1] == 0:
				continue  # the title itself
			if title:
				text = text[: title[1]]
			name = _clean_name(text)
			if name and not re.search(r"\d{3}|@|www\.|https?:", name):
				return name
	return None


# -- titles, totals and lines -------------------------------------------------------------------


def _title_match(text: str) -> tuple[str, int] | None:
	"""The kind of document a title names, and where the title starts in the text; the first one wins.

	German compounds count as their last word: "Handelsrechnung" and "Kostenrechnung" are invoices."""
	from noviz_agent.intake.values import _unaccented

	plain = _unaccented(text)
	best = None
	for kind, languages in labels.data()["titles"].items():
		for language, words in languages.items():
			before = r"(?<![a-z])[a-z]*" if language == "de" else r"(?<![a-z])"
			for word in words:
				m = re.search(rf"{before}{re.escape(_unaccented(word))}(?![a-z])", plain)
				if m and (best is None or m.start() < best[1]):
					best = (kind, m.start())
	return best


def _title_type(lines) -> str:
	"""What the document is, by its title: a short text at the top that names a kind, not a label."""
	loose = None
	for segs in lines[:12]:
		for seg in segs:
			found = _title_match(seg.text)
			if not found:
				continue
			kind, start = found
			rest = seg.text[start:]
			words = rest.split()
			label_like = re.match(r"^\S+(?:\s\S+)?\s*:", rest) is not None
			if start == 0 and len(words) <= 6 and not label_like:
				return kind
			if loose is None and kind in ("supplier_invoice", "expense_receipt") and not label_like:
				loose = kind
	return loose or "other"


def _amount_after(segs: list[Segment], j: int, end: int) -> tuple[float | None, str | None]:
	"""The last amount printed after a label on its line, and the currency printed with it."""
	texts = [segs[j].text[end:]] + [s.text for s in segs[j + 1 :]]
	for text in reversed(texts):
		text = text.strip()
		if not text:
			continue
		for piece in [text, *reversed(_pieces(text))]:
			amount = parse_amount(piece)
			if amount is not None:
				_, sign = split_currency(piece)
				currency = currency_code(sign) if sign else None
				if currency is None:
					currency = next(
						(currency_code(split_currency(t)[1]) for t in texts if split_currency(t)[1]), None
					)
				return amount, currency
	return None, None


def _amount_below(lines, segs: list[Segment], seg: Segment) -> tuple[float | None, str | None]:
	"""A total printed under its label, as the last row of a totals table's column ("Endbetrag")."""
	i = next((k for k, row in enumerate(lines) if row is segs), None)
	if i is None:
		return None, None
	found = (None, None)
	for _, _, below in _below_at(lines, i, seg, depth=4):
		if below.x1 < seg.x0 or below.x0 > seg.x1 + 10:
			continue
		amount = parse_amount(below.text)
		if amount is not None:
			found = (amount, currency_code(split_currency(below.text)[1] or "") or None)
	return found


def _pieces(text: str) -> list[str]:
	"""An amount with its currency sign, as separate pieces of a text: "24.99 5.00 29.99 €"."""
	tokens = text.split()
	out = []
	for k, token in enumerate(tokens):
		out.append(token)
		if k + 1 < len(tokens) and split_currency(tokens[k + 1])[0] == "":
			out.append(f"{token} {tokens[k + 1]}")
		if k > 0 and split_currency(tokens[k - 1])[0] == "":
			out.append(f"{tokens[k - 1]} {token}")
	return out


def _totals(lines) -> tuple[dict, str | None]:
	out: dict = {"subtotal": None, "total": None, "taxes": []}
	best_rank, currency = 0, None
	for segs in lines:
		for j, seg in enumerate(segs):
			label = labels.label_at(seg.text, "totals")
			if label is None:
				continue
			field = labels.label_at(seg.text, "fields")
			if field and field.length > label.length:
				continue  # "VAT No: DE123" is a tax id, not a tax
			amount, printed = _amount_after(segs, j, label.end)
			if amount is None and label.kind in TOTAL_RANK and not seg.text[label.end :].strip():
				amount, printed = _amount_below(lines, segs, seg)
			if amount is None:
				continue
			kind = label.kind
			if kind in TOTAL_RANK:
				if TOTAL_RANK[kind] >= best_rank:
					best_rank, out["total"] = TOTAL_RANK[kind], amount
					currency = printed or currency
			elif kind == "subtotal":
				out["subtotal"] = amount
				currency = currency or printed
			elif kind == "tax":
				out["taxes"].append(
					{"description": " ".join(s.text for s in segs[: j + 1]), "amount": amount}
				)
				currency = currency or printed
			break
	return out, currency


def _column_kind(text: str) -> str | None:
	label = labels.label_at(text, "columns")
	if label and not text[label.end :].strip():
		return label.kind
	return None


def _header(cells: list[str]) -> list[str | None] | None:
	kinds = [_column_kind(c or "") for c in cells]
	if kinds.count("description") > 1:
		first = kinds.index("description")
		kinds = ["item_code" if k == first else kind for k, kind in enumerate(kinds)]
	if "description" in kinds and "amount" in kinds and ("quantity" in kinds or "rate" in kinds):
		return kinds
	return None


def _line(values: dict) -> dict | None:
	description = " ".join((values.get("description") or "").split())
	line = {
		"description": description,
		"quantity": _quantity(values.get("quantity")),
		"rate": parse_amount(values.get("rate")),
		"amount": parse_amount(values.get("amount")),
		"item_code": (values.get("item_code") or "").strip() or None,
	}
	if not description and line["amount"] is None:
		return None
	return line


def _quantity(text) -> float | None:
	"""A quantity, with the unit it may carry ("1.00 kg", "20 Stk", "8Unit(s)")."""
	if text is None:
		return None
	m = re.match(r"^\s*(-?[\d.,]+)", str(text))
	return parse_amount(m.group(1)) if m else None


def _is_total_row(text: str) -> bool:
	return labels.label_at(text, "totals") is not None


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
				if SKIP_ROWS.search(" ".join(cells)):
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
			if SKIP_ROWS.search(text) or _header([s.text for s in row]):
				continue
			values: dict[str, str] = {}
			for seg in row:
				kind = max(columns, key=lambda c: (_overlap(seg, c[1]), -abs(seg.x0 - c[1].x0)))[0]
				values[kind] = (values.get(kind, "") + " " + seg.text).strip()
			if set(values) <= {"description", "item_code"} and out:
				out[-1]["description"] += " " + " ".join(values.values())  # a wrapped description
				continue
			line = _line(values)
			if line:
				out.append(line)
		else:
			end = len(lines)
		return out, end
	return [], None


# -- a page and a document ----------------------------------------------------------------------


def language_order(lines) -> str | None:
	"""The day/month order of the language most of a page's labels are in (None for English)."""
	languages: Counter = Counter()
	for segs in lines:
		for seg in segs:
			for group in ("fields", "totals"):
				label = labels.label_at(seg.text, group)
				if label:
					languages[label.language] += 1
	if not languages:
		return None
	return LANGUAGE_ORDER.get(languages.most_common(1)[0][0])


def date_order(pages_lines: list, site_order: str | None = None) -> str | None:
	"""How the document's ambiguous numeric dates are read: its own unambiguous dates, its language, the site."""
	texts = [t for lines in pages_lines for t in lines_text(lines)]
	return document_order(texts) or (language_order(pages_lines[0]) if pages_lines else None) or site_order


def read_lines(lines: list[list[Segment]], order: str | None = None, page=None) -> dict:
	"""One page's lines of segments as the extraction schema (fields it does not print stay None)."""
	doc = empty_document()
	doc["document_type"] = _title_type(lines)
	roles = ROLES["order" if doc["document_type"] == "customer_order" else "invoice"]
	found, recipients, _ = _labelled(lines, order, roles)
	doc["document_number"] = found.get("document_number") or found.get("titled_number")
	doc["date"] = found.get("date") or found.get("number_date")
	doc["due_date"] = found.get("due_date")
	doc["party_tax_id"] = found.get("party_tax_id")
	doc["party_name"] = _issuer(lines, found, recipients, doc["document_type"])
	ruled, bottom = _ruled_lines(page) if page is not None else ([], None)
	if ruled:
		doc["lines"] = ruled
	else:
		doc["lines"], _ = _column_lines(lines)
	totals, printed = _totals(lines)
	doc.update(subtotal=totals["subtotal"], total=totals["total"], taxes=totals["taxes"])
	doc["currency"] = found.get("currency") or printed
	return doc


def page_currency(pages_lines: list) -> str | None:
	"""The currency most amounts of a document are printed with, when no label or total says: a code
	or sign beside a number, else a currency sign anywhere (a column header's "Gesamt/€")."""
	beside: Counter = Counter()
	signs: Counter = Counter()
	for lines in pages_lines:
		for segs in lines:
			for seg in segs:
				rest, sign = split_currency(seg.text)
				code = currency_code(sign) if sign else None
				if code and re.search(r"\d", rest):
					beside[code] += 1
				for symbol in re.findall(r"[€$£¥₹]", seg.text):
					signs[currency_code(symbol)] += 1
	seen = beside or signs
	return seen.most_common(1)[0][0] if seen else None


def read_page(page, order: str | None = None) -> dict:
	"""One page of a text-layer PDF as the extraction schema."""
	return read_lines(page_lines(page), order, page)


def page_has_text(page, min_words: int) -> bool:
	return len(page.extract_words()) >= min_words
