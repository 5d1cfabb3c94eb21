"""Site tests of background turns: queued by one process, run by another, progress, answer, stop, recovery.

The queue is replaced by a recorder (the bench's own worker may run other code); the job then
runs here, or in a separate Python process for the cross-process test, exactly as a worker runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from unittest import mock

import frappe

from noviz_agent import api, kept_results, records, tasks
from noviz_agent.edge import frappe_allowance, frappe_session, frappe_turns
from noviz_agent.engine import turn_state
from noviz_agent.engine.errors import NotFound
from noviz_agent.engine.similarity import default_embedder
from noviz_agent.testing import answer, call
from noviz_agent.tests.test_agent_api import AgentTestCase
from noviz_agent.tests.utils import ACCOUNTS, ADMIN, SALES

QUEUE = ("default", 270, 240.0)

CHILD = textwrap.dedent(
	"""
	import json, os, sys
	import frappe
	site, turn, user, name = sys.argv[1:5]
	frappe.init(site=site)
	frappe.connect()
	from noviz_agent import api, tasks
	from noviz_agent.edge import frappe_session
	from noviz_agent.testing import ScriptedModel, answer, call
	loaded = frappe_session.load_settings
	frappe_session.load_settings = lambda with_secrets=False: {
		**loaded(with_secrets), "enable_writes": 1, "use_knowledge": 0, "rate_limit_per_hour": 1000
	}
	frappe_session.provider_factory = lambda values: ScriptedModel(
		[call("customer.create", {"values": {"customer_name": name}}), answer("Confirm to create it.")]
	)
	frappe.set_user(user)
	state = tasks.run_turn(turn, 1)
	stored = frappe.db.exists("Agent Conversation", state["conversation"])
	error = frappe.db.get_value("Agent Interaction Log", state["log"], "error") if state["log"] else None
	print(json.dumps({"pid": os.getpid(), "status": state["status"], "stored": bool(stored), "error": error}))
	frappe.destroy()
	"""
)

CLEANUP = textwrap.dedent(
	"""
	import sys
	import frappe
	site, conversation, log = sys.argv[1:4]
	frappe.init(site=site)
	frappe.connect()
	for doctype, name in (("Agent Conversation", conversation), ("Agent Interaction Log", log)):
		if name and frappe.db.exists(doctype, name):
			frappe.delete_doc(doctype, name, ignore_permissions=True, force=True)
	frappe.db.commit()
	frappe.destroy()
	"""
)


# A background worker's process: the app preloaded before any site, then a job forked from it.
PRELOAD = textwrap.dedent(
	"""
	import json, os, sys
	import frappe
	from noviz_agent.edge import frappe_warm
	figures = frappe_warm.preload()
	from noviz_agent import tools
	from noviz_agent.edge import frappe_session, frappe_sops
	built = tools.registry.cache_info().currsize == 1
	registry = tools.registry()
	parent = {"site": getattr(frappe.local, "site", None), "db": getattr(frappe.local, "db", None) is not None,
		"built": list(figures), "registry_built": built}
	read, write = os.pipe()
	pid = os.fork()
	if pid == 0:
		os.close(read)
		frappe.init(site=sys.argv[1])
		frappe.connect()
		child = {"modules": all(m in sys.modules for m in frappe_warm.MODULES),
			"same_registry": frappe_session.registry() is registry and registry is not None,
			"tools": len(registry), "matcher": bool(frappe_sops._matchers)}
		frappe.destroy()
		os.write(write, json.dumps(child).encode())
		os._exit(0)
	os.close(write)
	os.waitpid(pid, 0)
	child = json.loads(os.read(read, 65536).decode())
	print(json.dumps({"parent": parent, "child": child}))
	"""
)


def _python(script: str, *args: str) -> str:
	sites = os.path.join(frappe.utils.get_bench_path(), "sites")
	done = subprocess.run(
		[sys.executable, "-c", script, frappe.local.site, *args],
		cwd=sites,
		capture_output=True,
		text=True,
		timeout=300,
	)
	if done.returncode != 0:
		raise AssertionError(f"the second process failed:\n{done.stdout}\n{done.stderr}")
	lines = done.stdout.strip().splitlines()
	return lines[-1] if lines else ""


class BackgroundTestCase(AgentTestCase):
	"""send(background=1) with a recording queue; realtime events recorded; no commit leaves the test."""

	def setUp(self):
		super().setUp()
		self.queued: list[dict] = []
		self.events: list[dict] = []
		patches = [
			mock.patch.object(frappe_turns, "queue_for", lambda values: QUEUE),
			mock.patch.object(frappe_turns, "_enqueue", lambda state: self.queued.append(dict(state))),
			# A queued job waits in the queue; a started one has no job left to wait for.
			mock.patch.object(frappe_turns, "_job_pending", lambda state: state["status"] == "queued"),
			mock.patch.object(frappe, "publish_realtime", self._published),
		]
		for patch in patches:
			patch.start()
			self.addCleanup(patch.stop)

	def _published(self, event, message=None, **kwargs):
		if event == frappe_session.PROGRESS_EVENT:
			self.events.append({**message, "_user": kwargs.get("user")})

	def queue_turn(self, user, message, steps, conversation=None):
		self.plan.append(steps)
		frappe.set_user(user)
		reply = api.send(message, conversation=conversation, background=1)
		self.assertEqual(reply["status"], "queued", reply)
		self.assertIsNone(reply["response"])
		self.addCleanup(frappe_turns.release_conversation, reply["conversation"], reply["turn"])
		return reply

	def run_job(self, turn, attempt=1):
		with mock.patch.object(frappe.db, "commit", lambda *a, **k: None):
			return tasks.run_turn(turn, attempt)


class TestBackgroundTurns(BackgroundTestCase):
	def test_a_background_turn_delivers_progress_and_its_answer(self):
		self.assertGreater(frappe.db.count("Customer"), 0, "the site needs customers for this test")
		reply = self.queue_turn(
			SALES, "Show my customers", [call("customer.list", {}), answer("Your customers.")]
		)
		self.assertEqual([q["turn"] for q in self.queued], [reply["turn"]])
		self.assertEqual(api.turn_status(reply["turn"])["status"], "queued")
		frappe.set_user(ADMIN)  # the worker starts as someone else; the job becomes the person
		state = self.run_job(reply["turn"])
		kinds = [e["event"] for e in self.events]
		self.assertIn("thinking", kinds)
		self.assertIn("tool", kinds)
		self.assertEqual(kinds[-1], "answer")
		self.assertTrue(all(e["turn"] == reply["turn"] and e["_user"] == SALES for e in self.events))
		final = self.events[-1]
		self.assertEqual(final["response"]["type"], "table", final)
		self.assertEqual(final["conversation"], reply["conversation"])
		self.assertTrue(frappe.db.exists("Agent Conversation", reply["conversation"]))
		self.assertEqual(frappe.db.get_value("Agent Interaction Log", final["log"], "person"), SALES)
		# After a page reload the chat reads the same answer by turn id.
		frappe.set_user(SALES)
		shown = api.turn_status(reply["turn"])
		self.assertEqual((shown["status"], shown["log"]), ("done", final["log"]))
		self.assertEqual(shown["response"]["type"], "table")
		self.assertIn("thinking", [e["event"] for e in shown["events"]])
		self.assertGreater(state["figures"]["cpu_ms"], 0)

	def test_another_persons_turn_id_finds_nothing(self):
		reply = self.queue_turn(SALES, "Show my customers", [answer("Hi.")])
		frappe.set_user(ACCOUNTS)
		with self.assertRaises(frappe.DoesNotExistError):
			api.turn_status(reply["turn"])
		with self.assertRaises(frappe.DoesNotExistError):
			api.stop_turn(reply["turn"])

	def test_stop_before_the_job_starts_ends_the_turn_and_the_job_calls_no_model(self):
		reply = self.queue_turn(SALES, "Show my customers", [answer("never")])
		stopped = api.stop_turn(reply["turn"])
		self.assertEqual(stopped["status"], "cancelled")
		self.run_job(reply["turn"])
		self.assertEqual(self.models, [], "no model may be called for a stopped turn")
		self.assertEqual(api.turn_status(reply["turn"])["status"], "cancelled")

	def test_stop_during_a_turn_ends_it_before_the_next_step(self):
		turn = {}

		def press_stop(messages, tools):
			frappe_turns.request_stop(frappe_turns.load(turn["id"]))
			return call("customer.list", {})

		reply = self.queue_turn(SALES, "Show my customers", [press_stop, answer("never sent")])
		turn["id"] = reply["turn"]
		self.run_job(reply["turn"])
		self.assertEqual(len(self.models[0].requests), 1, "the model is not called after the stop")
		shown = api.turn_status(reply["turn"])
		self.assertEqual(shown["status"], "cancelled")
		self.assertIn("Stopped at your request", shown["response"]["error"]["message"])
		self.assertEqual(self.events[-1]["event"], "answer")

	def test_the_stop_flag_is_read_with_the_progress_messages_not_on_its_own(self):
		turn = frappe.generate_hash(length=12)
		self.addCleanup(frappe.cache.delete, *(frappe_turns._key(turn, p) for p in ("stop", "events")))
		now = [100.0]
		stop = frappe_turns.StopFlag(turn, clock=lambda: now[0])
		send = frappe_turns.progress(turn, SALES, stop)
		with mock.patch.object(frappe.cache, "get", wraps=frappe.cache.get) as get:
			send({"event": "thinking", "step": 1, "max_steps": 8})
			self.assertFalse(stop())
			self.assertEqual(get.call_count, 0, "the message's own round trip read the flag")
			frappe.cache.set(frappe_turns._key(turn, "stop"), "1")
			now[0] += stop.FRESH_SECONDS / 2
			self.assertFalse(stop(), "a fresh reading answers")
			send({"event": "tool", "tool": "customer.list", "step": 1, "max_steps": 8})
			self.assertTrue(stop(), "the next message sees the stop")
			self.assertEqual(get.call_count, 0)
			# With no message for a while, the flag is read on its own.
			later = frappe_turns.StopFlag(turn, clock=lambda: now[0])
			self.assertTrue(later())
			self.assertEqual(get.call_count, 1)
		self.assertEqual([e["event"] for e in self.events], ["thinking", "tool"])

	def test_a_second_message_while_the_first_is_answered_is_refused_with_what_to_do(self):
		first = self.queue_turn(SALES, "Show my customers", [answer("Your customers.")])
		self.run_job(first["turn"])
		second = self.queue_turn(
			SALES, "And my orders?", [answer("Orders.")], conversation=first["conversation"]
		)
		with self.assertRaises(frappe.ValidationError) as raised:
			api.send("And again?", conversation=first["conversation"], background=1)
		self.assertIn("Wait for the answer", str(raised.exception))
		self.run_job(second["turn"])
		self.assertEqual(api.turn_status(second["turn"])["status"], "done")

	def test_a_turn_whose_worker_died_is_retried_once_then_ends_with_a_clear_message(self):
		reply = self.queue_turn(SALES, "Show my customers", [answer("Your customers.")])
		state = frappe_turns.load(reply["turn"])
		# The worker took it and died: running, no heartbeat, the queue no longer holds it.
		frappe_turns.save(turn_state.started(state, state["queued_at"]))
		again = api.turn_status(reply["turn"])
		self.assertEqual((again["status"], again["attempt"]), ("queued", 2))
		self.assertEqual([q["attempt"] for q in self.queued], [1, 2])
		frappe.cache.delete(frappe_turns._key(reply["turn"], "recover"))
		frappe_turns.save(turn_state.started(frappe_turns.load(reply["turn"]), 0))
		ended = api.turn_status(reply["turn"])
		self.assertEqual(ended["status"], "error")
		self.assertEqual(ended["message"], turn_state.LOST_MESSAGE)
		self.assertEqual(self.events[-1]["event"], "error")
		# A stale job of the first attempt, run late, does nothing.
		self.assertIsNone(self.run_job(reply["turn"], attempt=1))

	def test_a_turn_being_stored_is_not_taken_for_lost_and_run_again(self):
		reply = self.queue_turn(SALES, "Show my customers", [answer("Your customers.")])
		seen = []
		finished = turn_state.finished

		def read_while_storing(state, *args, **kwargs):
			# The chat polls between the end of the answer and the final state being stored.
			seen.append(api.turn_status(reply["turn"]))
			return finished(state, *args, **kwargs)

		with mock.patch.object(turn_state, "finished", read_while_storing):
			self.run_job(reply["turn"])
		self.assertEqual([(s["status"], s["attempt"]) for s in seen], [("running", 1)])
		self.assertEqual([q["attempt"] for q in self.queued], [1], "the turn must not be queued again")
		final = api.turn_status(reply["turn"])
		self.assertEqual((final["status"], final["attempt"]), ("done", 1))

	def test_a_lost_turn_that_ended_meanwhile_is_not_queued_again(self):
		reply = self.queue_turn(SALES, "Show my customers", [answer("Your customers.")])
		stale = turn_state.started(frappe_turns.load(reply["turn"]), 0)
		frappe_turns.save(stale)
		self.run_job(reply["turn"], attempt=1)  # the job of attempt 1 runs and finishes
		# A reader still holding the running state from before the job ended decides on a fresh read.
		self.assertEqual(frappe_turns.checked(stale)["status"], "done")
		self.assertEqual([q["attempt"] for q in self.queued], [1])

	def test_the_registry_is_built_once_per_process(self):
		values = frappe_session.load_settings()
		frappe.set_user(SALES)
		one = frappe_session.build_session(values, progress=False)
		frappe.set_user(ACCOUNTS)
		two = frappe_session.build_session(values, progress=False)
		self.assertIs(one.registry, two.registry)
		self.assertNotEqual(one.allowed, two.allowed)


class TestAcrossProcesses(BackgroundTestCase):
	def test_a_turn_started_by_one_worker_process_is_continued_by_another(self):
		name = "Noviz Test Customer Across"
		reply = self.queue_turn(SALES, f"create a customer named {name}", [])
		self.plan.clear()
		out = json.loads(_python(CHILD, reply["turn"], SALES, name))
		state = frappe_turns.load(reply["turn"])
		self.addCleanup(_python, CLEANUP, reply["conversation"], state.get("log") or "")
		self.assertNotEqual(out["pid"], os.getpid())
		self.assertEqual(out["status"], "done", out)
		self.assertTrue(out["stored"], out)
		shown = api.turn_status(reply["turn"])
		self.assertEqual(shown["response"]["type"], "proposal", shown)
		# The other process stored the conversation and the proposal; this one confirms it.
		frappe.db.rollback()
		self.assertTrue(frappe.db.exists("Agent Conversation", reply["conversation"]))
		self.setUp_settings()
		frappe.set_user(SALES)
		token = shown["response"]["proposal"]["token"]
		self.assertFalse(frappe.db.exists("Customer", {"customer_name": name}))
		done = api.confirm(token, conversation=reply["conversation"])
		self.assertNotIn(done["response"]["type"], ("refusal", "error"), done["response"])
		self.assertTrue(frappe.db.exists("Customer", {"customer_name": name}))

	def setUp_settings(self):
		frappe.set_user(ADMIN)
		settings = frappe.get_single("Agent Settings")
		settings.update({"enable_writes": 1, "use_knowledge": 0, "rate_limit_per_hour": 1000})
		settings.save(ignore_permissions=True)
		frappe.clear_document_cache("Agent Settings", "Agent Settings")


class TestWarmWorkers(AgentTestCase):
	def test_a_preloaded_worker_forks_jobs_that_find_the_app_and_its_registry_built(self):
		out = json.loads(_python(PRELOAD))
		# Preloading touches no site: nothing of a site or a person can leak into the forked jobs.
		self.assertEqual((out["parent"]["site"], out["parent"]["db"]), (None, False), out)
		self.assertIn("registry", out["parent"]["built"])
		self.assertTrue(out["parent"]["registry_built"], "the preload must build the registry itself")
		child = out["child"]
		self.assertTrue(child["modules"], child)
		self.assertTrue(child["same_registry"], "the job must reuse the registry built before the fork")
		self.assertEqual(child["tools"], len(frappe_session.registry()))
		self.assertEqual(child["matcher"], default_embedder() is not None)

	def test_a_migrate_forgets_the_cached_doctype_list_and_every_allowance(self):
		self.assertIn("noviz_agent.edge.frappe_allowance.after_migrate", frappe.get_hooks("after_migrate"))
		frappe.cache.set_value(frappe_allowance.PRESENT_KEY, ["Note"])
		self.assertNotIn("Sales Invoice", frappe_allowance.present_doctypes())
		before = frappe_allowance.generation()
		frappe_allowance.after_migrate()
		self.assertIn("Sales Invoice", frappe_allowance.present_doctypes())
		self.assertGreater(frappe_allowance.generation(), before)


class TestRecording(AgentTestCase):
	def test_a_conversation_that_cannot_be_stored_leaves_its_log_with_no_link_to_it(self):
		with mock.patch.object(records, "turn_values", side_effect=RuntimeError("disk full")):
			reply = self.send_as(SALES, "hello", [answer("Hello.")])
		self.assertIsNone(reply["conversation"])
		log = frappe.get_doc("Agent Interaction Log", reply["log"])
		self.assertEqual(log.failed, 1)
		self.assertIn("Could not store the turn", log.error)
		self.assertIn("disk full", log.error)
		# The log was written naming the conversation chosen for it; that conversation never came to be.
		self.assertIsNone(log.conversation)

	def test_a_later_turn_adds_its_row_and_keeps_every_earlier_turn_as_it_was(self):
		first = self.send_as(SALES, "one", [answer("First.")])
		name = first["conversation"]
		before = frappe.get_doc("Agent Conversation", name)
		for question in ("two", "three"):
			reply = self.send_as(SALES, question, [answer(f"Answer to {question}.")], conversation=name)
			self.assertEqual(reply["conversation"], name)
		after = frappe.get_doc("Agent Conversation", name)
		self.assertEqual([t.question for t in after.turns], ["one", "two", "three"])
		self.assertEqual([t.idx for t in after.turns], [1, 2, 3])
		self.assertEqual(after.turn_count, 3)
		self.assertEqual(after.turns[0].as_dict()["answer"], before.turns[0].answer)
		self.assertEqual(after.turns[2].answer, "Answer to three.")
		self.assertEqual(frappe.db.get_value("Agent Interaction Log", reply["log"], "conversation"), name)
		self.assertEqual(after.turns[2].log, reply["log"])
		self.assertGreaterEqual(after.last_activity, before.last_activity)
		self.assertGreaterEqual(after.modified, before.modified)
		self.assertEqual(after.modified_by, SALES)
		self.assertIsInstance(json.loads(after.rules_sent), list)

	def test_a_stored_turn_links_its_log_and_conversation_both_ways(self):
		reply = self.send_as(SALES, "hello", [answer("Hello.")])
		log = frappe.get_doc("Agent Interaction Log", reply["log"])
		conversation = frappe.get_doc("Agent Conversation", reply["conversation"])
		self.assertEqual(log.conversation, conversation.name)
		self.assertEqual(conversation.turns[0].log, log.name)
		self.assertEqual((log.person, conversation.person), (SALES, SALES))


class TestExport(AgentTestCase):
	def test_an_export_holds_every_row_while_the_model_saw_only_a_page(self):
		# A list covers every company the person can read, as the desk's list does.
		total = len(frappe.get_list("Sales Invoice", pluck="name", limit_page_length=0))
		self.assertGreater(total, 20, "the site needs more sales invoices than one page")
		reply = self.send_as(
			ADMIN, "Show my sales invoices", [call("sales_invoice.list", {}), answer("Invoices.")]
		)
		seen = json.loads(self.models[-1].requests[1][0][-1]["content"])
		self.assertLess(len(seen["rows"]), total)
		self.assertEqual(seen["total"], total)
		session = frappe_session.build_session(frappe_session.load_settings(), progress=False)
		exported = kept_results.all_rows(session, seen["result_id"])
		self.assertEqual(exported["total"], total)
		self.assertEqual(len({r["name"] for r in exported["rows"]}), total)
		self.assertEqual(reply["response"]["table"]["page"]["result_id"], seen["result_id"])
		frappe.set_user(SALES)
		other = frappe_session.build_session(frappe_session.load_settings(), progress=False)
		with self.assertRaises(NotFound):
			kept_results.all_rows(other, seen["result_id"])
