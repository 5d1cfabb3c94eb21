"""Watches: computed by the analytics catalogue through the gateway as the owner, labelled, with their records."""

from __future__ import annotations

import datetime as dt

import pytest

from noviz_agent.goals.spec import WatchSpec
from noviz_agent.goals.watches import (
	KINDS,
	WatchContext,
	WatchRefused,
	check_watch,
	needs,
	params_of,
	suggest,
)
from noviz_agent.testing.goal_world import COMPANY, CURRENCY, World
from tests.goals.support import Owner


@pytest.fixture(scope="module")
def world():
	# The dates below are this world's: its stock is replenished in cycles, so an item under 14 days
	# of cover on one day may be over it three days later.
	return World(history_months=3, low_factor=0.6)


def evaluate(world, day, kind, **params):
	session = Owner(world).session(dt.date.fromisoformat(day))
	ctx = WatchContext(session, COMPANY, dt.date.fromisoformat(day))
	return KINDS[kind].evaluate(ctx, params_of(WatchSpec(kind, params))), ctx


def test_an_item_whose_demand_jumped_is_found_running_out_with_its_figures_scoped(world):
	found, ctx = evaluate(world, "2026-04-27", "stock_cover", days=14)
	assert [f.key for f in found] == ["stock_cover:SIM-03"]
	item = found[0]
	assert (item.company, item.currency, item.period["as_of"]) == (COMPANY, CURRENCY, "2026-04-27")
	cover = next(f for f in item.figures if f["label"] == "Days of cover")
	assert 0 < cover["value"] < 14 and cover["unit"] == "days"
	assert item.records == [{"doctype": "Item", "name": "SIM-03", "link": "/app/item/SIM-03"}]
	assert item.subject["suggested_qty"] > 0
	# Computed by the catalogue through the gateway, not by the watch.
	assert [c.name for c in ctx.calls] == ["analytics.build"] and ctx.calls[0].args[
		"key"
	] == "inventory.days_of_cover"


def test_nothing_runs_out_before_the_jump(world):
	found, _ = evaluate(world, "2026-01-12", "stock_cover", days=14)
	assert found == []


def test_a_customer_who_stopped_paying_is_found_with_the_invoices_behind_it(world):
	found, ctx = evaluate(world, "2026-04-13", "overdue_customers", days=30)
	assert [f.subject["customer"] for f in found] == [world.stops_paying]
	records = found[0].records
	assert records[0]["doctype"] == "Customer"
	invoices = [r["name"] for r in records[1:]]
	assert invoices, "the overdue invoices are the records behind the finding"
	rows = {r["name"]: r for r in world.snapshot(dt.date(2026, 4, 13))["sales_invoice"]}
	for name in invoices:
		assert rows[name]["customer"] == world.stops_paying and rows[name]["outstanding"] > 0
		assert rows[name]["due_date"] < "2026-03-14"
	assert "sales_invoice.list" in [c.name for c in ctx.calls]


def test_the_escalation_band_changes_as_the_oldest_invoice_ages(world):
	early, _ = evaluate(world, "2026-04-13", "overdue_customers", days=30)
	late, _ = evaluate(world, "2026-04-27", "overdue_customers", days=30)
	assert early[0].state != late[0].state and early[0].key == late[0].key


def test_receivables_past_a_limit_are_one_finding_in_the_companys_currency(world):
	found, _ = evaluate(world, "2026-04-27", "receivables_over", days=30, limit=2_000)
	assert [f.key for f in found] == ["receivables_over:30"]
	over = found[0].figures[0]
	assert over["unit"] == "currency" and over["value"] > 2_000 and found[0].currency == CURRENCY
	none, _ = evaluate(world, "2026-04-27", "receivables_over", days=30, limit=10**9)
	assert none == []


def test_a_month_far_below_the_usual_is_outside_the_forecasts_range():
	world = World(history_months=18)
	found, ctx = evaluate(world, "2026-04-06", "sales_forecast")
	assert [f.key for f in found] == ["sales_forecast:2026-03"]
	month = found[0]
	figures = {f["label"]: f["value"] for f in month.figures}
	assert figures["Sales 2026-03"] < figures["80% range, low"] < figures["80% range, high"]
	assert month.period == {"start": "2026-03-01", "end": "2026-03-31", "label": "2026-03", "partial": False}
	# The range is the one forecast from the months before March, the actual from the month itself.
	assert [c.args["params"]["end"] for c in ctx.calls] == ["2026-02-28", "2026-03-31"]


def test_a_watch_the_owner_may_not_read_is_refused_not_guessed(world):
	owner = Owner(world, permissions={"company": {"read"}, "item": {"read"}})
	day = dt.date(2026, 4, 27)
	ctx = WatchContext(owner.session(day), COMPANY, day)
	with pytest.raises(WatchRefused):
		KINDS["stock_cover"].evaluate(ctx, params_of(WatchSpec("stock_cover", {"days": 14})))


def test_a_goal_in_words_resolves_to_its_watches():
	assert suggest("Remind me every Monday which items will run out within two weeks") == [
		WatchSpec("stock_cover", {"days": 14})
	]
	assert suggest("keep receivables over 60 days under 50,000 in Dev Company") == [
		WatchSpec("receivables_over", {"days": 60, "limit": 50_000.0})
	]
	assert suggest("watch sales against the forecast range and tell me when a month falls outside it") == [
		WatchSpec("sales_forecast")
	]
	assert [w.kind for w in suggest("tell me when a customer stops paying")] == ["overdue_customers"]
	assert suggest("what is the weather") == []


def test_a_watch_with_unknown_parameters_is_refused_with_the_ones_it_takes():
	assert "takes days, window" in check_watch(WatchSpec("stock_cover", {"weeks": 2}))
	assert check_watch(WatchSpec("stock_cover", {"days": 14})) is None


def test_what_a_goal_needs_to_read_comes_from_the_analyses_datasets():
	tools, entities = needs([WatchSpec("stock_cover"), WatchSpec("overdue_customers")])
	assert tools == {"analytics.build"}
	assert entities == {"stock_ledger_entry", "sales_invoice"}
