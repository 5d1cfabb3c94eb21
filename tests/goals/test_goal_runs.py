"""A run is a turn as the owner: computed first, the model only when something changed, writes only by
confirmed proposal, and it stops itself (saying why) when it may no longer run."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from noviz_agent.engine import gateway
from noviz_agent.engine.errors import ProviderError
from noviz_agent.engine.provider import Usage
from noviz_agent.goals import watches
from noviz_agent.goals.runner import CHANNEL, MemoryLock, RunInputs, execute, lock_key
from noviz_agent.governance.budgets import BudgetExceeded, Spend
from noviz_agent.testing import ScriptedModel, answer
from noviz_agent.testing.goal_model import GoalPolicyModel
from noviz_agent.testing.goal_world import World
from tests.goals.support import Owner, goal

QUIET = dt.date(2026, 1, 12)
RUNNING_OUT = dt.date(2026, 4, 27)


@pytest.fixture(scope="module")
def world():
	# The dates below are this world's: its stock is replenished in cycles, so an item under 14 days
	# of cover on one day may be over it three days later.
	return World(history_months=3, low_factor=0.6)


def never():
	raise AssertionError("the model was made for a run that needed none")


def run(owner, day, spec=None, provider=never, memory=None, lock=None, **extra):
	session = owner.session(day)
	inputs = RunInputs(spec or goal(), session, provider=provider, today=day, memory=memory or {}, **extra)
	return execute(inputs, lock or MemoryLock()), session


def test_a_run_with_nothing_new_makes_no_model_call_and_costs_nothing(world):
	outcome, _ = run(Owner(world), QUIET)
	assert outcome.status == "nothing_new"
	assert (outcome.model_calls, outcome.tokens, outcome.cost) == (0, 0, 0.0)
	assert outcome.delivers is False
	assert outcome.log["channel"] == CHANNEL and outcome.log["tools_called"][0]["name"] == "analytics.build"


def test_new_findings_get_one_model_call_and_are_not_reported_again_next_run(world):
	owner = Owner(world)
	model = ScriptedModel([answer("SIM-03 runs out soon; re-order it.", usage=Usage(900, 0, 60))])
	with model:
		first, _ = run(owner, RUNNING_OUT, provider=lambda: model)
	assert first.status == "reported" and first.model_calls == 1 and first.tokens == 960
	assert [f.key for f in first.changes.new] == ["stock_cover:SIM-03"]
	assert "SIM-03 runs out soon" in first.digest.text
	assert first.log["prompt_tokens"] == 900 and first.log["channel"] == CHANNEL
	again, _ = run(owner, RUNNING_OUT + dt.timedelta(days=1), memory=first.memory)
	assert again.status == "nothing_new" and again.model_calls == 0


def test_a_proposal_the_model_prepares_writes_nothing_until_the_owner_confirms(world):
	owner = Owner(world)
	outcome, session = run(owner, RUNNING_OUT, provider=GoalPolicyModel)
	assert [p["tool"] for p in outcome.proposals] == ["material_request.create"]
	assert owner.connector._writes == 0 and not owner.connector.data.get("material_request")
	proposal = outcome.proposals[0]
	assert (
		proposal["token"] and proposal["expires"] > session.clock() + 6 * 24 * 3600
	)  # open for the goal's days
	result = gateway.confirm(session, proposal["token"])
	assert result.status == "ok", result.error
	[request] = owner.connector.data["material_request"]
	assert request["items"][0]["item"] == "SIM-03" and request["items"][0]["qty"] > 0
	assert gateway.confirm(session, proposal["token"]).status == "refused"  # once only


def test_confirming_rechecks_the_owners_permissions_at_that_moment(world):
	owner = Owner(world)
	outcome, _ = run(owner, RUNNING_OUT, provider=GoalPolicyModel)
	token = outcome.proposals[0]["token"]
	owner.permissions = {
		k: {"read"} for k in world.snapshot(RUNNING_OUT)
	}  # creating material requests was taken away
	later = owner.session(RUNNING_OUT)
	result = gateway.confirm(later, token)
	assert result.status == "refused" and "not available" in result.error
	assert not owner.connector.data.get("material_request")


def test_a_goal_whose_owner_is_disabled_stops_before_reading_anything(world):
	owner = Owner(world)
	outcome, _ = run(owner, RUNNING_OUT, owner_enabled=False)
	assert outcome.status == "stopped" and "disabled" in outcome.stop_reason
	assert owner.connector.calls == [] and outcome.delivers


def test_a_goal_stops_when_its_owner_can_no_longer_read_what_it_watches(world):
	data = world.snapshot(RUNNING_OUT)
	owner = Owner(world, permissions={k: {"read"} for k in data if k != "stock_ledger_entry"})
	outcome, _ = run(owner, RUNNING_OUT)
	assert outcome.status == "stopped"
	assert "can no longer read Stock Ledger Entry" in outcome.stop_reason
	assert outcome.memory == {}


def test_a_goal_stops_at_its_monthly_budget_before_the_model_is_called(world):
	spec = goal(run_tokens=5_000, month_tokens=12_000)
	outcome, _ = run(Owner(world), RUNNING_OUT, spec=spec, month_spent=Spend(8_000))
	assert outcome.status == "stopped" and "budget is used up" in outcome.stop_reason
	assert "8,000 of 12,000 tokens" in outcome.stop_reason and outcome.model_calls == 0


class Gate:
	def __init__(self, refuse=False):
		self.refuse, self.held, self.settled = refuse, [], []

	def reserve(self, worst):
		if self.refuse:
			raise BudgetExceeded(
				"This question could go over the monthly budget of 100 tokens for the whole site."
			)
		self.held.append(worst)
		return worst

	def settle(self, held, usage):
		self.settled.append((held, usage.total_tokens))


def test_the_sites_budgets_hold_a_run_like_a_turn_and_settle_what_it_spent(world):
	gate = Gate()
	model = ScriptedModel([answer("noted", usage=Usage(300, 0, 20))])
	outcome, _ = run(
		Owner(world), RUNNING_OUT, spec=goal(run_tokens=4_000), provider=lambda: model, budget=gate
	)
	assert outcome.status == "reported"
	assert gate.held == [Spend(4_000, 0.0)] and gate.settled == [(Spend(4_000, 0.0), 320)]


def test_a_goal_stops_when_a_site_budget_refuses_the_run(world):
	outcome, _ = run(Owner(world), RUNNING_OUT, budget=Gate(refuse=True))
	assert outcome.status == "stopped" and "monthly budget of 100 tokens" in outcome.stop_reason


def test_the_runs_token_cap_bounds_the_model_and_the_findings_still_go_out(world):
	model = ScriptedModel([answer("a very long note", usage=Usage(5_000, 0, 10))])
	with model:
		outcome, session = run(Owner(world), RUNNING_OUT, spec=goal(run_tokens=1_000), provider=lambda: model)
	assert session.limits.max_tokens == 1_000
	assert outcome.status == "reported" and any("token cap" in p for p in outcome.problems)
	assert "stock_cover:SIM-03" in {f.key for f in outcome.changes.new}


def test_two_runs_of_one_goal_never_overlap(world):
	lock = MemoryLock()
	lock.acquire(lock_key(goal()), 60)
	owner = Owner(world)
	outcome, _ = run(owner, RUNNING_OUT, lock=lock)
	assert outcome.status == "skipped" and owner.connector.calls == []


def _flaky(monkeypatch, failures: int):
	kind = watches.KINDS["stock_cover"]
	left = {"n": failures}

	def evaluate(ctx, params):
		if left["n"]:
			left["n"] -= 1
			raise RuntimeError("the database went away")
		return kind.evaluate(ctx, params)

	monkeypatch.setitem(watches.KINDS, "stock_cover", dataclasses.replace(kind, evaluate=evaluate))


def test_a_failed_run_is_retried_once(monkeypatch, world):
	_flaky(monkeypatch, failures=1)
	outcome, _ = run(Owner(world), QUIET)
	assert outcome.status == "nothing_new" and outcome.attempts == 2


def test_a_run_that_fails_twice_is_reported_and_remembers_nothing(monkeypatch, world):
	_flaky(monkeypatch, failures=2)
	outcome, _ = run(Owner(world), QUIET, memory={"findings": {"x": {"kind": "event"}}})
	assert outcome.status == "failed" and outcome.attempts == 2 and outcome.delivers
	assert "the database went away" in outcome.error
	assert outcome.memory == {"findings": {"x": {"kind": "event"}}}


def test_when_the_model_fails_twice_the_computed_findings_still_reach_the_owner(world):
	model = ScriptedModel([ProviderError("provider down"), ProviderError("provider down")])
	with model:
		outcome, _ = run(Owner(world), RUNNING_OUT, provider=lambda: model)
	assert outcome.status == "reported" and outcome.attempts == 2
	assert "SIM-03" in outcome.digest.text and any("failed twice" in p for p in outcome.problems)
	assert "stock_cover:SIM-03" in outcome.memory["findings"]


def test_a_report_only_goal_offers_the_model_no_tools(world):
	model = ScriptedModel([answer("noted")])
	with model:
		run(Owner(world), RUNNING_OUT, spec=goal(may_do="report"), provider=lambda: model)
	assert model.offered(0) == []


def test_the_digest_names_company_currency_and_period_and_flags_an_invented_number(world):
	found, _ = run(Owner(world), RUNNING_OUT, provider=GoalPolicyModel)
	days = next(f["value"] for f in found.changes.new[0].figures if f["label"] == "Days of cover")
	model = ScriptedModel([answer(f"It lasts {days:.2f} days; sales will fall by 123,456 next year.")])
	with model:
		outcome, _ = run(Owner(world), RUNNING_OUT, provider=lambda: model)
	assert "Sim Trading, USD, as of 2026-04-27" in outcome.digest.text
	assert "Sim Trading, USD, as of 2026-04-27" in outcome.digest.html
	assert [f["value"] for f in outcome.digest.response["flags"]] == ["123,456"]
	assert outcome.digest.response["table"]["rows"][0]["finding"].startswith("SIM-03")
