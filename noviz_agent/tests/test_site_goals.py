"""Standing goals on a live site: made from a chat request, run by the scheduler's job as their person,
delivered (desk notification, e-mail digest, their own conversation), proposals written only when
confirmed, and stopped when the person loses what the goal needs or its budget runs out.

The scripted model stands in for the provider; everything else is the site's own: the DocTypes,
permissions, the Notification Log, the Email Queue, the books the watches read. Every test rolls back.
"""

from __future__ import annotations

import frappe

from noviz_agent import api
from noviz_agent.edge import frappe_goals
from noviz_agent.testing import answer, call
from noviz_agent.tests.test_agent_api import AgentTestCase
from noviz_agent.tests.utils import SALES, ensure_user

OWNER = "goals.user@noviz.test"
MANAGER = "it.admin@noviz.test"
DAYS = 30
REQUEST = f"Tell me every Monday which customers have invoices more than {DAYS} days overdue"
PROPOSE = {
	"goal": REQUEST,
	"watches": [{"kind": "overdue_customers", "days": DAYS}],
	"schedule": {"every": "week", "weekday": "monday", "hour": 8},
	"may_do": "propose",
	"delivery": ["notification", "email", "conversation"],
}


class GoalsCase(AgentTestCase):
	def setUp(self):
		super().setUp()
		ensure_user(OWNER, "Accounts User")
		ensure_user(MANAGER, "System Manager")
		user = frappe.get_doc("User", OWNER)
		user.add_roles("Accounts User", "Projects User")
		frappe.clear_cache(user=OWNER)
		if not frappe.db.exists("Email Account", {"enable_outgoing": 1, "default_outgoing": 1}):
			# An outgoing account for the digest to be queued with (a test site sends nothing; it is rolled back).
			frappe.get_doc(
				{
					"doctype": "Email Account",
					"email_account_name": "Noviz Goals Test",
					"email_id": "goals.sender@noviz.test",
					"enable_outgoing": 1,
					"default_outgoing": 1,
					"smtp_server": "127.0.0.1",
					"smtp_port": 9,
					"no_smtp_authentication": 1,
				}
			).insert(ignore_permissions=True)
		self.company = frappe.defaults.get_user_default(
			"Company", user=OWNER
		) or frappe.defaults.get_global_default("company")
		cutoff = frappe.utils.add_days(frappe.utils.getdate(), -DAYS)
		self.overdue = frappe.get_list(
			"Sales Invoice",
			filters={
				"docstatus": 1,
				"company": self.company,
				"outstanding_amount": (">", 0),
				"due_date": ("<", cutoff),
			},
			pluck="customer",
			limit_page_length=0,
		)
		self.assertTrue(
			self.overdue,
			f"precondition: {self.company} has invoices more than {DAYS} days overdue (run bench_seed)",
		)

	def tearDown(self):
		super().tearDown()
		# Neither the rolled-back roles nor the rolled-back e-mail account may live on in what is cached.
		frappe.clear_cache(user=OWNER)
		if hasattr(frappe.local, "outgoing_email_account"):
			del frappe.local.outgoing_email_account

	def goal(self, **values) -> str:
		"""A goal made by its person in the desk form (what a confirmed goals.propose also does)."""
		frappe.set_user(OWNER)
		doc = frappe.get_doc(
			frappe_goals.doc_values(
				{
					"owner": OWNER,
					"goal": REQUEST,
					"watches": [{"kind": "overdue_customers", "params": {"days": DAYS}}],
					"schedule": {"every": "week", "weekday": "monday", "hour": 8},
					"may_do": "propose",
					"delivery": ["notification"],
					**values,
				}
			)
		).insert()
		frappe.set_user("Administrator")
		return doc.name

	def run_job(self, name: str) -> dict:
		"""The scheduler's job body, exactly as the worker runs it, started as the Administrator."""
		frappe.set_user("Administrator")
		return frappe_goals.run_goal(name)


class TestGoalFromChat(GoalsCase):
	def test_a_chat_request_becomes_a_goal_only_once_the_person_confirms_it(self):
		self.plan.append([call("goals.propose", PROPOSE, text="Confirm to switch this goal on.")])
		frappe.set_user(OWNER)
		reply = api.send(REQUEST)
		proposal = reply["response"]["proposal"]
		self.assertEqual(reply["response"]["type"], "proposal", reply["response"])
		self.assertEqual(proposal["doctype"], "Agent Goal")
		self.assertFalse(frappe.db.exists("Agent Goal", {"person": OWNER}), "nothing exists before Confirm")
		done = api.confirm(proposal["token"], conversation=reply["conversation"])
		self.assertEqual(done["response"]["type"], "cards", done["response"])
		goal = frappe.get_doc("Agent Goal", done["response"]["cards"][0]["value"])
		self.assertEqual((goal.person, goal.owner, goal.active, goal.status), (OWNER, OWNER, 1, "Active"))
		self.assertEqual(goal.company, self.company)
		self.assertEqual([(w.kind, w.days) for w in goal.watches], [("overdue_customers", DAYS)])
		self.assertEqual(frappe.utils.get_datetime(goal.next_run).weekday(), 0)
		self.assertTrue(goal.notify_desk and goal.notify_email and goal.notify_conversation)


