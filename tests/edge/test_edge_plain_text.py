"""Terminal rendering of responses for `bench noviz-agent ask`."""

from __future__ import annotations

from noviz_agent.plain_text import response_text, table_text


def test_table_is_aligned_with_paging_line():
	table = {
		"title": "Unpaid invoices",
		"columns": [{"key": "name", "label": "Invoice"}, {"key": "total", "label": "Total"}],
		"rows": [{"name": "SINV-1", "total": 100}, {"name": "SINV-10", "total": 2500.5}],
		"page": {"number": 2, "size": 2, "total": 7, "result_id": "r1"},
	}
	lines = table_text(table).splitlines()
	assert lines[0] == "Unpaid invoices"
	assert lines[1].split() == ["Invoice", "Total"]
	assert lines[3].index("100") == lines[4].index("2500.5")
	assert lines[-1] == "rows 3–4 of 7"


def test_every_part_of_a_response_appears():
	text = response_text(
		{
			"text": "Here you go.",
			"cards": [{"title": "Revenue", "value": "1,000", "change": "+5%"}],
			"chart": {"data": [{}, {}], "layout": {"title": {"text": "Sales"}}},
			"proposal": {
				"action": "create",
				"doctype": "ToDo",
				"summary": "Add a to-do",
				"values": {"a": 1},
				"token": "t.k",
			},
			"flags": [{"value": "42", "message": "not in any tool result"}],
			"sources": [{"title": "Credit", "section": "Limits", "slug": "credit"}],
			"error": {"message": "Partly failed", "hint": "Retry"},
		}
	)
	for expected in (
		"Here you go.",
		"[Revenue] 1,000 (+5%)",
		"[chart: Sales, 2 series]",
		"token: t.k",
		"Check: 42",
		"Credit > Limits",
		"Hint: Retry",
	):
		assert expected in text


def test_long_cells_are_cut():
	table = {"columns": [{"key": "a", "label": "A"}], "rows": [{"a": "x" * 100}]}
	assert "…" in table_text(table)


def test_figures_come_under_the_line_saying_whose_they_are():
	text = response_text(
		{
			"text": "Sales by month.",
			"cards": [{"title": "Revenue", "value": 1000.0, "fieldtype": "Currency", "currency": "EUR"}],
			"scope": {
				"company": "Noviz Europe",
				"currency": "EUR",
				"other_companies": ["Noviz Trading"],
				"period": {"start": "2026-01-01", "end": "2026-12-01", "partial": True},
			},
		}
	)
	lines = text.split("\n\n")
	assert lines[1] == (
		"(Noviz Europe · EUR · 2026-01-01 to 2026-12-01 (last period still running). "
		"Not included: Noviz Trading)"
	)
	assert lines[2].startswith("[Revenue] 1,000.00 EUR")


def test_a_list_of_records_names_every_company_it_covers_and_plain_text_has_no_scope_line():
	table = {"columns": [{"key": "name", "label": "Invoice"}], "rows": [{"name": "SINV-1"}]}
	scope = {"companies": ["Noviz Europe", "Noviz Trading"]}
	text = response_text({"table": table, "scope": scope})
	assert text.splitlines()[0] == "(All companies you can read: Noviz Europe, Noviz Trading)"
	assert response_text({"text": "Hello.", "scope": scope}) == "Hello."
