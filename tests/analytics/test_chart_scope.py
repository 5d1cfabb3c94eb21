"""Every chart title and every PDF page says whose figures they are: company, currency, period,
and a last period that is not over yet."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest

from analytics import charts, dashboard, pdf
from noviz_agent import cli

# Sales of January and of the first ten days of February 2025: February is not over.
ROWS = [
	{"id": f"L{i}", "document": f"D{i}", "date": day, "party": party, "item": "X", "amount": amount}
	for i, (day, party, amount) in enumerate(
		[
			("2024-11-04", "A", 80),
			("2024-12-05", "B", 90),
			("2025-01-05", "A", 100),
			("2025-01-20", "B", 50),
			("2025-02-03", "A", 20),
			("2025-02-10", "B", 40),
		]
	)
]


def _chart(tmp_path, capsys, *scope):
	rows = tmp_path / "rows.json"
	rows.write_text(json.dumps(ROWS))
	assert cli.main(["analytics", "run", "sales.monthly_trend", "--rows", str(rows), *scope, "--json"]) == 0
	return json.loads(capsys.readouterr().out)["chart"]


def test_chart_titles_name_company_currency_and_period_and_mark_a_partial_last_period(tmp_path, capsys):
	chart = _chart(tmp_path, capsys, "--company", "Acme Ltd", "--currency", "EUR")
	line = chart["layout"]["title"]["subtitle"]["text"]
	assert line == "Acme Ltd · EUR · 2024-11 – 2025-02 (2025-02 so far)"
	assert chart["layout"]["title"]["text"] == "Revenue per month"
	go.Figure(chart)  # still a figure plotly accepts, subtitle and all
	assert "template" not in chart["layout"]  # the desk draws with plotly.js's own defaults


def test_a_chart_without_a_company_or_currency_says_only_what_is_known(tmp_path, capsys):
	chart = _chart(tmp_path, capsys)
	assert chart["layout"]["title"]["subtitle"]["text"] == "2024-11 – 2025-02 (2025-02 so far)"
	assert "None" not in json.dumps(chart["layout"]["title"])


def test_pdf_pages_name_the_analysis_company_over_the_sites_default(tmp_path):
	pytest.importorskip("matplotlib")
	import pdfplumber

	from analytics.runner import run

	result = {**run("sales.monthly_trend", ROWS, {}), "company": "Beta GmbH", "currency": "EUR"}
	result["chart"] = charts.scoped(result["chart"], result)
	board = dashboard.build([result], "Sales")
	path = tmp_path / "board.pdf"
	path.write_bytes(pdf.render(board, {"company": "Alpha Inc", "currency": "USD"}))
	with pdfplumber.open(path) as opened:
		text = " ".join(page.extract_text() or "" for page in opened.pages)
	assert "Company: Beta GmbH" in text and "Currency: EUR" in text and "Alpha Inc" not in text
	assert "2025-02 is not over" in text and "EUR 380" in text


def test_charts_are_built_with_plotly_figure_objects_that_refuse_a_wrong_property():
	with pytest.raises(ValueError):
		charts._figure([go.Bar(x=["a"], y=[1])], charts._layout("T", barmode="sideways"))
	figure = charts.pareto("Top customers", ["A", "B"], [70.0, 30.0], 100.0, "Revenue")
	assert [t["type"] for t in figure["data"]] == ["bar", "scatter"]
	assert figure["layout"]["yaxis2"]["overlaying"] == "y"
