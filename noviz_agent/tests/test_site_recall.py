"""Site tests of frappe_recall: a turn job reads, in one round trip, the cache entries the last turns read."""

from __future__ import annotations

import frappe

from noviz_agent.edge import frappe_recall
from noviz_agent.tests.utils import ACCOUNTS, SALES, PeopleTestCase

MISSING_HASH = "noviz_agent_test_no_such_hash"
VALUE = "noviz_agent_test_value"
FAKE_META = "noviz_agent test meta"  # a field of frappe's doctype_meta hash no DocType has


class TestRecall(PeopleTestCase):
	def setUp(self):
		super().setUp()
		self._new_process()
		frappe.cache.set_value(VALUE, {"kept": 1})

	def tearDown(self):
		self._new_process()
		frappe.cache.delete_value(VALUE)
		frappe.cache.hdel(frappe_recall.META_HASH, FAKE_META)
		super().tearDown()  # as Administrator again, with a fresh frappe.local.cache

	def _new_process(self, shared_too: bool = True):
		"""What a worker process learnt is forgotten (and, unless told, what workers share)."""
		for kept in (frappe_recall._recent, frappe_recall._wanted, frappe_recall._shared):
			kept.clear()
		if shared_too:
			frappe.cache.delete(frappe.cache.make_key(frappe_recall.SHARED_KEY))

	def _job(self, doctype: str | None = "Agent Conversation"):
		"""What a job reads from frappe's cache: a DocType's meta, a value, a field of a missing hash."""
		frappe.local.cache = {}
		if doctype:
			frappe.get_meta(doctype)
		frappe.cache.get_value(VALUE)
		frappe.cache.hget(MISSING_HASH, "nothing")

	def _learnt_job(self, doctype: str | None = "Agent Conversation"):
		self._job(doctype)
		frappe_recall.learn()

	def _next_job(self) -> int:
		frappe.local.cache = {}
		return frappe_recall.prefetch()

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

	def _meta_key(self):
		return frappe.cache.make_key(frappe_recall.META_HASH)

	def test_what_the_last_turn_read_is_read_in_one_round_trip_by_the_next(self):
		self.assertEqual(self._next_job(), 0, "nothing learnt yet")
		self._learnt_job("Agent Conversation")
		self.assertGreaterEqual(self._next_job(), 2)
		self.assertIn("Agent Conversation", list(frappe.local.cache[self._meta_key()]))
		# frappe's own reads now find them without asking Redis.
		calls = self._redis_calls(
			lambda: (frappe.get_meta("Agent Conversation"), frappe.cache.get_value(VALUE))
		)
		self.assertEqual(calls, [])
		self.assertEqual(frappe.get_meta("Agent Conversation").name, "Agent Conversation")
		self.assertEqual(frappe.cache.get_value(VALUE), {"kept": 1})

	def test_a_value_stays_pickled_until_frappe_reads_it(self):
		self._learnt_job()
		self._next_job()
		key = frappe.cache.make_key(VALUE)
		self.assertIs(type(dict.__getitem__(frappe.local.cache, key)), frappe_recall.Pickled)
		self.assertEqual(frappe.cache.get_value(VALUE), {"kept": 1})
		self.assertEqual(dict.__getitem__(frappe.local.cache, key), {"kept": 1})
		# Whatever way the dict is read, a caller never sees the bytes.
		self._next_job()
		self.assertEqual(dict(frappe.local.cache.items())[key], {"kept": 1})
		self._next_job()
		self.assertEqual(frappe.local.cache.get(key), {"kept": 1})
		self._next_job()
		self.assertEqual(frappe.local.cache.pop(key), {"kept": 1})

	def test_an_entry_only_prefetched_and_never_looked_for_stops_being_read(self):
		self._learnt_job("Agent Conversation")
		for _ in range(frappe_recall.WINDOW):
			self._next_job()
			frappe.cache.get_value(VALUE)  # the meta is there, but these jobs never look for it
			frappe_recall.learn()
		self._next_job()
		self.assertIn(frappe.cache.make_key(VALUE), list(frappe.local.cache))
		self.assertNotIn(self._meta_key(), list(frappe.local.cache))

	def test_the_persons_own_entries_are_read_for_whoever_the_next_job_runs_for(self):
		roles = frappe.cache.make_key("roles")
		frappe.get_roles(SALES)  # now kept in Redis, as on a site where the person has signed in
		frappe.set_user(ACCOUNTS)
		frappe.local.cache = {}
		frappe.get_roles(ACCOUNTS)
		frappe_recall.learn()
		frappe.set_user(SALES)
		self.assertGreaterEqual(self._next_job(), 1)
		self.assertEqual(list(frappe.local.cache[roles]), [SALES])
		self.assertEqual(self._redis_calls(lambda: frappe.get_roles(SALES)), [])
		self.assertIn("Sales User", frappe.get_roles(SALES))

	def test_a_key_that_names_the_person_is_read_for_whoever_the_next_job_runs_for(self):
		for user in (ACCOUNTS, SALES):
			frappe.cache.set_value(VALUE, {"of": user}, user=user)
			self.addCleanup(frappe.cache.delete_value, VALUE, user=user)
		frappe.set_user(ACCOUNTS)
		frappe.local.cache = {}
		frappe.cache.get_value(VALUE, user=True)
		frappe_recall.learn()
		frappe.set_user(SALES)
		self.assertGreaterEqual(self._next_job(), 1)
		# The next person's own key, not the last one's.
		self.assertIn(frappe.cache.make_key(VALUE, user=SALES), list(frappe.local.cache))
		self.assertNotIn(frappe.cache.make_key(VALUE, user=ACCOUNTS), list(frappe.local.cache))
		self.assertEqual(self._redis_calls(lambda: frappe.cache.get_value(VALUE, user=True)), [])
		self.assertEqual(frappe.cache.get_value(VALUE, user=True), {"of": SALES})
		# A dict could be a hash or a value: it is asked once for the generic name, not per person.
		frappe_recall.learn()
		generic = frappe_recall._generic(frappe.cache.make_key(VALUE, user=SALES), SALES)
		self.assertIn(frappe_recall.PERSON_IN_KEY, generic)
		self.assertIn(generic, frappe_recall._values)
		for user in (ACCOUNTS, SALES):
			self.assertNotIn(frappe.cache.make_key(VALUE, user=user), frappe_recall._values)

	def test_a_meta_read_again_with_the_same_bytes_is_the_same_meta_and_a_changed_one_is_read_anew(self):
		frappe.cache.hset(frappe_recall.META_HASH, FAKE_META, {"version": 1})

		def read():
			self._next_job()
			return frappe.cache.hget(frappe_recall.META_HASH, FAKE_META)

		frappe.local.cache = {}
		frappe.cache.hget(frappe_recall.META_HASH, FAKE_META)
		frappe_recall.learn()
		first, again = read(), read()
		self.assertEqual(first, {"version": 1})
		self.assertIs(again, first, "the same bytes give the same object, not another unpickling")
		frappe.cache.hset(frappe_recall.META_HASH, FAKE_META, {"version": 2})
		self.assertEqual(read(), {"version": 2})
		# A plain value read twice is two objects: its callers may change what they get.
		self.assertIsNot(
			(self._next_job(), frappe.cache.get_value(VALUE))[1],
			(self._next_job(), frappe.cache.get_value(VALUE))[1],
		)

	def test_a_hash_missing_from_redis_is_never_mistaken_for_a_value(self):
		self._learnt_job()
		self._next_job()
		self.assertNotIn(frappe.cache.make_key(MISSING_HASH), list(frappe.local.cache))
		self.assertIsNone(frappe.cache.hget(MISSING_HASH, "nothing"))

	def test_a_new_worker_builds_the_shared_metas_before_its_first_job_and_that_job_gets_them(self):
		frappe.cache.hset(frappe_recall.META_HASH, FAKE_META, {"version": 1})
		frappe.local.cache = {}
		frappe.cache.hget(frappe_recall.META_HASH, FAKE_META)
		frappe_recall.learn()
		frappe_recall._write_shared(*frappe_recall._wanted[frappe.local.site])
		self._new_process(shared_too=False)
		frappe_recall._metas.clear()
		self.assertGreaterEqual(frappe_recall.warm(), 1)
		built = frappe_recall._metas[(self._meta_key(), FAKE_META)][1]
		self._next_job()
		self.assertIs(frappe.cache.hget(frappe_recall.META_HASH, FAKE_META), built)

	def test_prefetched_values_are_read_fresh_not_kept_from_the_earlier_jobs(self):
		self._learnt_job()
		frappe.cache.set_value(VALUE, {"kept": 2})
		self._next_job()
		self.assertEqual(frappe.cache.get_value(VALUE), {"kept": 2})

	def test_a_new_worker_prefetches_from_its_first_job_what_another_worker_learnt(self):
		self._learnt_job("Agent Conversation")
		self._new_process(shared_too=False)
		frappe.local.cache = {}
		calls = self._redis_calls(frappe_recall.prefetch)
		# One read of the names and one pipeline of the values (a pipeline is not an execute_command).
		self.assertEqual(calls, ["GET"])
		self.assertIn("Agent Conversation", list(frappe.local.cache[self._meta_key()]))
		self.assertEqual(frappe.cache.get_value(VALUE), {"kept": 1})

	def test_names_shared_by_another_version_or_damaged_are_ignored(self):
		frappe.cache.set(frappe.cache.make_key(frappe_recall.SHARED_KEY), b"not a pickle")
		self.assertEqual(self._next_job(), 0)

	def test_a_value_gone_from_redis_is_made_by_frappes_generator_not_read_as_none(self):
		self._learnt_job()
		frappe.cache.delete_value(VALUE)
		self._next_job()
		made = frappe.cache.get_value(VALUE, generator=lambda: {"made": 1})
		self.assertEqual(made, {"made": 1})
