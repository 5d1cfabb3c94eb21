"""The `noviz-agent` console script: what can be done without a site.

noviz-agent demo                          the seeded company in memory: a manager's questions, answered
noviz-agent ask "question" [--as sales]   one question over the same data, with a provider or the scripted model
noviz-agent tools [--module M] [--check openai [--strict]]   the tool registry, and its schemas against a provider's rules
noviz-agent route "question"              modules matched and tools offered (`-`: one question per line on stdin)
noviz-agent analytics catalog|run|dashboard   the analytics engine
noviz-agent knowledge index|search|status     the knowledge store
noviz-agent eval [--oracle|--stub|--model M]  labelled questions through the real turn, graded

Every command module is imported when its command runs, not before: `--help` loads neither
pandas, scipy nor the search libraries.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

from noviz_agent import __version__

# Sub-command groups contributed by the frappe-free packages: each module has register(subparsers)
# and imports what its commands need inside them.
GROUPS = ("noviz_agent.demo", "analytics.cli", "knowledge.cli", "noviz_agent.evaluation.cli")


def command(commands, name: str, summary: str, description: str, examples: list[str]):
	"""A sub-command whose help has a description and examples (one command line each)."""
	epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples)
	raw = argparse.RawDescriptionHelpFormatter
	return commands.add_parser(
		name, help=summary, description=description, epilog=epilog, formatter_class=raw
	)


def unknown_name(kind: str, name: str, valid) -> str:
	"""`no KIND NAME; did you mean ...? KINDs: ...` for a filter naming nothing that exists."""
	from rapidfuzz import fuzz, process

	valid = sorted(valid)
	close = [m for m, _, _ in process.extract(name, valid, scorer=fuzz.WRatio, limit=3, score_cutoff=70)]
	hint = f"; did you mean {' or '.join(close)}?" if close else ""
	return f"no {kind} {name!r}{hint} The {kind}s are: {', '.join(valid)}"


def fail(message: str) -> int:
	print(f"error: {message}", file=sys.stderr)
	return 2


def _print_json(payload) -> None:
	json.dump(payload, sys.stdout, ensure_ascii=False, default=str)
	sys.stdout.write("\n")


def cmd_tools(args: argparse.Namespace) -> int:
	from noviz_agent.tools import registry as shared_registry

	registry = shared_registry()
	if args.check:
		return _check_tools(registry, args)
	modules = {t.module for t in registry}
	if args.module and args.module not in modules:
		return fail(unknown_name("module", args.module, modules))
	rows = [
		{"name": t.name, "module": t.module, "writes": t.writes, "description": t.description}
		for t in registry
		if not args.module or t.module == args.module
	]
	if args.json:
		_print_json(rows)
	else:
		for row in rows:
			flag = "write" if row["writes"] else "read "
			print(f"{row['name']:<40} {row['module']:<14} {flag}  {row['description'].splitlines()[0][:80]}")
		print(f"{len(rows)} tools", file=sys.stderr)
	return 0


def _check_tools(registry, args: argparse.Namespace) -> int:
	"""Every tool as it would be sent to this provider, against its rules; 1 when any is refused."""
	from noviz_agent.engine.provider.schemas import check_as_sent

	sent, problems = check_as_sent([t.schema() for t in registry], strict=args.strict, dialect=args.check)
	strict = sum(1 for t in sent if t["function"].get("strict"))
	if args.json:
		_print_json(
			{
				"profile": args.check,
				"tools": len(sent),
				"strict": strict,
				"problems": [{"rule": p.rule, "where": p.where, "message": p.message} for p in problems],
			}
		)
	else:
		for problem in problems:
			print(f"{problem.rule}: {problem}")
		mode = f", {strict} strict" if args.strict else ""
		print(
			f"{len(sent)} tools checked against the {args.check} rules{mode}: {len(problems)} problem{'' if len(problems) == 1 else 's'}"
		)
	return 1 if problems else 0


ROUTE_USAGE = (
	'route needs a question, e.g. noviz-agent route "overdue invoices for Acme", '
	"or - to read one question per line from standard input"
)


def cmd_route(args: argparse.Namespace) -> int:
	# Standard input is read only when asked for (`-`) or when it is a pipe or a file: a person
	# at a terminal who gives no question is told what to type instead of waiting on input.
	from_stdin = args.question == "-" or (args.question is None and not _is_terminal(sys.stdin))
	if not from_stdin and not (args.question or "").strip():
		return fail(ROUTE_USAGE)
	from noviz_agent.engine.selection import plan_for_everyone
	from noviz_agent.tools import registry

	def emit(question: str) -> None:
		plan = plan_for_everyone(registry(), question)
		if args.json:
			_print_json(plan)
		else:
			print(f"modules: {', '.join(plan['modules']) or '-'}")
			print(f"tools ({len(plan['tools'])}): {', '.join(plan['tools'])}")

	if not from_stdin:
		emit(args.question.strip())
		return 0
	asked = 0
	for line in sys.stdin:
		if line.strip():
			emit(line.strip())
			sys.stdout.flush()
			asked += 1
	return 0 if asked else fail(f"no question on standard input; {ROUTE_USAGE}")


def _is_terminal(stream) -> bool:
	try:
		return stream is not None and stream.isatty()
	except (AttributeError, ValueError):
		return False


def build_parser() -> argparse.ArgumentParser:
	parser = argparse.ArgumentParser(
		prog="noviz-agent",
		description="Noviz agent without a site: see it answer over a seeded company, check the tools, "
		"run the analytics and knowledge engines, and evaluate a model.",
		epilog='start with:\n  noviz-agent demo\n  noviz-agent ask "Which customer owes us the most?"\n'
		"  noviz-agent COMMAND --help",
		formatter_class=argparse.RawDescriptionHelpFormatter,
	)
	parser.add_argument("--version", action="version", version=f"noviz-agent {__version__}")
	sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

	tools = command(
		sub,
		"tools",
		"list every tool of the full registry, or check them against a provider's rules",
		"Every tool the agent can offer (before a site's permissions narrow them), or, with --check, "
		"every tool schema as it would be sent, against that provider's published function-calling rules.",
		[
			"noviz-agent tools --module selling",
			"noviz-agent tools --json > tools.json",
			"noviz-agent tools --check openai --strict",
		],
	)
	tools.add_argument("--json", action="store_true", help="print JSON")
	tools.add_argument("--module", help="only this business module (e.g. selling, accounting)")
	tools.add_argument(
		"--check",
		choices=("openai", "azure", "gemini"),
		help="check every tool, as it would be sent, against this provider's function-calling rules",
	)
	tools.add_argument("--strict", action="store_true", help="with --check: as strict function tools")
	tools.set_defaults(func=cmd_tools)

	route = command(
		sub,
		"route",
		"which modules and tools a question would be offered",
		"The business modules a question is routed to and the tools offered for it, as for a person "
		"allowed every tool. Give the question, or - to read one question per line from standard input.",
		[
			'noviz-agent route "show me overdue sales invoices"',
			"noviz-agent route - --json < questions.txt",
		],
	)
	route.add_argument("question", nargs="?", help="the question, or - for one question per line on stdin")
	route.add_argument("--json", action="store_true", help="print JSON")
	route.set_defaults(func=cmd_route)

	for group in GROUPS:
		importlib.import_module(group).register(sub)
	return parser


def _quiet_stdout() -> None:
	"""After the reader of our output went away (`| head`), send the rest nowhere, without a word."""
	try:
		devnull = os.open(os.devnull, os.O_WRONLY)
		os.dup2(devnull, sys.stdout.fileno())
	except (OSError, ValueError, AttributeError):  # a captured or replaced stdout has no descriptor
		pass


def main(argv: list[str] | None = None) -> int:
	parser = build_parser()
	args = parser.parse_args(argv)
	try:
		code = int(args.func(args) or 0)
		sys.stdout.flush()
		return code
	except KeyboardInterrupt:
		print("interrupted", file=sys.stderr)
		return 130
	except BrokenPipeError:
		_quiet_stdout()
		return 0


if __name__ == "__main__":
	sys.exit(main())
