"""Checking the person's answers before use: ids present, dates that name exactly one day."""

from __future__ import annotations

from datetime import date

import pytest

from noviz_agent.engine.gateway import ToolResult
from noviz_agent.sops.runner import check_answer, classify_failure
from noviz_agent.sops.values import InvalidValue, find_id, parse_date


@pytest.mark.parametrize(
	"text, iso",
	[
		("2026-03-12", "2026-03-12"),
		("12 March 2026", "2026-03-12"),
		("from the 3rd of March", "2026-03-03"),
		("March 3, 2026", "2026-03-03"),
		("Sept 4", "2026-09-04"),
	],
)
def test_dates_that_name_one_day_parse(text, iso):
	assert parse_date(text, today=date(2026, 1, 10)) == iso


@pytest.mark.parametrize(
	"text, fragment",
	[
		("sometime next week", "does not name one day"),
		("3/4/2026", "does not name one day"),  # day and month could be either way round
		("the 3rd or the 4th of March", "more than one date"),
		("31 February 2026", "not a calendar date"),
		("2026-02-30", "not a calendar date"),
	],
)
def test_ambiguous_or_impossible_dates_are_refused_with_what_to_give(text, fragment):
	with pytest.raises(InvalidValue, match=fragment):
		parse_date(text)


def test_ids_are_found_in_chatty_answers_and_a_correction_wins():
	assert find_id("it is sal-ord-2026-00012 thanks") == "SAL-ORD-2026-00012"
	assert find_id("SO-1, no sorry, SO-2") == "SO-2"
	assert find_id("the one from Tuesday") is None


def test_an_answer_is_checked_against_what_its_question_asks_for():
	assert "does not name one day" in check_answer("Please tell me the from date of the leave.", "soon")
	assert check_answer("Please tell me the from date of the leave.", "2 March 2026") is None
	assert "document number" in check_answer("Please tell me the sales order number.", "yes")
	assert check_answer("Please tell me the reason for cancelling.", "changed my mind") is None


def test_failures_are_told_apart_invalid_input_api_error_refusal():
	assert (
		classify_failure(ToolResult("x.get", {}, "error", error="Sales Order X not found")) == "invalid_input"
	)
	assert (
		classify_failure(ToolResult("x.get", {}, "error", error="The server did not answer")) == "api_error"
	)
	crash = ToolResult(
		"x.get",
		{},
		"error",
		error="failed unexpectedly (KeyError: not found)",
		meta={"exception": "KeyError"},
	)
	assert classify_failure(crash) == "api_error"
	assert classify_failure(ToolResult("x.get", {}, "refused", error="No permission")) == "refused"
