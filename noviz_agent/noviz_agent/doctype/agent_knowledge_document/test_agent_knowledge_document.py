"""Agent Knowledge Document: a desk-edited process document that the knowledge package accepts."""

import frappe

from noviz_agent.edge import frappe_knowledge
from noviz_agent.tests.utils import SiteTestCase


class TestAgentKnowledgeDocument(SiteTestCase):
	def tearDown(self):
		frappe.db.rollback()

	def test_slug_from_title_and_desk_documents_are_loaded(self):
		doc = frappe.get_doc(
			{
				"doctype": "Agent Knowledge Document",
				"title": "Our Credit Rules",
				"module": "selling",
				"doctypes": "Sales Order\nCustomer",
				"roles": "Sales Manager",
				"body": "## Limits\nOrders above the credit limit need a manager's approval.",
			}
		).insert()
		self.assertEqual(doc.slug, "our-credit-rules")
		documents = {d.key: d for d in frappe_knowledge.desk_documents()}
		loaded = documents["selling/our-credit-rules"]
		self.assertEqual(loaded.doctypes, ("Sales Order", "Customer"))
		self.assertEqual(loaded.roles, ("Sales Manager",))
		self.assertEqual(loaded.source, "desk")
