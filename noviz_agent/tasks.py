"""Background jobs of the agent: a turn run off the web request, and an analysis too large for a turn.

A job runs in a worker with no request, so it becomes the person who asked first: the
session, the connector and every read are theirs, exactly as in the turn. The answer goes
to that person's browser only; progress events travel through the session's progress sender.
"""

from __future__ import annotations

import frappe

from noviz_agent.edge import frappe_session
from noviz_agent.engine import responses
from noviz_agent.engine.errors import ToolError

ANALYSIS_EVENT = "noviz_agent_analysis"


def run_analysis(
	user: str,
	key: str,
	params: dict | None = None,
	companies: list[str] | None = None,
	turn: str | None = None,
) -> dict:
	"""Compute analysis `key` for `companies` as `user` and publish the answer (or a clear error) to that person."""
	from noviz_agent.tools.analytics import background_build

	frappe.set_user(user)
	try:
		session = frappe_session.build_session(frappe_session.load_settings(), turn=turn)
		if session.progress is None:
			# Without a turn the job's progress (and its "ready" event) would otherwise go nowhere.
			session.progress = frappe_session.progress_sender(user, turn)
		answer = background_build(session, key, params or {}, companies)
	except ToolError as exc:
		# The system's own words (a refusal, a missing field): the person can act on them.
		return _publish(user, {"status": "error", "key": key, "turn": turn, "error": str(exc)})
	except Exception:
		frappe.log_error(title=f"Noviz agent: background analysis {key} failed")
		return _publish(
			user,
			{
				"status": "error",
				"key": key,
				"turn": turn,
				"error": "The analysis could not be finished; the error was logged for your administrator.",
			},
		)
	if isinstance(answer.get("chart"), dict):
		answer = {**answer, "chart": responses.safe_chart(answer["chart"])}
	return _publish(user, {**answer, "status": "ok", "key": key, "turn": turn})


def run_turn(turn: str, attempt: int = 1) -> dict | None:
	"""A background turn (see api.send): run as its owner, answer and progress published to them."""
	from noviz_agent import api
	from noviz_agent.edge import frappe_turns

	return frappe_turns.run(turn, attempt, api.answer_queued)


def _publish(user: str, payload: dict) -> dict:
	# The chat draws the built response, with the same renderer as a turn's answer.
	payload = {**payload, "response": responses.analysis_response(payload)}
	frappe.publish_realtime(ANALYSIS_EVENT, payload, user=user)
	return payload


def apply_retention() -> dict:
	"""The nightly clean-up of the agent's own old records (see edge/frappe_governance.py)."""
	from noviz_agent.edge.frappe_governance import apply_retention as run

	return run()
