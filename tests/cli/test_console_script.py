"""The `noviz-agent` console script: tools and route work with no site."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from noviz_agent import cli


def _run(argv, stdin="", capsys=None, monkeypatch=None):
	monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
	code = cli.main(argv)
	return code, capsys.readouterr().out


def test_tools_lists_every_tool_of_the_registry(capsys, monkeypatch):
	from noviz_agent.tools import build_registry

	code, out = _run(["tools", "--json"], capsys=capsys, monkeypatch=monkeypatch)
	rows = json.loads(out)
	assert code == 0
	assert [r["name"] for r in rows] == build_registry().names()
	assert {"name", "module", "writes", "description"} <= set(rows[0])
	assert any(r["writes"] for r in rows) and len(rows) >= 300


def test_route_answers_one_question(capsys, monkeypatch):
	code, out = _run(
		["route", "show me overdue sales invoices", "--json"], capsys=capsys, monkeypatch=monkeypatch
	)
	plan = json.loads(out)
	assert code == 0 and "accounting" in plan["modules"]
	assert "sales_invoice.list" in plan["tools"] and "tools.search" in plan["tools"]


def test_route_reads_one_question_per_line_and_answers_in_order(capsys, monkeypatch):
	code, out = _run(
		["route", "--json"],
		stdin="how much stock of item A is in the main warehouse\n\nwho is on leave tomorrow\n",
		capsys=capsys,
		monkeypatch=monkeypatch,
	)
	plans = [json.loads(line) for line in out.splitlines()]
	assert code == 0 and len(plans) == 2
	assert "stock" in plans[0]["modules"] and "hr" in plans[1]["modules"]


def test_the_installed_script_runs():
	done = subprocess.run(
		[sys.executable, "-m", "noviz_agent.cli", "route", "purchase orders to approve", "--json"],
		capture_output=True,
		text=True,
		timeout=120,
	)
	assert done.returncode == 0, done.stderr
	assert "buying" in json.loads(done.stdout)["modules"]


def test_tools_check_passes_every_provider_profile(capsys, monkeypatch):
	for argv in (["--check", "openai"], ["--check", "azure", "--strict"], ["--check", "gemini"]):
		code, out = _run(["tools", *argv, "--json"], capsys=capsys, monkeypatch=monkeypatch)
		report = json.loads(out)
		assert code == 0 and report["problems"] == [] and report["tools"] >= 300, argv
	assert report["strict"] == 0
	code, out = _run(
		["tools", "--check", "openai", "--strict", "--json"], capsys=capsys, monkeypatch=monkeypatch
	)
	assert json.loads(out)["strict"] >= json.loads(out)["tools"] - 10


def test_tools_check_fails_with_the_rule_when_a_tool_is_refused(capsys, monkeypatch):
	from noviz_agent.engine.tools import Registry, Tool

	broken = Tool(
		"thing.list", "Things.", "selling", {"type": "object", "properties": {"ids": {"type": "array"}}}, None
	)
	monkeypatch.setattr("noviz_agent.tools.registry", lambda: Registry([broken]))
	code, out = _run(["tools", "--check", "openai"], capsys=capsys, monkeypatch=monkeypatch)
	assert code == 1 and "array-items: " in out and out.rstrip().endswith(": 1 problem")
