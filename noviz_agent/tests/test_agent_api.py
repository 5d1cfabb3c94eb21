"""Site tests of the turn API: real DocTypes, real permissions, a scripted model instead of a provider.

Run with `bench --site SITE run-tests --app noviz_agent`. Every test rolls back.
"""

from __future__ import annotations

from unittest import mock

import frappe

from noviz_agent import api
from noviz_agent.edge import frappe_allowance, frappe_session
from noviz_agent.edge.frappe_versions import form_path
from noviz_agent.engine.errors import ProviderError
from noviz_agent.testing import ScriptedModel, answer, call
from noviz_agent.tests.utils import ACCOUNTS, SALES, PeopleTestCase

PASSWORD = "Noviz-Test-2026"


class AgentTestCase(PeopleTestCase):
	"""Agent Settings pointing nowhere real, a scripted model per test, Administrator restored after."""

	def setUp(self):
		super().setUp()
		settings = frappe.get_single("Agent Settings")
		settings.update(
			{
				"base_url": "http://127.0.0.1:9/v1",
				"model": "scripted",
				"enable_writes": 1,
				"rate_limit_per_hour": 1000,
				"use_knowledge": 0,
			}
		)
		settings.save(ignore_permissions=True)
		frappe.clear_document_cache("Agent Settings", "Agent Settings")
		self.models: list[ScriptedModel] = []
		frappe_session.provider_factory = self.next_model
		self.plan: list = []

	def tearDown(self):
		frappe_session.provider_factory = None
		super().tearDown()

	def next_model(self, values):
		model = ScriptedModel(self.plan.pop(0) if self.plan else [answer("ok")])
		self.models.append(model)
		return model

	def propose(self, name):
		"""A proposal to create customer `name`, made by the Sales User through the turn API."""
		steps = [
			call("customer.create", {"values": {"customer_name": name}}),
			answer("Confirm to create it."),
		]
		reply = self.send_as(SALES, f"create a customer named {name}", steps)
		self.assertEqual(reply["response"]["type"], "proposal", reply["response"])
		return reply

	def send_as(self, user, message, steps, conversation=None):
		self.plan.append(steps)
		frappe.set_user(user)
		return api.send(message, conversation=conversation)


class TestInstall(AgentTestCase):
	def test_doctypes_page_and_report_are_installed(self):
		for doctype in (
			"Agent Settings",
			"Agent Conversation",
			"Agent Conversation Turn",
			"Agent Interaction Log",
			"Agent Tool Call",
			"Agent Role Policy",
			"Agent Role Policy Rule",
			"Agent Knowledge Document",
		):
			self.assertTrue(frappe.db.exists("DocType", doctype), doctype)
		self.assertTrue(frappe.db.exists("Page", "noviz-agent"))
		self.assertTrue(frappe.db.exists("Report", "Agent Turns Needing Attention"))

	def test_hooks_put_the_chat_on_every_desk_page(self):
		self.assertIn("noviz_agent.bundle.js", frappe.get_hooks("app_include_js"))
		self.assertIn(
			"noviz_agent.edge.frappe_allowance.invalidate",
			frappe.get_hooks("doc_events")["Has Role"]["on_update"],
		)


class TestSettings(AgentTestCase):
	def test_api_key_is_stored_encrypted_and_never_sent_to_the_browser(self):
		settings = frappe.get_single("Agent Settings")
		settings.api_key = "sk-secret-12345"
		settings.save(ignore_permissions=True)
		frappe.clear_document_cache("Agent Settings", "Agent Settings")
		stored = frappe.db.get_single_value("Agent Settings", "api_key")
		self.assertNotEqual(stored, "sk-secret-12345")
		self.assertEqual(frappe.get_single("Agent Settings").get_password("api_key"), "sk-secret-12345")
		encrypted = frappe.db.sql(
			"select `password` from `__Auth` where doctype=%s and fieldname=%s",
			("Agent Settings", "api_key"),
		)[0][0]
		self.assertTrue(encrypted and "sk-secret-12345" not in encrypted)
		self.assertNotIn("api_key", frappe_session.load_settings())
		self.assertEqual(frappe_session.load_settings(with_secrets=True)["api_key"], "sk-secret-12345")
		self.assertNotIn("sk-secret", frappe.as_json(api.client_settings()))

	def test_bad_url_and_limits_are_refused_with_the_fix(self):
		settings = frappe.get_single("Agent Settings")
		settings.base_url = "localhost:8000/v1"
		settings.max_steps = 500
		with self.assertRaises(frappe.ValidationError) as caught:
			settings.save(ignore_permissions=True)
		self.assertIn("must start with http", str(caught.exception))
		self.assertIn("between 1 and 30", str(caught.exception))


