"""Shared pieces of the site tests: the people they run as."""

from __future__ import annotations

import frappe
from frappe.tests.utils import FrappeTestCase

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


class PeopleTestCase(FrappeTestCase):
	"""Runs as Administrator with the permission-test users present; everything is rolled back after."""

	def setUp(self):
		frappe.set_user(ADMIN)
		ensure_user(SALES, "Sales User")
		ensure_user(ACCOUNTS, "Accounts User")

	def tearDown(self):
		frappe.set_user(ADMIN)
		frappe.db.rollback()
