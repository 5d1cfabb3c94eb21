"""`documents.intake`: a supplier invoice, customer order or receipt read into a draft the person confirms.

The file is one the person uploaded (a private File that only they can read). Reading it, the
checks and the matches happen when the proposal is built; the result is kept in the person's own
result store, so an edit or the Confirm use exactly what was shown, without reading the file again.
Confirm inserts the draft (docstatus 0) in the person's session with the file attached, plus any
new party or item records the proposal listed. The system reached through `session.intake`
(the frappe edge, or a fake in tests) reads and writes as the person.
"""

from __future__ import annotations

import hashlib

from noviz_agent.engine.errors import PermissionDenied, ToolError
from noviz_agent.engine.tools import Tool
from noviz_agent.intake import proposal as pipeline

RULES = (
	"documents.intake reads a document the person uploaded and proposes the draft it becomes. Tell the person "
	"which checks failed and which party or items were not matched or matched with low confidence, exactly as "
	"the proposal lists them; never fix a number yourself. To change the party, a date, a line's item, quantity "
	"or rate, call documents.intake again with the same file and `changes`."
)

CHANGES = {
	"type": "object",
	"description": "The person's corrections before Confirm",
	"properties": {
		"party": {"type": "string", "description": "The supplier or customer ID to use instead of the match"},
		"document_number": {"type": "string"},
		"date": {"type": "string", "description": "YYYY-MM-DD"},
		"due_date": {"type": "string", "description": "YYYY-MM-DD"},
		"currency": {"type": "string"},
		"expense_type": {"type": "string", "description": "The Expense Claim Type of a receipt's lines"},
		"lines": {
			"type": "array",
			"items": {
				"type": "object",
				"properties": {
					"line": {"type": "integer", "description": "1-based line number as listed"},
					"item_code": {"type": "string"},
					"quantity": {"type": "number"},
					"rate": {"type": "number"},
				},
				"required": ["line"],
				"additionalProperties": False,
			},
		},
	},
	"additionalProperties": False,
}


def _system(session):
	system = session.intake
	if system is None:
		raise ToolError(
			"Document intake is not available in this session; ask the person to upload the file in the chat."
		)
	return system


def _cache_key(session, file: str) -> str:
	return "intake:" + hashlib.sha256(f"{session.user}\x1f{file}".encode()).hexdigest()[:24]


def _result(session, file: str) -> dict:
	"""The read document for this person and file: from their store, else read now and kept there."""
	key = _cache_key(session, file)
	kept = session.results.get(key)
	if isinstance(kept, dict) and kept.get("user") == session.user:
		return kept
	system = _system(session)
	filename, content = system.read_file(file)  # refuses a file that is not the person's own
	doc, meta = pipeline.read_document(
		content,
		filename,
		limits=system.limits(),
		vision_model=system.vision_model(),
		text_model=_optional(system, "text_model"),
		site_date_order=_optional(system, "date_order"),
		progress=session.notify,
	)
	built = pipeline.build(doc, system)
	kept = {"user": session.user, "file": file, "filename": filename, "meta": meta, "result": built}
	session.results.put(key, kept, session.limits.proposal_ttl_seconds + 300)
	return kept


def _optional(system, name: str):
	"""What a system offers beyond the required reads (the reasoning model, the site's date order)."""
	method = getattr(system, name, None)
	return method() if callable(method) else None


READERS = {
	"einvoice": "the e-invoice XML",
	"model": "the reasoning model (page text)",
	"text": "the built-in text reader",
	"vision": "the vision model",
}


def _read_by(kept: dict) -> str:
	doc = kept["result"]["document"]
	einvoice = doc.get("einvoice")
	if einvoice:
		return (
			f"read exactly from the e-invoice ({einvoice['standard']}, {einvoice['syntax']}, {einvoice['source']}), "
			"not from the page"
		)
	readers = list(dict.fromkeys(kept["meta"]["read_by"]))
	return "read by " + ", ".join(READERS.get(r, r) for r in readers)


def _einvoice_fields(einvoice: dict) -> dict:
	seller, buyer = einvoice.get("seller") or {}, einvoice.get("buyer") or {}
	shown = {}
	if seller.get("vat_id") or seller.get("tax_number"):
		shown["Seller tax id"] = seller.get("vat_id") or seller.get("tax_number")
	if buyer.get("name"):
		shown["Buyer"] = buyer["name"] + (f" ({buyer['vat_id']})" if buyer.get("vat_id") else "")
	breakdown = einvoice.get("tax_breakdown") or []
	if breakdown:
		shown["Tax breakdown"] = "; ".join(
			f"{t.get('category')} {t.get('rate') or 0:g}%: {t.get('amount') or 0:,.2f} on {t.get('basis') or 0:,.2f}"
			for t in breakdown
		)
	totals = einvoice.get("totals") or {}
	if totals.get("due_payable") is not None and totals.get("due_payable") != totals.get("grand_total"):
		shown["Amount due"] = totals["due_payable"]
	return shown


def _match_text(match: dict | None) -> str:
	if not match:
		return ""
	if match["status"] != "matched":
		closest = match.get("closest")
		return "not found — new record" + (
			f" (closest: {closest['name']}, {closest['score']:.0%})" if closest else ""
		)
	text = f"{match['by'].replace('_', ' ')}, {match['confidence']:.0%}"
	if match.get("runner_up"):
		text += f"; runner-up {match['runner_up']['name']} {match['runner_up']['score']:.0%}"
	return text


