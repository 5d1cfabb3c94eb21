"""The intake pipeline: file → extracted document → checks → matches → the draft the person confirms.

`read_document` turns bytes into the extraction schema (text layer first, vision for pages
without one). `build` adds the checks, the matches and the duplicate flag and lays out the draft:
which DocType, its values and lines, and the new records (party, items) the person would create
with it. Nothing here writes; the caller's backend reads candidates as the person.
"""

from __future__ import annotations

from typing import Protocol

from noviz_agent.intake import checks, files, matching, textlayer, vision
from noviz_agent.intake.document import merge_pages, normalise
from noviz_agent.intake.files import IntakeError, Limits

# Which draft each kind of document becomes, and who its party is.
TRANSACTIONS = {
	"supplier_invoice": {
		"doctype": "Purchase Invoice",
		"party": "supplier",
		"number": "bill_no",
		"date": "bill_date",
	},
	"purchase_receipt": {
		"doctype": "Purchase Receipt",
		"party": "supplier",
		"number": "supplier_delivery_note",
		"date": "posting_date",
	},
	"customer_order": {"doctype": "Sales Order", "party": "customer", "number": "po_no", "date": "po_date"},
	"expense_receipt": {"doctype": "Expense Claim", "party": None, "number": None, "date": "posting_date"},
}
NEW_ITEM_GROUP = "All Item Groups"
NEW_ITEM_UOM = "Nos"


class Backend(Protocol):
	"""What the pipeline reads from the system, always as the person."""

	def parties(self, party_type: str) -> list[dict]: ...  # {"name", "title", "tax_id"}

	def items(self) -> list[dict]: ...  # {"item_code", "item_name", "supplier_parts": [[supplier, part_no]]}

	def currencies(self) -> set[str] | None: ...

	def existing_bills(self, supplier: str, bill_no: str) -> list[str]: ...

	def can_create(self, doctype: str) -> bool: ...


def read_document(
	content: bytes, filename: str, *, limits: Limits | None = None, vision_model=None, progress=None
) -> tuple[dict, dict]:
	"""The document in the extraction schema and how it was read (pages, text or vision per page)."""
	limits = limits or Limits()
	kind = files.check_file(content, filename, limits)
	if kind != "pdf":
		image, mime = files.normalised_image(content, kind)
		pages = vision.read_pages([(image, mime)], vision_model, progress=progress)
		return normalise(merge_pages(pages)), {"pages": 1, "read_by": ["vision"]}
	pdf = files.open_pdf(content, filename)
	try:
		count = len(pdf.pages)
		if count == 0:
			raise IntakeError(f"{filename} has no pages. Export the document again and upload it.")
		if count > limits.max_pages:
			raise IntakeError(
				f"{filename} has {count} pages; at most {limits.max_pages} can be read at once. Upload only this document's pages."
			)
		pages, read_by = [], []
		for index, page in enumerate(pdf.pages):
			if progress:
				progress({"stage": "read", "page": index + 1, "pages": count})
			if textlayer.page_has_text(page, files.MIN_TEXT_WORDS):
				pages.append(textlayer.read_page(page))
				read_by.append("text")
			else:
				image = files.page_image(content, index)
				pages.extend(vision.read_pages([(image, "image/png")], vision_model))
				read_by.append("vision")
	finally:
		pdf.close()
	return normalise(merge_pages(pages)), {"pages": count, "read_by": read_by}


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
	return {
		"document": doc,
		"transaction": kind,
		"doctype": spec["doctype"],
		"checks": results,
		"failed_checks": [r["message"] for r in checks.failures(results)],
		"party": party,
		"lines": lines,
		"duplicates": duplicates,
	}


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


def draft(result: dict) -> dict:
	"""The DocType, header values, lines and new records that Confirm would insert (as a draft)."""
	kind, doc = result["transaction"], result["document"]
	spec = TRANSACTIONS[kind]
	values: dict = {}
	new_records: list[dict] = []
	party = result.get("party")
	if spec["party"]:
		if party and party["status"] == "matched":
			values[spec["party"]] = party["name"]
		elif doc.get("party_name"):
			name = doc["party_name"]
			values[spec["party"]] = name
			record = {"doctype": spec["party"].capitalize(), "values": {f"{spec['party']}_name": name}}
			if doc.get("party_tax_id"):
				record["values"]["tax_id"] = doc["party_tax_id"]
			new_records.append(record)
	if spec["number"] and doc.get("document_number"):
		values[spec["number"]] = doc["document_number"]
	if doc.get("date"):
		values[spec["date"]] = doc["date"]
		if kind == "supplier_invoice":
			values["posting_date"] = doc["date"]
			values["set_posting_time"] = 1
		if kind == "customer_order":
			values["transaction_date"] = doc["date"]
	if doc.get("due_date") and (not doc.get("date") or doc["due_date"] >= doc["date"]):
		values[
			"schedule_date"
			if kind == "purchase_receipt"
			else ("delivery_date" if kind == "customer_order" else "due_date")
		] = doc["due_date"]
	if doc.get("currency"):
		values["currency"] = doc["currency"]
	items = []
	for line in result["lines"]:
		match = line["match"]
		code = match["name"] if match["status"] == "matched" else None
		if code is None:
			code = matching.normal_code(line["description"])[:40] or "NEW-ITEM"
			new_records.append(
				{
					"doctype": "Item",
					"values": {
						"item_code": code,
						"item_name": line["description"][:140],
						"item_group": NEW_ITEM_GROUP,
						"stock_uom": NEW_ITEM_UOM,
						"is_stock_item": 0,
					},
				}
			)
		row = {
			"item_code": code,
			"qty": line.get("quantity") or 1,
			"rate": line.get("rate") or line.get("amount") or 0,
		}
		if line.get("description"):
			row["description"] = line["description"]
		if kind == "customer_order":
			row["delivery_date"] = values.get("delivery_date") or doc.get("date")
		items.append(row)
	values["items"] = items
	notes = []
	taxes = doc.get("taxes") or []
	if taxes:
		total_tax = round(sum(t.get("amount") or 0 for t in taxes), 2)
		notes.append(
			f"The document prints taxes of {total_tax:,.2f}; choose the matching taxes template on the draft, "
			"since the tax accounts are not printed on it."
		)
	return {"doctype": result["doctype"], "values": values, "new_records": new_records, "notes": notes}
