"""``noviz-agent demo`` and ``noviz-agent ask``: the agent answering, on a seeded company in memory.

No site, no database: the evaluation's seeded trading company (two years of invoices, orders,
customers, suppliers and items, ``evaluation/seed.py``), seen as an Accounts User or a Sales User
with ERPNext's default permissions, through the real turn (routing, prompt, gateway, guards,
grounding, the response object). The answer is printed as the chat would show it, for a terminal:
the text, then its table, cards, chart (as bars), proposal or refusal.

Who answers: the provider given by ``--base-url``/``--model`` or NOVIZ_BASE_URL/NOVIZ_MODEL when
there is one; otherwise a scripted model, and the output says so: it makes the tool calls written
down for each question and quotes the figures the tools return, so it can answer only the
questions it has a plan for.
"""

from __future__ import annotations

import argparse
import sys

from noviz_agent.evaluation.cli import (
	CommandLineError,
	add_provider_options,
	check_provider,
	provider_from,
)

# The manager's questions the demo asks: labelled questions of the evaluation set, by id, and one
# analysis with its chart. Each has the oracle plan the scripted model follows.
DEMO_IDS = ("revenue-2026", "top3-customers-2026", "top-debtor", "create-customer", "refuse-receivables")
TREND = {
	"id": "demo-sales-trend",
	"person": "accounts",
	"question": "How are sales trending month by month, and what do the next three months look like?",
	"tools": ["analytics.build"],
	"expect": {"figure": {}},
	"oracle": {
		"calls": [["analytics.build", {"key": "sales.monthly_trend", "params": {"horizon": 3}}]],
		"pick": "kpis.0.value",
		"answer": "Sales totalled {value} over the months shown; the chart has each month and the "
		"forecast for the next three with its 80% range.",
	},
}
ROLES = {"accounts": "Accounts User", "sales": "Sales User"}
SCRIPTED = (
	"No model provider is configured, so a scripted model is answering: it makes the tool calls "
	"written down for each question and quotes the figures the tools return (no language model is "
	"involved). Give --base-url and --model (or set NOVIZ_BASE_URL and NOVIZ_MODEL) for a real model."
)
BAR_WIDTH = 36
CHART_POINTS = 12


def register(subparsers) -> None:
	from noviz_agent.cli import command

	demo = command(
		subparsers,
		"demo",
		"see the agent answer a manager's questions over a seeded company (no site needed)",
		"A manager's questions (revenue, best customers, who owes most, the sales trend with a "
		"forecast, a new customer to confirm, a question the person may not see the answer to) "
		"over a seeded trading company in memory, through the real turn, each printed with its "
		"table, cards or chart. With a provider it uses that model; otherwise a scripted model "
		"answers, and says so.",
		[
			"noviz-agent demo",
			"noviz-agent demo --base-url https://api.openai.com/v1 --model gpt-4o-mini",
			"NOVIZ_BASE_URL=http://127.0.0.1:11434/v1 NOVIZ_MODEL=qwen2.5:7b noviz-agent demo --tool-call-format auto",
		],
	)
	add_provider_options(demo)
	demo.set_defaults(func=cmd_demo)

	ask = command(
		subparsers,
		"ask",
		"ask one question over the seeded company, as an Accounts User or a Sales User",
		"One question over the same seeded company, as an Accounts User (default) or a Sales User "
		"(who, as in ERPNext, cannot read invoices). Any question with a provider; without one, the "
		"scripted model answers the questions it has a plan for (the demo's and the evaluation's).",
		[
			'noviz-agent ask "Which customer owes us the most?"',
			'noviz-agent ask "How many government customers do we have?" --as sales',
			'noviz-agent ask "List overdue invoices of Seed Customer 04" --model gpt-4o-mini --base-url https://api.openai.com/v1',
		],
	)
	ask.add_argument("question", help="the question, in plain words")
	ask.add_argument("--as", dest="person", choices=tuple(ROLES), help="who asks (default: accounts)")
	add_provider_options(ask)
	ask.set_defaults(func=cmd_ask)


def _scripted_questions() -> list[dict]:
	from noviz_agent.evaluation.harness import load_questions

	return [*load_questions(), TREND]


def demo_questions() -> list[dict]:
	by_id = {q["id"]: q for q in _scripted_questions()}
	picked = [by_id[i] for i in DEMO_IDS[:3]] + [TREND] + [by_id[i] for i in DEMO_IDS[3:]]
	return picked


def _answerer(args):
	"""(who answers, question -> provider, scripted?) for the options given."""
	chosen = provider_from(args)
	if chosen is None:
		from noviz_agent.evaluation.oracle import oracle_model

		holder: dict = {}
		return "scripted model", lambda q: oracle_model(q, holder["registry"]), holder
	name, provider = chosen
	check_provider(provider)
	return name, lambda q: provider, None