class TestTurns(AgentTestCase):
	def test_send_records_the_conversation_and_the_log(self):
		reply = self.send_as(SALES, "hello", [answer("Hello! Ask me about your sales orders.")])
		self.assertEqual(reply["response"]["type"], "text")
		conversation = frappe.get_doc("Agent Conversation", reply["conversation"])
		self.assertEqual(conversation.person, SALES)
		self.assertEqual(conversation.owner, SALES)
		self.assertEqual(conversation.turns[0].question, "hello")
		log = frappe.get_doc("Agent Interaction Log", reply["log"])
		self.assertEqual(
			(log.person, log.conversation, log.response_type), (SALES, conversation.name, "text")
		)
		self.assertEqual(log.failed, 0)
		# The second turn continues the conversation and sends the first as history.
		again = self.send_as(SALES, "and then?", [answer("Then nothing.")], conversation=conversation.name)
		self.assertEqual(again["conversation"], conversation.name)
		sent = self.models[-1].requests[0][0]
		self.assertIn("hello", [m.get("content") for m in sent])

	def test_two_people_see_what_their_roles_allow(self):
		steps = [call("sales_invoice.list", {}), answer("Here are the invoices.")]
		accounts = self.send_as(ACCOUNTS, "show sales invoices", list(steps))
		sales = self.send_as(SALES, "show sales invoices", list(steps))
		accounts_log = frappe.get_doc("Agent Interaction Log", accounts["log"])
		sales_log = frappe.get_doc("Agent Interaction Log", sales["log"])
		self.assertEqual(accounts_log.tool_calls[0].status, "ok")
		self.assertNotEqual(sales_log.tool_calls[0].status, "ok")
		self.assertIn("sales_invoice.list", accounts_log.tools_offered)
		self.assertNotIn("sales_invoice.list", sales_log.tools_offered)
		frappe.set_user("Administrator")
		invoices = frappe.get_list("Sales Invoice", limit_page_length=1)
		self.assertTrue(invoices, "precondition: the site has sales invoices (run the demo or bench_seed)")
		self.assertEqual(accounts["response"]["type"], "table")
		self.assertIsNone(sales["response"]["table"])

	def test_model_picked_modules_only_for_the_roles_named_in_settings(self):
		frappe.db.set_single_value("Agent Settings", "model_selection_roles", "Accounts User")
		frappe.clear_document_cache("Agent Settings", "Agent Settings")
		picked = self.send_as(ACCOUNTS, "how is the business doing", ['["accounting"]', answer("ok")])
		plain = self.send_as(SALES, "how is the business doing", [answer("ok")])
		picker_call, turn_call = self.models[0].requests
		self.assertEqual(picker_call[1], [])  # the picker call offers no tools
		self.assertIn("accounting", picker_call[0][0]["content"])
		log = frappe.get_doc("Agent Interaction Log", picked["log"])
		self.assertEqual(log.modules, "accounting")
		self.assertEqual(len(self.models[1].requests), 1)
		self.assertEqual(plain["response"]["type"], "text")

	def test_a_failing_provider_still_leaves_a_logged_turn(self):
		reply = self.send_as(SALES, "anything", [ProviderError("the provider is down")])
		self.assertEqual(reply["response"]["type"], "error")
		log = frappe.get_doc("Agent Interaction Log", reply["log"])
		self.assertEqual(log.failed, 1)
		self.assertIn("the provider is down", log.error)
		conversation = frappe.get_doc("Agent Conversation", reply["conversation"])
		self.assertEqual(conversation.turns[0].log, log.name)

	def test_missing_provider_settings_tell_the_person_to_ask_the_administrator(self):
		frappe_session.provider_factory = None
		settings = frappe.get_single("Agent Settings")
		settings.base_url = ""
		settings.save(ignore_permissions=True)
		frappe.clear_document_cache("Agent Settings", "Agent Settings")
		frappe.set_user(SALES)
		reply = api.send("hello")
		self.assertIn("Ask your administrator", reply["response"]["error"]["message"])
		self.assertNotIn("hint", reply["response"]["error"])
		frappe.set_user("Administrator")
		admin = api.send("hello")
		self.assertIn(form_path("Agent Settings"), admin["response"]["error"]["hint"])

	def test_empty_and_oversize_messages_are_refused(self):
		frappe.set_user(SALES)
		with self.assertRaises(frappe.ValidationError):
			api.send("   ")
		with self.assertRaises(frappe.ValidationError) as caught:
			api.send("x" * 5000)
		self.assertIn("4,000", str(caught.exception))

	def test_rate_limit_per_person(self):
		frappe.db.set_single_value("Agent Settings", "rate_limit_per_hour", 1)
		frappe.clear_document_cache("Agent Settings", "Agent Settings")
		frappe.cache.delete_keys("noviz_agent:rate:")
		self.send_as(ACCOUNTS, "one", [answer("ok")])
		second = self.send_as(ACCOUNTS, "two", [answer("never sent")])
		self.assertEqual(second["response"]["type"], "refusal")
		self.assertIn("limit", second["response"]["refusal"]["message"])
		self.assertIsNone(second["log"])


