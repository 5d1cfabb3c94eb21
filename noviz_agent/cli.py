"""The `noviz-agent` console script: what can be done without a site.

noviz-agent tools --json                 every tool of the full canonical registry
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
	from noviz_agent.tools import build_registry

	registry = build_registry()
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


def cmd_route(args: argparse.Namespace) -> int:
	from noviz_agent.engine.selection import plan_for_everyone

	def emit(question: str) -> None:
		plan = plan_for_everyone(question)
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
