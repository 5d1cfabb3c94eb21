"""The draft each kind of document becomes, in the child table and fields its DocType really has."""

from __future__ import annotations

from noviz_agent.intake.proposal import apply_changes, build, draft
from noviz_agent.testing.invoices import InvoiceSpec, Line

from .fakes import FakeSystem


class WithHR(FakeSystem):
	def expense_types(self):
		return ["Travel"]

	def employee(self):
		return "HR-EMP-00007"


def receipt(**kw) -> dict:
	spec = InvoiceSpec(
		party_name="Taxi Berlin", number="R-9", lines=[Line("Ride to the airport", 1, 42.5)], **kw
	)
	return spec.expected() | {"document_type": "expense_receipt"}


def test_expense_claim_lines_go_to_hrms_expenses_table_not_an_items_table_it_does_not_have():
	layout = draft(build(receipt(), WithHR()))
	assert layout["doctype"] == "Expense Claim"
	assert "items" not in layout["values"]
	# HRMS's Expense Claim: `expenses` rows of Expense Claim Detail (expense_date, expense_type, amount).
	assert layout["values"]["expenses"] == [
		{
			"amount": 42.5,
			"sanctioned_amount": 42.5,
			"description": "Ride to the airport",
			"expense_date": "2026-11-20",
			"expense_type": "Travel",
		}
	]
	assert layout["values"]["employee"] == "HR-EMP-00007" and layout["values"]["posting_date"] == "2026-11-20"
	assert layout["new_records"] == []  # a receipt's lines are expenses, never new Items


def test_expense_receipt_without_a_site_type_asks_for_one_and_takes_the_persons_choice():
	result = build(receipt(), FakeSystem())
	layout = draft(result)
	assert "expense_type" not in layout["values"]["expenses"][0]
	assert any("expense claim type" in n for n in layout["notes"])
	chosen = draft(apply_changes(result, {"expense_type": "Food"}))
	assert chosen["values"]["expenses"][0]["expense_type"] == "Food"


def test_receipt_with_only_a_total_becomes_one_expense_line():
	doc = receipt() | {"lines": [], "total": 19.9, "subtotal": None, "taxes": []}
	rows = draft(build(doc, WithHR()))["values"]["expenses"]
	assert [(r["description"], r["amount"]) for r in rows] == [("Taxi Berlin", 19.9)]