class TestProposals(AgentTestCase):
	def test_confirm_creates_the_record_once(self):
		reply = self.propose("Noviz Test Customer A")
		token = reply["response"]["proposal"]["token"]
		self.assertFalse(frappe.db.exists("Customer", {"customer_name": "Noviz Test Customer A"}))
		done = api.confirm(token, conversation=reply["conversation"])
		self.assertNotIn(done["response"]["type"], ("refusal", "error"), done["response"])
		self.assertTrue(frappe.db.exists("Customer", {"customer_name": "Noviz Test Customer A"}))
		again = api.confirm(token, conversation=reply["conversation"])
		self.assertEqual(again["response"]["type"], "refusal")
		# Reopened, the conversation shows the proposal as settled, without its spent token.
		turns = api.conversation(reply["conversation"])["turns"]
		proposals = [t["response"]["proposal"] for t in turns if (t["response"] or {}).get("proposal")]
		self.assertEqual([p.get("settled") for p in proposals], ["confirmed"])
		self.assertNotIn("token", proposals[0])

	def test_cancel_withdraws_the_token(self):
		reply = self.propose("Noviz Test Customer B")
		token = reply["response"]["proposal"]["token"]
		cancelled = api.cancel(token, conversation=reply["conversation"])
		self.assertNotEqual(cancelled["response"]["type"], "refusal", cancelled["response"])
		again = api.confirm(token, conversation=reply["conversation"])
		self.assertEqual(again["response"]["type"], "refusal")
		self.assertFalse(frappe.db.exists("Customer", {"customer_name": "Noviz Test Customer B"}))

	def test_a_proposal_is_confirmed_only_in_its_own_conversation(self):
		reply = self.propose("Noviz Test Customer D")
		token = reply["response"]["proposal"]["token"]
		other = self.send_as(SALES, "hello", [answer("hi")])
		self.assertNotEqual(other["conversation"], reply["conversation"])
		for elsewhere in (other["conversation"], None):
			refused = api.confirm(token, conversation=elsewhere)
			self.assertEqual(refused["response"]["type"], "refusal")
		self.assertFalse(frappe.db.exists("Customer", {"customer_name": "Noviz Test Customer D"}))
		done = api.confirm(token, conversation=reply["conversation"])
		self.assertNotIn(done["response"]["type"], ("refusal", "error"), done["response"])
		self.assertTrue(frappe.db.exists("Customer", {"customer_name": "Noviz Test Customer D"}))

	def test_another_person_cannot_confirm(self):
		reply = self.propose("Noviz Test Customer C")
		frappe.set_user(ACCOUNTS)
		with self.assertRaises(frappe.PermissionError):
			api.confirm(reply["response"]["proposal"]["token"], conversation=reply["conversation"])
		refused = api.confirm(reply["response"]["proposal"]["token"])
		self.assertEqual(refused["response"]["type"], "refusal")
		self.assertFalse(frappe.db.exists("Customer", {"customer_name": "Noviz Test Customer C"}))


