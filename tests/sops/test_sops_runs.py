"""Running procedures: memory across turns and workers, each fault path, the repeat limit, proposals."""

from __future__ import annotations

import json

import pytest

from noviz_agent.engine import gateway
from noviz_agent.sops import memory as mem
from noviz_agent.sops.memory import InMemoryRunStore
from noviz_agent.sops.runner import MAX_REPEATS
from tests.sops.support import connector, desk, say, session

START = "A customer wants to cancel their order"


def _steps(state):
	return [(e.line, e.action, e.ok) for e in state.memory if e.kind == "step"]


@pytest.mark.parametrize("controller", ["baseline", "model"])
def test_an_undelivered_order_is_cancelled_through_a_confirmed_proposal(controller):
	conn, store = connector(), InMemoryRunStore()
	s, d = session(conn), desk(store, controller)
	assert say(d, s, START).state.status == mem.AWAITING_ANSWER
	assert say(d, s, "SAL-ORD-2026-00001").state.position == 8  # the reason is asked: not delivered
	handled = say(d, s, "They ordered the wrong size")
	assert handled.response["type"] == "proposal"
	assert handled.response["proposal"]["tool"] == "sales_order.cancel"
	# Nothing is written before the person confirms.
	assert conn.data["sales_order"][0]["docstatus"] == 1
	token = handled.response["proposal"]["token"]
	result = gateway.confirm(s, token)
	assert result.ok and conn.data["sales_order"][0]["docstatus"] == 2
	finished = d.settled(s, None, token, True, result)
	d.save()
	assert finished.state.status == mem.COMPLETED
	assert "cancelled" in finished.response["text"].lower()
	assert [a for _, a, _ in _steps(finished.state)] == [
		"person.ask",
		"sales_order.get",
		"person.ask",
		"sales_order.cancel",
		"person.tell",
	]


def test_a_delivered_order_explains_returns_and_ends_without_any_write():
	conn = connector()
	s, d = session(conn), desk()
	say(d, s, START)
	handled = say(d, s, "It is SAL-ORD-2026-00002")
	assert handled.state.status == mem.COMPLETED
	assert "Sales Return" in handled.response["text"]
	assert all(r.status != "proposal" for r in []) and handled.response["type"] != "proposal"
	assert all(row["docstatus"] == 1 for row in conn.data["sales_order"])


def test_the_run_continues_in_another_worker_from_the_stored_memory():
	store = InMemoryRunStore()
	say(desk(store), session(), START)
	say(desk(store), session(), "SAL-ORD-2026-00001")
	stored = json.loads(store.rows["CONV-1"])
	assert stored["status"] == mem.AWAITING_ANSWER and stored["position"] == 8
	# A fresh desk, session and connector (another worker) picks up where the run stopped.
	handled = say(desk(store), session(), "Wrong size")
	assert handled.response["type"] == "proposal"
	assert handled.response["proposal"]["tool"] == "sales_order.cancel"
	assert [e.kind for e in handled.state.memory].count("answer") == 3


def test_memory_keeps_action_observation_and_success_for_each_step():
	store = InMemoryRunStore()
	s, d = session(), desk(store)
	say(d, s, START)
	state = say(d, s, "SAL-ORD-2026-00009").state
	failed = [e for e in state.memory if e.kind == "step" and not e.ok]
	assert failed and failed[0].action == "sales_order.get" and failed[0].failure == "invalid_input"
	assert "not found" in failed[0].observation


def test_an_id_that_does_not_exist_repeats_the_question_it_came_from():
	s, d = session(), desk()
	say(d, s, START)
	handled = say(d, s, "SAL-ORD-2026-00009")
	assert handled.state.status == mem.AWAITING_ANSWER and handled.state.position == 1
	assert "not found" in handled.response["text"] and "sales order number" in handled.response["text"]
	assert say(d, s, "SAL-ORD-2026-00001").state.position == 8


def test_an_answer_without_a_document_number_is_asked_again_before_any_call():
	conn = connector()
	s, d = session(conn), desk()
	say(d, s, START)
	handled = say(d, s, "the one from last Tuesday")
	assert handled.state.position == 1 and "does not contain a document number" in handled.response["text"]
	assert not [e for e in handled.state.memory if e.action == "sales_order.get"]


def test_an_ambiguous_date_is_refused_and_the_date_asked_again():
	s, d = session(), desk()
	for message in ("An employee requests leave", "HR-EMP-00001", "Casual Leave"):
		say(d, s, message)
	handled = say(d, s, "sometime next week")
	assert handled.state.position == 7 and "does not name one day" in handled.response["text"]
	say(d, s, "2026-03-02")
	handled = say(d, s, "6 March 2026")
	assert handled.response["type"] == "proposal"
	shown = {f["key"]: f["value"] for f in handled.response["proposal"]["fields"]}
	assert shown["to_date"] == "2026-03-06"


