"""A report the site prepares in the background is queued for the person, never run inside the chat."""

from __future__ import annotations

import frappe

from noviz_agent.edge import frappe_session
from noviz_agent.engine.gateway import call_tool
from noviz_agent.tests.utils import ACCOUNTS, PeopleTestCase

REPORT = "General Ledger"


class TestPreparedReports(PeopleTestCase):
	def setUp(self):
		super().setUp()
		self.assertTrue(frappe.db.exists("Report", REPORT), "precondition: ERPNext's General Ledger report")
		frappe.db.set_value("Report", REPORT, "prepared_report", 1)
		frappe.clear_cache(doctype="Report")

	def session(self):
		frappe.set_user(ACCOUNTS)
		session = frappe_session.build_session(frappe_session.load_settings(), progress=False)
		session.offered = set(session.allowed)
		return session

	def filters(self):
		company = frappe.defaults.get_global_default("company")
		return {
			"company": company,
			"from_date": "2026-11-01",
			"to_date": "2026-11-30",
			"group_by": "Group by Voucher (Consolidated)",
		}

	def test_a_prepared_report_is_queued_for_the_person_and_said_so(self):
		before = frappe.db.count("Prepared Report", {"report_name": REPORT})
		result = call_tool(self.session(), "report.run", {"report": REPORT, "filters": self.filters()})
		self.assertEqual(result.status, "error", result.data)
		self.assertIn("prepared in the background", result.error)
		frappe.set_user("Administrator")
		queued = frappe.get_all(
			"Prepared Report",
			filters={"report_name": REPORT},
			fields=["name", "owner", "status"],
			order_by="creation desc",
		)
		self.assertEqual(len(queued), before + 1)
		self.assertEqual(queued[0].owner, ACCOUNTS)
		self.assertIn(queued[0].name, result.error)
		# Asking again while it is queued finds the same run instead of starting another.
		again = call_tool(self.session(), "report.run", {"report": REPORT, "filters": self.filters()})
		self.assertIn(queued[0].name, again.error)
		frappe.set_user("Administrator")
		self.assertEqual(frappe.db.count("Prepared Report", {"report_name": REPORT}), before + 1)

	def test_a_report_the_site_runs_directly_still_answers_at_once(self):
		frappe.db.set_value("Report", REPORT, "prepared_report", 0)
		frappe.clear_cache(doctype="Report")
		result = call_tool(self.session(), "report.run", {"report": REPORT, "filters": self.filters()})
		self.assertEqual(result.status, "ok", result.error)
