"""Shared pieces of the site tests: the people they run as."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from contextlib import contextmanager
from urllib.parse import urlparse

import frappe

from noviz_agent.edge.frappe_versions import test_case_class

# The framework's own integration test case: FrappeTestCase on 15, IntegrationTestCase on 16.
SiteTestCase = test_case_class()

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


def on_own_connections(work: Callable[[], None], threads: int = 8) -> list[str]:
	"""Run `work` in `threads` threads at once, each on its own connection to this site (as separate
	workers would be); the errors they raised, so a thread cannot swallow one."""
	site, sites_path = frappe.local.site, frappe.local.sites_path
	errors: list[str] = []

	def run():
		try:
			frappe.init(site=site, sites_path=sites_path)
			frappe.connect()
			work()
		except Exception as exc:  # reported to the test
			errors.append(repr(exc))
		finally:
			frappe.destroy()

	started = [threading.Thread(target=run) for _ in range(threads)]
	for thread in started:
		thread.start()
	for thread in started:
		thread.join()
	return errors


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
