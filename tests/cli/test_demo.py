"""`noviz-agent demo` and `ask`: the agent answering over the seeded company, with no site."""

from __future__ import annotations

import pytest

from noviz_agent import cli, demo


@pytest.fixture(autouse=True)
def no_provider_in_the_environment(monkeypatch):
	for name in ("NOVIZ_BASE_URL", "NOVIZ_MODEL", "NOVIZ_API_KEY", "NOVIZ_TOOL_CALL_FORMAT"):
		monkeypatch.delenv(name, raising=False)


def test_demo_prints_each_question_with_its_answer_and_says_a_scripted_model_answers(capsys):
	assert cli.main(["demo"]) == 0
	out = capsys.readouterr().out
	assert out.startswith("No model provider is configured, so a scripted model is answering")
	assert out.count("── ") == len(demo.demo_questions()) == 6
	assert "── Accounts User asks: How much have we invoiced so far in 2026?" in out
	assert "Seed Customer 01  84,488.00" in out  # a table, its numbers formatted
	assert "Chart: Revenue per month" in out and "forecast" in out and "█" in out
	assert "[Total revenue] 744,144.00" in out  # cards
	assert "Proposal (create Customer)" in out and "nothing is confirmed or written" in out
	assert "Refused: No permission for Sales Invoice" in out


def test_every_figure_of_the_demo_says_whose_books_it_comes_from(capsys):
	assert cli.main(["demo"]) == 0
	blocks = capsys.readouterr().out.split("── ")[1:]
	with_figures = [b for b in blocks if "Value" in b or "[Total revenue]" in b]
	assert len(with_figures) == 4
	for block in with_figures:
		assert "(Seed Trading Ltd · USD" in block, block[:300]
	trend = next(b for b in blocks if "[Total revenue]" in b)
	assert "(last period still running)" in trend and "[Total revenue] 744,144.00 USD" in trend


def test_ask_answers_a_question_the_scripted_model_has_a_plan_for(capsys):
	assert cli.main(["ask", "which customer owes us the most"]) == 0
	out = capsys.readouterr().out
	assert "scripted model is answering" in out and "Seed Customer 01 owes us the most." in out


def test_ask_without_a_provider_or_a_plan_says_how_to_choose_a_model(capsys):
	assert cli.main(["ask", "What will the weather be tomorrow?"]) == 2
	err = capsys.readouterr().err
	assert "--base-url" in err and "NOVIZ_MODEL" in err and "noviz-agent demo" in err


def test_ask_refuses_an_empty_question_with_what_to_type(capsys):
	assert cli.main(["ask", "   "]) == 2
	assert 'noviz-agent ask "' in capsys.readouterr().err


def test_ask_with_a_provider_from_the_flags_uses_that_model(capsys):
	from noviz_agent.testing.stub_provider import StubProvider

	with StubProvider() as stub:
		argv = [
			"ask",
			"show my recent sales orders",
			"--as",
			"sales",
			"--base-url",
			stub.base_url,
			"--model",
			"m",
		]
		assert cli.main(argv) == 0
		sent = [r for r in stub.chat_requests if r.get("tools")]
	out = capsys.readouterr().out
	assert "Answers come from m at " in out and "── Sales User asks: show my recent sales orders" in out
	assert "records" in out and "scripted" not in out
	assert sent and any(t["function"]["name"] == "sales_order__list" for t in sent[0]["tools"])


def test_a_chart_is_drawn_as_bars_with_its_scope_line():
	from analytics import charts

	figure = charts.trend(
		"Revenue per month",
		["2026-09", "2026-10", "2026-11"],
		[10.0, 20.0, 5.0],
		"Revenue",
		{"point": [15.0], "lower": [10.0], "upper": [20.0]},
		["2026-12"],
		[{"index": 2}],
	)
	figure = charts.scoped(
		figure, {"company": "Acme", "currency": "EUR", "series": {"labels": ["2026-09", "2026-11"]}}
	)
	lines = demo.chart_text(figure).splitlines()
	assert lines[0] == "Chart: Revenue per month" and lines[1].strip() == "Acme · EUR · 2026-09 – 2026-11"
	assert lines[3].startswith("  2026-10  " + "█" * demo.BAR_WIDTH)
	assert lines[4].endswith("unusual") and lines[5].endswith("forecast") and "░" in lines[5]
