"""Retention removes exactly what is older than the setting; cost totals survive the logs."""

from __future__ import annotations

import datetime as dt

from noviz_agent.governance.retention import cutoff, monthly_costs


def test_cutoff_is_today_minus_the_setting_and_zero_keeps_everything():
	assert cutoff(dt.date(2026, 12, 1), 30) == dt.date(2026, 11, 1)
	assert cutoff(dt.date(2026, 12, 1), 0) is None


def test_monthly_costs_add_up_per_month_person_and_model():
	rows = [
		{
			"creation": dt.datetime(2026, 10, 3),
			"person": "ann",
			"model": "m",
			"prompt_tokens": 10,
			"completion_tokens": 2,
			"estimated_cost": 0.01,
		},
		{
			"creation": dt.datetime(2026, 10, 9),
			"person": "ann",
			"model": "m",
			"prompt_tokens": 5,
			"completion_tokens": 1,
			"estimated_cost": 0.02,
		},
		{
			"creation": dt.datetime(2026, 11, 1),
			"person": "bob",
			"model": "m",
			"prompt_tokens": 7,
			"completion_tokens": 0,
			"estimated_cost": None,
		},
	]
	assert monthly_costs(rows) == [
		{
			"month": "2026-10",
			"person": "ann",
			"model": "m",
			"turns": 2,
			"prompt_tokens": 15,
			"completion_tokens": 3,
			"cost": 0.03,
		},
		{
			"month": "2026-11",
			"person": "bob",
			"model": "m",
			"turns": 1,
			"prompt_tokens": 7,
			"completion_tokens": 0,
			"cost": 0.0,
		},
	]
