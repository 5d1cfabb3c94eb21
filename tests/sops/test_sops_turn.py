"""The turn's hook: a fitting request runs the procedure; anything else takes the ordinary path."""

from __future__ import annotations

from noviz_agent.engine import turn
from noviz_agent.testing.model import ScriptedModel, answer
from tests.sops.support import desk, session


def test_a_request_that_fits_a_procedure_is_answered_by_it_without_the_reasoning_loop():
	s, d = session(), desk()
	model = ScriptedModel([])  # the baseline needs no model; any model call would fail this test
	with model:
		outcome = turn.run_turn(s, model, "A customer wants to cancel their order", procedures=d)
	assert outcome.response["type"] == "text"
	assert outcome.response["text"] == "Please tell me the sales order number."
	assert outcome.log["modules"] == ["procedures"] and outcome.log["error"] is None
	d.save()
	with model:
		outcome = turn.run_turn(s, model, "SAL-ORD-2026-00001", procedures=d)
	assert "reason for cancelling" in outcome.response["text"]


def test_other_requests_take_the_ordinary_turn():
	s, d = session(), desk()
	model = ScriptedModel([answer("Here you are.")])
	with model:
		outcome = turn.run_turn(s, model, "top customers by revenue", procedures=d)
	assert outcome.response["text"] == "Here you are." and "procedures" not in outcome.log["modules"]


def test_the_turn_records_a_procedure_that_ended_as_an_error_in_its_log():
	from tests.sops.support import connector

	s, d = session(connector(failures={("get", "sales_order"): 5})), desk()
	turn.run_turn(s, None, "A customer wants to cancel their order", procedures=d)
	d.save()
	outcome = turn.run_turn(s, None, "SAL-ORD-2026-00001", procedures=d)
	assert "repeat limit" in outcome.log["error"]


def test_the_model_driven_controller_reports_what_its_calls_cost_in_the_turn_log():
	from noviz_agent.engine.llm import Usage
	from noviz_agent.sops.controllers import ModelController
	from noviz_agent.testing.model import call

	s, d = session(), desk()
	model = ScriptedModel(
		[
			call("sop_decide", {"choice": "yes", "reason": "a cancellation"}),
			call("sop_arguments", {"arguments": {"question": "Which order?"}, "reason": "ask"}),
		],
		usage=Usage(prompt_tokens=100, completion_tokens=7),
	)
	d.controller_for = lambda provider: ModelController(provider)
	with model:
		outcome = turn.run_turn(s, model, "A customer wants to cancel their order", procedures=d)
	assert outcome.response["text"] == "Which order?"
	assert (outcome.log["prompt_tokens"], outcome.log["completion_tokens"]) == (200, 14)
	assert outcome.log["model"] == "scripted"
