"""Stopping a turn between steps, and exports that hold every row while the model saw one page."""

from __future__ import annotations

import json
from datetime import date

import pytest

from noviz_agent import kept_results
from noviz_agent.engine import turn
from noviz_agent.engine.errors import NotFound, ToolError
from noviz_agent.engine.session import MemoryStore
from noviz_agent.testing.model import ScriptedModel, answer, call
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

INVOICES = [
	{
		"name": f"SINV-{i:04d}",
		"customer": f"Customer {i % 7}",
		"date": f"2026-{1 + i % 12:02d}-{1 + i % 27:02d}",
		"total": float(100 + i),
		"outstanding": float(i % 5) * 10,
		"status": "Unpaid",
		"docstatus": 1,
	}
	for i in range(1, 58)
]


def _connector(user="ann@example.com"):
	return MemoryConnector(
		user,
		data={"sales_invoice": INVOICES},
		permissions={"sales_invoice": {"read"}},
		roles={"Accounts User"},
	)


def test_stop_requested_ends_the_turn_before_the_next_model_call():
	session = make_session(_connector())
	stop = {"asked": False}
	session.cancelled = lambda: stop["asked"]

	def after_first(messages, tools):
		stop["asked"] = True  # the person presses stop while the first tool call runs
		return call("sales_invoice.list", {})

	model = ScriptedModel([after_first, answer("never sent")])
	outcome = turn.run_turn(session, model, "Show my sales invoices", today=date(2026, 11, 30))
	assert len(model.requests) == 1, "no model call may start after the stop"
	assert outcome.response["type"] == "error"
	assert "Stopped at your request" in outcome.response["error"]["message"]
	assert outcome.log["error"].startswith("TurnCancelled")


def test_a_turn_nobody_stops_runs_to_its_answer():
	session = make_session(_connector())
	session.cancelled = lambda: False
	model = ScriptedModel([call("sales_invoice.list", {}), answer("Here are your invoices.")])
	with model:
		outcome = turn.run_turn(session, model, "Show my sales invoices", today=date(2026, 11, 30))
	assert outcome.response["type"] == "table" and outcome.log["error"] is None


def _shared_sessions():
	store = MemoryStore()
	ann = make_session(_connector("ann@example.com"), page_size=20)
	bob = make_session(_connector("bob@example.com"), page_size=20)
	ann.results = bob.results = store  # one store, as on a site: ownership must still hold
	return ann, bob


def test_export_holds_every_row_while_the_model_saw_only_a_page():
	ann, _bob = _shared_sessions()
	model = ScriptedModel([call("sales_invoice.list", {"order_by": "name asc"}), answer("57 invoices.")])
	with model:
		outcome = turn.run_turn(ann, model, "Show my sales invoices", today=date(2026, 11, 30))
	seen = json.loads(model.requests[1][0][-1]["content"])
	assert len(seen["rows"]) == 20 and seen["total"] == len(INVOICES)
	exported = kept_results.all_rows(ann, seen["result_id"])
	assert exported["total"] == len(INVOICES)
	assert [r["name"] for r in exported["rows"]] == sorted(r["name"] for r in INVOICES)
	assert outcome.response["table"]["page"]["result_id"] == seen["result_id"]


def test_export_of_someone_elses_result_finds_nothing():
	ann, bob = _shared_sessions()
	model = ScriptedModel([call("sales_invoice.list", {}), answer("57 invoices.")])
	with model:
		turn.run_turn(ann, model, "Show my sales invoices", today=date(2026, 11, 30))
	result_id = json.loads(model.requests[1][0][-1]["content"])["result_id"]
	with pytest.raises(NotFound):
		kept_results.all_rows(bob, result_id)


def test_export_of_a_kept_report_returns_its_rows_and_refuses_an_oversized_one():
	ann, _bob = _shared_sessions()
	rows = [{"account": f"A{i}", "balance": i} for i in range(30)]
	ann.results.put(
		"r_report1", {"kind": "rows", "user": ann.user, "report": "Trial Balance", "rows": rows}, 60
	)
	table = kept_results.all_rows(ann, "r_report1")
	assert table["rows"] == rows and table["title"] == "Trial Balance"
	with pytest.raises(ToolError, match="at most 10"):
		kept_results.all_rows(ann, "r_report1", max_rows=10)


def test_export_stops_when_the_person_lost_the_list_tool():
	ann, _bob = _shared_sessions()
	ann.results.put("r_query1", {"kind": "query", "user": ann.user, "entity": "sales_invoice"}, 60)
	ann.allowed = frozenset()
	with pytest.raises(NotFound):
		kept_results.all_rows(ann, "r_query1")
