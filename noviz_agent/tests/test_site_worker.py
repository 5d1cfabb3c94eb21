"""Site test of the no-fork worker (`bench noviz-agent worker --no-fork`, edge/frappe_worker.py).

Several turn jobs run one after another in ONE process through frappe's own `execute_job`
(init, connect, set_user, destroy per job), as RQ's SimpleWorker runs them. Each job must see
only its own person's tools and rows, whatever the job before it in that process saw.
"""

from __future__ import annotations

import json
import textwrap

import frappe

from noviz_agent.edge import frappe_turns
from noviz_agent.tests.test_site_scale import CLEANUP, BackgroundTestCase, _python
from noviz_agent.tests.utils import ACCOUNTS, SALES

TOOL = "purchase_invoice.list"
OFFERED = "purchase_invoice__list"  # the tool's name as the model is offered it

# One worker process: preloaded, then each job run by frappe's execute_job, as a no-fork worker does.
JOBS = textwrap.dedent(
	"""
	import json, os, sys
	import frappe
	from frappe.utils.background_jobs import execute_job
	from noviz_agent.edge import frappe_warm
	frappe_warm.preload()
	frappe_warm.mark_mode(frappe_warm.NO_FORK)
	from noviz_agent.edge import frappe_session, frappe_sops
	# The question must reach the tools, not a stored procedure that matches its words.
	frappe_sops.desk_for = lambda *args, **kwargs: None
	from noviz_agent.testing import ScriptedModel, answer, call
	site, jobs = sys.argv[1], json.loads(sys.argv[2])
	loaded = frappe_session.load_settings
	frappe_session.load_settings = lambda with_secrets=False: {
		**loaded(with_secrets), "use_knowledge": 0, "rate_limit_per_hour": 1000
	}
	models, seen = [], []
	def who(messages, tools):
		seen.append({"user": frappe.session.user, "site": frappe.local.site})
		return call(sys.argv[3], {"fields": ["name"]})
	def model(values):
		models.append(ScriptedModel([who, answer("Done.")]))
		return models[-1]
	frappe_session.provider_factory = model
	out = []
	for turn, user in jobs:
		state = execute_job(site, "noviz_agent.tasks.run_turn", None, "noviz-turn", {"turn": turn, "attempt": 1}, user=user)
		requests = models[-1].requests
		offered = sorted(t["function"]["name"] for t in requests[0][1])
		result = requests[1][0][-1].get("content") if len(requests) > 1 else ""
		out.append({"pid": os.getpid(), "status": state["status"], "conversation": state["conversation"],
			"log": state.get("log") or "", "offered": offered, "result": str(result), **seen[-1],
			"mode": state.get("figures", {}).get("worker_mode"), "local_site": getattr(frappe.local, "site", None)})
	print(json.dumps(out))
	"""
)


class TestNoForkWorker(BackgroundTestCase):
	def test_jobs_of_two_people_in_one_worker_process_see_only_their_own_tools_and_rows(self):
		# Preconditions: the accounts user reads purchase invoices, the sales user may not.
		frappe.set_user(ACCOUNTS)
		visible = frappe.get_list("Purchase Invoice", pluck="name", limit_page_length=0)
		self.assertTrue(visible, "the site needs purchase invoices the accounts user can read")
		frappe.set_user(SALES)
		self.assertFalse(frappe.has_permission("Purchase Invoice", "read"))
		order = [ACCOUNTS, SALES, ACCOUNTS]
		jobs = []
		for n, user in enumerate(order):
			reply = self.queue_turn(user, f"Show the purchase invoices ({n})", [])
			jobs.append([reply["turn"], user])
		self.plan.clear()
		out = json.loads(_python(JOBS, json.dumps(jobs), TOOL))
		for row in out:
			self.addCleanup(_python, CLEANUP, row["conversation"], row["log"])
		self.assertEqual(len({row["pid"] for row in out}), 1, "all jobs must run in one process")
		for (turn, user), row in zip(jobs, out, strict=True):
			self.assertEqual(row["status"], "done", row)
			self.assertEqual(row["user"], user, row)
			self.assertEqual(row["mode"], "no-fork", row)
			# frappe.destroy after each job: nothing of the site is left in the process between jobs.
			self.assertIsNone(row["local_site"], row)
			self.assertEqual(frappe_turns.load(turn)["user"], user)
		accounts_first, sales, accounts_again = out
		for row in (accounts_first, accounts_again):
			self.assertIn(OFFERED, row["offered"], row)
			self.assertTrue(any(name in row["result"] for name in visible), row["result"][:500])
		# The sales user's job ran right after the accounts user's, in the same process.
		self.assertNotIn(OFFERED, sales["offered"])
		self.assertFalse(any(name in sales["result"] for name in visible), sales["result"][:500])
		self.assertNotEqual(set(sales["offered"]), set(accounts_first["offered"]))


