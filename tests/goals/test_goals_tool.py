"""goals.propose: a goal asked for in the chat is a proposal the person confirms, never created on the model's word."""

from __future__ import annotations

import datetime as dt

from noviz_agent.engine import gateway, turn
from noviz_agent.testing import ScriptedModel, call
from noviz_agent.testing.goal_world import COMPANY, World
from tests.goals.support import OWNER, Owner

REQUEST = "Remind me every Monday which items will run out within two weeks"
ARGS = {
	"goal": REQUEST,
	"watches": [{"kind": "stock_cover", "days": 14}],
	"schedule": {"every": "week", "weekday": "monday", "hour": 8},
	"may_do": "propose",
	"delivery": ["notification", "email"],
}


class Goals:
	"""The goal store as the site gives it to a session: creates as the person, says where."""

	def __init__(self):
		self.created: list[dict] = []

	def create(self, spec: dict) -> dict:
		self.created.append(spec)
		name = f"GOAL-{len(self.created)}"
		return {"name": name, "_link": f"/app/agent-goal/{name}"}


def session_for(permissions=None, goals=None):
	owner = Owner(World(history_months=1, days=5), permissions=permissions)
	return owner.session(dt.date(2026, 1, 5), goals=goals if goals is not None else Goals())


def test_a_chat_request_becomes_a_goal_only_when_the_person_confirms():
	session = session_for()
	model = ScriptedModel([call("goals.propose", ARGS, text="Here is the goal; confirm to switch it on.")])
	with model:
		outcome = turn.run_turn(session, model, REQUEST, today=dt.date(2026, 1, 5))
	assert "goals.propose" in model.offered(0)
	response = outcome.response
	assert response["type"] == "proposal" and response["proposal"]["doctype"] == "Agent Goal"
	shown = {f["label"]: f["value"] for f in response["proposal"]["fields"]}
	assert shown["Runs"] == "every Monday at 08:00" and shown["Company"] == COMPANY
	assert "Items that will run out (days 14, window 28)" in shown["Watches"]
	assert session.goals.created == []
	settled = turn.confirm_proposal(session, response["proposal"]["token"])
	assert settled.response["cards"][0]["value"] == "GOAL-1"
	[spec] = session.goals.created
	assert spec["owner"] == OWNER and spec["company"] == COMPANY
	assert spec["watches"] == [
		{
			"kind": "stock_cover",
			"params": {
				"days": 14,
			},
		}
	]
	assert spec["schedule"] == {"every": "week", "hour": 8, "weekday": "monday"}


def test_watches_are_resolved_from_the_words_when_the_model_names_none():
	session = session_for()
	result = gateway.call_tool(session, "goals.propose", {"goal": REQUEST, "schedule": {"every": "week"}})
	assert result.status == "proposal", result.error
	assert gateway.confirm(session, result.proposal["token"]).status == "ok"
	assert session.goals.created[0]["watches"] == [{"kind": "stock_cover", "params": {"days": 14}}]


def test_a_goal_that_cannot_be_kept_comes_back_to_the_model_with_what_to_fix():
	session = session_for()
	bad = {
		**ARGS,
		"schedule": {"every": "cron", "cron": "mondays"},
		"watches": [{"kind": "stock_cover", "days": 0}],
	}
	result = gateway.call_tool(session, "goals.propose", bad)
	assert result.status == "error"
	assert "not a cron expression" in result.error and "days must be at least 1" in result.error
	assert session.goals.created == []


def test_a_person_who_cannot_read_what_the_goal_watches_is_refused():
	session = session_for(permissions={"company": {"read"}, "sales_invoice": {"read"}})
	result = gateway.call_tool(session, "goals.propose", ARGS)
	assert result.status == "refused" and "Stock Ledger Entry" in result.error


def test_without_a_goal_store_the_tool_says_where_goals_are_made():
	owner = Owner(World(history_months=1, days=5))
	session = owner.session(dt.date(2026, 1, 5))
	result = gateway.call_tool(session, "goals.propose", ARGS)
	assert result.status == "error" and "desk chat" in result.error
