"""Every read path as three people: nobody gets through the agent what the desk would not show them.

People: an Accounts User restricted to one company by a User Permission, an Accounts User
restricted to one territory, and an Accounts Manager without restrictions. For each, what the
agent's tools return (lists page by page, counts, aggregates, ERPNext reports, kept results,
PDFs of someone else's result) is compared with what the desk's own calls return as that person.
"""

from __future__ import annotations

from collections import Counter

import frappe
from frappe.client import get_count as desk_count
from frappe.desk.query_report import run as run_report

from noviz_agent import api
from noviz_agent.edge import frappe_session
from noviz_agent.engine.gateway import call_tool
from noviz_agent.tests.utils import PeopleTestCase, ensure_user

BY_COMPANY = "company.restricted@noviz.test"
BY_TERRITORY = "territory.restricted@noviz.test"
MANAGER = "accounts.manager@noviz.test"


def f(field: str, op: str, value) -> dict:
	"""One filter as the tools take it."""
	return {"field": field, "op": op, "value": value}


def _restrict(user: str, doctype: str, value: str) -> None:
	if not frappe.db.exists("User Permission", {"user": user, "allow": doctype, "for_value": value}):
		frappe.get_doc(
			{"doctype": "User Permission", "user": user, "allow": doctype, "for_value": value}
		).insert(ignore_permissions=True)


