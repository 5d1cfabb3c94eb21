"""Agent Settings: limits feed the session, with defaults for empty fields."""

import frappe

from noviz_agent.edge import frappe_session
from noviz_agent.tests.utils import SiteTestCase


class TestAgentSettings(SiteTestCase):
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

	def test_strict_mode_and_tool_call_format_reach_the_provider(self):
		settings = frappe.get_single("Agent Settings")
		settings.update(
			{
				"base_url": "http://127.0.0.1:8765/v1",
				"model": "stub-model",
				"strict_tools": 1,
				"tool_call_format": "native",
			}
		)
		settings.save(ignore_permissions=True)
		frappe.clear_document_cache("Agent Settings", "Agent Settings")
		provider = frappe_session.make_provider(frappe_session.load_settings(with_secrets=True))
		self.assertEqual(
			(provider.settings.strict_tools, provider.settings.tool_call_format), (True, "native")
		)

	def test_more_tools_than_openai_accepts_is_refused(self):
		settings = frappe.get_single("Agent Settings")
		settings.max_tools = 200
		with self.assertRaises(frappe.ValidationError):
			settings.save(ignore_permissions=True)

	def test_doctor_checks_the_tools_against_the_configured_providers_rules(self):
		from noviz_agent.edge import frappe_doctor

		for url, strict, dialect in (
			("https://api.openai.com/v1", 1, "openai"),
			("https://acme.openai.azure.com/openai/v1", 1, "azure"),
			("https://generativelanguage.googleapis.com/v1beta/openai/", 0, "gemini"),
		):
			check = frappe_doctor.check_tool_schemas({"base_url": url, "strict_tools": strict})
			self.assertEqual(check.status, "ok", check.message)
			self.assertIn(f"fit the {dialect} function-calling rules", check.message)
