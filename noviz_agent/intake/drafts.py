"""The draft a read document becomes: which DocType, its header values, its child table, its new records.

What each kind of document becomes is data (`TRANSACTIONS`): the DocType, the party field, where
the supplier's number and date go, and the child table with the fields of its rows (a Purchase
Invoice's `items`, HRMS's Expense Claim `expenses`). An e-invoice states its taxes exactly, so its
draft carries them as "Actual" tax rows on the tax accounts of the same rate (when the site has
one account per rate); every other document names the taxes it printed and leaves the template
to the person. Nothing here writes.
"""

from __future__ import annotations

from noviz_agent.intake import matching

ITEM_ROW = {"code": "item_code", "quantity": "qty", "rate": "rate", "description": "description"}
TRANSACTIONS = {
	"supplier_invoice": {
		"doctype": "Purchase Invoice",
		"party": "supplier",
		"number": "bill_no",
		"date": "bill_date",
		"due": "due_date",
		"table": "items",
		"row": ITEM_ROW,
	},
	"purchase_receipt": {
		"doctype": "Purchase Receipt",
		"party": "supplier",
		"number": "supplier_delivery_note",
		"date": "posting_date",
		"due": "schedule_date",
		"table": "items",
		"row": ITEM_ROW,
	},
	"customer_order": {
		"doctype": "Sales Order",
		"party": "customer",
		"number": "po_no",
		"date": "po_date",
		"due": "delivery_date",
		"table": "items",
		"row": ITEM_ROW,
	},
	# HRMS: Expense Claim's child table is `expenses` (Expense Claim Detail): a date, a type, an amount.
	"expense_receipt": {
		"doctype": "Expense Claim",
		"party": None,
		"number": None,
		"date": "posting_date",
		"due": None,
		"table": "expenses",
		"row": {
			"date": "expense_date",
			"amount": "amount",
			"sanctioned": "sanctioned_amount",
			"description": "description",
		},
	},
}
NEW_ITEM_GROUP = "All Item Groups"
NEW_ITEM_UOM = "Nos"


def tax_rows(doc: dict, accounts: list[dict] | None) -> tuple[list[dict], list[str]]:
	"""An e-invoice's tax breakdown as "Actual" tax rows on the accounts of the same rate, and notes.

	`accounts` are the tax accounts the person may use: `{"name", "tax_rate"}`. A rate with no
	account, or with several, leaves all the taxes to the person (a partial set would misstate
	the total)."""
	einvoice = doc.get("einvoice")
	if not einvoice:
		return [], []
	rows, missing = [], []
	for tax in einvoice.get("tax_breakdown") or []:
		if not tax.get("amount"):
			continue  # exempt, zero-rated and reverse-charge categories owe nothing here
		rate = tax.get("rate")
		fitting = [
			a for a in accounts or [] if rate is not None and abs(float(a.get("tax_rate") or 0) - rate) < 1e-6
		]
		if len(fitting) != 1:
			missing.append(f"{rate:g}%" if rate is not None else str(tax.get("category")))
			continue
		rows.append(
			{
				"charge_type": "Actual",
				"account_head": fitting[0]["name"],
				"description": f"VAT {tax.get('category')} {rate:g}% (e-invoice)",
				"tax_amount": tax["amount"],
			}
		)
	if missing:
		return [], [
			f"The e-invoice states VAT at {', '.join(missing)}, but the site has no single tax account of that "
			"rate; add the taxes on the draft."
		]
	return rows, []


def draft(result: dict) -> dict:
	"""The DocType, header values, lines and new records that Confirm would insert (as a draft)."""
	kind, doc = result["transaction"], result["document"]
	spec = TRANSACTIONS[kind]
	values: dict = {}
	new_records: list[dict] = []
	notes: list[str] = []
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
	if spec["due"] and doc.get("due_date") and (not doc.get("date") or doc["due_date"] >= doc["date"]):
		values[spec["due"]] = doc["due_date"]
	if doc.get("currency") and kind != "expense_receipt":
		values["currency"] = doc["currency"]
	if kind == "expense_receipt":
		values[spec["table"]], more = _expense_rows(result, spec)
		notes.extend(more)
		if result.get("employee"):
			values["employee"] = result["employee"]
		else:
			notes.append("No Employee record is linked to you; choose the employee on the draft.")
	else:
		values[spec["table"]] = _item_rows(result, spec, values, new_records)
	einvoice = doc.get("einvoice")
	if einvoice and einvoice.get("credit_note") and kind == "supplier_invoice":
		values["is_return"] = 1
		for row in values["items"]:
			row["qty"] = -abs(row["qty"])
		notes.append(
			"The e-invoice is a credit note: the draft is a return (debit note) with negative quantities."
		)
	rows = result.get("tax_rows") or []
	if rows:
		values["taxes"] = [dict(r) for r in rows]
	notes.extend(result.get("tax_notes") or [])
	if einvoice and doc.get("allowance_total"):
		values["apply_discount_on"] = "Net Total"
		values["discount_amount"] = doc["allowance_total"]
	if einvoice and doc.get("charge_total"):
		notes.append(
			f"The e-invoice adds charges of {doc['charge_total']:,.2f} to the lines; add them on the draft."
		)
	taxes = doc.get("taxes") or []
	if taxes and not rows and not (einvoice and result.get("tax_notes")):
		total_tax = round(sum(t.get("amount") or 0 for t in taxes), 2)
		notes.append(
			f"The document prints taxes of {total_tax:,.2f}; choose the matching taxes template on the draft, "
			"since the tax accounts are not printed on it."
		)
	return {"doctype": result["doctype"], "values": values, "new_records": new_records, "notes": notes}


def _item_rows(result: dict, spec: dict, values: dict, new_records: list[dict]) -> list[dict]:
	doc, fields = result["document"], spec["row"]
	rows = []
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
			fields["code"]: code,
			fields["quantity"]: line.get("quantity") or 1,
			fields["rate"]: line.get("rate") or line.get("amount") or 0,
		}
		if line.get("description"):
			row[fields["description"]] = line["description"]
		if result["transaction"] == "customer_order":
			row["delivery_date"] = values.get("delivery_date") or doc.get("date")
		rows.append(row)
	return rows


def _expense_rows(result: dict, spec: dict) -> tuple[list[dict], list[str]]:
	"""A receipt's lines (or its total, when it lists none) as Expense Claim Detail rows."""
	doc, fields = result["document"], spec["row"]
	items = [(line.get("description") or "", line.get("amount")) for line in result["lines"]]
	if not any(amount for _, amount in items) and doc.get("total") is not None:
		items = [(doc.get("party_name") or "Receipt", doc["total"])]
	rows, notes = [], []
	kind = result.get("expense_type")
	for description, amount in items:
		row = {
			fields["amount"]: amount or 0,
			fields["sanctioned"]: amount or 0,
			fields["description"]: description,
		}
		if doc.get("date"):
			row[fields["date"]] = doc["date"]
		if kind:
			row["expense_type"] = kind
		rows.append(row)
	if not kind:
		notes.append("Choose the expense claim type for each line on the draft (the receipt does not say).")
	return rows, notes
