"""Agent Role Policy: rows are checked when saved, and become the engine's policy rows."""

import frappe

from noviz_agent.edge import frappe_allowance
from noviz_agent.tests.utils import SiteTestCase


class TestAgentRolePolicy(SiteTestCase):
	def tearDown(self):
		frappe.db.rollback()

	def test_a_rule_without_module_or_tool_is_refused(self):
		doc = frappe.get_doc(
			{"doctype": "Agent Role Policy", "role": "Sales User", "rules": [{"effect": "deny"}]}
		)
		with self.assertRaises(frappe.ValidationError):
			doc.insert()

	def test_enabled_rules_become_policy_rows(self):
		frappe.get_doc(
			{
				"doctype": "Agent Role Policy",
				"role": "Sales User",
				"rules": [
					{"effect": "deny", "module": "accounting"},
					{"effect": "allow", "tool": "sales_order.*"},
				],
			}
		).insert()
		rows = [r for r in frappe_allowance.policy_rows() if r["role"] == "Sales User"]
		self.assertEqual(
			[(r["effect"], r["module"], r["tool"]) for r in rows],
			[("deny", "accounting", None), ("allow", None, "sales_order.*")],
		)
		frappe.db.set_value("Agent Role Policy", "Sales User", "enabled", 0)
		self.assertFalse([r for r in frappe_allowance.policy_rows() if r["role"] == "Sales User"])
