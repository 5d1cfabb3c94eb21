"""The trust attacks as site tests, one per attack (noviz_agent/tests/attacks.py), and the site-side
checks of the trust fixes that are not attacks: atomic generation bumps, Role Permission Manager's
deferred clear, Agent System Connection changes, background intake bound to its conversation.

Run with `bench --site S run-tests --app noviz_agent --module noviz_agent.tests.test_site_trust`.
Everything is rolled back after each test.
"""

from __future__ import annotations

import frappe

from noviz_agent import api
from noviz_agent.edge import frappe_allowance, frappe_session, frappe_turns
from noviz_agent.engine import turn_state
from noviz_agent.testing import answer
from noviz_agent.tests import attacks
from noviz_agent.tests.utils import SiteTestCase, on_own_connections


class TrustCase(SiteTestCase):
	def setUp(self):
		self.world = attacks.prepare()

	def tearDown(self):
		attacks.finish(self.world)
		frappe.set_user("Administrator")
		frappe.db.rollback()
		attacks.reset(self.world)
		frappe_session.provider_factory = None


class TestAttacks(TrustCase):
	"""Each attack of the suite; a failure names what got through."""


for _item in attacks.ATTACKS:

	def _test(self, item=_item):
		item.run(self.world)

	_test.__name__ = f"test_{_item.name}"
	_test.__doc__ = f"{_item.category}: {_item.name.replace('_', ' ')}"
	setattr(TestAttacks, _test.__name__, _test)


class TestInvalidation(TrustCase):
	def test_concurrent_generation_bumps_never_move_it_backwards(self):
		start = frappe_allowance.generation()

		def bump_many():
			for _ in range(25):
				frappe_allowance._bump()

		self.assertEqual(on_own_connections(bump_many, threads=8), [])
		self.assertGreaterEqual(frappe_allowance.generation(), start + 8 * 25)

	def test_role_permission_manager_update_drops_the_allowance_when_it_commits(self):
		from frappe.core.page.permission_manager import permission_manager
		from frappe.permissions import setup_custom_perms

		# The rules are customised already: the change below fires no document event.
		setup_custom_perms("Customer")
		frappe.set_user(attacks.NORTH)
		before = frappe_session.build_session(frappe_session.load_settings(), progress=False).allowed
		self.assertIn("customer.create", before, "precondition: a Sales User may create customers")
		frappe.set_user("Administrator")
		token = frappe_allowance.cache_token()
		permission_manager.update("Customer", "Sales User", 0, "create", 0)
		# Role Permission Manager clears frappe's caches when its transaction commits.
		frappe.db.after_commit.run()
		self.assertNotEqual(frappe_allowance.cache_token(), token)
		frappe.set_user(attacks.NORTH)
		after = frappe_session.build_session(frappe_session.load_settings(), progress=False).allowed
		self.assertNotIn("customer.create", after)
		self.assertIn("customer.list", after)

	def test_a_new_agent_system_connection_is_seen_on_the_next_turn(self):
		frappe.set_user(attacks.NORTH)
		before = frappe_session.build_session(frappe_session.load_settings(), progress=False).allowed
		self.assertFalse([t for t in before if t.startswith("helpdesk.")])
		attacks._connect_helpdesk(attacks.NORTH, "hd-secret-for-the-test")
		frappe.set_user(attacks.NORTH)
		after = frappe_session.build_session(frappe_session.load_settings(), progress=False).allowed
		self.assertIn("helpdesk.ticket.list", after)


class TestTurns(TrustCase):
	def test_a_state_stored_under_someone_elses_turn_id_is_no_state_of_that_turn(self):
		theirs = attacks._issued(self.world, attacks.SOUTH)
		frappe_turns.save(turn_state.new(theirs, attacks.NORTH, "mine", "c", new_conversation=True, now=0))
		self.assertIsNone(frappe_turns.load(theirs))

	def test_a_queued_turn_is_started_only_once_under_its_id(self):
		theirs = attacks._issued(self.world, attacks.SOUTH)
		state = turn_state.new(theirs, attacks.SOUTH, "question", "c", new_conversation=True, now=0)
		frappe_turns.save(state)
		with self.assertRaises(frappe.ValidationError):
			frappe_turns.start(state, "default", 60, 30.0)


class TestBackgroundIntake(TrustCase):
	def test_a_large_uploads_proposal_is_bound_to_its_conversation_and_logged(self):
		from noviz_agent.edge import frappe_files

		reply = self.world.send(attacks.NORTH, "hello", [answer("hi")])
		frappe.set_user(attacks.NORTH)
		file = frappe_files.save_upload(
			attacks._png(), "scan.png", reply["conversation"], frappe_session.load_settings()
		)
		turn = api.new_turn()["turn"]
		self.world.turn_keys.append(turn)
		frappe_files.intake_job(attacks.NORTH, file, reply["conversation"], turn, filename="scan.png")
		frappe.set_user("Administrator")
		conversation = frappe.get_doc("Agent Conversation", reply["conversation"])
		self.assertEqual(len(conversation.turns), 2, "the upload is a turn of its conversation")
		log = conversation.turns[-1].log
		self.assertTrue(
			log and frappe.db.exists("Agent Interaction Log", log), "the upload's turn has a log row"
		)
		self.assertEqual(
			frappe.db.get_value("Agent Interaction Log", log, "conversation"), reply["conversation"]
		)
