"""The state of a background turn between workers: transitions, loss, recovery, what the chat sees."""

from __future__ import annotations

import json

from noviz_agent.engine import turn_state as ts


def _queued():
	return ts.new("t1abc", "ann@example.com", "Show my orders", "conv1", new_conversation=True, now=100.0)


def test_a_queued_turn_holds_what_any_worker_needs_and_survives_json():
	state = _queued()
	assert json.loads(json.dumps(state)) == state
	assert (state["status"], state["attempt"], state["conversation"]) == ("queued", 1, "conv1")
	assert state["message"] == "Show my orders" and state["user"] == "ann@example.com"


def test_progress_events_are_kept_for_a_reload_and_streamed_text_is_joined():
	state = ts.started(_queued(), 101.0)
	state = ts.with_event(state, {"event": "thinking", "step": 1, "turn": "t1abc"})
	state = ts.with_event(state, {"event": "text", "delta": "You have "})
	state = ts.with_event(state, {"event": "text", "delta": "5 orders."})
	assert state["text"] == "You have 5 orders."
	assert state["events"] == [{"event": "thinking", "step": 1}]


def test_event_history_is_bounded_so_a_long_turn_cannot_grow_its_state_without_end():
	state = _queued()
	for step in range(ts.MAX_EVENTS + 25):
		state = ts.with_event(state, {"event": "tool", "step": step})
	assert len(state["events"]) == ts.MAX_EVENTS
	assert state["events"][-1]["step"] == ts.MAX_EVENTS + 24


def test_finished_status_follows_the_response():
	state = ts.started(_queued(), 101.0)
	done = ts.finished(state, {"response": {"type": "table"}, "conversation": "conv1", "log": "L1"}, 102.0)
	error = ts.finished(state, {"response": {"type": "error"}}, 102.0)
	stopped = ts.finished(state, {"response": {"type": "error"}, "cancelled": True}, 102.0)
	assert (done["status"], done["log"], done["finished_at"]) == ("done", "L1", 102.0)
	assert error["status"] == "error" and stopped["status"] == "cancelled"
	assert all(ts.is_final(s) for s in (done, error, stopped))


def test_a_running_turn_without_heartbeat_is_lost_but_a_freshly_queued_one_is_not():
	queued, running = _queued(), ts.started(_queued(), 101.0)
	assert not ts.is_lost(queued, alive=False, job_pending=True)
	assert ts.is_lost(queued, alive=False, job_pending=False)
	assert not ts.is_lost(running, alive=True, job_pending=False)
	assert ts.is_lost(running, alive=False, job_pending=False)
	assert not ts.is_lost(
		ts.finished(running, {"response": {"type": "text"}}, 102.0), alive=False, job_pending=False
	)


def test_a_lost_turn_is_retried_once_then_ends_with_a_clear_message():
	running = ts.started(_queued(), 101.0)
	action, again = ts.recovered(running, 130.0)
	assert action == "retry"
	assert (again["status"], again["attempt"], again["queued_at"]) == ("queued", 2, 130.0)
	assert ts.job_id("t1abc", 2) != ts.job_id("t1abc", 1)
	action, ended = ts.recovered(ts.started(again, 131.0), 160.0)
	assert action == "give_up"
	assert ended["status"] == "error" and ended["message_for_person"] == ts.LOST_MESSAGE
	assert ended["response"]["error"]["message"] == ts.LOST_MESSAGE


def test_the_chat_never_gets_the_owner_question_copy_or_budget_reservation_back():
	state = {**ts.started(_queued(), 101.0), "reservation": {"month": "2026-12"}}
	shown = ts.for_client(state)
	assert "reservation" not in shown and "user" not in shown
	assert shown["status"] == "running" and shown["turn"] == "t1abc"


def test_stopping_a_queued_turn_ends_it_as_cancelled_with_words_for_the_person():
	stopped = ts.stopped_before_start(_queued(), 105.0)
	assert stopped["status"] == "cancelled"
	assert "Nothing was changed" in stopped["message_for_person"]