def preview(args: dict, session) -> dict:
	kept = _result(session, args["file"])
	result = pipeline.apply_changes(kept["result"], args.get("changes"))
	draft = pipeline.draft(result)
	system = _system(session)
	for doctype in [draft["doctype"], *(r["doctype"] for r in draft["new_records"])]:
		if not system.can_create(doctype):
			raise PermissionDenied(f"{session.user} does not have permission to create {doctype}.")
	doc, values = result["document"], draft["values"]
	party = result.get("party")
	shown: dict = {"Document": f"{kept['filename']} ({doc.get('document_type')}, {_read_by(kept)})"}
	if party is not None:
		shown["Party"] = f"{doc.get('party_name')} → {party.get('name') or 'new'} ({_match_text(party)})"
	unread = [] if doc.get("party_name") or party is None else ["issuer"]
	for key in ("document_number", "date", "due_date", "currency", "subtotal", "total"):
		if doc.get(key) not in (None, ""):
			shown[key.replace("_", " ").capitalize()] = doc[key]
		elif key in ("document_number", "date", "currency", "total"):
			unread.append(key.replace("_", " "))
	if doc.get("einvoice"):
		shown.update(_einvoice_fields(doc["einvoice"]))
	lines = [
		{
			"#": i,
			"description": line.get("description"),
			"qty": line.get("quantity"),
			"rate": line.get("rate"),
			"amount": line.get("amount"),
			"item": row["item_code"],
			"match": _match_text(line["match"]),
		}
		for i, (line, row) in enumerate(zip(result["lines"], values["items"], strict=False), start=1)
	]
	line_columns = [
		{"key": k, "label": label}
		for k, label in (
			("#", "#"),
			("description", "Description"),
			("qty", "Quantity"),
			("rate", "Rate"),
			("amount", "Amount"),
			("item", "Item"),
			("match", "Match"),
		)
	]
	if draft["new_records"]:
		shown["New records"] = [
			{"doctype": r["doctype"], "name": next(iter(r["values"].values()))} for r in draft["new_records"]
		]
	warnings = list(result["failed_checks"])
	if unread:
		warnings.insert(0, f"Not read from the document (left empty): {', '.join(unread)}.")
	warnings.extend(kept["meta"].get("notes") or [])
	if result["duplicates"]:
		warnings.insert(
			0,
			f"Likely duplicate: supplier invoice {doc.get('document_number')} of {values.get('supplier')} is already "
			f"entered as {', '.join(result['duplicates'])}.",
		)
	warnings.extend(draft["notes"])
	out = {
		"action": "create",
		"doctype": draft["doctype"],
		"summary": f"Create a draft {draft['doctype']} from {kept['filename']}",
		"values": shown,
		# The lines as the chat's small table; the draft itself stays with the tool for Confirm.
		"tables": {"lines": {"columns": line_columns, "rows": lines}},
		"draft": draft,
		"checks": result["checks"],
		"duplicates": result["duplicates"],
		"file": args["file"],
	}
	if warnings:
		out["warning"] = {"message": " ".join(warnings)}
	# Everything in the draft was read from a document someone outside the conversation wrote: the
	# gateway warns about it like any untrusted text (engine/provenance.py).
	texts = [str(v) for v in doc.values() if isinstance(v, str)] + [
		str(r.get("description") or "") for r in lines
	]
	out["_read"] = [
		{"source": f"the uploaded document {kept['filename']}", "texts": texts or [kept["filename"]]}
	]
	return out


def intake(args: dict, session) -> dict:
	"""Confirmed: insert the draft (and the new records it listed) as the person, with the file attached."""
	key = _cache_key(session, args["file"])
	kept = session.results.get(key)
	if not isinstance(kept, dict) or kept.get("user") != session.user:
		raise ToolError(
			"This document's reading has expired, so nothing was written. Ask to read the file again."
		)
	draft = pipeline.draft(pipeline.apply_changes(kept["result"], args.get("changes")))
	created = _system(session).insert_draft(draft, args["file"])
	return {
		"doctype": draft["doctype"],
		"name": created["name"],
		"docstatus": 0,
		"_link": created.get("_link"),
		"new_records": created.get("new_records", []),
		"message": f"Draft {draft['doctype']} {created['name']} created with {kept['filename']} attached; "
		"review and submit it in the desk.",
	}


def tools() -> list[Tool]:
	return [
		Tool(
			name="documents.intake",
			description=(
				"Read a document the person uploaded (a supplier invoice, a delivery note, a customer's purchase "
				"order or a receipt; PDF, e-invoice XML, scan or photo; Factur-X/ZUGFeRD, XRechnung and Peppol "
				"e-invoices are read exactly from their XML) and propose the draft it becomes: Purchase Invoice, "
				"Purchase Receipt or Sales Order with the party and items matched (each with confidence and "
				"runner-up), arithmetic and date checks, and a duplicate-invoice flag. Nothing is written until the "
				"person confirms; then the draft is saved (not submitted) with the file attached."
			),
			module="buying",
			parameters={
				"type": "object",
				"properties": {
					"file": {
						"type": "string",
						"description": "The uploaded File's ID, as given by the upload",
					},
					"changes": CHANGES,
				},
				"required": ["file"],
				"additionalProperties": False,
			},
			handler=intake,
			writes=True,
			preview=preview,
			prompt_rules=RULES,
			tags=("document", "upload", "scan", "pdf", "photo", "invoice", "receipt", "order", "ocr"),
		)
	]
