"""Period and segment comparison with drivers, dashboards and their PDF, the CLI, and the package's purity."""

from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

import pytest

import analytics
from analytics import cli, dashboard, generate, pdf
from analytics.compare import compare_periods, compare_segments, drivers
from analytics.errors import AnalyticsError

SALES = [
	{
		"id": "1",
		"document": "D1",
		"date": "2025-01-05",
		"party": "A",
		"item": "X",
		"territory": "North",
		"amount": 100,
	},
	{
		"id": "2",
		"document": "D2",
		"date": "2025-01-09",
		"party": "B",
		"item": "Y",
		"territory": "South",
		"amount": 50,
	},
	{
		"id": "3",
		"document": "D3",
		"date": "2025-01-20",
		"party": "A",
		"item": "Y",
		"territory": "North",
		"amount": 30,
	},
	{
		"id": "4",
		"document": "D4",
		"date": "2025-02-03",
		"party": "A",
		"item": "X",
		"territory": "North",
		"amount": 20,
	},
	{
		"id": "5",
		"document": "D5",
		"date": "2025-02-10",
		"party": "B",
		"item": "Y",
		"territory": "South",
		"amount": 90,
	},
	{
		"id": "6",
		"document": "D6",
		"date": "2025-02-12",
		"party": "C",
		"item": "X",
		"territory": "South",
		"amount": 40,
	},
]


def test_drivers_rank_the_biggest_moves():
	import pandas as pd

	before = pd.DataFrame([r for r in SALES if r["date"] < "2025-02"])
	after = pd.DataFrame([r for r in SALES if r["date"] >= "2025-02"])
	found = drivers(before, after, "party", "amount")
	# A 130 -> 20 (-110), B 50 -> 90 (+40), C 0 -> 40 (+40)
	assert [(r["name"], r["change"]) for r in found["all"]] == [("A", -110.0), ("B", 40.0), ("C", 40.0)]
	assert found["total_change"] == -30.0
	assert found["rising"] == 2 and found["falling"] == 1


def test_compare_periods_explains_the_change_with_drivers():
	result = compare_periods(
		"sales.by_territory", SALES, ("2025-01-01", "2025-01-31"), ("2025-02-01", "2025-02-28")
	)
	assert result["kpis"][0]["value"] == -30.0  # 180 -> 150
	assert result["kpis"][0]["change"] == pytest.approx(-16.7, abs=0.05)
	party = result["drivers"]["party"]
	assert party["down"][0]["name"] == "A" and party["down"][0]["change"] == -110.0
	assert any("A (-110)" in o for o in result["observations"])
	changes = {k["label"]: k for k in result["kpi_changes"]}
	assert changes["Total revenue"]["a"] == 180 and changes["Total revenue"]["b"] == 150
	json.dumps(result, allow_nan=False)


def test_compare_segments_runs_the_analysis_on_each_segment():
	result = compare_segments("sales.monthly_trend", SALES, "territory", "North", "South")
	assert result["a"]["name"] == "territory=North"
	totals = {
		side: next(k["value"] for k in result[side]["kpis"] if k["label"] == "Total revenue")
		for side in ("a", "b")
	}
	assert totals == {"a": 150, "b": 180}  # North 100+30+20, South 50+90+40


def test_compare_segments_with_unknown_value_is_a_named_error():
	with pytest.raises(AnalyticsError, match="No rows where 'territory' is 'Mars'"):
		compare_segments("sales.monthly_trend", SALES, "territory", "North", "Mars")


def test_compare_periods_needs_two_dates_each():
	with pytest.raises(AnalyticsError, match="period_a"):
		compare_periods("sales.monthly_trend", SALES, ("2025-01-01",), ("2025-02-01", "2025-02-28"))


def test_dashboard_and_pdf():
	data = generate.all_datasets(2_000, seed=2)
	board = dashboard.run_many(
		[
			"sales.monthly_trend",
			"customers.top",
			"sales.by_item_group",
			"customers.retention_cohorts",
			"sales.territory_by_month",
		],
		data,
		{"horizon": 2},
		"Sales review",
	)
	assert board["title"] == "Sales review" and len(board["panels"]) == 5
	assert all(panel["chart"] for panel in board["panels"])
	document = pdf.render(board)
	assert document.startswith(b"%PDF") and len(document) > 10_000
	# One report page per analysis: its figures and its chart side by side.
	assert re.search(rb"/Count 5\b", document)


