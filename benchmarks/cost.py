"""Prompt tokens per request, with and without selection, layering and caching, over a scripted set.

    .venv/bin/python benchmarks/cost.py [--questions tests/selection/questions.jsonl] [--people 3]

A scripted workload: the labelled questions, asked by several people in conversations of three
turns; a fifth of the first questions are asked again later by the same person (a fresh
conversation), the way people re-open the same view. For each request it counts the prompt
tokens (bytes / 4, the usual estimate for English and JSON; no tokenizer is installed) of:

- everything:  every tool's schema and every rule block, each request (no selection);
- selection:   only the tools routing offers, rule blocks each request;
- + layering:  rule blocks sent once per conversation, earlier turns as bounded history;
- + prefix:    the part of the request byte-identical to the previous one (the provider's prompt
               cache) billed at a tenth, as OpenAI and others price cached input;
- + answers:   a repeated first question answered from that person's own cache (no model call).

Figures only; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noviz_agent.engine.prompt import assemble  # noqa: E402
from noviz_agent.engine.selection import select  # noqa: E402
from noviz_agent.engine.session import MemoryStore, Person, Session  # noqa: E402
from noviz_agent.governance.cache import ResponseCache  # noqa: E402
from noviz_agent.tools import registry as shared_registry  # noqa: E402

TODAY = date(2026, 12, 1)
CACHED_PRICE = 0.1
ANSWER = "Here is what I found, from the tool results above."
ROLES = (
	frozenset({"Sales User", "Employee"}),
	frozenset({"Accounts Manager", "Employee"}),
	frozenset({"Stock Manager"}),
	frozenset({"Purchase User"}),
)


def tokens(text: str) -> int:
	return max(1, len(text.encode()) // 4)


def workload(questions: list[str], people: int) -> list[tuple[str, int, str]]:
	"""(person, turn index in the conversation, question), with repeated first questions mixed in."""
	plan, firsts = [], []
	for index in range(0, len(questions), 3):
		person = f"p{(index // 3) % people}@example.com"
		for turn, question in enumerate(questions[index : index + 3]):
			plan.append((person, turn, question))
			if turn == 0:
				firsts.append((person, question))
		if (index // 3) % 5 == 4 and firsts:
			person_again, question_again = firsts[-3]
			plan.append((person_again, 0, question_again))
	return plan


def main() -> int:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--questions", default=str(ROOT / "tests" / "selection" / "questions.jsonl"))
	parser.add_argument("--people", type=int, default=3)
	args = parser.parse_args()
	questions = [
		json.loads(line)["q"] for line in Path(args.questions).read_text().splitlines() if line.strip()
	]
	registry = shared_registry()
	every_schema = tokens(json.dumps([t.schema() for t in registry], ensure_ascii=False))
	embed = None
	try:
		from knowledge.embedding import builtin_embedder

		embed = builtin_embedder().embed
	except Exception:
		pass
	cache = ResponseCache(MemoryStore(), ttl=3600, embed=embed)
	plan = workload(questions, args.people)
	rows = {"everything": [], "selection": [], "+ layering": [], "+ prefix": [], "+ answers": []}
	rules_sent: dict[str, frozenset] = {}
	history: dict[str, list[str]] = {}
	previous = ""
	hits = 0
	for person, turn, question in plan:
		roles = ROLES[int(person[1:].split("@")[0]) % len(ROLES)]
		session = Session(
			person=Person(person, roles, person, "Noviz Trading"),
			connector=None,
			registry=registry,
			allowed=frozenset(registry.names()),
		)
		selection = select(session, question)
		schemas = json.dumps(selection.schemas(registry), ensure_ascii=False)
		fresh = assemble(session, selection, today=TODAY, rules_sent=frozenset()).system
		if turn == 0:
			rules_sent[person], history[person] = frozenset(), []
		layered = assemble(session, selection, today=TODAY, rules_sent=rules_sent[person])
		rules_sent[person] = rules_sent[person] | layered.rules_sent_now
		past = "".join(history[person])
		everything_prompt = every_schema + tokens(fresh) + tokens(past) + tokens(question)
		rows["everything"].append(everything_prompt)
		rows["selection"].append(tokens(schemas + fresh + past + question))
		request = schemas + layered.system + past + question
		rows["+ layering"].append(tokens(request))
		shared = len(os.path.commonprefix([request, previous]).encode())
		cached_tokens = shared // 4
		billed = tokens(request) - cached_tokens + cached_tokens * CACHED_PRICE
		rows["+ prefix"].append(billed)
		previous = request
		hit = cache.lookup(person, question, first_in_conversation=turn == 0)
		if hit is not None:
			hits += 1
			rows["+ answers"].append(0)
		else:
			rows["+ answers"].append(billed)
			cache.remember(
				person,
				question,
				{"type": "text", "text": ANSWER},
				first_in_conversation=turn == 0,
				wrote=False,
			)
		history[person].append(question + ANSWER)
	firsts = sum(1 for _, turn, _ in plan if turn == 0)
	print(
		f"requests: {len(plan)} ({firsts} first questions), people: {args.people}, tools registered: {len(registry)}"
	)
	print(f"answer cache: {'exact + similar (built-in embedder)' if embed else 'exact repeats only'}")
	base = statistics.mean(rows["everything"])
	print(f"{'prompt tokens per request':<28} {'mean':>9} {'median':>9} {'vs everything':>14}")
	for name, values in rows.items():
		mean = statistics.mean(values)
		print(f"{name:<28} {mean:>9,.0f} {statistics.median(values):>9,.0f} {mean / base:>13.1%}")
	print(
		f"answer cache hit rate: {hits}/{len(plan)} requests = {hits / len(plan):.1%} ({hits}/{firsts} first questions)"
	)
	return 0


if __name__ == "__main__":
	raise SystemExit(main())
