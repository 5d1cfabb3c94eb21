"""The `analytics` command of the `noviz-agent` console script: list the catalogue, run an analysis.

    noviz-agent analytics catalog [--json] [--category C] [--search WORDS]
    noviz-agent analytics run KEY --rows FILE.json [--params JSON] [--json] [--summary]
    noviz-agent analytics dashboard KEY [KEY ...] --rows FILE.json [--params JSON] [--pdf OUT.pdf]

Rows are a JSON list of row objects for an analysis with one dataset, or an object keyed by
dataset name. Errors go to stderr as one sentence with a non-zero exit, never a traceback.
The engine (pandas, scipy) is imported when a command runs, not for `--help`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from analytics.errors import AnalyticsError

SCOPE_HELP = "named on the output and the PDF (the rows file does not say)"


def _command(commands, name: str, summary: str, description: str, examples: list[str]):
	epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples)
	raw = argparse.RawDescriptionHelpFormatter
	return commands.add_parser(
		name, help=summary, description=description, epilog=epilog, formatter_class=raw
	)


def register(subparsers) -> None:
	"""Add the `analytics` command with `catalog`, `run` and `dashboard` to an argparse subparsers object."""
	parser = _command(
		subparsers,
		"analytics",
		"the analytics catalogue: list and run analyses",
		"The 100 standard analyses the agent runs (trends, forecasts, rankings, ageing, margins, ...), "
		"run here on rows from a JSON file.",
		[
			"noviz-agent analytics catalog --category receivables",
			"noviz-agent analytics run sales.monthly_trend --rows sales.json",
		],
	)
	commands = parser.add_subparsers(dest="analytics_command", metavar="{catalog,run,dashboard}")
	parser.set_defaults(func=lambda args: _usage(parser))

	catalog = _command(
		commands,
		"catalog",
		"list the analyses",
		"The analyses of the catalogue with their keys, one category or ranked by words.",
		[
			"noviz-agent analytics catalog --category customers",
			'noviz-agent analytics catalog --search "who pays late" --json',
		],
	)
	catalog.add_argument("--json", action="store_true", help="print JSON")
	catalog.add_argument("--category", help="only this category")
	catalog.add_argument("--search", help="rank analyses by these words")
	catalog.set_defaults(func=cmd_catalog)

	run = _command(
		commands,
		"run",
		"run one analysis on rows from a JSON file",
		"One analysis of the catalogue on rows from a JSON file: its KPIs and findings, the full "
		"result (--json) or the bounded summary the model gets (--summary).",
		[
			"noviz-agent analytics run customers.top --rows sales.json --params '{\"top_n\": 5}'",
			"noviz-agent analytics run sales.monthly_trend --rows sales.json --company 'Acme Ltd' --currency EUR",
		],
	)
	run.add_argument("key", help="analysis key, e.g. sales.monthly_trend")
	run.add_argument("--rows", required=True, help="JSON file: a list of rows, or {dataset: rows}")
	run.add_argument("--params", help="JSON object of parameters")
	_scope_options(run)
	run.add_argument("--json", action="store_true", help="print the full result as JSON")
	run.add_argument("--summary", action="store_true", help="print the bounded summary the model gets")
	run.set_defaults(func=cmd_run)

	board = _command(
		commands,
		"dashboard",
		"run several analyses; optionally write a PDF",
		"Several analyses on the same rows, as one dashboard (JSON), or as a PDF report with one page "
		"per analysis (needs the pdf extra: pip install 'noviz_agent[pdf]').",
		[
			"noviz-agent analytics dashboard sales.monthly_trend customers.top --rows data.json "
			"--company 'Acme Ltd' --currency USD --pdf board.pdf",
		],
	)
	board.add_argument("keys", nargs="+", help="analysis keys")
	board.add_argument("--rows", required=True, help="JSON file: {dataset: rows}")
	board.add_argument("--params", help="JSON object of parameters shared by the analyses")
	board.add_argument("--title", default="Dashboard")
	_scope_options(board)
	board.add_argument("--pdf", help="write the dashboard PDF to this path")
	board.set_defaults(func=cmd_dashboard)


def _scope_options(parser: argparse.ArgumentParser) -> None:
	parser.add_argument("--company", help=f"whose books the rows are, {SCOPE_HELP}")
	parser.add_argument("--currency", help=f"the currency of the amounts, {SCOPE_HELP}")


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
		except BrokenPipeError:
			raise  # the reader went away (`| head`): the console script ends quietly
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
		close = _close(args.category, list(catalog.CATEGORIES))
		hint = f"; did you mean {' or '.join(close)}?" if close else ""
		raise AnalyticsError(
			f"Unknown category {args.category!r}{hint} The categories are: {', '.join(catalog.CATEGORIES)}"
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


def _words(key: str) -> str:
	return " ".join(re.split(r"[._\s]+", key.lower())).strip()


def _close(name: str, choices: list[str], cutoff: float = 75) -> list[str]:
	from rapidfuzz import fuzz, process

	found = process.extract(
		_words(name), {c: _words(c) for c in choices}, scorer=fuzz.token_set_ratio, score_cutoff=cutoff
	)
	return [key for _, _, key in sorted(found, key=lambda hit: (-hit[1], hit[2]))]


def suggest_analyses(key: str, keys: list[str], limit: int = 3) -> list[str]:
	"""Keys close to an unknown one by name: its own category's first, then the whole catalogue's
	(`sales.top_customers` offers `customers.top`: the same words in another category)."""
	category, _, name = str(key).partition(".")
	own = [k for k in keys if k.split(".", 1)[0] == category]
	near = _close(name, [k.split(".", 1)[1] for k in own], cutoff=80) if name else []
	ranked = [f"{category}.{n}" for n in near] + _close(str(key), keys)
	return list(dict.fromkeys(ranked))[:limit]


def _check_key(key: str) -> None:
	from analytics import catalog

	if key in catalog.ANALYSES:
		return
	close = suggest_analyses(key, list(catalog.ANALYSES))
	hint = f"; did you mean {' or '.join(close)}?" if close else ""
	raise AnalyticsError(f"Unknown analysis {key!r}{hint} List them with: noviz-agent analytics catalog")


def _scoped(result: dict, args) -> dict:
	"""The result with whose books and currency it is, as given on the command line, on its chart too."""
	from analytics import charts

	result["company"], result["currency"] = args.company, args.currency
	if result.get("chart"):
		result["chart"] = charts.scoped(result["chart"], result)
	return result


def _warn_unscoped(args) -> None:
	missing = [name for name in ("company", "currency") if not getattr(args, name)]
	if missing:
		print(
			f"note: the output names no {' and no '.join(missing)}; pass "
			+ " and ".join(f"--{name}" for name in missing)
			+ " to say whose figures they are",
			file=sys.stderr,
		)


@_guarded
def cmd_run(args) -> int:
	from analytics.result import summary_for_model
	from analytics.runner import run

	_check_key(args.key)
	result = _scoped(run(args.key, _load_rows(args.rows), _load_params(args.params)), args)
	if args.summary:
		print(json.dumps(summary_for_model(result), indent=1))
	elif args.json:
		print(json.dumps(result, allow_nan=False))
	else:
		from analytics.pdf import default_format

		_warn_unscoped(args)
		print(result["title"])
		for kpi in result["kpis"]:
			print(f"  {kpi['label']}: {default_format(kpi['value'], kpi.get('unit'), args.currency)}")
		for sentence in result["observations"] + result["watch_outs"] + result["warnings"]:
			print(f"- {sentence}")
	return 0


@_guarded
def cmd_dashboard(args) -> int:
	from analytics import charts, dashboard, pdf

	for key in args.keys:
		_check_key(key)
	target = Path(args.pdf) if args.pdf else None
	if target is not None and not target.parent.is_dir():
		raise AnalyticsError(f"Cannot write {args.pdf!r}: the folder {str(target.parent)!r} does not exist")
	board = dashboard.run_many(args.keys, _load_rows(args.rows), _load_params(args.params), args.title)
	for panel in board["panels"]:
		panel.update(company=args.company, currency=args.currency)
		if panel.get("chart"):
			panel["chart"] = charts.scoped(panel["chart"], panel)
	if target is not None:
		_warn_unscoped(args)
		target.write_bytes(pdf.render(board, {"company": args.company, "currency": args.currency}))
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
