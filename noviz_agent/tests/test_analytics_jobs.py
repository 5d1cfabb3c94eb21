"""Analytics background jobs and the dashboard PDF on a live site, as the person who asked.

No worker runs on the test bench, so the job body `tasks.run_analysis` is called directly;
`frappe.publish_realtime` and `frappe.enqueue` are patched only to capture what would be
sent. Run with `bench --site S run-tests --app noviz_agent --module noviz_agent.tests.test_analytics_jobs`.
"""

from __future__ import annotations

from unittest.mock import patch

import frappe

from noviz_agent import api, tasks
from noviz_agent.edge import frappe_session
from noviz_agent.tests.utils import ACCOUNTS, SALES, PeopleTestCase
from noviz_agent.tools import analytics

TREND = "sales.monthly_trend"


def session_for(user: str, worker: bool = True):
	"""The person's session; `worker` says whether a long-queue worker is taken to be running."""
	frappe.set_user(user)
	with patch.object(frappe_session, "long_queue_served", return_value=worker):
		return frappe_session.build_session(frappe_session.load_settings(), turn="t-1")


def published(mock, event: str) -> list[tuple[dict, str]]:
	"""(payload, user) of each captured publish_realtime call for `event`."""
	return [(c.args[1], c.kwargs.get("user")) for c in mock.call_args_list if c.args[0] == event]


class AnalyticsJobsCase(PeopleTestCase):
	def test_the_job_publishes_the_answer_to_the_person_who_asked(self):
		with patch("frappe.publish_realtime") as publish:
			tasks.run_analysis(ACCOUNTS, TREND, {}, turn="t-7")
		answers = published(publish, tasks.ANALYSIS_EVENT)
		self.assertEqual(len(answers), 1)
		answer, user = answers[0]
		self.assertEqual(user, ACCOUNTS)
		self.assertEqual(answer["status"], "ok", answer)
		self.assertEqual(answer["turn"], "t-7")
		self.assertTrue(answer["kpis"])
		self.assertTrue(answer["result_id"])
		ready = [
			p for p, u in published(publish, frappe_session.PROGRESS_EVENT) if p["event"] == "analytics_ready"
		]
		self.assertEqual(len(ready), 1)
		self.assertEqual(ready[0]["result_id"], answer["result_id"])
		# Every event of the job went to the person and no one else.
		self.assertEqual({c.kwargs.get("user") for c in publish.call_args_list}, {ACCOUNTS})
		# The result is kept in the person's store: their next turn can chart or export it.
		self.assertEqual(session_for(ACCOUNTS).results.get(answer["result_id"])["user"], ACCOUNTS)

	def test_a_person_without_invoice_rights_gets_the_refusal(self):
		with patch("frappe.publish_realtime") as publish:
			tasks.run_analysis(SALES, TREND, {}, turn="t-8")
		answers = published(publish, tasks.ANALYSIS_EVENT)
		self.assertEqual(len(answers), 1)
		answer, user = answers[0]
		self.assertEqual(user, SALES)
		self.assertEqual(answer["status"], "error")
		self.assertIn("Sales Invoice", answer["error"])
		self.assertNotIn("kpis", answer)

	def test_a_large_build_is_enqueued_as_the_person_on_the_long_queue(self):
		session = session_for(ACCOUNTS)
		self.assertTrue(callable(session.enqueue_analysis))
		rows = frappe.db.count("Sales Invoice", {"docstatus": 1})
		self.assertGreater(rows, 0)
		with patch.object(analytics, "IN_TURN_ROWS", 0), patch("frappe.enqueue") as enqueue:
			answer = analytics.build_tool(session, TREND, {"horizon": 2})
		self.assertEqual(answer["status"], "running")
		self.assertNotIn("kpis", answer)
		enqueue.assert_called_once()
		call = enqueue.call_args
		self.assertEqual(call.args[0], "noviz_agent.tasks.run_analysis")
		self.assertEqual(call.kwargs["queue"], "long")
		self.assertEqual(call.kwargs["user"], ACCOUNTS)
		self.assertEqual(call.kwargs["key"], TREND)
		self.assertEqual(call.kwargs["params"], {"horizon": 2})
		# The job reads the same company the turn would have: the person's default.
		self.assertEqual(call.kwargs["companies"], [session.person.company])
		self.assertEqual(answer["company"], session.person.company)
		self.assertEqual(call.kwargs["turn"], "t-1")
		self.assertTrue(call.kwargs["deduplicate"])
		self.assertEqual(answer["job"], call.kwargs["job_id"])
		# The same question from the same person maps to the same job; another person's does not.
		self.assertEqual(
			call.kwargs["job_id"],
			frappe_session.analysis_job_id(ACCOUNTS, TREND, {"horizon": 2}, [session.person.company]),
		)
		self.assertNotEqual(
			call.kwargs["job_id"],
			frappe_session.analysis_job_id(SALES, TREND, {"horizon": 2}, [session.person.company]),
		)
		# Below the threshold the same build is computed in the turn.
		with patch("frappe.enqueue") as enqueue:
			answer = analytics.build_tool(session, TREND, {})
		enqueue.assert_not_called()
		self.assertTrue(answer["kpis"])

	def test_without_a_long_queue_worker_a_large_build_runs_in_the_turn(self):
		session = session_for(ACCOUNTS, worker=False)
		self.assertIsNone(session.enqueue_analysis)
		with patch.object(analytics, "IN_TURN_ROWS", 0), patch("frappe.enqueue") as enqueue:
			answer = analytics.build_tool(session, TREND, {})
		enqueue.assert_not_called()
		self.assertTrue(answer["kpis"])

	def test_the_worker_check_reads_the_real_queue(self):
		self.assertIsInstance(frappe_session.long_queue_served(), bool)

	def test_the_pdf_is_the_persons_own(self):
		with patch("frappe.publish_realtime") as publish:
			tasks.run_analysis(ACCOUNTS, TREND, {})
		result_id = published(publish, tasks.ANALYSIS_EVENT)[0][0]["result_id"]
		frappe.set_user(ACCOUNTS)
		frappe.local.response = frappe._dict()
		api.dashboard_pdf(result_id)
		self.assertEqual(frappe.local.response.type, "download")
		self.assertTrue(frappe.local.response.filecontent.startswith(b"%PDF"))
		self.assertTrue(frappe.local.response.filename.endswith(".pdf"))
		frappe.set_user(SALES)
		frappe.local.response = frappe._dict()
		with self.assertRaises(frappe.DoesNotExistError):
			api.dashboard_pdf(result_id)
		self.assertIsNone(frappe.local.response.get("filecontent"))
