"""The analysis PDF as a report: facts of the site, KPIs and table formatted as in the chat, page numbers."""

from __future__ import annotations

import re

from analytics import dashboard, pdf
from analytics.result import kpi


def result():
	return {
		"key": "sales.monthly_trend",
		"title": "Monthly revenue trend",
		"kpis": [
			kpi("Sales Oct 2026", 1767095.4, "currency", prior=357000.0, prior_label="Sep 2026"),
			kpi("Invoices", 58.0, "count"),
			kpi("Overdue share", 24.5, "%", prior=21.0, prior_label="Sep 2026"),
		],
		"observations": ["Sales rose in October."],
		"table": {
			"columns": ["month", "revenue", "invoices"],
			"rows": [["2026-09", 357000.0, 61], ["2026-10", 1767095.4, 58]],
		},
		"chart": {
			"data": [{"type": "bar", "x": ["2026-09", "2026-10"], "y": [357000.0, 1767095.4]}],
			"layout": {},
		},
		"params": {"start": "2026-01-01", "end": "2026-10-31"},
	}


def test_the_period_of_the_analysis_travels_to_its_panel():
	board = dashboard.build([result()], "Sales")
	assert board["panels"][0]["period"] == "2026-01-01 – 2026-10-31"
	assert board["panels"][0]["table"]["columns"] == ["month", "revenue", "invoices"]


def test_kpis_are_formatted_like_the_chat_with_change_and_period():
	rows = pdf._kpi_rows(result()["kpis"], pdf.default_format, "USD")
	assert rows == [
		["Sales Oct 2026", "USD 1,767,095", "+395% vs Sep 2026"],
		["Invoices", "58", ""],
		["Overdue share", "24.5%", "+3.5 pts vs Sep 2026"],
	]


def test_table_money_columns_use_the_sites_formatter():
	seen = []

	def site_format(value, unit=None, currency=None):
		seen.append((value, unit, currency))
		return f"<{value}>"

	header, rows, numeric = pdf._table_rows(result()["table"], site_format, "EUR")
	assert header == ["Month", "Revenue", "Invoices"] and numeric == [False, True, True]
	assert rows[1] == ["2026-10", "<1767095.4>", "<58>"]
	assert (1767095.4, "currency", "EUR") in seen and (58, None, "EUR") in seen


def test_one_page_per_analysis_with_title_and_author():
	board = dashboard.build([result(), {**result(), "key": "b", "title": "Second"}], "Sales review")
	meta = {
		"company": "Noviz Trading",
		"currency": "USD",
		"generated_on": "2026-12-01 01:40",
		"generated_by": "Sales User",
	}
	document = pdf.render(board, meta)
	assert document.startswith(b"%PDF")
	assert re.search(rb"/Count 2\b", document)
	assert b"(Sales review)" in document and b"(Sales User)" in document


def test_percentage_columns_are_printed_as_percentages():
	table = {"columns": ["month", "change_pct"], "rows": [["2026-10", 395.0]]}
	_, rows, _ = pdf._table_rows(table, pdf.default_format, "USD")
	assert rows == [["2026-10", "395.0%"]]