class TestGoalRuns(GoalsCase):
	def test_the_scheduler_runs_a_due_goal_as_its_person_and_delivers_its_findings(self):
		name = self.goal(delivery=["notification", "email", "conversation"])
		frappe.db.set_value(
			"Agent Goal", name, "next_run", frappe.utils.add_days(frappe.utils.now_datetime(), -1)
		)
		self.assertIn(
			"noviz_agent.edge.frappe_goals.enqueue_due",
			frappe.get_hooks("scheduler_events")["cron"]["*/5 * * * *"],
		)
		self.assertIn(name, frappe_goals.enqueue_due())
		self.assertGreater(
			frappe.utils.get_datetime(frappe.db.get_value("Agent Goal", name, "next_run")),
			frappe.utils.now_datetime(),
		)
		customer = self.overdue[0]
		step = call(
			"task.create",
			{"values": {"subject": f"Follow up {customer} about overdue invoices"}},
			text="Call them.",
		)
		self.plan.append([step])
		result = self.run_job(name)
		self.assertEqual(result["status"], "reported", result)
		self.assertEqual([len(m.requests) for m in self.models], [1], "one model call for the new findings")
		run = frappe.get_doc("Agent Goal Run", result["run"])
		self.assertEqual((run.person, run.owner, run.status, run.model_calls), (OWNER, OWNER, "Reported", 1))
		self.assertGreaterEqual(run.new_findings, 1)
		findings = frappe.parse_json(run.findings)
		self.assertTrue({f["subject"]["customer"] for f in findings} <= set(self.overdue))
		self.assertTrue(all(f["company"] == self.company and f["currency"] for f in findings))
		# The run was a turn as its person: their log row, channel "goal".
		log = frappe.get_doc("Agent Interaction Log", run.log)
		self.assertEqual((log.person, log.channel), (OWNER, "goal"))
		self.assertIn("analytics.build", [c.tool for c in log.tool_calls])
		# Delivered: a desk notification, a queued e-mail digest, a turn of its own conversation.
		self.assertTrue(frappe.db.exists("Notification Log", {"for_user": OWNER, "document_name": name}))
		queued = frappe.get_all(
			"Email Queue", filters={"reference_doctype": "Agent Goal", "reference_name": name}, pluck="name"
		)
		self.assertEqual(len(queued), 1)
		recipients = frappe.get_all("Email Queue Recipient", filters={"parent": queued[0]}, pluck="recipient")
		self.assertEqual(recipients, [frappe.db.get_value("User", OWNER, "email")])
		conversation = frappe.db.get_value("Agent Goal", name, "conversation")
		self.assertEqual(frappe.db.get_value("Agent Conversation", conversation, "person"), OWNER)
		# The prepared task waits in the person's inbox; nothing is written until they confirm.
		subject = step.tool_calls[0][1]["values"]["subject"]
		self.assertFalse(frappe.db.exists("Task", {"subject": subject}))
		frappe.set_user(OWNER)
		inbox = api.goals()["proposals"]
		self.assertEqual([p["proposal"]["tool"] for p in inbox], ["task.create"])
		done = api.confirm(inbox[0]["proposal"]["token"], conversation=inbox[0]["conversation"])
		self.assertNotIn(done["response"]["type"], ("refusal", "error"), done["response"])
		self.assertEqual(frappe.db.get_value("Task", {"subject": subject}, "owner"), OWNER)
		self.assertEqual(api.goals()["proposals"], [])
		# The next run finds the same: nothing new, no model call, no notification.
		notified = frappe.db.count("Notification Log", {"for_user": OWNER, "document_name": name})
		made, asked = len(self.models), sum(len(m.requests) for m in self.models)
		again = self.run_job(name)
		self.assertEqual(again["status"], "nothing_new")
		self.assertEqual((len(self.models), sum(len(m.requests) for m in self.models)), (made, asked))
		self.assertEqual(
			frappe.db.get_value("Agent Goal Run", again["run"], ["model_calls", "tokens"]), (0, 0)
		)
		self.assertEqual(
			frappe.db.count("Notification Log", {"for_user": OWNER, "document_name": name}), notified
		)

	def test_a_goal_stops_when_its_person_loses_the_role_it_reads_with(self):
		name = self.goal()
		frappe.get_doc("User", OWNER).remove_roles("Accounts User")
		result = self.run_job(name)
		self.assertEqual(result["status"], "stopped")
		goal = frappe.get_doc("Agent Goal", name)
		self.assertEqual((goal.active, goal.status), (0, "Stopped"))
		self.assertIn("can no longer read Sales Invoice", goal.stop_reason)
		self.assertEqual(self.models, [], "a stopped goal calls no model")
		told = frappe.get_all(
			"Notification Log", filters={"for_user": OWNER, "document_name": name}, pluck="subject"
		)
		self.assertEqual(len(told), 1)
		self.assertIn("stopped", told[0])
		self.assertEqual(frappe_goals.enqueue_due(frappe.utils.add_days(frappe.utils.now_datetime(), 30)), [])

	def test_a_goal_stops_at_its_monthly_budget_before_calling_the_model(self):
		name = self.goal(run_tokens=2_000, month_tokens=2_500)
		month = frappe.utils.getdate().strftime("%Y-%m")
		frappe.db.set_value("Agent Goal", name, {"spent_month": month, "spent_tokens": 1_000})
		result = self.run_job(name)
		self.assertEqual(result["status"], "stopped")
		reason = frappe.db.get_value("Agent Goal", name, "stop_reason")
		self.assertIn("1,000 of 2,500 tokens", reason)
		self.assertEqual(self.models, [])

	def test_a_site_budget_binds_a_goal_run_as_it_binds_the_chat(self):
		name = self.goal()
		frappe.get_doc(
			{"doctype": "Agent Budget", "scope": "Person", "person": OWNER, "monthly_tokens": 100}
		).insert()
		result = self.run_job(name)
		self.assertEqual(result["status"], "stopped")
		self.assertIn("monthly budget of 100 tokens", frappe.db.get_value("Agent Goal", name, "stop_reason"))
		self.assertEqual(self.models, [])

	def test_a_goal_whose_person_is_disabled_stops_and_reads_nothing(self):
		name = self.goal()
		user = frappe.get_doc("User", OWNER)
		user.enabled = 0
		user.save()
		result = self.run_job(name)
		self.assertEqual(result["status"], "stopped")
		self.assertIn("disabled", frappe.db.get_value("Agent Goal", name, "stop_reason"))
		run = frappe.get_doc("Agent Goal Run", result["run"])
		self.assertEqual(frappe.parse_json(run.findings), [])

	def test_a_goal_that_can_no_longer_run_as_written_stops_and_says_what_to_fix(self):
		name = self.goal()
		memory = '{"findings": {"x": {"kind": "event"}}}'
		frappe.db.set_value("Agent Goal", name, {"cron": "every second", "every": "cron", "memory": memory})
		result = self.run_job(name)
		self.assertEqual(result["status"], "stopped")
		goal = frappe.get_doc("Agent Goal", name)
		self.assertIn("not a cron expression", goal.stop_reason)
		self.assertEqual(goal.memory and frappe.parse_json(goal.memory), frappe.parse_json(memory))
		self.assertEqual(self.models, [])