def test_dashboard_needs_a_result():
	with pytest.raises(AnalyticsError):
		dashboard.build([])


# --- CLI ------------------------------------------------------------------------


def _cli(argv: list[str]) -> int:
	parser = argparse.ArgumentParser(prog="noviz-agent")
	cli.register(parser.add_subparsers(dest="command"))
	args = parser.parse_args(argv)
	return args.func(args)


def test_cli_catalog_json(capsys):
	assert _cli(["analytics", "catalog", "--json"]) == 0
	items = json.loads(capsys.readouterr().out)
	assert len(items) == 100 and {"key", "category", "title", "purpose", "datasets", "params"} <= set(
		items[0]
	)


def test_cli_catalog_search(capsys):
	assert _cli(["analytics", "catalog", "--search", "ageing", "--json"]) == 0
	assert json.loads(capsys.readouterr().out)[0]["key"] in ("receivables.ageing", "payables.ageing")


def test_cli_run_prints_the_result(tmp_path, capsys):
	rows = tmp_path / "rows.json"
	rows.write_text(json.dumps(SALES))
	assert (
		_cli(["analytics", "run", "customers.top", "--rows", str(rows), "--params", '{"top_n": 2}', "--json"])
		== 0
	)
	result = json.loads(capsys.readouterr().out)
	assert result["key"] == "customers.top"
	assert result["kpis"][0] == {"label": "Total revenue", "value": 330, "unit": "currency"}
	assert result["chart"]["data"] and result["observations"]


def test_cli_run_summary_is_bounded(tmp_path, capsys):
	rows = tmp_path / "rows.json"
	rows.write_text(json.dumps(SALES))
	assert _cli(["analytics", "run", "sales.monthly_trend", "--rows", str(rows), "--summary"]) == 0
	assert len(capsys.readouterr().out) < 4000


@pytest.mark.parametrize(
	("argv", "message"),
	[
		(["analytics", "run", "sales.nope", "--rows", "{rows}"], "Unknown analysis 'sales.nope'"),
		(["analytics", "run", "customers.top", "--rows", "/no/such/file.json"], "does not exist"),
		(["analytics", "run", "customers.top", "--rows", "{bad}"], "not valid JSON"),
		(["analytics", "run", "customers.top", "--rows", "{rows}", "--params", "[1]"], "JSON object"),
		(["analytics", "run", "customers.top", "--rows", "{spoiled}"], "column 'amount'"),
		(["analytics", "catalog", "--category", "weather"], "Unknown category"),
	],
)
def test_cli_errors_are_one_clear_line_and_non_zero(tmp_path, capsys, argv, message):
	rows = tmp_path / "rows.json"
	rows.write_text(json.dumps(SALES))
	bad = tmp_path / "bad.json"
	bad.write_text("[{")
	spoiled = tmp_path / "spoiled.json"
	spoiled.write_text(json.dumps([{**SALES[0], "amount": "lots"}]))
	argv = [a.format(rows=rows, bad=bad, spoiled=spoiled) for a in argv]
	assert _cli(argv) == 2
	err = capsys.readouterr().err
	assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_cli_dashboard_writes_pdf(tmp_path, capsys):
	rows = tmp_path / "rows.json"
	rows.write_text(json.dumps({"sales": SALES}))
	out = tmp_path / "board.pdf"
	assert (
		_cli(
			[
				"analytics",
				"dashboard",
				"sales.monthly_trend",
				"customers.top",
				"--rows",
				str(rows),
				"--pdf",
				str(out),
			]
		)
		== 0
	)
	assert out.read_bytes().startswith(b"%PDF")


# --- the package stays frappe-free -----------------------------------------------


def test_analytics_imports_neither_frappe_nor_noviz_agent():
	root = Path(analytics.__file__).parent
	for path in root.rglob("*.py"):
		tree = ast.parse(path.read_text())
		for node in ast.walk(tree):
			names = []
			if isinstance(node, ast.Import):
				names = [a.name for a in node.names]
			elif isinstance(node, ast.ImportFrom) and node.module:
				names = [node.module]
			for name in names:
				assert not name.startswith(("frappe", "noviz_agent")), f"{path.name} imports {name}"


def test_analytics_is_this_repository_package():
	assert Path(analytics.__file__).resolve().parent == Path(__file__).resolve().parents[2] / "analytics"
