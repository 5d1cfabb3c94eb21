"""Shared pieces of the site tests: the people they run as."""

from __future__ import annotations

import socket
from urllib.parse import urlparse

import frappe
from frappe.tests.utils import FrappeTestCase

ADMIN = "Administrator"
SALES = "sales.user@noviz.test"
ACCOUNTS = "accounts.user@noviz.test"


def listening(url: str) -> bool:
	"""Whether anything accepts connections at the URL's host and port (another site, the web server)."""
	parts = urlparse(url)
	try:
		with socket.create_connection((parts.hostname, parts.port or 80), timeout=2):
			return True
	except OSError:
		return False


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