class TestPrivacyAndFeedback(AgentTestCase):
	def test_a_person_cannot_read_or_continue_another_persons_conversation(self):
		mine = self.send_as(SALES, "hello", [answer("hi")])
		frappe.set_user(ACCOUNTS)
		with self.assertRaises(frappe.PermissionError):
			api.conversation(mine["conversation"])
		with self.assertRaises(frappe.PermissionError):
			api.send("let me in", conversation=mine["conversation"])
		self.assertNotIn(mine["conversation"], [c.name for c in api.conversations()])
		self.assertFalse(frappe.get_list("Agent Conversation", filters={"name": mine["conversation"]}))
		self.assertFalse(frappe.has_permission("Agent Interaction Log", "read", doc=mine["log"]))
		frappe.set_user(SALES)
		self.assertEqual(api.conversation(mine["conversation"])["turns"][0]["question"], "hello")
		frappe.set_user("Administrator")
		self.assertEqual(api.conversation(mine["conversation"])["person"], SALES)

	def test_feedback_is_recorded_on_the_log_only_by_its_person(self):
		reply = self.send_as(SALES, "hello", [answer("hi")])
		api.feedback(reply["log"], "down", "too vague")
		log = frappe.get_doc("Agent Interaction Log", reply["log"])
		self.assertEqual((log.rating, log.feedback_comment), ("Down", "too vague"))
		frappe.set_user(ACCOUNTS)
		with self.assertRaises(frappe.PermissionError):
			api.feedback(reply["log"], "up")
		with self.assertRaises(frappe.ValidationError):
			api.feedback(reply["log"], "meh")

	def test_the_person_cannot_edit_their_log(self):
		reply = self.send_as(SALES, "hello", [answer("hi")])
		log = frappe.get_doc("Agent Interaction Log", reply["log"])
		self.assertTrue(frappe.has_permission("Agent Interaction Log", "read", doc=log))
		self.assertFalse(frappe.has_permission("Agent Interaction Log", "write", doc=log))


class TestAllowanceCache(AgentTestCase):
	def test_an_allowance_kept_for_other_roles_is_computed_again(self):
		import dataclasses

		from noviz_agent.tools import build_registry

		frappe.set_user(ACCOUNTS)
		person = frappe_session.person_for(ACCOUNTS)
		connector = frappe_session.make_connector(ACCOUNTS)
		registry = build_registry()
		key = frappe_allowance.cache_key(person, registry)
		self.assertTrue(key.endswith(f":{ACCOUNTS}"), key)
		frappe.cache.delete_value(key)
		computed = mock.patch.object(frappe_allowance, "compute", wraps=frappe_allowance.compute)
		with computed as compute:
			first = frappe_allowance.allowance(person, connector, registry)
			self.assertEqual(frappe_allowance.allowance(person, connector, registry), first)
			self.assertEqual(compute.call_count, 1, "kept for the same roles")
			# The same person with other roles (no change was signalled): computed for them.
			other = dataclasses.replace(person, roles=frozenset({*person.roles, "Stock User"}))
			frappe_allowance.allowance(other, connector, registry)
			self.assertEqual(compute.call_count, 2)
			kept = frappe.cache.get_value(key, expires=True)
			self.assertEqual(kept[0], tuple(sorted(other.roles)))
			frappe_allowance.allowance(person, connector, registry)
			self.assertEqual(compute.call_count, 3)
		frappe.cache.delete_value(key)

	def test_a_role_policy_change_is_seen_on_the_next_turn(self):
		frappe.set_user(ACCOUNTS)
		person = frappe_session.person_for(ACCOUNTS)
		connector = frappe_session.make_connector(ACCOUNTS)
		from noviz_agent.tools import build_registry

		registry = build_registry()
		before = frappe_allowance.allowance(person, connector, registry)
		self.assertIn("sales_invoice.list", before)
		frappe.set_user("Administrator")
		policy = frappe.get_doc(
			{
				"doctype": "Agent Role Policy",
				"role": "Accounts User",
				"rules": [{"effect": "deny", "tool": "sales_invoice.*"}],
			}
		).insert()
		frappe.set_user(ACCOUNTS)
		after = frappe_allowance.allowance(person, connector, registry)
		self.assertNotIn("sales_invoice.list", after)
		self.assertTrue(before - after)
		policy.delete(ignore_permissions=True)
