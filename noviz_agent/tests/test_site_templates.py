"""Site tests of frappe_templates: a turn's records start from the templates a worker built before."""

from __future__ import annotations

import frappe
from frappe.model.create_new import make_new_doc

from noviz_agent.edge import frappe_recall, frappe_templates
from noviz_agent.tests.utils import ACCOUNTS, SALES, PeopleTestCase

LOG = "Agent Interaction Log"
TOOL_CALL = "Agent Tool Call"
DEFAULT_KEY = "noviz_agent_test_default"


class TestTemplates(PeopleTestCase):
	def setUp(self):
		super().setUp()
		frappe_templates._kept.clear()
		frappe_templates._seeded.clear()
		# A new process: what recall learnt and the Meta objects it kept are forgotten.
		for kept in (
			frappe_recall._recent,
			frappe_recall._wanted,
			frappe_recall._shared,
			frappe_recall._metas,
		):
			kept.clear()
		frappe.cache.delete(frappe.cache.make_key(frappe_recall.SHARED_KEY))

	def tearDown(self):
		frappe_templates._kept.clear()
		frappe_templates._seeded.clear()
		frappe.defaults.clear_user_default(DEFAULT_KEY, ACCOUNTS)
		super().tearDown()

	def _job(self, user: str):
		"""A new job as `user` with the same DocType meta objects (a worker keeps a Meta while its
		cached bytes are unchanged, see frappe_recall): frappe's per-job templates start empty."""
		cache = frappe.local.cache
		frappe.set_user(user)
		frappe.local.cache = cache
		frappe.local.new_doc_templates = {}

	def _insert_log(self, user: str) -> tuple[object, list[str]]:
		"""Insert a log with one tool call as `user`, as a turn does; (the log, its SQL statements)."""
		statements, original = [], frappe.db.sql

		def counting(query, *args, **kwargs):
			statements.append(str(query))
			return original(query, *args, **kwargs)

		frappe.db.sql = counting
		try:
			frappe_templates.seed()
			log = frappe.get_doc(
				{
					"doctype": LOG,
					"person": user,
					"request": "a question",
					"tool_calls": [{"tool": "customer.list", "status": "ok", "ms": 3}],
				}
			)
			log.flags.ignore_links = True
			log.insert(ignore_permissions=True)
			frappe_templates.learn()
		finally:
			frappe.db.sql = original
		return log, statements

	def _singles_queries(self, statements: list[str]) -> list[str]:
		return [s for s in statements if "issingle" in s]

	def test_the_next_turn_starts_from_the_template_the_last_one_built(self):
		self._job(SALES)
		first, statements = self._insert_log(SALES)
		self.assertEqual(
			len(self._singles_queries(statements)), 2, "frappe builds the log's and the tool call's"
		)
		self._job(SALES)
		second, statements = self._insert_log(SALES)
		self.assertEqual(self._singles_queries(statements), [], "the kept templates need no query")
		# The same record as frappe's own templates give.
		for doc in (first, second):
			self.assertEqual((doc.owner, doc.failed, doc.docstatus), (SALES, 0, 0))
			self.assertEqual(doc.tool_calls[0].owner, SALES)

	def test_a_kept_template_is_the_one_frappe_would_build(self):
		self._job(SALES)
		self._insert_log(SALES)
		self._job(SALES)
		self.assertEqual(frappe_templates.seed(), 2)
		for doctype in (LOG, TOOL_CALL):
			self.assertEqual(frappe.local.new_doc_templates[doctype], make_new_doc(doctype))

	def test_another_person_with_the_same_defaults_is_served_it_as_their_own(self):
		self._job(SALES)
		sales_inputs = frappe_templates._inputs()
		self._insert_log(SALES)
		self._job(ACCOUNTS)
		self.assertEqual(frappe_templates._inputs(), sales_inputs, "precondition: the same defaults")
		log, statements = self._insert_log(ACCOUNTS)
		self.assertEqual(self._singles_queries(statements), [])
		self.assertEqual((log.owner, log.tool_calls[0].owner), (ACCOUNTS, ACCOUNTS))
		self._job(ACCOUNTS)
		frappe_templates.seed()
		self.assertEqual(frappe.local.new_doc_templates[LOG], make_new_doc(LOG))

	def test_a_person_with_other_defaults_is_not_served_another_persons_template(self):
		self._job(SALES)
		self._insert_log(SALES)
		frappe.defaults.set_user_default(DEFAULT_KEY, "other", ACCOUNTS)
		self._job(ACCOUNTS)
		self.assertEqual(frappe_templates.seed(), 0)
		_log, statements = self._insert_log(ACCOUNTS)
		self.assertEqual(len(self._singles_queries(statements)), 2, "frappe builds them for this person")

	def test_a_changed_doctype_is_not_served_a_template_of_its_old_meta(self):
		self._job(SALES)
		self._insert_log(SALES)
		frappe.clear_cache(doctype=LOG)  # a customisation of the DocType rebuilds its meta
		self._job(SALES)
		frappe_templates.seed()
		self.assertNotIn(LOG, frappe.local.new_doc_templates)

	def test_a_doctype_whose_defaults_name_the_person_keeps_a_template_per_person(self):
		doctype = "Reminder"  # frappe's own: its `user` defaults to the person (`__user`)
		self.assertTrue(frappe_templates._names_person(frappe.get_meta(doctype)), "precondition")
		self._job(SALES)
		frappe.new_doc(doctype)
		frappe_templates.learn((doctype,))
		self._job(ACCOUNTS)
		self.assertEqual(frappe_templates.seed((doctype,)), 0)
		self._job(SALES)
		self.assertEqual(frappe_templates.seed((doctype,)), 1)
		self.assertEqual(frappe.local.new_doc_templates[doctype]["user"], SALES)

	def test_turn_jobs_reuse_templates_through_the_recalled_meta(self):
		"""The production path: each job starts with frappe's caches empty; from its second job on,
		frappe_recall gives it the Meta this process built from the same bytes before, so the
		template is reused."""
		singles = []
		for _job in range(3):
			frappe.set_user(SALES)  # a new job: frappe.local.cache and the templates start empty
			self.assertEqual(frappe.local.new_doc_templates, {})
			frappe_recall.prefetch()
			_log, statements = self._insert_log(SALES)
			frappe_recall.learn()
			singles.append(len(self._singles_queries(statements)))
		# The first job read the meta itself; the second unpickled the prefetched bytes, the
		# third is given the Meta the second built.
		self.assertEqual(singles, [2, 2, 0])
