"""The console script's sharp edges, each named after what went wrong before."""

from __future__ import annotations

import ast
import io
import json
import os
import pty
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from noviz_agent import cli
from noviz_agent.evaluation import cli as eval_cli

ROOT = Path(__file__).resolve().parents[2]


def _script(*argv, stdin=subprocess.DEVNULL, timeout=120, env=None):
	return subprocess.run(
		[sys.executable, "-m", "noviz_agent.cli", *argv],
		capture_output=True,
		text=True,
		stdin=stdin,
		timeout=timeout,
		cwd=ROOT,
		env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
	)


def _closed_port() -> int:
	with socket.socket() as s:
		s.bind(("127.0.0.1", 0))
		return s.getsockname()[1]


# --- the PDF -------------------------------------------------------------------------------


def test_dashboard_pdf_without_a_currency_never_prints_none_beside_an_amount(tmp_path):
	pytest.importorskip("matplotlib")
	import pdfplumber

	from analytics import dashboard, pdf
	from analytics.result import kpi

	result = {
		"key": "sales.monthly_trend",
		"title": "Monthly revenue",
		"kpis": [kpi("Total revenue", 1258313.0, "currency")],
		"table": {"columns": ["month", "revenue"], "rows": [["2026-10", 1258313.0]]},
		"chart": None,
		"params": {},
	}
	document = pdf.render(dashboard.build([result], "Sales"))
	path = tmp_path / "board.pdf"
	path.write_bytes(document)
	with pdfplumber.open(path) as opened:
		text = " ".join(page.extract_text() or "" for page in opened.pages)
	assert "1,258,313" in text and "None" not in text
	assert "Currency: not given" in text and "Company: not given" in text


def test_the_pdf_without_matplotlib_says_how_to_add_it(monkeypatch):
	from analytics import dashboard, pdf

	monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
	with pytest.raises(pdf.PdfUnavailable, match=r"noviz_agent\[pdf\]"):
		pdf.render(dashboard.build([{"key": "k", "title": "T", "kpis": []}], "T"))


# --- eval: nothing lost ----------------------------------------------------------------------


def test_eval_json_into_a_missing_folder_fails_before_any_question_runs(capsys):
	code = cli.main(["eval", "--oracle", "--json", "/nonexistent/dir/out.json"])
	out, err = capsys.readouterr()
	assert code == 2 and "/nonexistent/dir" in err and "does not exist" in err
	assert "[PASS]" not in out and "[FAIL]" not in out and "Traceback" not in err


def test_eval_keeps_the_grades_written_when_interrupted(tmp_path, monkeypatch, capsys):
	from noviz_agent.evaluation import harness

	real = harness.memory_runner

	def runner_that_is_stopped(provider_for):
		run, facts = real(provider_for)
		calls = []

		def interrupted(question):
			calls.append(question["id"])
			if len(calls) == 3:
				raise KeyboardInterrupt
			return run(question)

		interrupted.registry = run.registry
		return interrupted, facts

	monkeypatch.setattr(harness, "memory_runner", runner_that_is_stopped)
	out = tmp_path / "grades.json"
	code = cli.main(["eval", "--oracle", "--json", str(out)])
	printed = capsys.readouterr()
	kept = json.loads(out.read_text())
	assert code == 130 and "interrupted after 2 of" in printed.out
	assert kept["complete"] is False and len(kept["questions"]) == 2
	assert all(q["success"] for q in kept["questions"]) and kept["totals"]["questions"] == 2


def test_an_unreachable_provider_is_checked_once_not_on_every_question(capsys):
	url = f"http://127.0.0.1:{_closed_port()}/v1"
	code = cli.main(
		["eval", "--base-url", url, "--model", "m", "--only", "revenue-2025", "--only", "revenue-2026"]
	)
	out, err = capsys.readouterr()
	assert code == 2 and out == ""  # no question was run
	assert "Could not connect" in err and "--base-url" in err and "NOVIZ_BASE_URL" in err
	assert "Agent Settings" not in err and "retry" not in err and err.count("\n") == 1


# --- route: empty input ------------------------------------------------------------------


def test_route_with_an_empty_question_says_what_to_type(capsys):
	assert cli.main(["route", ""]) == 2
	err = capsys.readouterr().err
	assert "route needs a question" in err and 'noviz-agent route "' in err and " - " in err


