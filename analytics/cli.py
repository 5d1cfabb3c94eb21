"""The `analytics` command of the `noviz-agent` console script: list the catalogue, run an analysis.

    noviz-agent analytics catalog [--json] [--category C] [--search WORDS]
    noviz-agent analytics run KEY --rows FILE.json [--params JSON] [--json] [--summary]
    noviz-agent analytics dashboard KEY [KEY ...] --rows FILE.json [--params JSON] [--pdf OUT.pdf]

Rows are a JSON list of row objects for an analysis with one dataset, or an object keyed by
dataset name. Errors go to stderr as one sentence with a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from analytics.errors import AnalyticsError


def register(subparsers) -> None:
	"""Add the `analytics` command with `catalog`, `run` and `dashboard` to an argparse subparsers object."""
	parser = subparsers.add_parser("analytics", help="the analytics catalogue: list and run analyses")
	commands = parser.add_subparsers(dest="analytics_command", metavar="{catalog,run,dashboard}")
	parser.set_defaults(func=lambda args: _usage(parser))

	catalog = commands.add_parser("catalog", help="list the analyses")
	catalog.add_argument("--json", action="store_true", help="print JSON")
	catalog.add_argument("--category", help="only this category")
	catalog.add_argument("--search", help="rank analyses by these words")
	catalog.set_defaults(func=cmd_catalog)

	run = commands.add_parser("run", help="run one analysis on rows from a JSON file")
	run.add_argument("key", help="analysis key, e.g. sales.monthly_trend")
	run.add_argument("--rows", required=True, help="JSON file: a list of rows, or {dataset: rows}")
	run.add_argument("--params", help="JSON object of parameters")
	run.add_argument("--json", action="store_true", help="print the full result as JSON")
	run.add_argument("--summary", action="store_true", help="print the bounded summary the model gets")
	run.set_defaults(func=cmd_run)

	board = commands.add_parser("dashboard", help="run several analyses; optionally write a PDF")
	board.add_argument("keys", nargs="+", help="analysis keys")
	board.add_argument("--rows", required=True, help="JSON file: {dataset: rows}")
	board.add_argument("--params", help="JSON object of parameters shared by the analyses")
	board.add_argument("--title", default="Dashboard")
	board.add_argument("--pdf", help="write the dashboard PDF to this path")
	board.set_defaults(func=cmd_dashboard)


def _usage(parser: argparse.ArgumentParser) -> int:
	parser.print_help(sys.stderr)
	return 2


def _fail(message: str) -> int:
	print(f"error: {message}", file=sys.stderr)
	return 2


def _load_rows(path: str) -> object:
	file = Path(path)
	if not file.exists():
		raise AnalyticsError(f"Rows file {path!r} does not exist")
	try:
		return json.loads(file.read_text(encoding="utf-8"))
	except json.JSONDecodeError as exc:
		raise AnalyticsError(
			f"Rows file {path!r} is not valid JSON: {exc.msg} at line {exc.lineno}"
		) from None
	except UnicodeDecodeError:
		raise AnalyticsError(f"Rows file {path!r} is not UTF-8 text") from None


def _load_params(text: str | None) -> dict:
	if not text:
		return {}
	try:
		params = json.loads(text)
	except json.JSONDecodeError as exc:
		raise AnalyticsError(f"--params is not valid JSON: {exc.msg}") from None
	if not isinstance(params, dict):
		raise AnalyticsError("--params must be a JSON object, e.g. '{\"horizon\": 6}'")
	return params


def _guarded(command):
	def run(args) -> int:
		try:
			return command(args)
		except AnalyticsError as exc:
			return _fail(str(exc))
		except (OSError, MemoryError) as exc:
			return _fail(f"{type(exc).__name__}: {exc}")

	run.__name__ = command.__name__
	return run


@_guarded
def cmd_catalog(args) -> int:
	from analytics import catalog

	if args.category and args.category not in catalog.CATEGORIES:
		raise AnalyticsError(
			f"Unknown category {args.category!r}; categories: {', '.join(catalog.CATEGORIES)}"
		)
	if args.search:
		items = catalog.search(args.search, limit=20, category=args.category)
	else:
		items = catalog.describe(args.category)
	if args.json:
		print(json.dumps(items, indent=1, default=str))
		return 0
	for item in items:
		print(f"{item['key']:40s} {item['title']}")
	return 0


@_guarded
def cmd_run(args) -> int:
	from analytics.result import summary_for_model
	from analytics.runner import run

	result = run(args.key, _load_rows(args.rows), _load_params(args.params))
	if args.summary:
		print(json.dumps(summary_for_model(result), indent=1))
	elif args.json:
		print(json.dumps(result, allow_nan=False))
	else:
		print(result["title"])
		for kpi in result["kpis"]:
			print(f"  {kpi['label']}: {kpi['value']}")
		for sentence in result["observations"] + result["watch_outs"] + result["warnings"]:
			print(f"- {sentence}")
	return 0


@_guarded
def cmd_dashboard(args) -> int:
	from analytics import dashboard, pdf

	board = dashboard.run_many(args.keys, _load_rows(args.rows), _load_params(args.params), args.title)
	if args.pdf:
		Path(args.pdf).write_bytes(pdf.render(board))
		print(json.dumps({"pdf": args.pdf, "panels": len(board["panels"])}))
	else:
		print(json.dumps(board, allow_nan=False))
	return 0


def main(argv: list[str] | None = None) -> int:
	"""Run the analytics command on its own (`python -m analytics.cli ...`)."""
	parser = argparse.ArgumentParser(prog="analytics")
	register(parser.add_subparsers(dest="command"))
	args = parser.parse_args(["analytics", *(argv if argv is not None else sys.argv[1:])])
	return args.func(args)


if __name__ == "__main__":
	sys.exit(main())