def _ask_all(questions: list[dict], args) -> int:
	from noviz_agent.evaluation.harness import memory_runner
	from noviz_agent.evaluation.seed import COMPANY

	name, provider_for, holder = _answerer(args)
	runner, _facts = memory_runner(provider_for)
	if holder is not None:
		holder["registry"] = runner.registry
		print(SCRIPTED, end="\n\n")
	else:
		print(f"Answers come from {name}.", end="\n\n")
	print(
		f"The company: {COMPANY}, a seeded trading business in memory keeping its books in USD (20 "
		"customers, 3 suppliers, 20 items, two years of invoices and orders up to 2026-11-30), seen "
		"with ERPNext's default permissions.\n"
	)
	failed = 0
	for question in questions:
		who = ROLES.get(question["person"], question["person"])
		print(f"── {who} asks: {question['question']}")
		record = runner(question)
		response = record.outcome.response
		failed += response.get("type") == "error"
		print(render(response), end="\n\n", flush=True)
	return 1 if failed else 0


def _guarded(command):
	def run(args) -> int:
		from noviz_agent.evaluation.harness import EvaluationError

		try:
			return command(args)
		except (CommandLineError, EvaluationError) as exc:
			print(f"error: {exc}", file=sys.stderr)
			return 2

	run.__name__ = command.__name__
	return run


@_guarded
def cmd_demo(args: argparse.Namespace) -> int:
	return _ask_all(demo_questions(), args)


@_guarded
def cmd_ask(args: argparse.Namespace) -> int:
	text = " ".join((args.question or "").split())
	if not text:
		raise CommandLineError(
			'ask needs a question, e.g. noviz-agent ask "Which customer owes us the most?"'
		)
	if provider_from(args) is not None:
		return _ask_all([{"id": "ask", "person": args.person or "accounts", "question": text}], args)
	planned = _planned(text, args.person)
	if planned is None:
		examples = "; ".join(f'"{q["question"]}"' for q in demo_questions()[:3])
		raise CommandLineError(
			"no model provider is configured and the scripted model has no plan for that question. "
			"Give --base-url and --model (or set NOVIZ_BASE_URL and NOVIZ_MODEL) for a real model, "
			f"or ask one of the scripted questions (noviz-agent demo shows them), e.g. {examples}"
		)
	return _ask_all([planned], args)


def _planned(text: str, person: str | None) -> dict | None:
	"""The scripted question this text asks (the same words, near enough), for that person."""
	from rapidfuzz import fuzz, process

	questions = [q for q in _scripted_questions() if person in (None, q["person"])]
	found = process.extractOne(
		text.lower(),
		[q["question"].lower() for q in questions],
		scorer=fuzz.token_sort_ratio,
		score_cutoff=90,
	)
	return questions[found[2]] if found else None


# --- a response for a terminal ---------------------------------------------------------------


def render(response: dict) -> str:
	"""The response as the chat shows it, in plain text: text, table, cards, chart bars, proposal, refusal."""
	from noviz_agent.plain_text import response_text

	parts = [response_text({**response, "chart": None})]
	if response.get("chart"):
		parts.append(chart_text(response["chart"]))
	if response.get("proposal"):
		parts.append("(In the desk the person confirms or cancels it; here nothing is confirmed or written.)")
	return "\n\n".join(p for p in parts if p)


def chart_text(figure: dict) -> str:
	"""A Plotly figure as horizontal bars: its title and scope line, then the last points of each series."""
	layout = figure.get("layout") or {}
	title = layout.get("title") or {}
	title = title if isinstance(title, dict) else {"text": str(title)}
	lines = [f"Chart: {title.get('text') or 'untitled'}"]
	if (title.get("subtitle") or {}).get("text"):
		lines.append(f"       {title['subtitle']['text']}")
	rows = _chart_rows(figure.get("data") or [])
	if not rows:
		return "\n".join([*lines, "  (this kind of chart is drawn in the desk only)"])
	top = max(abs(value) for _, value, _ in rows) or 1.0
	label_width = max(len(label) for label, _, _ in rows)
	for label, value, kind in rows:
		length = max(1, round(abs(value) / top * BAR_WIDTH)) if value else 0
		bar = ("░" if kind == "forecast" else "█") * length
		mark = {"forecast": "  forecast", "anomaly": "  unusual"}.get(kind, "")
		lines.append(f"  {label:<{label_width}}  {bar:<{BAR_WIDTH}}  {value:>14,.2f}{mark}")
	return "\n".join(lines)


def _chart_rows(traces: list[dict]) -> list[tuple[str, float, str]]:
	"""(label, value, kind) of the series a terminal can show: the main bars or line, and a forecast."""
	main = [t for t in traces if t.get("type") in ("bar", "scatter") and t.get("yaxis") != "y2"]
	main = [t for t in main if t.get("fill") != "toself" and t.get("mode") != "markers"]
	if not main:
		return []
	first = main[0]
	if first.get("orientation") == "h":
		pairs = list(zip(first.get("y") or [], first.get("x") or [], strict=False))[::-1]
	else:
		pairs = list(zip(first.get("x") or [], first.get("y") or [], strict=False))
	unusual = {str(x) for t in traces if t.get("name") == "Anomaly" for x in (t.get("x") or [])}
	rows = [
		(str(x), float(y), "anomaly" if str(x) in unusual else "actual")
		for x, y in pairs[-CHART_POINTS:]
		if isinstance(y, int | float)
	]
	for trace in main[1:]:
		if trace.get("name") == "Forecast":  # its first point is the last actual one, repeated
			points = list(zip(trace.get("x") or [], trace.get("y") or [], strict=False))[1:]
			rows += [(str(x), float(y), "forecast") for x, y in points if isinstance(y, int | float)]
	return rows
