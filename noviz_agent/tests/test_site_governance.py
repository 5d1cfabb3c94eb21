"""Governance on a live site: budgets, audited review, a read-only log, the answer cache, retention."""

from __future__ import annotations

import frappe

from noviz_agent import api
from noviz_agent.edge import frappe_governance
from noviz_agent.governance.budgets import Cap, Reservation, Spend
from noviz_agent.testing import answer
from noviz_agent.tests.test_agent_api import AgentTestCase
from noviz_agent.tests.utils import ACCOUNTS, SALES, ensure_user, on_own_connections

ADMIN_NOT_AUDITOR = "it.admin@noviz.test"
AUDITOR = "auditor@noviz.test"


class GovernanceCase(AgentTestCase):
	def setUp(self):
		super().setUp()
		ensure_user(ADMIN_NOT_AUDITOR, "System Manager")
		ensure_user(AUDITOR, "Agent Auditor")
		self.assertTrue(
			frappe.db.exists("Role", "Agent Auditor"), "precondition: the auditor role is installed"
		)

	def budget(self, scope, tokens=0, cost=0.0, role=None, person=None):
		return frappe.get_doc(
			{
				"doctype": "Agent Budget",
				"scope": scope,
				"role": role,
				"person": person,
				"monthly_tokens": tokens,
				"monthly_cost": cost,
			}
		).insert()


class TestBudgets(GovernanceCase):
	def test_a_turn_over_a_cap_is_refused_before_the_model_is_called_at_each_level(self):
		for scope, kw in (
			("Person", {"person": SALES}),
			("Role", {"role": "Sales User"}),
			("Site", {}),
		):
			frappe.set_user("Administrator")
			doc = self.budget(scope, tokens=100, **kw)  # less than one turn's token limit
			models_before = len(self.models)
			reply = self.send_as(SALES, f"hello {scope}", [answer("never")])
			self.plan.clear()
			self.assertEqual(reply["response"]["type"], "refusal", reply["response"])
			message = reply["response"]["refusal"]["message"]
			self.assertIn("monthly budget of 100 tokens", message)
			self.assertIn("starts again on", message)
			self.assertEqual(len(self.models), models_before, "no model may be made or called")
			log = frappe.get_doc("Agent Interaction Log", reply["log"])
			self.assertIn("budget", log.error)
			frappe.set_user("Administrator")
			doc.delete()

	def test_spending_is_recorded_per_budget_and_month(self):
		self.budget("Person", tokens=10_000_000, person=SALES)
		reply = self.send_as(SALES, "hello there", [answer("hi")])
		self.assertEqual(reply["response"]["type"], "text")
		month = frappe.utils.getdate().strftime("%Y-%m")
		row = frappe.db.get_value("Agent Budget Usage", f"Person:{SALES}|{month}", ["tokens"], as_dict=True)
		log = frappe.get_doc("Agent Interaction Log", reply["log"])
		self.assertEqual(row.tokens, log.prompt_tokens + log.completion_tokens)


def _spend_in_process(site: str, sites_path: str, month: str, times: int) -> None:
	"""A second OS process spending on the same budget row, with its own database connection."""
	frappe.init(site=site, sites_path=sites_path)
	frappe.connect()
	try:
		held = Reservation(month, Spend(0), [Cap("Person", "concurrency@noviz.test", tokens=10**9)])
		for _ in range(times):
			frappe_governance.record_spend(held, Spend(7, 0.001))
			frappe.db.commit()
	finally:
		frappe.destroy()


class TestConcurrentSpending(GovernanceCase):
	KEY = "Person:concurrency@noviz.test"

	def tearDown(self):
		frappe.db.delete("Agent Budget Usage", {"budget_key": self.KEY})
		frappe.db.commit()
		super().tearDown()

	def test_many_threads_never_lose_an_increment(self):
		month = frappe.utils.getdate().strftime("%Y-%m")
		held = Reservation(month, Spend(0), [Cap("Person", "concurrency@noviz.test", tokens=10**9)])

		def spend_ten_times():
			for _ in range(10):
				frappe_governance.record_spend(held, Spend(7, 0.001))
				frappe.db.commit()

		self.assertEqual(on_own_connections(spend_ten_times, threads=8), [])
		frappe.db.commit()  # see the other connections' work
		row = frappe.db.get_value(
			"Agent Budget Usage", f"{self.KEY}|{month}", ["tokens", "cost"], as_dict=True
		)
		self.assertEqual(row.tokens, 8 * 10 * 7)
		self.assertAlmostEqual(row.cost, 8 * 10 * 0.001, places=6)

	def test_two_processes_never_lose_an_increment(self):
		import multiprocessing

		site, sites_path = frappe.local.site, frappe.local.sites_path
		month = frappe.utils.getdate().strftime("%Y-%m")
		spawn = multiprocessing.get_context("spawn")
		processes = [
			spawn.Process(target=_spend_in_process, args=(site, sites_path, month, 25)) for _ in range(2)
		]
		for p in processes:
			p.start()
		for p in processes:
			p.join(timeout=180)
		self.assertEqual([p.exitcode for p in processes], [0, 0])
		frappe.db.commit()
		row = frappe.db.get_value(
			"Agent Budget Usage", f"{self.KEY}|{month}", ["tokens", "cost"], as_dict=True
		)
		self.assertEqual(row.tokens, 2 * 25 * 7)
		self.assertAlmostEqual(row.cost, 2 * 25 * 0.001, places=6)


