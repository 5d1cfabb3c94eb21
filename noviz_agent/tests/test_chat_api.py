"""Site tests of the chat's own endpoints: proposals edited in place, conversations, export.

Run with `bench --site SITE run-tests --app noviz_agent --module noviz_agent.tests.test_chat_api`.
"""

from __future__ import annotations

import csv
import io

import frappe
from openpyxl import load_workbook

from noviz_agent import api
from noviz_agent.testing import answer, call
from noviz_agent.tests.test_agent_api import AgentTestCase
from noviz_agent.tests.utils import ACCOUNTS, SALES


class ChatTestCase(AgentTestCase):
	"""No answer cache: a cached proposal would carry a token bound to another conversation."""

	def setUp(self):
		super().setUp()
		frappe.db.set_single_value("Agent Settings", "cache_seconds", 0)
		frappe.clear_document_cache("Agent Settings", "Agent Settings")


class TestEditProposal(ChatTestCase):
	def test_an_edited_proposal_gets_a_new_token_and_the_old_one_dies(self):
		reply = self.propose("Noviz Edit Customer A")
		old = reply["response"]["proposal"]["token"]
		label = {f["key"]: f["label"] for f in reply["response"]["proposal"]["fields"]}
		self.assertEqual(label["customer_name"], "Customer Name")
		edited = api.edit_proposal(old, {"customer_name": "Noviz Edit Customer B"}, reply["conversation"])
		new = edited["proposal"]["token"]
		self.assertNotEqual(new, old)
		self.assertEqual(
			{f["key"]: f["value"] for f in edited["proposal"]["fields"]}["customer_name"],
			"Noviz Edit Customer B",
		)
		self.assertEqual(api.confirm(old, conversation=reply["conversation"])["response"]["type"], "refusal")
		done = api.confirm(new, conversation=reply["conversation"])
		self.assertNotIn(done["response"]["type"], ("refusal", "error"), done["response"])
		self.assertTrue(frappe.db.exists("Customer", {"customer_name": "Noviz Edit Customer B"}))
		self.assertFalse(frappe.db.exists("Customer", {"customer_name": "Noviz Edit Customer A"}))
		# Reopened, the conversation shows the edited proposal (settled), not the first one.
		turns = api.conversation(reply["conversation"])["turns"]
		shown = [t["response"]["proposal"] for t in turns if (t["response"] or {}).get("proposal")]
		self.assertEqual(shown[0]["fields"][0]["value"], "Noviz Edit Customer B")

	def test_edited_values_the_gateway_refuses_leave_the_old_proposal_open(self):
		reply = self.propose("Noviz Edit Customer C")
		old = reply["response"]["proposal"]["token"]
		with self.assertRaises(frappe.ValidationError):
			api.edit_proposal(old, {"no_such_field": "x"}, reply["conversation"])
		done = api.confirm(old, conversation=reply["conversation"])
		self.assertNotIn(done["response"]["type"], ("refusal", "error"), done["response"])

	def test_another_person_cannot_edit_a_proposal(self):
		reply = self.propose("Noviz Edit Customer D")
		frappe.set_user(ACCOUNTS)
		with self.assertRaises(frappe.PermissionError):
			api.edit_proposal(
				reply["response"]["proposal"]["token"], {"customer_name": "X"}, reply["conversation"]
			)
		with self.assertRaises(frappe.ValidationError):
			api.edit_proposal(reply["response"]["proposal"]["token"], {"customer_name": "X"})


