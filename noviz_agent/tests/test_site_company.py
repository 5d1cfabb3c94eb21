"""Whose figures: one notion of "default company", ERPNext's, and counts like the desk's lists.

Needs a site with two companies whose defaults differ (ERPNext's demo company set as the site's
default, the setup wizard's company in Global Defaults), as a fresh demo site has.
"""

from __future__ import annotations

import frappe

from noviz_agent.edge import frappe_session
from noviz_agent.tests.utils import ADMIN, PeopleTestCase, ensure_user

PLAIN = "company.default@noviz.test"
RESTRICTED = "company.restricted@noviz.test"


class TestDefaultCompany(PeopleTestCase):
	def setUp(self):
		super().setUp()
		companies = frappe.get_list("Company", pluck="name", limit_page_length=0)
		self.assertGreaterEqual(len(companies), 2, "the site needs two companies")
		self.wizard = frappe.db.get_single_value("Global Defaults", "default_company")
		self.site_default = frappe.defaults.get_global_default("company")
		self.assertTrue(self.wizard and self.site_default, "the site needs both defaults set")
		self.assertNotEqual(
			self.wizard, self.site_default, "the site's default company must differ from Global Defaults'"
		)
		self.other = next(c for c in companies if c != self.site_default)
		ensure_user(PLAIN, "Accounts User")
		ensure_user(RESTRICTED, "Accounts User")
		if not frappe.db.exists("User Permission", {"user": RESTRICTED, "allow": "Company"}):
			frappe.get_doc(
				{
					"doctype": "User Permission",
					"user": RESTRICTED,
					"allow": "Company",
					"for_value": self.other,
				}
			).insert()

	def preset(self, user: str) -> str | None:
		"""The company ERPNext's own form presets on a new Sales Invoice for this person."""
		frappe.set_user(user)
		try:
			return frappe.new_doc("Sales Invoice").company
		finally:
			frappe.set_user(ADMIN)

	def test_the_default_company_is_the_one_erpnext_presets_on_a_new_form(self):
		for user in (PLAIN, RESTRICTED):
			with self.subTest(user=user):
				self.assertEqual(frappe_session.default_company(user), self.preset(user))
		self.assertEqual(frappe_session.default_company(PLAIN), self.site_default)
		self.assertEqual(frappe_session.default_company(RESTRICTED), self.other)

	def test_the_turn_the_pdf_and_the_evaluation_take_the_same_default(self):
		from noviz_agent.edge import frappe_evaluation

		self.assertEqual(frappe_session.person_for(PLAIN).company, frappe_session.default_company(PLAIN))
		facts = frappe_evaluation.facts_for({"one": PLAIN})
		self.assertEqual(facts.company, self.site_default)
