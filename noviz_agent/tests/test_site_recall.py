"""Site tests of frappe_recall: a turn job reads, in one round trip, the cache entries the last turns read."""

from __future__ import annotations

import frappe
from frappe.tests.utils import FrappeTestCase

from noviz_agent.edge import frappe_recall

MISSING_HASH = "noviz_agent_test_no_such_hash"


class TestRecall(FrappeTestCase):
	def setUp(self):
		self.kept = frappe.local.cache
		frappe_recall._last.clear()
		frappe_recall._wanted.clear()

	def tearDown(self):
		frappe.local.cache = self.kept
		frappe_recall._last.clear()
		frappe_recall._wanted.clear()

	def _job(self, doctype: str):
		"""What a job reads from frappe's cache: a DocType's meta, a value, a field of a missing hash."""
		frappe.local.cache = {}
		frappe.get_meta(doctype)
		frappe.get_meta("Agent Interaction Log")
		frappe.cache.get_value("noviz_agent_test_value")
		frappe.cache.hget(MISSING_HASH, "nothing")

	def _redis_calls(self, read):
		calls = []
		original = frappe.cache.execute_command

		def counting(*args, **kwargs):
			calls.append(args[0])
			return original(*args, **kwargs)

		frappe.cache.execute_command = counting
		try:
			read()
		finally:
			del frappe.cache.execute_command
		return calls

	def test_entries_read_by_the_last_two_turns_are_read_in_one_round_trip_by_the_next(self):
		frappe.cache.set_value("noviz_agent_test_value", {"kept": 1})
		self._job("Agent Conversation")
		frappe_recall.learn()
		self.assertEqual(frappe_recall.prefetch(), 0, "one turn is not enough to learn from")
		self._job("Agent Conversation Turn")
		frappe_recall.learn()

		frappe.local.cache = {}
		self.assertGreaterEqual(frappe_recall.prefetch(), 2)
		# Read by both turns: prefetched; read by only one of them: left to be read when needed.
		meta_key = frappe.cache.make_key("doctype_meta")
		self.assertIn("Agent Interaction Log", frappe.local.cache[meta_key])
		self.assertNotIn("Agent Conversation", frappe.local.cache[meta_key])
		self.assertEqual(frappe.local.cache[frappe.cache.make_key("noviz_agent_test_value")], {"kept": 1})
		# frappe's own reads now find them without asking Redis.
		calls = self._redis_calls(
			lambda: (
				frappe.get_meta("Agent Interaction Log"),
				frappe.cache.get_value("noviz_agent_test_value"),
			)
		)
		self.assertEqual(calls, [])
		self.assertEqual(frappe.get_meta("Agent Interaction Log").name, "Agent Interaction Log")

	def test_a_hash_missing_from_redis_is_never_mistaken_for_a_value(self):
		for doctype in ("Agent Conversation", "Agent Conversation"):
			self._job(doctype)
			frappe_recall.learn()
		frappe.local.cache = {}
		frappe_recall.prefetch()
		self.assertNotIn(frappe.cache.make_key(MISSING_HASH), frappe.local.cache)
		self.assertIsNone(frappe.cache.hget(MISSING_HASH, "nothing"))

	def test_prefetched_values_are_read_fresh_not_kept_from_the_earlier_jobs(self):
		frappe.cache.set_value("noviz_agent_test_value", {"kept": 1})
		for doctype in ("Agent Conversation", "Agent Conversation"):
			self._job(doctype)
			frappe_recall.learn()
		frappe.cache.set_value("noviz_agent_test_value", {"kept": 2})
		frappe.local.cache = {}
		frappe_recall.prefetch()
		self.assertEqual(frappe.local.cache[frappe.cache.make_key("noviz_agent_test_value")], {"kept": 2})
