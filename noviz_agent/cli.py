"""The `noviz-agent` console script: what can be done without a site.

noviz-agent tools --json                 every tool of the full canonical registry
noviz-agent tools --check openai [--strict]   every tool against a provider's function-calling rules
noviz-agent route "question" --json      modules matched and tools offered (stdin: one per line)
noviz-agent analytics catalog|run ...    the analytics engine
noviz-agent knowledge index|search|status the knowledge store
noviz-agent eval [--oracle|--stub|--model M] labelled questions through the real turn, graded
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

# Sub-command groups contributed by the frappe-free packages: each module has register(subparsers).
GROUPS = ("analytics.cli", "knowledge.cli", "noviz_agent.evaluation.cli")


def _print_json(payload) -> None:
	json.dump(payload, sys.stdout, ensure_ascii=False, default=str)
	sys.stdout.write("\n")


def cmd_tools(args: argparse.Namespace) -> int:
	from noviz_agent.tools import registry as shared_registry

	registry = shared_registry()
	if args.check:
		return _check_tools(registry, args)
	rows = [
		{"name": t.name, "module": t.module, "writes": t.writes, "description": t.description}
		for t in registry
	]
	if args.module:
		rows = [r for r in rows if r["module"] == args.module]
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


def cmd_route(args: argparse.Namespace) -> int:
	from noviz_agent.engine.selection import plan_for_everyone
	from noviz_agent.tools import registry

	def emit(question: str) -> None:
		plan = plan_for_everyone(registry(), question)
		if args.json:
			_print_json(plan)
		else:
			print(f"modules: {', '.join(plan['modules']) or '-'}")
			print(f"tools ({len(plan['tools'])}): {', '.join(plan['tools'])}")

	if args.question:
		emit(args.question)
		return 0
	for line in sys.stdin:
		if line.strip():
			emit(line.strip())
			sys.stdout.flush()
	return 0


def build_parser() -> argparse.ArgumentParser:
	parser = argparse.ArgumentParser(prog="noviz-agent", description="Noviz agent, without a site.")
	sub = parser.add_subparsers(dest="command", required=True)

	tools = sub.add_parser("tools", help="list every tool of the full canonical registry")
	tools.add_argument("--json", action="store_true", help="print JSON")
	tools.add_argument("--module", help="only this business module")
	tools.add_argument(
		"--check",
		choices=("openai", "azure", "gemini"),
		help="check every tool, as it would be sent, against this provider's function-calling rules",
	)
	tools.add_argument("--strict", action="store_true", help="with --check: as strict function tools")
	tools.set_defaults(func=cmd_tools)

	route = sub.add_parser("route", help="which modules and tools a question would be offered")
	route.add_argument("question", nargs="?", help="the question; without it, one question per line on stdin")
	route.add_argument("--json", action="store_true", help="print JSON")
	route.set_defaults(func=cmd_route)

	for group in GROUPS:
		importlib.import_module(group).register(sub)
	return parser


def main(argv: list[str] | None = None) -> int:
	parser = build_parser()
	args = parser.parse_args(argv)
	try:
		return int(args.func(args) or 0)
	except KeyboardInterrupt:
		return 130
	except BrokenPipeError:
		return 0


if __name__ == "__main__":
	sys.exit(main())
