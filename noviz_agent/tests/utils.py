"""Shared pieces of the site tests: the people they run as."""

from __future__ import annotations

from contextlib import contextmanager

import frappe

from noviz_agent.edge.frappe_versions import test_case_class

# The framework's own integration test case: FrappeTestCase on 15, IntegrationTestCase on 16.
SiteTestCase = test_case_class()

ADMIN = "Administrator"
SALES = "sales.user@noviz.test"
ACCOUNTS = "accounts.user@noviz.test"


def ensure_user(email: str, role: str) -> None:
	"""A desk user with one role (the dev bench has the permission-test users; a fresh test site gets them)."""
	if frappe.db.exists("User", email):
		return
	user = frappe.get_doc(
		{"doctype": "User", "email": email, "first_name": email.split("@")[0], "send_welcome_email": 0}
	)
	user.append("roles", {"role": role})
	user.insert(ignore_permissions=True)


class PeopleTestCase(SiteTestCase):
	"""Runs as Administrator with the permission-test users present; everything is rolled back after."""

	def setUp(self):
		frappe.set_user(ADMIN)
		ensure_user(SALES, "Sales User")
		ensure_user(ACCOUNTS, "Accounts User")

	def tearDown(self):
		frappe.set_user(ADMIN)
		frappe.db.rollback()


@contextmanager
def counting_queries():
	"""Count the SQL statements run inside the block (every frappe read and write goes through db.sql)."""
	db, counter = frappe.db, {"queries": 0}
	original = db.sql

	def sql(*args, **kwargs):
		counter["queries"] += 1
		return original(*args, **kwargs)

	db.sql = sql
	try:
		yield counter
	finally:
		db.sql = original
