"""Bounded history: fixed number of turns, older dropped and said so, never summarised."""

from __future__ import annotations

from noviz_agent.engine import history


def _turns(n):
	return [{"question": f"q{i}", "answer": f"a{i}"} for i in range(n)]


def test_keeps_only_the_last_turns_in_order():
	w = history.window(_turns(10), 3)
	assert [t["question"] for t in w.turns] == ["q7", "q8", "q9"]
	assert w.dropped == 7


def test_dropped_turns_are_announced_not_summarised():
	messages = history.window(_turns(5), 2).to_messages()
	assert messages[0] == {
		"role": "system",
		"content": "3 earlier turn(s) of this conversation are not shown.",
	}
	contents = [m["content"] for m in messages[1:]]
	assert contents == ["q3", "a3", "q4", "a4"]
	assert not any("q0" in m["content"] or "a1" in m["content"] for m in messages)


def test_short_history_is_sent_whole_without_notice():
	messages = history.window(_turns(2), 6).to_messages()
	assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]


def test_zero_keep_sends_nothing():
	w = history.window(_turns(3), 0)
	assert w.turns == () and w.dropped == 3


def test_answer_text_includes_refusals_and_proposals():
	text = history.answer_text(
		{"text": "", "refusal": {"message": "Not permitted"}, "proposal": {"summary": "Create customer Zed"}}
	)
	assert "Not permitted" in text and "Create customer Zed" in text