class TestConversations(ChatTestCase):
	def test_search_rename_pin_and_delete_keep_the_log(self):
		first = self.send_as(SALES, "how many zebra invoices", [answer("none")])
		second = self.send_as(SALES, "hello there", [answer("hi")])
		found = [c["name"] for c in api.search_conversations("zebra")]
		self.assertEqual(found, [first["conversation"]])
		api.rename_conversation(second["conversation"], "  Greetings   file ")
		self.assertEqual(
			frappe.db.get_value("Agent Conversation", second["conversation"], "title"), "Greetings file"
		)
		with self.assertRaises(frappe.ValidationError):
			api.rename_conversation(second["conversation"], "   ")
		api.pin_conversation(first["conversation"], 1)
		listed = api.search_conversations("")
		self.assertEqual(listed[0]["name"], first["conversation"])
		self.assertTrue(listed[0]["pinned"])
		api.delete_conversation(first["conversation"])
		self.assertFalse(frappe.db.exists("Agent Conversation", first["conversation"]))
		# The audit trail stays, unlinked.
		self.assertTrue(frappe.db.exists("Agent Interaction Log", first["log"]))
		self.assertIsNone(frappe.db.get_value("Agent Interaction Log", first["log"], "conversation"))
		self.assertNotIn(first["conversation"], [c["name"] for c in api.search_conversations("")])

	def test_another_persons_conversation_cannot_be_renamed_pinned_or_deleted(self):
		mine = self.send_as(SALES, "hello", [answer("hi")])
		frappe.set_user(ACCOUNTS)
		for action in (
			lambda: api.rename_conversation(mine["conversation"], "mine now"),
			lambda: api.pin_conversation(mine["conversation"], 1),
			lambda: api.delete_conversation(mine["conversation"]),
		):
			with self.assertRaises(frappe.PermissionError):
				action()
		self.assertNotIn(mine["conversation"], [c["name"] for c in api.search_conversations("hello")])
		self.assertTrue(frappe.db.exists("Agent Conversation", mine["conversation"]))


class TestExport(ChatTestCase):
	def listed(self):
		self.assertGreater(frappe.db.count("Customer"), 20, "the site needs more than a page of customers")
		steps = [call("customer.list", {"fields": ["name", "customer_name"]}), answer("Here they are.")]
		reply = self.send_as(SALES, "list customers", steps)
		result_id = reply["response"]["table"]["page"]["result_id"]
		self.assertTrue(result_id, reply["response"]["table"]["page"])
		return result_id

	def test_csv_and_xlsx_hold_every_row_the_person_may_read(self):
		result_id = self.listed()
		readable = len(frappe.get_list("Customer", limit_page_length=0))
		api.export_result(result_id, "csv")
		rows = list(csv.reader(io.StringIO(frappe.local.response.filecontent.decode("utf-8-sig"))))
		self.assertEqual(rows[0][:2], ["ID", "Customer Name"])
		self.assertEqual(len(rows) - 1, readable)
		api.export_result(result_id, "xlsx")
		sheet = load_workbook(io.BytesIO(frappe.local.response.filecontent)).active
		self.assertEqual(sheet.max_row - 1, readable)

	def test_someone_elses_result_exports_nothing(self):
		result_id = self.listed()
		frappe.set_user(ACCOUNTS)
		with self.assertRaises(frappe.DoesNotExistError):
			api.export_result(result_id, "csv")
		frappe.set_user(SALES)
		with self.assertRaises(frappe.ValidationError):
			api.export_result(result_id, "pdf")


class TestReportMeta(ChatTestCase):
	def test_the_pdf_prints_the_company_currency_and_person_with_frappes_formatting(self):
		company = frappe.defaults.get_user_default("Company", SALES) or frappe.defaults.get_global_default(
			"company"
		)
		self.assertTrue(company, "the site needs a default company")
		meta = api._report_meta(SALES)
		self.assertEqual(meta["company"], company)
		self.assertEqual(meta["currency"], frappe.get_cached_value("Company", company, "default_currency"))
		self.assertEqual(meta["generated_by"], frappe.utils.get_fullname(SALES))
		fmt = meta["format"]
		self.assertEqual(
			fmt(1767095.4, "currency"), frappe.utils.fmt_money(1767095.4, currency=meta["currency"])
		)
		self.assertEqual(fmt(58.0, "count"), "58")
		self.assertTrue(fmt(24.5, "%").endswith("%"))
