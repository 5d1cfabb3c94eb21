"""Faults mid-turn on a live site: each turn ends with a clear message and exactly one log row."""

from __future__ import annotations

from unittest.mock import patch

import frappe
import pymysql

from noviz_agent.connectors.frappe_connector import FrappeConnector
from noviz_agent.testing import answer, call
from noviz_agent.tests.test_agent_api import AgentTestCase
from noviz_agent.tests.utils import ACCOUNTS


def _logs(user: str) -> int:
	return frappe.db.count("Agent Interaction Log", {"person": user})


class TestFaults(AgentTestCase):
	def test_a_database_error_inside_a_tool_is_told_to_the_model_and_the_turn_ends_logged(self):
		before = _logs(ACCOUNTS)
		lost = pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query")
		with patch.object(FrappeConnector, "list", side_effect=lost):
			reply = self.send_as(
				ACCOUNTS,
				"list sales invoices",
				[call("sales_invoice.list", {}), answer("The invoices could not be read just now.")],
			)
		frappe.set_user("Administrator")
		self.assertEqual(reply["response"]["text"], "The invoices could not be read just now.")
		self.assertEqual(_logs(ACCOUNTS), before + 1)
		log = frappe.get_doc("Agent Interaction Log", reply["log"])
		self.assertEqual([c.status for c in log.tool_calls], ["error"])
		self.assertIn("OperationalError", log.tool_calls[0].error)
		# What the model was told names the failure without a traceback.
		told = self.models[-1].requests[1][0][-1]["content"]
		self.assertIn("failed unexpectedly", told)
		self.assertNotIn("Traceback", told)

	def test_a_crash_outside_the_engine_still_leaves_one_log_row_and_a_readable_answer(self):
		before = _logs(ACCOUNTS)
		with patch("noviz_agent.api.run_turn", side_effect=RuntimeError("boom")):
			reply = self.send_as(ACCOUNTS, "hello", [answer("never")])
		self.plan.clear()
		frappe.set_user("Administrator")
		self.assertEqual(reply["response"]["type"], "error")
		self.assertIn("Something went wrong", reply["response"]["error"]["message"])
		self.assertNotIn("boom", reply["response"]["error"]["message"])
		self.assertEqual(_logs(ACCOUNTS), before + 1)
		self.assertIn(
			"RuntimeError: boom", frappe.db.get_value("Agent Interaction Log", reply["log"], "error")
		)
		conversation = frappe.get_doc("Agent Conversation", reply["conversation"])
		self.assertEqual(len(conversation.turns), 1)

	def test_a_loop_that_never_converges_stops_at_the_step_limit(self):
		frappe.db.set_single_value("Agent Settings", "max_steps", 2)
		frappe.clear_document_cache("Agent Settings", "Agent Settings")
		steps = [call("tools.search", {"query": f"thing {i}"}) for i in range(5)]
		reply = self.send_as(ACCOUNTS, "find something", steps)
		self.assertEqual(reply["response"]["type"], "error")
		self.assertIn("2 tool steps", reply["response"]["error"]["message"])