def test_an_api_error_repeats_the_step_and_the_run_goes_on():
	s, d = session(connector(failures={("get", "sales_order"): 1})), desk()
	say(d, s, START)
	handled = say(d, s, "SAL-ORD-2026-00001")
	assert [(a, ok) for _, a, ok in _steps(handled.state)][1:3] == [
		("sales_order.get", False),
		("sales_order.get", True),
	]
	assert handled.state.position == 8


def test_the_same_step_more_than_twice_in_a_row_ends_the_procedure_with_a_message_and_a_log_entry():
	s, d = session(connector(failures={("get", "sales_order"): 5})), desk()
	say(d, s, START)
	handled = say(d, s, "SAL-ORD-2026-00001")
	gets = [e for e in handled.state.memory if e.action == "sales_order.get" and e.kind == "step"]
	assert len(gets) == MAX_REPEATS
	assert handled.state.status == mem.ENDED
	assert "more than 2 times in a row" in handled.response["text"]
	assert handled.state.memory[-1].kind == "ended" and handled.state.memory[-1].reason == "repeat limit"
	assert "repeat limit" in handled.log["error"]


def test_repeated_invalid_ids_end_the_procedure_at_the_repeat_limit():
	s, d = session(), desk()
	say(d, s, START)
	# The question may be asked again twice; a third wrong id would make it a third repeat.
	assert say(d, s, "SAL-ORD-2026-00007").state.status == mem.AWAITING_ANSWER
	assert say(d, s, "SAL-ORD-2026-00008").state.status == mem.AWAITING_ANSWER
	handled = say(d, s, "SAL-ORD-2026-00009")
	assert handled.state.status == mem.ENDED and "Cancel a customer order" in handled.response["text"]


def test_a_question_mid_procedure_is_answered_and_the_procedure_resumes_where_it_was():
	s, d = session(), desk(controller="model")
	say(d, s, START)
	handled = say(d, s, "How do customer returns work?")
	assert handled.state.status == mem.AWAITING_ANSWER and handled.state.position == 1
	assert (
		"Sales Return" in handled.response["text"]
		and "Back to 'Cancel a customer order'" in handled.response["text"]
	)
	assert s.knowledge.queries == ["How do customer returns work?"]
	assert say(d, s, "SAL-ORD-2026-00001").state.position == 8


def test_the_baseline_takes_a_mid_procedure_question_as_the_answer():
	s, d = session(), desk(controller="baseline")
	say(d, s, START)
	handled = say(d, s, "How do customer returns work?")
	assert not [e for e in handled.state.memory if e.kind == "interrupt"]
	assert "does not contain a document number" in handled.response["text"]


def test_a_refused_call_ends_the_procedure_with_the_system_message():
	conn = connector(perms={"sales_order": {"read"}})
	s, d = session(conn), desk()
	say(d, s, START)
	say(d, s, "SAL-ORD-2026-00001")
	handled = say(d, s, "Wrong size")
	# sales_order.cancel is not granted: the gateway refuses and the run stops there.
	assert handled.state.status == mem.ENDED
	assert "cannot go on" in handled.response["text"]


def test_a_cancelled_proposal_ends_the_procedure_and_nothing_is_changed():
	conn = connector()
	s, d = session(conn), desk()
	for message in (START, "SAL-ORD-2026-00001", "Wrong size"):
		handled = say(d, s, message)
	token = handled.response["proposal"]["token"]
	result = gateway.cancel(s, token)
	finished = d.settled(s, None, token, False, result)
	assert finished.state.status == mem.ENDED and "Nothing was changed" in finished.response["text"]
	assert conn.data["sales_order"][0]["docstatus"] == 1


def test_a_message_while_a_proposal_waits_points_at_the_proposal():
	s, d = session(), desk()
	for message in (START, "SAL-ORD-2026-00001", "Wrong size"):
		say(d, s, message)
	handled = say(d, s, "hello?")
	assert "waiting for you to confirm or cancel" in handled.response["text"]
	assert handled.state.status == mem.AWAITING_CONFIRMATION


def test_settling_a_proposal_no_run_waits_on_is_not_the_procedures_business():
	s, d = session(), desk()
	for message in (START, "SAL-ORD-2026-00001", "Wrong size"):
		say(d, s, message)
	assert d.settled(s, None, "other.token", True, None) is None


def test_a_request_that_fits_no_procedure_is_left_to_the_ordinary_turn():
	assert desk()(session(), None, "top customers by revenue") is None


def test_the_person_can_leave_a_procedure_by_saying_stop():
	s, d = session(), desk()
	say(d, s, START)
	handled = say(d, s, "Never mind.")
	assert handled.state.status == mem.ENDED and "as you asked" in handled.response["text"]
	assert (
		desk(d.store)(session(), None, "SAL-ORD-2026-00001") is None
	)  # the next message is an ordinary turn
