"""The intake pipeline: file → extracted document → checks → matches → the draft the person confirms.

`read_document` turns bytes into the extraction schema: an e-invoice from its XML, text pages
through the reasoning model or the built-in reader, scans through the vision model. `build` adds
the checks, the matches, the duplicate flag and (for an e-invoice) its tax rows; `drafts.draft`
lays out the DocType, its values and lines, and the new records (party, items) the person would
create with it. Nothing here writes; the caller's backend reads candidates as the person.
"""

from __future__ import annotations

from typing import Protocol

from noviz_agent.engine.errors import ProviderError
from noviz_agent.intake import checks, drafts, einvoice, files, matching, textlayer, textmodel, vision
from noviz_agent.intake.document import merge_pages, normalise
from noviz_agent.intake.drafts import TRANSACTIONS, draft
from noviz_agent.intake.files import IntakeError, Limits

__all__ = ["TRANSACTIONS", "Backend", "apply_changes", "build", "draft", "read_document"]


class Backend(Protocol):
	"""What the pipeline reads from the system, always as the person."""

	def parties(self, party_type: str) -> list[dict]: ...  # {"name", "title", "tax_id"}

	def items(self) -> list[dict]: ...  # {"item_code", "item_name", "supplier_parts": [[supplier, part_no]]}

	def currencies(self) -> set[str] | None: ...

	def existing_bills(self, supplier: str, bill_no: str) -> list[str]: ...

	def can_create(self, doctype: str) -> bool: ...

	# Optional: the tax accounts ({"name", "tax_rate"}) an e-invoice's taxes are booked on, the
	# Expense Claim Types and the person's Employee record. A backend without them leaves those
	# to the person on the draft.
	def tax_accounts(self) -> list[dict]: ...

	def expense_types(self) -> list[str]: ...

	def employee(self) -> str | None: ...


def read_document(
	content: bytes,
	filename: str,
	*,
	limits: Limits | None = None,
	vision_model=None,
	text_model=None,
	site_date_order: str | None = None,
	einvoices: bool = True,
	progress=None,
) -> tuple[dict, dict]:
	"""The document in the extraction schema and how it was read.

	An e-invoice (an XML upload, or the XML a Factur-X/ZUGFeRD PDF carries) is read from its XML.
	Other PDFs are read page by page: pages with a text layer by the reasoning model when one is
	given (`text_model`), else by the built-in reader; pages without one by the vision model, after
	the pixel budget of all of them is checked, and never rendered when there is no vision model.
	`meta` says which reader read each page, and why a document was not read as it might have been.
	`einvoices=False` reads a Factur-X PDF from its pages (to compare the page with its XML)."""
	limits = limits or Limits()
	kind = files.check_file(content, filename, limits)
	if kind == "xml":
		doc = einvoice.from_xml(content, filename)
		return normalise(doc), {"pages": 0, "read_by": ["einvoice"]}
	if kind != "pdf":
		if vision_model is None:
			raise IntakeError(vision.NO_VISION)  # before the image is even opened: nothing would read it
		image, mime = files.normalised_image(content, kind)
		pages = vision.read_pages([(image, mime)], vision_model, progress=progress)
		return normalise(merge_pages(pages), site_date_order), {"pages": 1, "read_by": ["vision"]}
	pdf = files.open_pdf(content, filename)
	notes: list[str] = []
	try:
		count = len(pdf.pages)
		if count == 0:
			raise IntakeError(f"{filename} has no pages. Export the document again and upload it.")
		if count > limits.max_pages:
			raise IntakeError(
				f"{filename} has {count} pages; at most {limits.max_pages} can be read at once. Upload only this document's pages."
			)
		found, why = einvoice.from_pdf(content, filename) if einvoices else (None, None)
		if why:
			notes.append(why)
		if found is not None:
			return normalise(found), {"pages": count, "read_by": ["einvoice"]}
		has_text = [textlayer.page_has_text(page, files.MIN_TEXT_WORDS) for page in pdf.pages]
		scanned = [i for i, text in enumerate(has_text) if not text]
		scales = {}
		if scanned:
			if vision_model is None:
				raise IntakeError(_no_vision(filename, scanned, count))
			scales = files.render_plan(content, scanned, filename)  # refuses before anything is rendered
		lines = {i: textlayer.page_lines(pdf.pages[i]) for i, text in enumerate(has_text) if text}
		order = textlayer.date_order(list(lines.values()), site_date_order)
		by_page, read_by = _read_text_pages(pdf, lines, order, text_model, notes, progress, count)
		for index in scanned:
			if progress:
				progress({"stage": "vision", "page": index + 1, "pages": count})
			image = files.page_image(content, index, scales[index])
			by_page[index] = vision.read_pages([(image, "image/png")], vision_model)[0]
			read_by[index] = "vision"
	finally:
		pdf.close()
	pages = [by_page[i] for i in sorted(by_page)]
	meta = {"pages": count, "read_by": [read_by[i] for i in range(count) if i in read_by]}
	if notes:
		meta["notes"] = notes
	return normalise(merge_pages(pages), order), meta


