"""Whole turns through the engine against the in-memory connector, with a scripted model."""

from __future__ import annotations

from datetime import date

import pytest

from noviz_agent.engine import turn
from noviz_agent.testing.model import ScriptedModel, answer, call
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

CUSTOMERS = [
	{"name": "Acme Ltd", "customer_name": "Acme Ltd", "customer_group": "Commercial", "territory": "North"},
	{"name": "Birch Co", "customer_name": "Birch Co", "customer_group": "Commercial", "territory": "South"},
]
ORDERS = [
	{
		"name": f"SO-{i:04d}",
		"customer": "Acme Ltd" if i % 2 else "Birch Co",
		"date": f"2026-0{1 + i % 9}-10",
		"total": 100.0 * i,
		"status": "To Deliver and Bill",
		"docstatus": 1,
	}
	for i in range(1, 8)
]


def _connector(user="ann@example.com", perms=None):
	return MemoryConnector(
		user,
		data={"customer": CUSTOMERS, "sales_order": ORDERS},
		permissions=perms or {"customer": {"read", "create"}, "sales_order": {"read"}},
		roles={"Sales User"},
	)


def test_a_question_two_tool_calls_and_a_table_answer():
	connector = _connector()
	session = make_session(connector)
	model = ScriptedModel(
		[
			call("customer.list", {"filters": [{"field": "territory", "op": "=", "value": "North"}]}),
			call("sales_order.list", {"filters": [{"field": "customer", "op": "=", "value": "Acme Ltd"}]}),
			answer("Acme Ltd (North) has 4 sales orders."),
		]
	)
	with model:
		outcome = turn.run_turn(
			session,
			model,
			"Show the sales orders of our customers in the North territory",
			today=date(2026, 11, 30),
		)
	response = outcome.response
	assert response["type"] == "table"
	assert {r["name"] for r in response["table"]["rows"]} == {"SO-0001", "SO-0003", "SO-0005", "SO-0007"}
	assert all(r["_link"].startswith("/app/sales-order/") for r in response["table"]["rows"])
	assert response["flags"] == []
	# The model saw only offered tools, and the system prompt came first.
	first_messages, first_tools = model.requests[0]
	assert first_messages[0]["role"] == "system" and first_messages[-1]["role"] == "user"
	offered = model.offered(0)
	assert "customer.list" in offered and "sales_order.list" in offered and "tools.search" in offered
	assert len(offered) < 40
	log = outcome.log
	assert [c["name"] for c in log["tools_called"]] == ["customer.list", "sales_order.list"]
	assert all(c["status"] == "ok" for c in log["tools_called"])
	assert "selling" in log["modules"] and log["response_type"] == "table" and log["error"] is None
	assert outcome.history_entry["answer"] == "Acme Ltd (North) has 4 sales orders."


@pytest.mark.attack("writes")
def test_a_write_turn_proposes_then_confirms_once_and_refuses_replay():
	connector = _connector()
	session = make_session(connector)
	model = ScriptedModel(
		[call("customer.create", {"values": {"customer_name": "Cedar GmbH", "customer_group": "Commercial"}})]
	)
	with model:
		outcome = turn.run_turn(session, model, "Create a customer named Cedar GmbH")
	response = outcome.response
	assert response["type"] == "proposal"
	proposal = response["proposal"]
	assert {f["key"]: f["value"] for f in proposal["fields"]}["customer_name"] == "Cedar GmbH"
	assert not [r for r in connector.data["customer"] if r["customer_name"] == "Cedar GmbH"]

	# The next request of the same person (a new session object, the same stores) confirms it.
	confirmed = turn.confirm_proposal(session, proposal["token"])
	assert confirmed.response["type"] == "cards", confirmed.response
	assert [r["customer_name"] for r in connector.data["customer"]].count("Cedar GmbH") == 1

	replay = turn.confirm_proposal(session, proposal["token"])
	assert replay.response["type"] == "refusal"
	assert [r["customer_name"] for r in connector.data["customer"]].count("Cedar GmbH") == 1


@pytest.mark.attack("writes")
def test_someone_else_cannot_confirm_my_proposal():
	mine = make_session(_connector())
	model = ScriptedModel([call("customer.create", {"values": {"customer_name": "Dune"}})])
	token = turn.run_turn(mine, model, "create customer Dune").response["proposal"]["token"]
	theirs = make_session(_connector("bob@example.com"))
	theirs.secret, theirs.proposals = mine.secret, mine.proposals
	assert turn.confirm_proposal(theirs, token).response["type"] == "refusal"
	assert turn.confirm_proposal(mine, token).response["type"] == "cards"


@pytest.mark.attack("permissions")
def test_a_person_without_read_permission_is_refused_verbatim():
	connector = _connector(perms={"customer": {"read"}})
	session = make_session(connector, tools=None)
	# Offer the tool anyway (as if selection were wrong): the connector still refuses.
	session.allowed = session.allowed | {"sales_order.list"}
	model = ScriptedModel([call("sales_order.list", {}), answer("You cannot see sales orders.")])
	with model:
		outcome = turn.run_turn(session, model, "list sales orders")
	assert outcome.response["type"] == "refusal"
	assert outcome.response["refusal"]["message"]
	assert outcome.log["tools_called"][0]["status"] == "refused"


def test_empty_and_oversize_messages_are_refused_before_the_model():
	session = make_session(_connector())
	model = ScriptedModel([])
	assert turn.run_turn(session, model, "   ").response["type"] == "error"
	too_long = turn.run_turn(session, model, "x" * (turn.MAX_MESSAGE_CHARS + 1)).response
	assert "limit is 4,000" in too_long["error"]["message"]
	assert model.requests == []


def test_history_is_bounded_and_rule_blocks_are_not_resent():
	session = make_session(_connector(), history_turns=2)
	earlier = [{"question": f"old question {i}", "answer": f"old answer {i}"} for i in range(5)]
	model = ScriptedModel([answer("ok"), answer("ok again")])
	first = turn.run_turn(session, model, "list customers", history_turns=earlier)
	sent = [m["content"] for m in model.requests[0][0]]
	assert "old question 4" in sent and "old question 2" not in sent
	assert any("3 earlier turn(s)" in m for m in sent)
	second_session = make_session(_connector())
	turn.run_turn(second_session, model, "list customers", rules_sent=first.rules_sent)
	assert len(model.requests[1][0][0]["content"]) <= len(model.requests[0][0][0]["content"])


def test_the_message_limit_follows_the_setting():
	session = make_session(_connector())
	model = ScriptedModel([answer("ok")])
	with model:
		response = turn.run_turn(session, model, "y" * 5000, max_chars=6000).response
	assert response["type"] == "text"
	assert (
		"limit is 100" in turn.run_turn(session, model, "y" * 101, max_chars=100).response["error"]["message"]
	)


def test_a_model_picker_narrows_modules_when_given():
	session = make_session(_connector())
	asked = []

	def picker(question, modules):
		asked.append((question, list(modules)))
		return ["selling"]

	model = ScriptedModel([answer("ok")])
	outcome = turn.run_turn(session, model, "how are things going overall", model_picker=picker)
	assert asked and asked[0][0] == "how are things going overall"
	assert outcome.log["modules"] == ["selling"]
