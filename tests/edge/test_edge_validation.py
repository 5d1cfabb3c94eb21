"""Settings and input checks used by the api and the Agent Settings controller."""

from __future__ import annotations

import pytest

from noviz_agent import validation as v


@pytest.mark.parametrize(
	"url",
	["https://api.openai.com/v1", "http://127.0.0.1:8765/v1", "http://localhost:8000", ""],
)
def test_usable_urls_pass(url):
	assert v.url_problem(url, "Provider base URL") is None


@pytest.mark.parametrize(
	("url", "words"),
	[
		("api.openai.com/v1", "must start with http"),
		("ftp://host/v1", "must start with http"),
		("http:///v1", "no host"),
		("https://host/v1?key=abc", "query"),
		("https://me:secret@host/v1", "user name or password"),
	],
)
def test_bad_urls_are_named_with_the_fix(url, words):
	problem = v.url_problem(url, "Provider base URL")
	assert problem and words in problem and "Provider base URL" in problem


def test_limits_out_of_range_name_the_range():
	assert v.limit_problem("max_steps", 8) is None
	assert v.limit_problem("max_steps", "") is None
	problem = v.limit_problem("max_steps", 0)
	assert "between 1 and 30" in problem
	assert "whole number" in v.limit_problem("page_size", "many")
	assert v.limit_problem("page_size", 20.5)


def test_settings_problems_collects_every_mistake():
	problems = v.settings_problems(
		{"base_url": "localhost:8000", "model": "", "max_steps": 99, "embedding_base_url": "http://e/v1"}
	)
	text = " ".join(problems)
	assert "must start with http" in text
	assert "Max tool steps" in text
	assert "Embedding model is empty" in text
	assert v.settings_problems({"base_url": "http://127.0.0.1:8765/v1", "model": "m", "max_steps": 8}) == []


def test_limit_falls_back_to_default_when_empty_or_bad():
	assert v.limit({"page_size": 50}, "page_size") == 50
	assert v.limit({"page_size": None}, "page_size") == v.LIMITS["page_size"][3]
	assert v.limit({"page_size": 100000}, "page_size") == v.LIMITS["page_size"][3]


def test_empty_message_is_refused():
	with pytest.raises(v.InputError, match="empty"):
		v.check_message("   \n", 100)


def test_oversize_message_names_the_limit():
	with pytest.raises(v.InputError) as caught:
		v.check_message("x" * 4001, 4000)
	assert "4,001" in str(caught.value) and "4,000" in str(caught.value)
	assert v.check_message("  show my invoices ", 4000) == "show my invoices"


def test_non_text_message_is_refused():
	with pytest.raises(v.InputError):
		v.check_message({"a": 1}, 100)


@pytest.mark.parametrize(("given", "stored"), [("up", "Up"), ("DOWN", "Down"), (1, "Up"), ("-1", "Down")])
def test_ratings_normalise(given, stored):
	assert v.check_rating(given) == stored


@pytest.mark.parametrize("given", [None, "", "meh", 5, 0])
def test_unknown_ratings_are_refused(given):
	with pytest.raises(v.InputError):
		v.check_rating(given)


def test_comment_length_is_bounded():
	assert v.check_comment("  ") is None
	assert v.check_comment(" wrong total ") == "wrong total"
	with pytest.raises(v.InputError, match="limit"):
		v.check_comment("x" * (v.MAX_COMMENT_CHARS + 1))


def test_token_shape_is_checked_before_the_store():
	good = "AbCdEfGhIjKlMnOpQrStUv.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
	assert v.check_token(good) == good
	for bad in ("", "nodot", "a.b", "<script>.x", None, 12):
		with pytest.raises(v.InputError):
			v.check_token(bad)


def test_page_arguments():
	assert v.check_page("r_abc123", "2") == ("r_abc123", 2)
	with pytest.raises(v.InputError):
		v.check_page("r_abc123", 0)
	with pytest.raises(v.InputError):
		v.check_page("../../etc", 1)
	with pytest.raises(v.InputError):
		v.check_page("r_abc123", "two")


def test_rate_window_message_only_when_over():
	assert v.rate_window(60, 60, 3600, 100) is None
	message = v.rate_window(61, 60, 3600, 600)
	assert "60 questions" in message and "10 minutes" in message


def test_lines_splits_one_per_line_or_by_comma():
	assert v.lines("System Manager\n  Accounts Manager ,HR User\n\n") == [
		"System Manager",
		"Accounts Manager",
		"HR User",
	]
	assert v.lines(None) == [] and v.lines("") == []


def test_max_tools_above_what_openai_accepts_is_refused():
	assert v.limit_problem("max_tools", 128) is None
	assert "between 5 and 128" in v.limit_problem("max_tools", 200)
	assert v.limit({"max_tools": 200}, "max_tools") == v.LIMITS["max_tools"][3]


def test_tool_call_format_must_be_one_of_its_choices():
	assert v.choice_problem("tool_call_format", "native") is None
	assert v.choice_problem("tool_call_format", "") is None
	assert "native, text, auto" in v.choice_problem("tool_call_format", "xml")
	assert v.choice({"tool_call_format": "xml"}, "tool_call_format") == "native"
	assert v.choice({"tool_call_format": "text"}, "tool_call_format") == "text"
	assert any("Tool call format" in p for p in v.settings_problems({"tool_call_format": "json"}))