def _no_vision(filename: str, scanned: list[int], count: int) -> str:
	which = (
		"It is a scan"
		if len(scanned) == count
		else f"Page {', '.join(str(i + 1) for i in scanned)} of it is a scan"
	)
	return (
		f"{which} (no text layer), and no vision model is configured to read it, so {filename} was not read. "
		"Upload a PDF with a text layer or an e-invoice, or ask the administrator to set a vision model in "
		"Agent Settings."
	)


def _read_text_pages(pdf, lines: dict, order, text_model, notes: list, progress, count: int):
	"""The pages with a text layer: through the reasoning model in one request, else by the built-in reader."""
	by_page: dict[int, dict] = {}
	read_by: dict[int, str] = {}
	if not lines:
		return by_page, read_by
	if text_model is not None:
		if progress:
			progress({"stage": "model", "page": min(lines) + 1, "pages": count})
		texts = [textmodel.page_text(pdf.pages[i]) for i in sorted(lines)]
		try:
			by_page[min(lines)] = textmodel.read(texts, text_model)
			read_by.update({i: "model" for i in lines})
			return by_page, read_by
		except (ProviderError, IntakeError) as exc:
			notes.append(
				f"The reasoning model could not read the page text ({exc}); the built-in reader read it instead."
			)
	for i, page_lines in lines.items():
		if progress:
			progress({"stage": "read", "page": i + 1, "pages": count})
		by_page[i] = textlayer.read_lines(page_lines, order, pdf.pages[i])
		read_by[i] = "text"
	if not any(page.get("currency") for page in by_page.values()):
		by_page[min(by_page)]["currency"] = textlayer.page_currency(list(lines.values()))
	return by_page, read_by


def build(doc: dict, backend: Backend) -> dict:
	"""Checks, matches, duplicates and the draft for an extracted document (nothing is written)."""
	kind = doc.get("document_type") if doc.get("document_type") in TRANSACTIONS else "supplier_invoice"
	spec = TRANSACTIONS[kind]
	results = checks.check(doc, backend.currencies())
	party_type = spec["party"]
	party = (
		matching.match_party(doc.get("party_name"), doc.get("party_tax_id"), backend.parties(party_type))
		if party_type
		else None
	)
	supplier = party["name"] if party and party_type == "supplier" else None
	catalogue = backend.items()
	lines = []
	for line in doc.get("lines") or []:
		lines.append({**line, "match": matching.match_item(line, catalogue, supplier)})
	duplicates = []
	if kind == "supplier_invoice" and supplier and doc.get("document_number"):
		duplicates = backend.existing_bills(supplier, doc["document_number"])
	result = {
		"document": doc,
		"transaction": kind,
		"doctype": spec["doctype"],
		"checks": results,
		"failed_checks": [r["message"] for r in checks.failures(results)],
		"party": party,
		"lines": lines,
		"duplicates": duplicates,
	}
	if doc.get("einvoice") and kind == "supplier_invoice":
		result["tax_rows"], result["tax_notes"] = drafts.tax_rows(doc, _optional(backend, "tax_accounts"))
	if kind == "expense_receipt":
		types = _optional(backend, "expense_types") or []
		result["expense_type"] = types[0] if len(types) == 1 else None
		result["employee"] = _optional(backend, "employee")
	return result


def _optional(backend, name: str):
	method = getattr(backend, name, None)
	return method() if callable(method) else None


def apply_changes(result: dict, changes: dict | None) -> dict:
	"""The person's edits before Confirm: another party, header values, a line's item, quantity or rate."""
	if not changes:
		return result
	out = {**result, "document": dict(result["document"]), "lines": [dict(x) for x in result["lines"]]}
	if changes.get("party"):
		out["party"] = {
			"status": "matched",
			"query": out["document"].get("party_name"),
			"name": changes["party"],
			"by": "person",
			"confidence": 1.0,
			"runner_up": None,
		}
	for key in ("document_number", "date", "due_date", "currency"):
		if changes.get(key):
			out["document"][key] = changes[key]
	if changes.get("expense_type"):
		out["expense_type"] = changes["expense_type"]
	for edit in changes.get("lines") or []:
		index = int(edit.get("line", 0)) - 1
		if not 0 <= index < len(out["lines"]):
			raise IntakeError(
				f"There is no line {edit.get('line')}; the document has {len(out['lines'])} lines."
			)
		line = out["lines"][index]
		for key in ("quantity", "rate"):
			if edit.get(key) is not None:
				line[key] = float(edit[key])
		if (
			line.get("quantity") is not None
			and line.get("rate") is not None
			and ("quantity" in edit or "rate" in edit)
		):
			line["amount"] = round(line["quantity"] * line["rate"], 2)
		if edit.get("item_code"):
			line["match"] = {
				"status": "matched",
				"query": line.get("description"),
				"name": edit["item_code"],
				"by": "person",
				"confidence": 1.0,
				"runner_up": None,
			}
	return out
