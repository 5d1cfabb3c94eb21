"""Site tests of procedures: the shipped example runs end to end through the turn API as a person.

Run with `bench --site SITE run-tests --app noviz_agent --module noviz_agent.tests.test_site_sops`.
The model-driven controller is driven by the scripted policy model (it decides from the
prompts it is sent); every test rolls back.
"""

from __future__ import annotations

import frappe
from frappe.utils import add_days, nowdate

from noviz_agent import api
from noviz_agent.testing.sop_policy import SopPolicyModel
from noviz_agent.tests.test_agent_api import AgentTestCase
from noviz_agent.tests.utils import SALES

CANCEL = "Cancel a customer order"


class TestProcedures(AgentTestCase):
	def setUp(self):
		super().setUp()
		self.policy = SopPolicyModel()

	def next_model(self, values):
		# Every turn is driven by the scripted policy model, which decides from the prompts it is sent.
		return self.policy

	def _open_order(self) -> str:
		"""A fresh submitted, undelivered Sales Order of an existing customer and item (rolled back after)."""
		customer = frappe.get_list("Customer", fields=["name"], limit_page_length=1)
		item = frappe.get_list(
			"Item",
			filters={"is_stock_item": 1, "disabled": 0, "has_variants": 0},
			fields=["name"],
			limit_page_length=1,
		)
		company = frappe.defaults.get_user_default("Company") or frappe.get_list("Company", pluck="name")[0]
		warehouse = frappe.get_list(
			"Warehouse", filters={"company": company, "is_group": 0}, pluck="name", limit_page_length=1
		)
		self.assertTrue(
			customer and item and warehouse, "the site needs a customer, a stock item and a warehouse"
		)
		order = frappe.get_doc(
			{
				"doctype": "Sales Order",
				"customer": customer[0].name,
				"company": company,
				"transaction_date": nowdate(),
				"delivery_date": add_days(nowdate(), 7),
				"items": [
					{
						"item_code": item[0].name,
						"qty": 2,
						"rate": 50,
						"delivery_date": add_days(nowdate(), 7),
						"warehouse": warehouse[0],
					}
				],
			}
		)
		order.insert()
		order.submit()
		return order.name

	def test_the_example_procedures_are_installed_and_valid(self):
		titles = set(frappe.get_list("Agent SOP", pluck="title"))
		self.assertTrue(
			{CANCEL, "Supplier invoice does not match its order", "Employee leave request"} <= titles, titles
		)
		for name in titles & {CANCEL}:
			frappe.get_doc("Agent SOP", name).validate()

	def test_a_procedure_with_bad_indentation_or_an_unknown_action_is_refused_with_line_numbers(self):
		doc = frappe.get_doc(
			{
				"doctype": "Agent SOP",
				"title": "Noviz test broken procedure",
				"applies_when": "never",
				"procedure": "Look up the sales order.\n   Cancel the sales order.\nFrobnicate the widget.\n",
			}
		)
		with self.assertRaises(frappe.ValidationError) as raised:
			doc.insert()
		message = str(raised.exception)
		self.assertIn("Line 2:", message)
		self.assertIn("Line 3:", message)

	def test_a_person_cancels_an_order_by_the_procedure_and_confirms_the_proposal(self):
		self.assertTrue(frappe.db.exists("Agent SOP", CANCEL), "the example procedure must be installed")
		order = self._open_order()
		frappe.set_user(SALES)

		first = api.send("A customer wants to cancel their order")
		conversation = first["conversation"]
		self.assertIn("sales order number", first["response"]["text"])
		second = api.send(f"It is {order}", conversation=conversation)
		self.assertIn("reason for cancelling", second["response"]["text"])
		third = api.send("They ordered the wrong size", conversation=conversation)
		self.assertEqual(third["response"]["type"], "proposal", third["response"])
		proposal = third["response"]["proposal"]
		self.assertEqual(proposal["tool"], "sales_order.cancel")
		self.assertEqual(frappe.db.get_value("Sales Order", order, "docstatus"), 1)  # nothing written yet

		done = api.confirm(proposal["token"], conversation=conversation)
		self.assertNotIn(done["response"]["type"], ("refusal", "error"), done["response"])
		self.assertEqual(frappe.db.get_value("Sales Order", order, "docstatus"), 2)
		self.assertIn("order is cancelled", done["response"]["text"].lower())

		runs = frappe.get_list(
			"Agent SOP Run", filters={"conversation": conversation}, fields=["name", "status", "state"]
		)
		# The run's memory shows in no desk list, the person's own included; they read it audited.
		self.assertFalse(runs[0].get("state"))
		self.assertEqual(len(runs), 1)
		# The conversation names its run: that is how its later turns know to read it.
		self.assertEqual(
			frappe.db.get_value("Agent Conversation", conversation, "procedure_run"), runs[0].name
		)
		self.assertEqual(runs[0].status, "completed")
		state = api.audit_record("Agent SOP Run", runs[0].name)["state"]
		actions = [e["action"] for e in state["memory"] if e["kind"] == "step"]
		self.assertEqual(
			actions, ["person.ask", "sales_order.get", "person.ask", "sales_order.cancel", "person.tell"]
		)
		self.assertGreater(self.policy.calls, 0)  # the model-driven controller decided the steps


class TestRunLookups(AgentTestCase):
	def _run_reads(self, work):
		"""The statements on Agent SOP Run that `work()` runs."""
		original, seen = frappe.db.sql, []

		def sql(query, *args, **kwargs):
			if "Agent SOP Run" in str(query):
				seen.append(str(query))
			return original(query, *args, **kwargs)

		frappe.db.sql = sql
		try:
			work()
		finally:
			frappe.db.sql = original
		return seen

	def test_a_conversation_that_never_started_a_procedure_is_not_searched_for_a_run(self):
		self.assertTrue(frappe.db.exists("Agent SOP", CANCEL), "the example procedure must be installed")
		frappe.set_user(SALES)
		first = api.send("hello")
		self.assertFalse(frappe.db.get_value("Agent Conversation", first["conversation"], "procedure_run"))
		reads = self._run_reads(lambda: api.send("and again", conversation=first["conversation"]))
		self.assertEqual(reads, [])

	def test_the_upgrade_links_a_run_stored_before_conversations_named_their_runs(self):
		from noviz_agent.patches.v1 import link_procedure_runs

		frappe.set_user(SALES)
		conversation = api.send("hello")["conversation"]
		frappe.set_user("Administrator")
		run = frappe.get_doc(
			{
				"doctype": "Agent SOP Run",
				"conversation": conversation,
				"sop": CANCEL,
				"person": SALES,
				"status": "running",
				"state": "{}",
			}
		).insert(ignore_permissions=True)
		self.assertFalse(frappe.db.get_value("Agent Conversation", conversation, "procedure_run"))
		link_procedure_runs.execute()
		self.assertEqual(frappe.db.get_value("Agent Conversation", conversation, "procedure_run"), run.name)