def test_route_without_a_question_at_a_terminal_does_not_wait_for_input():
	primary, secondary = pty.openpty()  # a terminal as standard input, as for a person typing
	try:
		done = _script("route", stdin=secondary, timeout=60)
	finally:
		os.close(primary)
		os.close(secondary)
	assert done.returncode == 2 and "route needs a question" in done.stderr


def test_route_reads_standard_input_when_asked_with_a_dash(capsys, monkeypatch):
	monkeypatch.setattr(sys, "stdin", io.StringIO("overdue sales invoices\n"))
	assert cli.main(["route", "-", "--json"]) == 0
	assert "accounting" in json.loads(capsys.readouterr().out)["modules"]


# --- pipes, filters, names ---------------------------------------------------------------


@pytest.mark.parametrize("argv", [["tools"], ["analytics", "catalog"]])
def test_output_into_a_closed_pipe_ends_quietly(argv):
	process = subprocess.Popen(
		[sys.executable, "-m", "noviz_agent.cli", *argv],
		stdout=subprocess.PIPE,
		stderr=subprocess.PIPE,
		cwd=ROOT,
		env={**os.environ, "PYTHONPATH": str(ROOT)},
	)
	assert process.stdout.readline()  # like `| head -1`: read a line, then go away
	process.stdout.close()
	err = process.stderr.read().decode()
	assert process.wait(timeout=120) == 0
	assert "BrokenPipe" not in err and "Traceback" not in err and "error" not in err


@pytest.mark.parametrize(
	("argv", "valid"),
	[
		(["tools", "--module", "selling_x"], "selling"),
		(["knowledge", "search", "returns", "--module", "nosuch", "--lexical"], "selling"),
		(["analytics", "catalog", "--category", "nosuch"], "receivables"),
	],
)
def test_unknown_module_filters_list_the_valid_names_and_exit_non_zero(argv, valid, capsys):
	code = cli.main(argv)
	out, err = capsys.readouterr()
	assert code == 2 and out == ""
	assert "nosuch" in err or "selling_x" in err
	assert valid in err and "Traceback" not in err


def test_did_you_mean_offers_the_same_words_in_another_category(tmp_path, capsys):
	rows = tmp_path / "rows.json"
	rows.write_text("[]")
	code = cli.main(["analytics", "run", "sales.top_customers", "--rows", str(rows)])
	err = capsys.readouterr().err
	assert code == 2 and "did you mean customers.top" in err
	# Within its own category first: a near miss of a sales analysis offers that one before any other.
	from analytics import catalog
	from analytics.cli import suggest_analyses

	assert suggest_analyses("sales.monthly_trnd", list(catalog.ANALYSES))[0] == "sales.monthly_trend"


def test_version_is_printed(capsys):
	from noviz_agent import __version__

	with pytest.raises(SystemExit) as stop:
		cli.main(["--version"])
	assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"noviz-agent {__version__}"


def _leaves(parser, path=()):
	import argparse

	for action in parser._actions:
		if isinstance(action, argparse._SubParsersAction):
			for name, child in action.choices.items():
				yield from _leaves(child, (*path, name))
			return
	yield path, parser


def test_every_command_has_a_description_and_an_example():
	commands = list(_leaves(cli.build_parser()))
	assert len(commands) >= 10
	for path, parser in commands:
		assert parser.description, path
		assert parser.epilog and "noviz-agent " in parser.epilog, path


def test_help_imports_neither_scipy_nor_the_search_libraries_nor_pandas():
	probe = (
		"import sys\n"
		"from noviz_agent import cli\n"
		"try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
		"for name in ('eval', 'analytics', 'knowledge', 'demo'):\n"
		"    try:\n        cli.main([name, '--help'])\n    except SystemExit:\n        pass\n"
		"print(sorted(m for m in ('scipy', 'bm25s', 'pandas', 'numpy', 'psycopg', 'openai', 'plotly') if m in sys.modules))\n"
	)
	done = subprocess.run(
		[sys.executable, "-c", probe],
		capture_output=True,
		text=True,
		timeout=120,
		cwd=ROOT,
		env={**os.environ, "PYTHONPATH": str(ROOT)},
	)
	assert done.returncode == 0, done.stderr
	assert done.stdout.strip().splitlines()[-1] == "[]"


