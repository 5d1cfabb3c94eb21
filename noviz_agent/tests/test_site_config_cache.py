"""Site tests of the configuration every turn reads from Redis: a change is seen by the next turn."""

from __future__ import annotations

import frappe

from noviz_agent.edge import frappe_allowance, frappe_governance, frappe_sops, frappe_systems
from noviz_agent.tests.utils import ADMIN, SALES, PeopleTestCase, counting_queries

EXAMPLE = "Cancel a customer order"


class TestConfigurationCache(PeopleTestCase):
	def _queries(self, read) -> int:
		"""How many SQL statements `read()` runs."""
		with counting_queries() as counter:
			read()
		return counter["queries"]

	def test_budgets_are_read_once_and_a_new_budget_binds_at_once(self):
		before = frappe_governance.caps()
		self.assertFalse(self._queries(frappe_governance.caps), "a second read must come from the cache")
		budget = frappe.get_doc(
			{
				"doctype": "Agent Budget",
				"scope": "Person",
				"person": SALES,
				"monthly_tokens": 1234,
				"monthly_cost": 0,
			}
		).insert()
		after = frappe_governance.caps()
		self.assertEqual(len(after), len(before) + 1)
		self.assertIn((SALES, 1234), [(c.target, c.tokens) for c in after])
		budget.enabled = 0
		budget.save()
		self.assertNotIn((SALES, 1234), [(c.target, c.tokens) for c in frappe_governance.caps()])

	def test_procedures_are_kept_per_person_and_a_new_one_is_seen_at_once(self):
		self.assertTrue(frappe.db.exists("Agent SOP", EXAMPLE), "the example procedure must be installed")
		frappe.set_user(SALES)
		titles = {s.title for s in frappe_sops.load_specs()}
		self.assertIn(EXAMPLE, titles)
		self.assertFalse(self._queries(frappe_sops.load_specs), "a second read must come from the cache")
		frappe.set_user(ADMIN)
		example = frappe.get_doc("Agent SOP", EXAMPLE)
		frappe.get_doc(
			{
				"doctype": "Agent SOP",
				"title": "Noviz test cached procedure",
				"applies_when": "a test asks for it",
				"procedure": example.procedure,
			}
		).insert()
		frappe.set_user(SALES)
		self.assertIn("Noviz test cached procedure", {s.title for s in frappe_sops.load_specs()})
		frappe.set_user(ADMIN)
		example.enabled = 0
		example.save()
		frappe.set_user(SALES)
		self.assertNotIn(EXAMPLE, {s.title for s in frappe_sops.load_specs()})

	def test_saving_an_agent_system_or_a_company_drops_the_cached_configuration(self):
		frappe_systems.connections(SALES)
		for doctype in ("Agent System", "Company", "Agent Budget", "Agent SOP"):
			self.assertIn(
				"noviz_agent.edge.frappe_allowance.invalidate",
				(frappe.get_hooks("doc_events").get(doctype) or {}).get("on_update", []),
				doctype,
			)
		frappe_allowance.invalidate()
		before = frappe_allowance.generation()
		self.assertGreater(before, 0)
		company = frappe.get_doc("Company", frappe.defaults.get_global_default("company"))
		# Saving a company clears the whole cache (frappe.clear_cache); the generation outlives it.
		company.save()
		self.assertGreater(frappe_allowance.generation(), before)

	def test_a_value_cached_from_rolled_back_rows_is_dropped_with_them(self):
		frappe.get_doc(
			{"doctype": "Agent Budget", "scope": "Person", "person": SALES, "monthly_tokens": 4321}
		).insert()
		self.assertIn(4321, [c.tokens for c in frappe_governance.caps()])
		frappe.db.rollback()
		self.assertNotIn(4321, [c.tokens for c in frappe_governance.caps()])