class TestReadPaths(PeopleTestCase):
	def setUp(self):
		super().setUp()
		ensure_user(BY_COMPANY, "Accounts User")
		ensure_user(BY_TERRITORY, "Accounts User")
		ensure_user(MANAGER, "Accounts Manager")
		companies = Counter(
			frappe.get_list("Sales Invoice", filters={"docstatus": 1}, pluck="company", limit_page_length=0)
		)
		self.assertGreaterEqual(len(companies), 2, "precondition: submitted sales invoices in two companies")
		self.company = companies.most_common(1)[0][0]
		territories = Counter(
			frappe.get_list(
				"Sales Invoice",
				filters={"docstatus": 1, "territory": ("is", "set")},
				pluck="territory",
				limit_page_length=0,
			)
		)
		self.assertGreaterEqual(len(territories), 2, "precondition: invoices in two territories")
		self.territory = territories.most_common(1)[0][0]
		_restrict(BY_COMPANY, "Company", self.company)
		_restrict(BY_TERRITORY, "Territory", self.territory)
		frappe.clear_cache()

	def session_as(self, user):
		frappe.set_user(user)
		session = frappe_session.build_session(frappe_session.load_settings(), progress=False)
		session.offered = set(session.allowed)
		return session

	def desk_names(self, user, filters=None) -> set[str]:
		frappe.set_user(user)
		return set(frappe.get_list("Sales Invoice", filters=filters or {}, pluck="name", limit_page_length=0))

	def test_restrictions_really_narrow_the_desk_view(self):
		everything = self.desk_names(MANAGER)
		self.assertLess(len(self.desk_names(BY_COMPANY)), len(everything))
		self.assertLess(len(self.desk_names(BY_TERRITORY)), len(everything))

	def test_counts_match_the_desk_list_count_for_each_person(self):
		""" "How many sales invoices" gave 5 where the person's list showed 597: a count limited to one
		company without saying so. A count covers what the desk's list counts (`frappe.client.get_count`,
		the list view's own call), unless a company is named; then it says which."""
		item = frappe.get_list(
			"Sales Invoice Item", pluck="item_code", limit_page_length=1, parent_doctype="Sales Invoice"
		)
		self.assertTrue(item, "precondition: invoice lines")
		cases = [
			({"docstatus": 1}, [f("docstatus", "=", 1)]),
			({"status": "Unpaid"}, [f("status", "=", "Unpaid")]),
			(
				{"company": self.company, "docstatus": 1},
				[f("company", "=", self.company), f("docstatus", "=", 1)],
			),
			([["Sales Invoice Item", "item_code", "=", item[0]]], [f("items.item", "=", item[0])]),
		]
		for user in (BY_COMPANY, BY_TERRITORY, MANAGER):
			for desk_filters, ours in cases:
				frappe.set_user(user)
				expected = desk_count("Sales Invoice", filters=desk_filters)
				session = self.session_as(user)
				counted = call_tool(session, "sales_invoice.count", {"filters": ours})
				self.assertEqual(counted.status, "ok", counted.error)
				self.assertEqual(counted.data["count"], expected, (user, ours))
				if any(c["field"] == "company" for c in ours):
					self.assertEqual(counted.data["company"], self.company)
				elif len(counted.data.get("companies") or []) > 1:
					self.assertIn("every company", counted.data["scope_note"])

	def test_money_is_added_up_one_company_at_a_time_and_says_which(self):
		for user in (BY_TERRITORY, MANAGER):
			session = self.session_as(user)
			frappe.set_user(user)
			rows = frappe.get_list(
				"Sales Invoice",
				filters={"docstatus": 1, "company": session.person.company},
				pluck="base_grand_total",
				limit_page_length=0,
			)
			session = self.session_as(user)
			total = call_tool(
				session,
				"analytics.aggregate",
				{
					"entity": "sales_invoice",
					"metrics": [{"fn": "sum", "field": "base_total", "as": "revenue"}],
					"filters": [f("docstatus", "=", 1)],
				},
			)
			self.assertEqual(total.status, "ok", total.error)
			self.assertEqual(total.data["company"], session.person.company)
			self.assertAlmostEqual(total.data["rows"][0]["revenue"], float(sum(rows)), 2)
			if user == MANAGER:
				self.assertTrue(total.data.get("other_companies"), "the other companies are named")

	def test_list_pages_hold_only_what_the_desk_shows(self):
		for user in (BY_COMPANY, BY_TERRITORY):
			desk = self.desk_names(user)
			session = self.session_as(user)
			seen, page = set(), 1
			while page <= 5:
				result = call_tool(session, "sales_invoice.list", {"page": page})
				self.assertEqual(result.status, "ok", result.error)
				seen |= {r["name"] for r in result.data["rows"]}
				if len(result.data["rows"]) < session.limits.page_size:
					break
				page += 1
			self.assertTrue(seen)
			self.assertLessEqual(seen, desk, user)

	def test_a_hidden_invoice_is_refused(self):
		hidden = self.desk_names(MANAGER) - self.desk_names(BY_COMPANY)
		self.assertTrue(hidden, "precondition: invoices outside the restricted company")
		session = self.session_as(BY_COMPANY)
		result = call_tool(session, "sales_invoice.get", {"name": sorted(hidden)[0]})
		self.assertEqual(result.status, "refused", result.error)

	def test_report_rows_are_what_the_desk_report_shows_the_person(self):
		for user in (BY_COMPANY, BY_TERRITORY):
			session = self.session_as(user)
			filters = {"company": self.company, "report_date": frappe.utils.today()}
			ours = call_tool(session, "report.run", {"report": "Accounts Receivable", "filters": filters})
			self.assertEqual(ours.status, "ok", ours.error)
			frappe.set_user(user)
			desk = run_report(
				"Accounts Receivable", filters=dict(filters, range="30, 60, 90, 120"), user=user
			)
			desk_parties = {r.get("party") for r in desk["result"] if isinstance(r, dict) and r.get("party")}
			session = self.session_as(user)
			kept = session.results.get(ours.data["result_id"])
			our_parties = {r.get("party") for r in kept["rows"] if r.get("party")}
			self.assertLessEqual(our_parties, desk_parties | {None}, user)

	def test_kept_results_and_their_pdfs_are_the_owners_only(self):
		session = self.session_as(MANAGER)
		listed = call_tool(session, "sales_invoice.list", {})
		self.assertEqual(listed.status, "ok", listed.error)
		result_id = listed.data.get("result_id")
		self.assertTrue(result_id, "precondition: lists keep their rows server-side")
		frappe.set_user(BY_COMPANY)
		with self.assertRaises(frappe.DoesNotExistError):
			api.page(result_id, 2)
		with self.assertRaises(frappe.DoesNotExistError):
			api.dashboard_pdf(result_id)
