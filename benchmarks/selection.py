"""Tool selection and prompt layering, measured on the labelled question set.

    .venv/bin/python benchmarks/selection.py [--questions tests/selection/questions.jsonl] [--repeat 20]

Prints: tools registered; median and max tools offered; schema bytes offered vs all (ratio);
needed tools offered and reachable through tools.search; the cacheable prefix (share of prompt
bytes identical across requests in the same modules from different people); and routing plus
prompt assembly time per request. Figures only; nothing here is asserted.

Then routing recall on the user-written set (`tests/selection/user_questions.{dev,test}.jsonl`,
questions written from an ERPNext user's point of view, each labelled with the tools that would
answer it, any of them): a question counts when one of its tools is offered up front. Routing
was tuned on the dev set only; the test set is measured, never tuned on. Both are printed with
keywords alone and with the built-in embedder (routing by similarity beside the keywords).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import date
from itertools import groupby
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noviz_agent.engine.prompt import assemble  # noqa: E402
from noviz_agent.engine.selection import select  # noqa: E402
from noviz_agent.engine.session import Person, Session  # noqa: E402
from noviz_agent.engine.similarity import similarity_for  # noqa: E402
from noviz_agent.tools import TOOL_MODULES  # noqa: E402
from noviz_agent.tools import registry as shared_registry  # noqa: E402
from noviz_agent.tools.discovery import search_tools_names  # noqa: E402

PEOPLE = (
	Person("ann@example.com", frozenset({"Sales User", "Employee"}), "Ann Lee", "Acme Ltd"),
	Person("raj@example.com", frozenset({"Accounts Manager", "Employee"}), "Raj Patel", "Acme Ltd"),
	Person("eva@example.com", frozenset({"Stock Manager"}), "Eva Novak", "Acme GmbH"),
)
TODAY = date(2025, 6, 2)


def session(registry, person=PEOPLE[0]) -> Session:
	return Session(person=person, connector=None, registry=registry, allowed=frozenset(registry.names()))


def schema_bytes(registry, names) -> int:
	return len(json.dumps([registry[n].schema() for n in names], ensure_ascii=False).encode())


def common_prefix(texts: list[str]) -> int:
	return len(os.path.commonprefix(texts).encode())


def user_recall(registry, split: str, similarity) -> dict:
	"""Recall of one split of the user-written set: offered up front, and offered or found by search."""
	path = ROOT / "tests" / "selection" / f"user_questions.{split}.jsonl"
	items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
	offered = reachable = 0
	counts, timings = [], []
	for item in items:
		started = time.perf_counter()
		selection = select(session(registry), item["q"], similarity=similarity)
		timings.append((time.perf_counter() - started) * 1000)
		counts.append(len(selection.tools))
		hit = any(t in selection.tools for t in item["any"])
		offered += hit
		if not hit:
			found = search_tools_names(session(registry), item["q"], limit=8)
			hit = any(t in found for t in item["any"])
		reachable += hit
	return {
		"n": len(items),
		"offered": offered,
		"reachable": reachable,
		"median": statistics.median(counts),
		"max": max(counts),
		"ms": statistics.median(timings),
	}


def print_user_recall(registry) -> None:
	embedder = similarity_for(registry)
	print("user-written set (routing tuned on dev only; test measured, never tuned on):")
	for split in ("dev", "test"):
		for label, similarity in (("keywords only", None), ("keywords + built-in embedder", embedder)):
			if label.endswith("embedder") and similarity is None:
				print(f"  {split:4} {label}: no built-in embedder installed (pip install wordllama)")
				continue
			r = user_recall(registry, split, similarity)
			print(
				f"  {split:4} {label:29} recall {r['offered']}/{r['n']} = {r['offered'] / r['n']:.1%}; "
				f"with tools.search {r['reachable'] / r['n']:.1%}; tools offered median {r['median']:g}, "
				f"max {r['max']}; routing median {r['ms']:.2f} ms"
			)


def main() -> int:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--questions", default=str(ROOT / "tests" / "selection" / "questions.jsonl"))
	parser.add_argument("--repeat", type=int, default=20, help="timing repetitions per question")
	parser.add_argument(
		"--modules",
		default="",
		help="comma-separated tool modules to load besides TOOL_MODULES (before they are listed)",
	)
	args = parser.parse_args()
	for name in filter(None, args.modules.split(",")):
		if name not in TOOL_MODULES:
			TOOL_MODULES.append(name)
	questions = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
	registry = shared_registry()
	all_bytes = schema_bytes(registry, registry.names())
	print(f"tool modules registered: {', '.join(TOOL_MODULES) or '(none)'}")
	print(f"tools registered: {len(registry)}  (all schemas: {all_bytes:,} bytes)")

	counts, offered_bytes, offered_ok, reachable_ok, known = [], [], 0, 0, 0
	plans = []
	for item in questions:
		selection = select(session(registry), item["q"])
		plans.append((item, selection))
		counts.append(len(selection.tools))
		offered_bytes.append(schema_bytes(registry, selection.tools))
		needs = [t for t in item["needs"] if t in registry]
		if len(needs) < len(item["needs"]):
			continue
		known += 1
		missing = [t for t in needs if t not in selection.tools]
		offered_ok += not missing
		if missing:
			found = search_tools_names(session(registry), item["q"], limit=8)
			reachable_ok += all(t in found for t in missing)
		else:
			reachable_ok += 1
	median_bytes = statistics.median(offered_bytes)
	print(f"questions: {len(questions)}  (labels resolvable in this registry: {known})")
	print(f"tools offered: median {statistics.median(counts):g}, max {max(counts)}, min {min(counts)}")
	print(
		f"schema bytes offered: median {median_bytes:,.0f} vs all {all_bytes:,} "
		f"-> {all_bytes / max(median_bytes, 1):.1f}x smaller"
	)
	if known:
		print(f"needed tools offered: {offered_ok}/{known} = {offered_ok / known:.1%}")
		print(
			f"needed tools offered or found by tools.search: {reachable_ok}/{known} = {reachable_ok / known:.1%}"
		)

	# Cacheable prefix: requests that route to the same modules, asked by different people.
	shares_system, shares_full, weights = [], [], []
	by_modules = sorted(plans, key=lambda p: p[1].modules)
	for _, group in groupby(by_modules, key=lambda p: p[1].modules):
		group = list(group)
		if len(group) < 2:
			continue
		systems, fulls = [], []
		for index, (item, _) in enumerate(group):
			s = session(registry, PEOPLE[index % len(PEOPLE)])
			selection = select(s, item["q"])
			prompt = assemble(s, selection, today=TODAY, policy_text="Quote amounts in the company currency.")
			systems.append(prompt.system)
			fulls.append(json.dumps(selection.schemas(registry)) + prompt.system)
		mean_system = statistics.mean(len(t.encode()) for t in systems)
		mean_full = statistics.mean(len(t.encode()) for t in fulls)
		shares_system.append(common_prefix(systems) / mean_system)
		shares_full.append(common_prefix(fulls) / mean_full)
		weights.append(len(group))
	if weights:
		weighted = sum(s * w for s, w in zip(shares_system, weights, strict=True)) / sum(weights)
		print(
			f"cacheable prefix, system prompt, same modules / different people: {weighted:.1%} "
			f"(over {len(weights)} module groups, {sum(weights)} requests; min {min(shares_system):.1%})"
		)
		weighted_full = sum(s * w for s, w in zip(shares_full, weights, strict=True)) / sum(weights)
		print(f"cacheable prefix, tool schemas + system prompt, same groups: {weighted_full:.1%}")
	same = []
	for item in questions:
		prompts = []
		for person in PEOPLE:
			s = session(registry, person)
			selection = select(s, item["q"])
			text = json.dumps(selection.schemas(registry)) + assemble(s, selection, today=TODAY).system
			prompts.append(text)
		same.append(common_prefix(prompts) / statistics.mean(len(t.encode()) for t in prompts))
	print(
		f"cacheable prefix, same question / different people (schemas + system): median {statistics.median(same):.1%}"
	)

	# Routing and prompt assembly per request.
	timings = []
	for item in questions:
		s = session(registry)
		select(s, item["q"])
		started = time.perf_counter()
		for _ in range(args.repeat):
			s.offered.clear()
			selection = select(s, item["q"])
			assemble(s, selection, today=TODAY)
		timings.append((time.perf_counter() - started) / args.repeat * 1000)
	print(
		f"routing + prompt assembly: median {statistics.median(timings):.2f} ms, "
		f"p95 {sorted(timings)[int(len(timings) * 0.95)]:.2f} ms, max {max(timings):.2f} ms"
	)
	print_user_recall(registry)
	return 0


if __name__ == "__main__":
	raise SystemExit(main())
