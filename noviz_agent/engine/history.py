"""Bounded conversation history: a fixed number of earlier turns, older ones dropped, never summarised.

Only the question and the agent's answer text are carried forward; tool results are not
re-sent (they may be large, and the person's permissions may have changed since).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Window:
	"""The earlier turns sent with this request and how many older ones were left out."""

	turns: tuple[dict, ...]
	dropped: int

	def to_messages(self) -> list[dict]:
		messages: list[dict] = []
		if self.dropped:
			# Said openly so the model never assumes it remembers more than it was shown.
			messages.append(
				{
					"role": "system",
					"content": f"{self.dropped} earlier turn(s) of this conversation are not shown.",
				}
			)
		for turn in self.turns:
			question = (turn.get("question") or "").strip()
			answer = (turn.get("answer") or "").strip()
			if question:
				messages.append({"role": "user", "content": question})
			if answer:
				messages.append({"role": "assistant", "content": answer})
		return messages


def window(turns: list[dict] | tuple[dict, ...], keep: int) -> Window:
	"""The last `keep` turns, oldest first."""
	turns = tuple(turns or ())
	if keep <= 0:
		return Window((), len(turns))
	kept = turns[-keep:]
	return Window(kept, len(turns) - len(kept))


def answer_text(response: dict) -> str:
	"""What the agent said in a turn, as text to carry into later turns."""
	text = (response.get("text") or "").strip()
	for block in ("refusal", "error"):
		message = (response.get(block) or {}).get("message")
		if message and message not in text:
			text = f"{text}\n{message}".strip()
	proposal = response.get("proposal")
	if proposal:
		text = f"{text}\n(Proposed: {proposal.get('summary') or proposal.get('title') or proposal.get('tool')})".strip()
	return text
