"""A goal as data: every problem named at once, schedules that fire when they say, caps that make sense."""

from __future__ import annotations

import datetime as dt

import pytest

from noviz_agent.goals.schedule import Schedule, ScheduleError
from noviz_agent.goals.spec import GoalError, GoalSpec


def test_a_goal_with_several_faults_names_every_one_with_what_to_write():
	with pytest.raises(GoalError) as caught:
		GoalSpec.from_dict(
			{
				"owner": "",
				"goal": "",
				"watches": [{"kind": "crystal_ball"}, {"kind": "stock_cover", "params": {"days": 0}}],
				"schedule": {"every": "fortnight"},
				"delivery": ["pager"],
				"may_do": "write",
			}
		)
	text = " ".join(caught.value.problems)
	for expected in (
		"name its owner",
		"Say the goal in a sentence",
		"crystal_ball",
		"days must be at least 1",
		"fortnight",
		"pager",
		"'report'",
	):
		assert expected in text, (expected, text)


def test_a_monthly_cap_below_one_run_is_refused_since_no_run_could_call_the_model():
	with pytest.raises(GoalError) as caught:
		GoalSpec.from_dict(
			{
				"owner": "a@b.c",
				"goal": "watch stock",
				"watches": [{"kind": "stock_cover"}],
				"run_tokens": 20_000,
				"month_tokens": 5_000,
			}
		)
	assert "no run could ever call the model" in str(caught.value)


def test_a_receivables_limit_must_be_given_it_has_no_default():
	with pytest.raises(GoalError) as caught:
		GoalSpec.from_dict(
			{"owner": "a@b.c", "goal": "keep receivables low", "watches": [{"kind": "receivables_over"}]}
		)
	assert "give limit" in str(caught.value)


def test_a_goal_round_trips_through_its_plain_values():
	spec = GoalSpec.from_dict(
		{
			"owner": "a@b.c",
			"goal": "Tell me each Monday which items will run out within two weeks",
			"watches": [{"kind": "stock_cover", "params": {"days": 14}}],
			"schedule": {"every": "week", "weekday": "Monday", "hour": 7},
			"delivery": ["notification", "email"],
		}
	)
	assert GoalSpec.from_dict(spec.to_dict()).to_dict() == spec.to_dict()
	assert spec.label == spec.goal  # a short goal is its own title
	assert spec.schedule.describe() == "every Monday at 07:00"


def test_weekly_daily_and_monthly_schedules_fire_at_their_times():
	monday = Schedule.from_dict({"every": "week", "weekday": "monday", "hour": 8})
	# 2026-03-04 is a Wednesday.
	assert monday.next_after(dt.datetime(2026, 3, 4, 12)) == dt.datetime(2026, 3, 9, 8)
	assert monday.next_after(dt.datetime(2026, 3, 9, 8)) == dt.datetime(2026, 3, 16, 8)
	sunday = Schedule.from_dict({"every": "week", "weekday": "sunday", "hour": 18})
	assert sunday.next_after(dt.datetime(2026, 3, 4, 12)) == dt.datetime(2026, 3, 8, 18)
	daily = Schedule.from_dict({"every": "day", "hour": 6})
	assert daily.next_after(dt.datetime(2026, 3, 4, 7)) == dt.datetime(2026, 3, 5, 6)
	monthly = Schedule.from_dict({"every": "month", "day": 2, "hour": 9})
	assert monthly.next_after(dt.datetime(2026, 3, 4, 7)) == dt.datetime(2026, 4, 2, 9)
	cron = Schedule.from_dict({"every": "cron", "cron": "30 7 * * 1-5"})
	assert cron.next_after(dt.datetime(2026, 3, 6, 8)) == dt.datetime(2026, 3, 9, 7, 30)


@pytest.mark.parametrize(
	"raw, words",
	[
		({"every": "cron", "cron": "every monday"}, "not a cron expression"),
		({"every": "month", "day": 31}, "1 to 28"),
		({"every": "day", "hour": 24}, "0 to 23"),
		({"every": "week", "weekday": "someday"}, "weekday is one of"),
		({"every": "day", "hour": "eight"}, "whole numbers"),
	],
)
def test_a_schedule_that_cannot_run_says_what_to_write(raw, words):
	with pytest.raises(ScheduleError) as caught:
		Schedule.from_dict(raw)
	assert words in str(caught.value)