# --- eval options, the stub ----------------------------------------------------------------


def test_eval_stub_says_it_is_a_rule_based_demo_not_a_product_failure(capsys):
	code = cli.main(["eval", "--stub", "--only", "revenue-2025", "--only", "top-debtor"])
	out = capsys.readouterr().out
	assert code == 0 and "rule-based demo" in out.splitlines()[0]
	assert "[FAIL]" not in out and out.count("[stub] ") == 2
	assert "provider http stub (a rule-based demo, not a model)" in out


def test_eval_takes_a_tool_call_format_for_local_models(monkeypatch):
	import argparse

	parser = argparse.ArgumentParser()
	eval_cli.add_provider_options(parser)
	args = parser.parse_args(
		["--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--tool-call-format", "text"]
	)
	name, provider = eval_cli.provider_from(args)
	assert provider.settings.tool_call_format == "text" and name == "m at http://127.0.0.1:1/v1"
	monkeypatch.setenv("NOVIZ_TOOL_CALL_FORMAT", "auto")
	args = parser.parse_args(["--base-url", "http://127.0.0.1:1/v1", "--model", "m"])
	assert eval_cli.provider_from(args)[1].settings.tool_call_format == "auto"


def _click_options(function: str) -> set[str]:
	tree = ast.parse((ROOT / "noviz_agent" / "commands.py").read_text(encoding="utf-8"))
	found = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
	names = set()
	for decorator in found.decorator_list:
		if isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", "") == "option":
			names |= {
				a.value for a in decorator.args if isinstance(a.value, str) and a.value.startswith("--")
			}
	return names


def test_the_bench_eval_has_the_options_of_the_plain_eval():
	import argparse

	sub = argparse.ArgumentParser().add_subparsers()
	eval_cli.register(sub)
	plain = {o for a in sub.choices["eval"]._actions for o in a.option_strings if o.startswith("--")}
	plain -= {"--help", "--questions"}  # the site's own questions file is the shipped one
	bench = _click_options("evaluate")
	assert plain <= bench, plain - bench
	assert {"--stub", "--tool-call-format"} <= bench


# --- the test script ---------------------------------------------------------------------


def test_the_test_script_shows_progress_and_says_before_it_installs_a_system_package(tmp_path):
	bin_dir, venv = tmp_path / "bin", tmp_path / "venv"
	(venv / "bin").mkdir(parents=True)
	bin_dir.mkdir()
	log = tmp_path / "calls.log"
	for name, body in (
		("apt-get", f'echo "apt-get $*" >> {log}; echo "apt-get ran"'),
		("id", "echo 0"),
	):
		(bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
		(bin_dir / name).chmod(0o755)
	(venv / "bin" / "python").write_text(
		f'#!/bin/sh\necho "python $*" >> {log}\necho "Collecting something"\n'
	)
	(venv / "bin" / "python").chmod(0o755)

	def run_script(*argv, **env):
		return subprocess.run(
			["bash", str(ROOT / "scripts" / "run-tests.sh"), *argv],
			capture_output=True,
			text=True,
			timeout=60,
			env={
				**os.environ,
				"PATH": f"{bin_dir}:{os.environ['PATH']}",
				"NOVIZ_VENV": str(venv),
				"NOVIZ_CHROMIUM": str(tmp_path / "no-chromium"),
				**env,
			},
		)

	done = run_script("-q")
	assert done.returncode == 0, done.stderr
	lines = done.stdout.splitlines()
	said = next(i for i, line in enumerate(lines) if "installing the system package chromium" in line)
	assert said < lines.index("apt-get ran") and "root" in lines[said]
	assert "Collecting something" in done.stdout  # pip's own lines are shown, not hidden by -q
	calls = log.read_text()
	pip = [line for line in calls.splitlines() if " pip install " in line]
	assert "python -m pip install --progress-bar off -e .[test,pdf]" in pip and all(
		" -q" not in line for line in pip
	)
	skipped = run_script(NOVIZ_NO_APT="1")
	assert "apt-get ran" not in skipped.stdout and "browser tests will be skipped" in skipped.stdout
