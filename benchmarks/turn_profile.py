"""Where one warm turn's milliseconds and database queries go, on a real site with the stub model.

Runs in one process with the bench's Python (from the bench's `sites` folder):

    ../env/bin/python path/to/benchmarks/turn_profile.py --site SITE --user USER [--turns 5] [--top 25]
        [--preload] [--per-conversation 3]

It starts the OpenAI-compatible stub in-process (no think time), points the turn's provider at
it (Agent Settings are not changed), and runs the same questions as `benchmarks/load.py` inline
through `api._answer`, the path a background job takes. With `--per-conversation 3` the turns
come in conversations of three, as in the load test, each run by the background job's own body
(`tasks.run_turn`: the stored turn, settings with keys, the conversation and its history read
back, progress published, the end stored; its commit is skipped). The first turn of
the process is cold (imports, registry, first reads of cached docs) unless `--preload` warms the
process first, as a background worker does before it forks a job; the rest are warm. Every
conversation is rolled back, so nothing is left on the site (the rate and budget counters in
Redis do move).

Prints: the cold and the warm turns' engine time (wall time minus time in the model) and CPU
time (the job's own figure with --per-conversation; otherwise of the whole process, the
in-process stub's share included), the warm turns' queries,
grouped by statement shape with their counts, and the cProfile functions with the largest
cumulative time over the warm turns.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

# benchmarks/knowledge.py would shadow the app's `knowledge` package: this folder leaves the path.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

# The questions of benchmarks/load.py.
QUESTIONS = tuple(
	json.loads((Path(__file__).parent / "data" / "load_questions.json").read_text(encoding="utf-8"))
)


def shape(query: str) -> str:
	"""A query with its values removed, so repeated reads of different rows group together."""
	text = " ".join(str(query).split())
	text = re.sub(r"'(?:[^'\\]|\\.)*'", "?", text)
	text = re.sub(r"\b\d+(\.\d+)?\b", "?", text)
	text = re.sub(r"\(\s*\?(\s*,\s*\?)*\s*\)", "(?…)", text)
	return text[:160]


def main(argv: list[str] | None = None) -> int:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--site", required=True)
	parser.add_argument(
		"--user",
		required=True,
		action="append",
		help="a desk user with Sales User / Accounts User roles; give it again for more people, who then"
		" take the conversations in turn (as in the load test, a person's first turn is then also the"
		" first turn of that person in this process)",
	)
	parser.add_argument("--turns", type=int, default=5, help="turns in all; the first is the cold one")
	parser.add_argument("--top", type=int, default=25, help="cProfile rows to print")
	parser.add_argument(
		"--preload",
		action="store_true",
		help="preload the app first, as a warm background worker does before it forks a job",
	)
	parser.add_argument(
		"--profile-first", action="store_true", help="profile the first turn, not the warm ones"
	)
	parser.add_argument(
		"--no-profile", action="store_true", help="time the turns without cProfile (which slows them)"
	)
	parser.add_argument(
		"--per-conversation",
		type=int,
		default=1,
		help="turns per conversation, as in benchmarks/load.py (3): later turns read the history and"
		" add to the conversation; each turn then takes the background job's path (api.answer_queued)",
	)
	args = parser.parse_args(argv)

	import frappe

	began = time.perf_counter()
	preloaded = None
	if args.preload:
		from noviz_agent.edge import frappe_warm

		preloaded = frappe_warm.preload()
		if args.per_conversation > 1:
			# A no-fork worker also reads each site's first-turn reads before its first job.
			from noviz_agent.edge import frappe_worker

			frappe_worker.warm_sites()
		# frappe's worker then collects and freezes the garbage collector, as the no-fork worker does.
		gc.collect()
		gc.freeze()
		began = time.perf_counter()
	frappe.init(site=args.site)
	frappe.connect()
	from noviz_agent import api, tasks
	from noviz_agent.edge import frappe_session, frappe_turns
	from noviz_agent.engine import turn_state
	from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderSettings
	from noviz_agent.testing.stub_provider import StubProvider

	imported_ms = (time.perf_counter() - began) * 1000
	stub = StubProvider(verbose=False)
	stub.start()
	try:
		frappe_session.provider_factory = lambda values: OpenAICompatibleProvider(
			ProviderSettings(stub.base_url, model="stub-model")
		)
		loaded = frappe_session.load_settings
		frappe_session.load_settings = lambda with_secrets=False: {
			**loaded(with_secrets),
			"use_knowledge": 0,
			"rate_limit_per_hour": 100000,
			"tokens_per_minute": 0,
		}
		users = args.user
		user = users[0]
		frappe.set_user(user)
		# PROFILE_CPU=1: attribute CPU time (time.process_time) instead of wall time.
		profile = cProfile.Profile(time.process_time) if os.environ.get("PROFILE_CPU") else cProfile.Profile()
		queries: Counter = Counter()
		first_queries: Counter = Counter()
		metas: Counter = Counter()  # DocTypes whose meta was read from the database, not the cache
		rows = []
		imported: list[str] = []  # modules the first turn imported (a preload would have spared it)
		per = max(1, args.per_conversation)
		for n in range(args.turns):
			modules_before = set(sys.modules) if n == 0 else None
			question = f"{QUESTIONS[n % len(QUESTIONS)]} (profile #{n})"
			warm = n > 0
			profiled = not args.no_profile and (n == 0 if args.profile_first else warm)
			seen: list[str] = []
			original = frappe.db.sql

			def sql(query, *a, _seen=seen, _original=original, **k):
				_seen.append(shape(query))
				if "SELECT * FROM `tabDocType` WHERE `name`" in str(query):
					metas.update([str((a[0] if a else k.get("values")) or "")[:60]])
				return _original(query, *a, **k)

			frappe.db.sql = sql
			if n % per == 0:
				conversation = frappe.generate_hash(length=10)
				user = users[(n // per) % len(users)]
			last_of_conversation = n % per == per - 1 or n == args.turns - 1
			if profiled:
				profile.enable()
			cpu = time.process_time()
			try:
				if per == 1:
					frappe.set_user(user)
					reply, figures = api._answer(
						user,
						frappe_session.load_settings(with_secrets=True),
						question,
						None,
						frappe.generate_hash(length=12),
						conversation,
					)
				else:
					# The job's body as a worker runs it: the stored turn read back, settings with
					# keys, the conversation and its history, progress published, the end stored.
					# A turn id as `send` gets it: made for the person, used once.
					turn = frappe_turns.new_turn(user)
					assert frappe_turns.use_turn(turn, user)
					state = turn_state.new(
						turn,
						user,
						question,
						conversation,
						new_conversation=n % per == 0,
						now=time.time(),
					)
					frappe_turns.save(state)
					# Each job starts with frappe's per-request caches empty (frappe.init), as here.
					frappe.local.cache, frappe.local.role_permissions = {}, {}
					frappe.local.valid_columns, frappe.local.new_doc_templates = {}, {}
					frappe.local.user_perms = None
					frappe.set_user(user)
					commit, frappe.db.commit = frappe.db.commit, lambda: None  # rolled back below
					try:
						final = tasks.run_turn(state["turn"], 1)
					finally:
						frappe.db.commit = commit
					if not final or "engine_ms" not in (final.get("figures") or {}):
						raise SystemExit(f"turn {n + 1} did not finish: {final}")
					reply, figures = {"response": final.get("response")}, dict(final["figures"])
			finally:
				figures_cpu = (time.process_time() - cpu) * 1000
				if profiled:
					profile.disable()
				frappe.db.sql = original
				# A conversation's turns share one transaction, so later turns read the earlier ones;
				# it is rolled back after its last turn.
				if last_of_conversation:
					frappe.db.rollback()
			if modules_before is not None:
				imported = sorted(set(sys.modules) - modules_before)
			figures.setdefault("cpu_ms", figures_cpu)
			kind = (reply.get("response") or {}).get("type")
			rows.append(
				{
					**figures,
					"queries": len(seen),
					"warm": warm,
					"type": kind,
					"first": n % per == 0,
					"user": user,
				}
			)
			if warm:
				queries.update(seen)
			else:
				first_queries = Counter(seen)
				metas.clear()
	finally:
		bodies = [json.dumps(body) for body in stub.chat_requests]
		stub.stop()
		frappe.destroy()

	if preloaded is not None:
		print(f"preloaded in {sum(preloaded.values()):.0f} ms: {preloaded}")
	print(f"site connected and app imported: {imported_ms:.0f} ms")
	for n, row in enumerate(rows):
		label = "warm" if row["warm"] else "cold"
		print(
			f"turn {n + 1} ({label}{', starts a conversation' if row['first'] and per > 1 else ''}): engine {row['engine_ms']:7.1f} ms, CPU {row['cpu_ms']:6.1f} ms,"
			f" model {row['model_ms']:6.1f} ms"
			f" in {row['model_calls']} calls, {row['queries']} queries, answer {row['type']}"
		)
	if bodies:
		sizes = sorted(len(b) for b in bodies)
		print(
			f"model request bodies: {len(bodies)}, median {statistics.median(sizes) / 1024:.1f} KiB,"
			f" largest {sizes[-1] / 1024:.1f} KiB"
		)
	print(f"\nmodules the first turn imported ({len(imported)}): {', '.join(imported) or 'none'}")
	print("\nqueries of the first turn, by shape (count):")
	for text, count in first_queries.most_common():
		print(f"  {count:5d}  {text}")
	warm = [r for r in rows if r["warm"]]
	if warm:
		print(
			f"warm turns: engine median {statistics.median(r['engine_ms'] for r in warm):.1f} ms,"
			f" CPU median {statistics.median(r['cpu_ms'] for r in warm):.1f} ms,"
			f" queries median {statistics.median(r['queries'] for r in warm):.0f}"
		)
		parts = [
			f"{key[:-3]} {statistics.median(r[key] for r in warm if r.get(key) is not None):.1f} ms"
			for key in ("prepare_ms", "loop_ms", "record_ms")
			if any(r.get(key) is not None for r in warm)
		]
		if parts:
			print(f"  engine medians by part: {', '.join(parts)}")
		starts = [r for r in warm if r["first"]]
		if args.per_conversation > 1 and starts:
			later = [r for r in warm if not r["first"]]
			for label, group in (("starting a conversation", starts), ("later in one", later)):
				if group:
					print(
						f"  warm turns {label}: engine median"
						f" {statistics.median(r['engine_ms'] for r in group):.1f} ms, CPU median"
						f" {statistics.median(r['cpu_ms'] for r in group):.1f} ms, queries median"
						f" {statistics.median(r['queries'] for r in group):.0f} ({len(group)} turns)"
					)
		print(f"\nqueries over {len(warm)} warm turns, by shape (count per turn):")
		for text, count in queries.most_common():
			print(f"  {count / len(warm):5.1f}  {text}")
		print(f"\nDocType meta read from the database in warm turns: {dict(metas) or 'none'}")
		if args.no_profile:
			return 0
		out = io.StringIO()
		# PROFILE_SORT=tottime sorts by own time; PROFILE_CALLERS=pattern adds who calls what matches it.
		order = os.environ.get("PROFILE_SORT", "cumulative")
		stats = pstats.Stats(profile, stream=out).sort_stats(order)
		stats.print_stats(args.top)
		if os.environ.get("PROFILE_CALLERS"):
			stats.print_callers(os.environ["PROFILE_CALLERS"])
		which = "the first turn" if args.profile_first else "warm turns together"
		print(f"\ncProfile, {which}, by {order} time:\n{out.getvalue()}")
	return 0


if __name__ == "__main__":
	raise SystemExit(main())