class TestGoalPermissions(GoalsCase):
	def test_a_goal_is_its_persons_alone_and_an_administrator_may_only_pause_it(self):
		name = self.goal()
		frappe.set_user(SALES)
		self.assertEqual(frappe.get_list("Agent Goal", filters={"name": name}), [])
		self.assertFalse(frappe.has_permission("Agent Goal", "read", doc=name, user=SALES))
		frappe.set_user(MANAGER)
		self.assertEqual(api.goal_active(name, 0)["status"], "Paused")
		doc = frappe.get_doc("Agent Goal", name)
		doc.goal = "Tell me everything about everyone"
		with self.assertRaises(frappe.PermissionError):
			doc.save()
		with self.assertRaises(frappe.PermissionError):
			api.goal_active(name, 1)
		frappe.set_user(OWNER)
		self.assertEqual(api.goal_active(name, 1)["status"], "Active")

	def test_a_goal_cannot_be_made_for_someone_else_or_for_the_administrator(self):
		frappe.set_user(MANAGER)
		values = frappe_goals.doc_values(
			{"owner": OWNER, "goal": REQUEST, "watches": [{"kind": "overdue_customers", "params": {}}]}
		)
		with self.assertRaises(frappe.PermissionError):
			frappe.get_doc(values).insert()
		frappe.set_user("Administrator")
		with self.assertRaises(frappe.ValidationError):
			frappe.get_doc({**values, "person": "Administrator"}).insert()

	def test_the_desk_page_lists_the_persons_goals_with_their_last_findings(self):
		self.assertTrue(frappe.db.exists("Page", "noviz-goals"))
		name = self.goal()
		self.plan.append([answer("These customers are late.")])
		self.run_job(name)
		frappe.set_user(OWNER)
		page = api.goals()
		[goal] = page["goals"]
		self.assertEqual((goal["name"], goal["schedule"]), (name, "every Monday at 08:00"))
		self.assertEqual(goal["last"]["status"], "Reported")
		self.assertIn("These customers are late.", goal["last"]["response"]["text"])
		frappe.set_user(SALES)
		self.assertEqual(api.goals()["goals"], [])
		# Its person may delete it; its runs and what they cost stay for the administrator.
		frappe.set_user(OWNER)
		frappe.delete_doc("Agent Goal", name)
		self.assertFalse(frappe.db.exists("Agent Goal", name))
		self.assertTrue(frappe.db.exists("Agent Goal Run", {"goal": name}))
