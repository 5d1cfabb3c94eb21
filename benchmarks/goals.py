"""Standing goals on a simulated company: findings against planted events, model use per run, unconfirmed writes.

A seeded company trades for 18 months, then 120 simulated days with planted events: a customer who
stops paying, an item whose demand jumps, a month of sales far below the usual, and quiet weeks before
any of it shows (noviz_agent/testing/goal_world.py). Three goals run on their own schedules as their
owner, through the real runner, watches, gateway and in-memory connector, with a scripted model
(noviz_agent/testing/goal_model.py) that explains and proposes from what each run sends it. The
simulated person confirms every proposal after the run, so writes after confirmation are counted too.

The events are planted by this benchmark's own generator, and the same hands wrote the watches:
what it prints is a regression figure for the machinery, not accuracy on real books.

  python benchmarks/goals.py
  python benchmarks/goals.py --seed 11 --json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from noviz_agent.engine import gateway  # noqa: E402
from noviz_agent.engine.session import MemoryStore, Person, Session  # noqa: E402
from noviz_agent.goals.runner import MemoryLock, RunInputs, execute  # noqa: E402
from noviz_agent.goals.spec import GoalSpec  # noqa: E402
from noviz_agent.governance.budgets import Spend, month_of  # noqa: E402
from noviz_agent.records import Rates  # noqa: E402
from noviz_agent.testing.goal_model import GoalPolicyModel  # noqa: E402
from noviz_agent.testing.goal_world import COMPANY, World  # noqa: E402
from noviz_agent.testing.memory_connector import MemoryConnector  # noqa: E402
from noviz_agent.tools import registry  # noqa: E402
from tests.support.factories import permitted_tools  # noqa: E402

OWNER = "olivia.owner@sim.test"
ROLES = frozenset({"Accounts User", "Stock User", "Projects User"})
# Example prices per million tokens, to show what the estimated tokens would cost.
RATES = Rates(prompt=0.15, completion=0.60)
WRITES = {"material_request": {"read", "create"}, "task": {"read", "create"}}

GOALS = [
	{
		"title": "Receivables",
		"goal": "Keep receivables more than 30 days overdue under 10,000 in Sim Trading and tell me when a customer stops paying",
		"watches": [
			{"kind": "receivables_over", "params": {"days": 30, "limit": 10_000}},
			{"kind": "overdue_customers", "params": {"days": 30}},
		],
		"schedule": {"every": "day", "hour": 8},
		"may_do": "propose",
	},
	{
		"title": "Stock",
		"goal": "Tell me each Monday which items will run out within two weeks",
		"watches": [
			{"kind": "stock_cover", "params": {"days": 14}},
			{"kind": "demand_change", "params": {"percent": 50}},
		],
		"schedule": {"every": "week", "weekday": "monday", "hour": 8},
		"may_do": "propose",
	},
	{
		"title": "Sales forecast",
		"goal": "Watch sales against the forecast range and tell me when a month falls outside it",
		"watches": [{"kind": "sales_forecast"}],
		"schedule": {"every": "week", "weekday": "monday", "hour": 8},
		"may_do": "report",
	},
]


class Clock:
	def __init__(self):
		self.now = 0.0

	def __call__(self) -> float:
		return self.now


def simulate(seed: int) -> dict:
	world = World(seed=seed)
	tools = registry()
	goals = [GoalSpec.from_dict({**g, "owner": OWNER, "company": COMPANY, "name": g["title"]}) for g in GOALS]
	clock = Clock()
	proposals, secret, lock = MemoryStore(clock), b"benchmark-secret", MemoryLock()
	model = GoalPolicyModel()
	written: dict[str, list[dict]] = {entity: [] for entity in WRITES}
	memory = {g.name: {} for g in goals}
	spent: dict[tuple[str, str], Spend] = {}
	start = dt.datetime.combine(world.start, dt.time(0))
	due = {g.name: g.schedule.next_after(start - dt.timedelta(minutes=1)) for g in goals}
	runs, started = [], time.perf_counter()
	for index in range(world.days):
		day = world.day(index)
		data = world.snapshot(day)
		for goal in goals:
			when = due[goal.name]
			if when.date() != day:
				continue
			due[goal.name] = goal.schedule.next_after(when)
			clock.now = when.timestamp()
			connector = MemoryConnector(
				OWNER,
				data={**data, **written},
				permissions={**{k: {"read"} for k in data}, **WRITES},
				roles=ROLES,
			)
			session = Session(
				person=Person(OWNER, ROLES, "Olivia Owner", COMPANY),
				connector=connector,
				registry=tools,
				allowed=permitted_tools(tools, connector),
				secret=secret,
				proposals=proposals,
				clock=clock,
			)
			month = month_of(day)
			inputs = RunInputs(
				goal,
				session,
				provider=lambda: model,
				today=day,
				memory=memory[goal.name],
				month_spent=spent.get((goal.name, month), Spend()),
				rates=RATES,
			)
			calls_before, writes_before = len(model.requests), connector._writes
			outcome = execute(inputs, lock)
			unconfirmed = connector._writes - writes_before
			memory[goal.name] = outcome.memory
			spent[(goal.name, month)] = spent.get((goal.name, month), Spend()) + Spend(
				outcome.tokens, outcome.cost
			)
			confirmed = 0
			for block in outcome.proposals:
				result = gateway.confirm(session, block["token"])
				confirmed += result.status == "ok"
			for entity in written:
				written[entity] = connector.data.get(entity, [])
			runs.append(
				{
					"goal": goal.name,
					"day": day.isoformat(),
					"status": outcome.status,
					"reported": [(f.key, f.fingerprint) for f in outcome.changes.reported],
					"resolved": len(outcome.changes.resolved),
					"model_calls": outcome.model_calls,
					"model_requests": len(model.requests) - calls_before,
					"tokens": outcome.tokens,
					"cost": outcome.cost,
					"proposals": len(outcome.proposals),
					"writes_without_confirmation": unconfirmed,
					"writes_confirmed": confirmed,
					"problems": outcome.problems,
					"error": outcome.error,
				}
			)
	return score(world, runs, time.perf_counter() - started)


def score(world: World, runs: list[dict], seconds: float) -> dict:
	events = world.events
	reported = [
		(r["goal"], dt.date.fromisoformat(r["day"]), key, fp) for r in runs for key, fp in r["reported"]
	]
	true = [x for x in reported if any(e.matches(x[2], x[1]) for e in events)]
	first = {}
	for event in events:
		hits = sorted(x[1] for x in true if event.matches(x[2], x[1]))
		first[event.key] = {
			"planted": event.description,
			"starts": event.starts.isoformat(),
			"first_reported": hits[0].isoformat() if hits else None,
			"days_after_start": (hits[0] - event.starts).days if hits else None,
			"findings": len(hits),
		}
	repeats = Counter((g, key, fp) for g, _, key, fp in reported)
	quiet = [r for r in runs if dt.date.fromisoformat(r["day"]) < world.quiet_until]
	nothing = [r for r in runs if not r["reported"]]
	something = [r for r in runs if r["reported"]]
	return {
		"seed": world.seed,
		"days": world.days,
		"period": f"{world.start} to {world.end}",
		"runs": len(runs),
		"runs_per_goal": dict(Counter(r["goal"] for r in runs)),
		"findings_reported": len(reported),
		"true_findings": len(true),
		"precision": round(len(true) / len(reported), 3) if reported else None,
		"recall": round(sum(1 for e in first.values() if e["findings"]) / len(events), 3),
		"events": first,
		"false_findings": sorted({x[2] for x in reported if x not in true}),
		"repeated_findings": sum(n - 1 for n in repeats.values() if n > 1),
		"runs_with_nothing_new": len(nothing),
		"model_calls_on_runs_with_nothing_new": sum(r["model_requests"] for r in nothing),
		"tokens_on_runs_with_nothing_new": sum(r["tokens"] for r in nothing),
		"runs_with_new_findings": len(something),
		"model_calls_per_run_with_new_findings": round(
			statistics.mean(r["model_requests"] for r in something), 2
		)
		if something
		else 0,
		"tokens_per_run_with_new_findings": round(statistics.mean(r["tokens"] for r in something))
		if something
		else 0,
		"tokens_max_run": max((r["tokens"] for r in runs), default=0),
		"cost_total_at_example_rates": round(sum(r["cost"] for r in runs), 6),
		"quiet_weeks": f"{world.start} to {world.quiet_until - dt.timedelta(days=1)}",
		"quiet_runs": len(quiet),
		"findings_in_quiet_weeks": sum(len(r["reported"]) for r in quiet),
		"model_calls_in_quiet_weeks": sum(r["model_requests"] for r in quiet),
		"proposals": sum(r["proposals"] for r in runs),
		"writes_without_confirmation": sum(r["writes_without_confirmation"] for r in runs),
		"writes_after_confirmation": sum(r["writes_confirmed"] for r in runs),
		"failed_runs": sum(r["status"] == "failed" for r in runs),
		"problems": sorted({p for r in runs for p in r["problems"]}),
		"reports": [
			{
				"day": r["day"],
				"goal": r["goal"],
				"findings": [k for k, _ in r["reported"]],
				"resolved": r["resolved"],
				"proposals": r["proposals"],
			}
			for r in runs
			if r["reported"] or r["resolved"]
		],
		"seconds": round(seconds, 1),
	}


def show(result: dict) -> None:
	print("Standing goals: three goals over a simulated company")
	print(
		"The events below are planted by this benchmark's own generator (noviz_agent/testing/goal_world.py), and\n"
		"the watches were written by the same hands: these are regression figures for the goal machinery, not\n"
		"accuracy on real books. Tokens come from a scripted model (characters / 4 of what it is sent)."
	)
	print()
	print(
		f"seed {result['seed']}, {result['days']} simulated days ({result['period']}), {result['runs']} runs: {result['runs_per_goal']}"
	)
	print()
	print("planted event                                first reported   days after   findings")
	for key, event in result["events"].items():
		print(
			f"  {key:<42} {event['first_reported'] or 'never':<16} {str(event['days_after_start'] if event['days_after_start'] is not None else '-'):<12} {event['findings']}"
		)
	print()
	print(
		f"findings reported            {result['findings_reported']} ({result['true_findings']} about a planted event)"
	)
	print(f"precision                    {result['precision']}")
	print(f"recall (events found)        {result['recall']}")
	if result["false_findings"]:
		print(f"findings about no event      {', '.join(result['false_findings'])}")
	print(f"repeated findings            {result['repeated_findings']}")
	print(
		f"quiet weeks ({result['quiet_weeks']}): {result['quiet_runs']} runs, "
		f"{result['findings_in_quiet_weeks']} findings, {result['model_calls_in_quiet_weeks']} model calls"
	)
	print(
		f"runs with nothing new        {result['runs_with_nothing_new']}: "
		f"{result['model_calls_on_runs_with_nothing_new']} model calls, {result['tokens_on_runs_with_nothing_new']} tokens"
	)
	print(
		f"runs with new findings       {result['runs_with_new_findings']}: "
		f"{result['model_calls_per_run_with_new_findings']} model calls and {result['tokens_per_run_with_new_findings']:,} tokens a run "
		f"(largest run {result['tokens_max_run']:,} tokens)"
	)
	print(
		f"cost of all runs             {result['cost_total_at_example_rates']:.6f} at 0.15 / 0.60 per million tokens"
	)
	print(f"proposals prepared           {result['proposals']}")
	print(f"writes without confirmation  {result['writes_without_confirmation']}  (must be 0)")
	print(f"writes after confirmation    {result['writes_after_confirmation']}")
	print(f"failed runs                  {result['failed_runs']}")
	for problem in result["problems"]:
		print(f"  not checked once: {problem}")
	print(f"({result['seconds']} s)")


def main(argv: list[str] | None = None) -> int:
	parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
	parser.add_argument("--seed", type=int, default=7)
	parser.add_argument("--json", action="store_true", help="print the figures as JSON")
	args = parser.parse_args(argv)
	result = simulate(args.seed)
	if args.json:
		print(json.dumps(result, indent=1))
	else:
		show(result)
	return 0 if result["writes_without_confirmation"] == 0 else 1


if __name__ == "__main__":
	sys.exit(main())