class TestMemoryBound(BackgroundTestCase):
	def test_a_no_fork_worker_that_outgrew_its_memory_bound_stops_for_a_fresh_start(self):
		"""Two jobs queued: a worker whose bound the process is already over runs one and stops (for
		supervisor to start a fresh one); with room to spare it runs both. A real RQ worker and queue."""
		from frappe.utils.background_jobs import get_redis_conn
		from rq import Queue

		from noviz_agent.edge import frappe_worker

		used = frappe_worker.resident_mb()
		self.assertGreater(used, 10, "this process's resident memory must be readable")
		connection = get_redis_conn()
		for bound, left in ((used / 2, 1), (used * 4, 0)):
			queue = Queue(f"noviz-agent-test-memory-{frappe.generate_hash(length=8)}", connection=connection)
			try:
				for _ in range(2):
					queue.enqueue("noviz_agent.edge.frappe_worker.resident_mb")
				worker = frappe_worker.NoForkWorker([queue], connection=connection)
				worker.max_memory_mb = bound
				worker.work(burst=True, logging_level="WARNING")
				self.assertEqual(queue.count, left, f"with a bound of {bound:.0f} MB ({used:.0f} MB used)")
			finally:
				queue.empty()
				queue.delete(delete_jobs=True)


class TestPriority(BackgroundTestCase):
	def test_the_agents_worker_keeps_web_priority_unless_the_site_config_lowers_it(self):
		from noviz_agent.edge import frappe_worker

		# Frappe lowers its background workers by 10; a person waits on a turn as on a web request.
		self.assertEqual(frappe_worker.niceness({}), 0)
		self.assertEqual(frappe_worker.niceness({"background_process_niceness": 10}), 0)
		self.assertEqual(frappe_worker.niceness({"noviz_agent_worker_niceness": 5}), 5)
		# Raising priority needs root: a negative value is not tried.
		self.assertEqual(frappe_worker.niceness({"noviz_agent_worker_niceness": -5}), 0)


WARM = textwrap.dedent(
	"""
	import json, sys
	import frappe
	from noviz_agent.edge import frappe_worker
	from noviz_agent.engine.provider import openai_compatible
	site = sys.argv[1]
	warmed = frappe_worker.warm_sites()
	controllers = sorted(frappe.controllers.get(site, {}))
	print(json.dumps({"warmed": warmed, "controllers": controllers, "local": hasattr(frappe.local, "site"),
		"clients": openai_compatible.shared_client.cache_info().currsize}))
	"""
)


class TestWarmSites(BackgroundTestCase):
	def test_a_no_fork_worker_reads_each_agent_sites_first_turn_reads_before_its_first_job(self):
		logs = frappe.db.count("Agent Interaction Log")
		out = json.loads(_python(WARM))
		self.assertIn(frappe.local.site, out["warmed"])
		from noviz_agent.edge.frappe_worker import TURN_DOCTYPES

		self.assertTrue(set(TURN_DOCTYPES) - {"Agent Settings"} <= set(out["controllers"]), out)
		# Every site is closed after: the worker starts its first job with no site open.
		self.assertFalse(out["local"])
		# Read only: nothing was written.
		self.assertEqual(frappe.db.count("Agent Interaction Log"), logs)
