"""The state step's deciders: the baseline's rules and the model-driven controller's function calls."""

from __future__ import annotations

import pytest

from noviz_agent.sops import conditions
from noviz_agent.sops.actions import ActionRepository
from noviz_agent.sops.controllers import ModelController, View
from noviz_agent.sops.examples import example
from noviz_agent.sops.matching import Matcher
from noviz_agent.sops.memory import Entry, RunState
from noviz_agent.sops.procedures import compile_procedure
from noviz_agent.testing.model import ScriptedModel, answer, call
from noviz_agent.testing.sop_policy import SopPolicyModel
from noviz_agent.tools import build_registry


def _got(action: str, **fields) -> Entry:
	return Entry("step", 2, action, observation={"name": "X-1", "fields": fields})


@pytest.mark.parametrize(
	"delivery_status, expected",
	[("Not Delivered", False), ("Partly Delivered", True), ("Fully Delivered", True)],
)
def test_the_baseline_reads_a_state_condition_from_the_status_fields(delivery_status, expected):
	memory = [_got("sales_order.get", status="To Deliver and Bill", delivery_status=delivery_status)]
	holds, reason = conditions.evaluate("any of the order has been delivered", memory)
	assert holds is expected and "delivery_status" in reason


@pytest.mark.parametrize("status, expected", [("Active", False), ("Left", True), ("Inactive", True)])
def test_the_baseline_flips_a_negated_condition(status, expected):
	assert (
		conditions.evaluate("the employee is not active", [_got("employee.get", status=status)])[0]
		is expected
	)


@pytest.mark.parametrize("invoice, order, expected", [(1300.0, 1200.0, True), (1200.0, 1200.0, False)])
def test_the_baseline_compares_totals_of_two_looked_up_records(invoice, order, expected):
	memory = [_got("purchase_invoice.get", total=invoice), _got("purchase_order.get", total=order)]
	holds, _ = conditions.evaluate("the invoice total is higher than the order total", memory)
	assert holds is expected


def test_a_condition_with_nothing_looked_up_is_false_with_the_reason():
	holds, reason = conditions.evaluate("the order is delivered", [])
	assert holds is False and "no record" in reason


@pytest.fixture(scope="module")
def compiled():
	spec = example("Cancel a customer order")
	return compile_procedure(
		spec.procedure, Matcher(ActionRepository.from_registry(build_registry())), title=spec.title
	)


def _view(compiled, line: int) -> View:
	state = RunState("Cancel a customer order", "Cancel a customer order")
	state.add(_got("sales_order.get", per_delivered=100, delivery_status="Fully Delivered"))
	return View(compiled.procedure, state, compiled.procedure.lines[line], None, None)


def test_the_model_decides_a_condition_from_the_procedure_and_memory_and_its_reason_is_kept(compiled):
	model = ScriptedModel([call("sop_decide", {"choice": "true", "reason": "per_delivered is 100"})])
	with model:
		holds, reason = ModelController(model).condition(_view(compiled, 3), compiled.procedure.lines[3])
	assert holds is True and reason == "per_delivered is 100"
	sent = model.requests[0][0][-1]["content"]
	assert "Procedure 'Cancel a customer order'" in sent and '"per_delivered": 100' in sent
	assert "Does the condition 'any of the order has been delivered' hold" in sent
	assert model.offered(0) == ["sop_decide"]


def test_an_unusable_model_reply_falls_back_to_the_rule_and_says_so(compiled):
	model = ScriptedModel(
		[answer("I think it was delivered."), call("sop_decide", {"choice": "maybe", "reason": ""})]
	)
	controller = ModelController(model)
	for _ in range(2):
		holds, reason = controller.condition(_view(compiled, 3), compiled.procedure.lines[3])
		assert holds is True and "rule used" in reason
	assert controller.fallbacks == 2


def test_a_provider_fault_falls_back_to_the_rule(compiled):
	from noviz_agent.engine.errors import ProviderError

	controller = ModelController(ScriptedModel([ProviderError("down")]))
	holds, reason = controller.condition(_view(compiled, 3), compiled.procedure.lines[3])
	assert holds is True and "model unavailable" in reason


def test_the_scripted_policy_decides_from_the_prompt_it_is_sent(compiled):
	policy = SopPolicyModel()
	controller = ModelController(policy)
	holds, reason = controller.condition(_view(compiled, 3), compiled.procedure.lines[3])
	assert holds is True and "per_delivered=100" in reason
	# Change only what the prompt shows, and the decision follows.
	view = _view(compiled, 3)
	view.state.memory[0].observation["fields"]["per_delivered"] = 0
	assert controller.condition(view, compiled.procedure.lines[3])[0] is False
	assert controller.classify(view, "How do returns work?")[0] == "question"
	assert controller.classify(view, "SAL-ORD-2026-00001")[0] == "answer"
	assert policy.calls == 4