class TestAuditedReview(GovernanceCase):
	def test_a_system_manager_without_the_auditor_role_is_refused_another_persons_conversation(self):
		mine = self.send_as(SALES, "hello", [answer("hi")])
		frappe.set_user(ADMIN_NOT_AUDITOR)
		with self.assertRaises(frappe.PermissionError):
			api.conversation(mine["conversation"])
		self.assertFalse(frappe.get_list("Agent Conversation", filters={"name": mine["conversation"]}))

	def test_an_auditors_read_is_itself_logged(self):
		mine = self.send_as(SALES, "hello", [answer("hi")])
		frappe.set_user(AUDITOR)
		self.assertEqual(api.conversation(mine["conversation"])["person"], SALES)
		frappe.set_user("Administrator")
		reads = frappe.get_all(
			"Agent Audit Read",
			filters={"auditor": AUDITOR, "conversation": mine["conversation"]},
			fields=["person"],
		)
		self.assertEqual([r.person for r in reads], [SALES])

	def test_nobody_can_edit_an_interaction_log_row(self):
		reply = self.send_as(SALES, "hello", [answer("hi")])
		for user in (ADMIN_NOT_AUDITOR, AUDITOR, SALES):
			frappe.set_user(user)
			self.assertFalse(frappe.has_permission("Agent Interaction Log", "write", doc=reply["log"]), user)
			log = frappe.get_doc("Agent Interaction Log", reply["log"])
			log.error = "forged"
			with self.assertRaises(frappe.PermissionError):
				log.save()


class TestAnswerCache(GovernanceCase):
	def setUp(self):
		super().setUp()
		frappe.db.set_single_value("Agent Settings", "cache_seconds", 300)
		frappe.clear_document_cache("Agent Settings", "Agent Settings")

	def test_a_repeated_first_question_is_answered_from_the_persons_own_cache_only(self):
		question = "which customers bought standing desks in 2025"
		first = self.send_as(SALES, question, [answer("Acme and Globex.")])
		again = self.send_as(SALES, question, [answer("never")])
		self.assertEqual(self.plan, [[answer("never")]], "the cached answer left its planned model unused")
		self.plan.clear()
		self.assertEqual(again["response"]["text"], "Acme and Globex.")
		self.assertEqual(frappe.db.get_value("Agent Interaction Log", again["log"], "cache_hit"), "exact")
		self.assertEqual(len(self.models), 1, "the second answer came from the cache")
		other = self.send_as(ACCOUNTS, question, [answer("Only Acme.")])
		self.assertEqual(other["response"]["text"], "Only Acme.")
		self.assertFalse(frappe.db.get_value("Agent Interaction Log", other["log"], "cache_hit"))
		self.assertNotEqual(first["conversation"], again["conversation"])

	def test_time_relative_questions_are_not_cached(self):
		self.send_as(SALES, "sales today", [answer("None yet.")])
		again = self.send_as(SALES, "sales today", [answer("One order.")])
		self.assertEqual(again["response"]["text"], "One order.")


class TestRetention(GovernanceCase):
	def test_retention_removes_exactly_what_is_older_than_the_setting(self):
		old = self.send_as(SALES, "old question", [answer("old")])
		new = self.send_as(SALES, "new question", [answer("new")])
		frappe.set_user("Administrator")
		past = frappe.utils.add_days(frappe.utils.now_datetime(), -40)
		frappe.db.set_value(
			"Agent Conversation", old["conversation"], "modified", past, update_modified=False
		)
		frappe.db.set_value("Agent Interaction Log", old["log"], "creation", past, update_modified=False)
		frappe.db.set_single_value("Agent Settings", "keep_conversations_days", 30)
		frappe.db.set_single_value("Agent Settings", "keep_logs_days", 30)
		before_costs = frappe.db.count("Agent Cost Month")
		frappe.db.commit = lambda: None  # keep the test's transaction to roll back
		try:
			removed = frappe_governance.apply_retention()
		finally:
			del frappe.db.commit
		self.assertGreaterEqual(removed["conversations"], 1)
		self.assertFalse(frappe.db.exists("Agent Conversation", old["conversation"]))
		self.assertFalse(frappe.db.exists("Agent Interaction Log", old["log"]))
		self.assertTrue(frappe.db.exists("Agent Conversation", new["conversation"]))
		self.assertTrue(frappe.db.exists("Agent Interaction Log", new["log"]))
		self.assertGreater(frappe.db.count("Agent Cost Month"), before_costs)
