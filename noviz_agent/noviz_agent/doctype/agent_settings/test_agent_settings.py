"""Agent Settings: limits feed the session, with defaults for empty fields."""

import frappe
from frappe.tests.utils import FrappeTestCase

from noviz_agent.connectors import frappe_session


class TestAgentSettings(FrappeTestCase):
	def tearDown(self):
		frappe.db.rollback()

	def test_limits_come_from_the_settings(self):
		settings = frappe.get_single("Agent Settings")
		settings.update({"max_steps": 5, "page_size": 50, "proposal_ttl_minutes": 2, "history_turns": 0})
		settings.save(ignore_permissions=True)
		frappe.clear_document_cache("Agent Settings", "Agent Settings")
		limits = frappe_session.limits_from(frappe_session.load_settings())
		self.assertEqual((limits.max_steps, limits.page_size, limits.proposal_ttl_seconds), (5, 50, 120))
		self.assertEqual(limits.history_turns, 0)

	def test_relative_knowledge_folder_is_refused(self):
		settings = frappe.get_single("Agent Settings")
		settings.knowledge_folder = "docs/knowledge"
		with self.assertRaises(frappe.ValidationError):
			settings.save(ignore_permissions=True)
