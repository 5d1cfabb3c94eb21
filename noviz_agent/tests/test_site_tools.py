"""Analytics, workflow and knowledge tools on a live site, through the gateway, as the person.

Sessions are built by the product's own `frappe_session.build_session` in each person's
session, so the connector, the allowance and the proposal store are the real ones. Figures
are checked against `frappe.get_list` run as the same person. Run with
`bench --site S run-tests --app noviz_agent --module noviz_agent.tests.test_site_tools`.
Everything is rolled back in tearDown, except the hidden `workflow_state` custom field on
Purchase Order: adding a column is DDL, which MariaDB commits at once (see setUpClass).
"""

from __future__ import annotations

import dataclasses

import frappe
from frappe.utils import add_days, add_months, getdate, nowdate

from noviz_agent.connectors.frappe_connector import FrappeConnector
from noviz_agent.edge import frappe_knowledge, frappe_session
from noviz_agent.engine import gateway
from noviz_agent.engine.errors import ValidationFailed
from noviz_agent.tests.utils import ACCOUNTS, ADMIN, SALES, PeopleTestCase, ensure_user

BUYER = "noviz.buyer@noviz.test"
APPROVER = "noviz.approver@noviz.test"
WORKFLOW = "Noviz Test PO Approval"


def session_for(user: str, **fields):
	"""The product's session for `user`, with writes switched on (and `fields` of the Session replaced)."""
	frappe.set_user(user)
	values = {**frappe_session.load_settings(), "enable_writes": 1}
	session = frappe_session.build_session(values, progress=False)
	return dataclasses.replace(session, **fields)


def period_start(months: int = 24) -> str:
	"""The first day the analytics sources read by default (24 months back, first of the month)."""
	return getdate(add_months(getdate(nowdate()).replace(day=1), -months)).isoformat()


def kpi(data: dict, label: str) -> float:
	found = [k["value"] for k in data["kpis"] if k["label"] == label]
	if not found:
		raise AssertionError(f"No KPI {label!r} in {[k['label'] for k in data['kpis']]}")
	return found[0]


def _names(filters: dict) -> list[str]:
	return frappe.get_all("Sales Invoice", filters=filters, pluck="name") or [""]


class SiteToolsCase(PeopleTestCase):
	def tearDown(self):
		super().tearDown()
		# The workflow name is cached in Redis, which a rollback does not touch.
		frappe.cache.hdel("workflow", "Purchase Order")
		frappe.clear_cache(doctype="Purchase Order")


class TestAnalytics(SiteToolsCase):
	def test_catalog_finds_the_monthly_revenue_trend(self):
		result = gateway.call_tool(
			session_for(ADMIN), "analytics.catalog", {"words": "monthly revenue trend"}
		)
		self.assertEqual(result.status, "ok", result.error)
		self.assertIn("sales.monthly_trend", [a["key"] for a in result.data["analyses"]])

	def trend_total_against_the_invoices(self, months: int = 24, max_lines: int | None = None):
		"""analytics.build's total revenue beside sum(base_net_total) of the same invoices, as Administrator."""
		start = period_start(months)
		session = session_for(ADMIN)
		# Analyses read one company: the person's default.
		filters = {"docstatus": 1, "posting_date": [">=", start], "company": session.person.company}
		totals = frappe.get_list(
			"Sales Invoice", pluck="base_net_total", filters=filters, limit_page_length=0
		)
		expected = frappe._dict(t=sum(totals), n=len(totals))
		self.assertGreater(expected.n, 0, "no submitted sales invoices in the period: seed the site")
		if max_lines is not None:
			lines = frappe.db.count("Sales Invoice Item", {"docstatus": 1, "parent": ["in", _names(filters)]})
			self.assertLess(lines, max_lines, "the period holds too many invoice lines for this check")
		params = {"horizon": 3} if months == 24 else {"start": start, "horizon": 3}
		result = gateway.call_tool(
			session, "analytics.build", {"key": "sales.monthly_trend", "params": params}
		)
		self.assertEqual(result.status, "ok", result.error)
		self.assertEqual(result.data["company"], session.person.company)
		# The sales source sums items.net_amount (base_net_amount): per invoice, base_net_total.
		self.assertAlmostEqual(kpi(result.data, "Total revenue"), float(expected.t), delta=0.5)
		return result

	# Over 500 invoice lines here: the site serves at most 500 rows a page, so this proves paging.
	def test_monthly_trend_total_equals_the_invoices_as_administrator(self):
		self.trend_total_against_the_invoices()

	def test_gross_margin_takes_cost_from_the_stock_ledger_or_says_there_is_none(self):
		session = session_for(ADMIN)
		delivered = frappe.db.sql(
			"""select count(*) from `tabStock Ledger Entry` sle
			join `tabSales Invoice Item` line on line.name = sle.voucher_detail_no or line.dn_detail = sle.voucher_detail_no
			join `tabSales Invoice` si on si.name = line.parent
			where si.company = %s and si.docstatus = 1 and sle.is_cancelled = 0 and si.posting_date >= %s""",
			(session.person.company, period_start(6)),
		)[0][0]
		result = gateway.call_tool(
			session,
			"analytics.build",
			{"key": "margins.gross_margin_trend", "params": {"start": period_start(6)}},
		)
		if delivered:
			self.assertEqual(result.status, "ok", result.error)
			self.assertIn("Gross profit", [k["label"] for k in result.data["kpis"]])
			self.assertTrue(
				any("stock ledger" in w for w in result.data["warnings"]), result.data["warnings"]
			)
		else:
			# Nothing left stock against these invoices: no cost, and none is made up from item rates.
			self.assertEqual(result.status, "error")
			self.assertIn("not estimated from item master", result.error)

	def test_monthly_trend_of_a_quarter_equals_the_invoices_and_forecasts(self):
		result = self.trend_total_against_the_invoices(months=3, max_lines=500)
		self.assertTrue(result.data["result_id"])
		self.assertTrue(any(k["label"].startswith("Forecast ") for k in result.data["kpis"]))

	def test_monthly_trend_counts_a_foreign_currency_invoice_in_company_currency(self):
		# The company the analysis reads: the person's default.
		company = session_for(ADMIN).person.company
		self.assertNotEqual(
			frappe.get_cached_value("Company", company, "default_currency"),
			"EUR",
			"precondition: a non-EUR company",
		)
		invoice = frappe.get_all(
			"Sales Invoice",
			fields=["customer", "company"],
			filters={"docstatus": 1, "company": company},
			limit=1,
		)[0]
		item = frappe.get_all(
			"Sales Invoice Item",
			fields=["item_code"],
			filters={"docstatus": 1, "parent": ("like", "%")},
			limit=1,
		)[0]
		# A customer billed in EUR needs a receivable account in EUR (ERPNext requires the party
		# account's currency to be the invoice's); the company keeps its own currency.
		parent = frappe.db.get_value(
			"Account", {"company": company, "account_type": "Receivable", "is_group": 1}, "name"
		) or frappe.db.get_value("Account", {"company": company, "root_type": "Asset", "is_group": 1}, "name")
		receivable = frappe.get_doc(
			{
				"doctype": "Account",
				"account_name": "Noviz Test Debtors EUR",
				"company": company,
				"parent_account": parent,
				"account_type": "Receivable",
				"account_currency": "EUR",
			}
		).insert()
		customer = frappe.get_doc(
			{
				"doctype": "Customer",
				"customer_name": "Noviz Test EUR Customer",
				"customer_group": frappe.db.get_value("Customer Group", {"is_group": 0}, "name"),
				"territory": frappe.db.get_value("Territory", {"is_group": 0}, "name"),
				"default_currency": "EUR",
				"accounts": [{"company": company, "account": receivable.name}],
			}
		).insert()
		doc = frappe.get_doc(
			{
				"doctype": "Sales Invoice",
				"customer": customer.name,
				"company": invoice.company,
				"currency": "EUR",
				"conversion_rate": 1.25,
				"set_posting_time": 1,
				"posting_date": add_days(nowdate(), -3),
				"due_date": add_days(nowdate(), 27),
				"items": [{"item_code": item.item_code, "qty": 2, "rate": 1000}],
			}
		)
		doc.insert()
		doc.submit()
		self.assertEqual((doc.net_total, doc.base_net_total), (2000, 2500))
		self.trend_total_against_the_invoices(months=3, max_lines=500)

	def test_monthly_trend_is_refused_to_a_sales_user_with_the_system_message(self):
		frappe.set_user(SALES)
		with self.assertRaises(frappe.PermissionError):
			frappe.get_list("Sales Invoice", limit_page_length=1)
		result = gateway.call_tool(session_for(SALES), "analytics.build", {"key": "sales.monthly_trend"})
		self.assertEqual(result.status, "refused", result.error)
		self.assertIn("Sales Invoice", result.error)
		self.assertNotIn("<", result.error)

	def test_aggregate_by_customer_equals_get_list_as_the_same_person(self):
		session = session_for(ACCOUNTS)
		invoices = frappe.get_list(
			"Sales Invoice",
			fields=["customer", "grand_total"],
			filters={"docstatus": 1, "company": session.person.company},
			limit_page_length=0,
		)
		self.assertTrue(invoices)
		want: dict = {}
		for row in invoices:
			revenue, count = want.get(row.customer, (0.0, 0))
			want[row.customer] = (revenue + float(row.grand_total), count + 1)
		want = {k: (round(v[0], 2), v[1]) for k, v in want.items()}
		self.assertLessEqual(len(want), 50, "more customers than one aggregate page")
		result = gateway.call_tool(
			session,
			"analytics.aggregate",
			{
				"entity": "sales_invoice",
				"metrics": [
					{"fn": "sum", "field": "total", "as": "revenue"},
					{"fn": "count", "as": "invoices"},
				],
				"group_by": ["customer"],
				"filters": [{"field": "docstatus", "op": "=", "value": 1}],
				"order_by": "revenue desc",
				"limit": 50,
			},
		)
		self.assertEqual(result.status, "ok", result.error)
		got = {r["customer"]: (round(r["revenue"], 2), r["invoices"]) for r in result.data["rows"]}
		self.assertEqual(got, want)
		revenues = [r["revenue"] for r in result.data["rows"]]
		self.assertEqual(revenues, sorted(revenues, reverse=True))

	def test_aggregate_is_refused_to_a_sales_user(self):
		result = gateway.call_tool(
			session_for(SALES),
			"analytics.aggregate",
			{"entity": "sales_invoice", "metrics": [{"fn": "count"}], "group_by": ["customer"]},
		)
		self.assertEqual(result.status, "refused", result.error)
		self.assertIn("Sales Invoice", result.error)


class TestWorkflow(SiteToolsCase):
	@classmethod
	def setUpClass(cls):
		super().setUpClass()
		# Creating a Workflow adds this field if it is missing; the ALTER TABLE would commit the
		# test's open transaction midway, so it is added once here, as the Workflow would add it.
		if not frappe.get_meta("Purchase Order").get_field("workflow_state"):
			frappe.get_doc(
				{
					"doctype": "Custom Field",
					"dt": "Purchase Order",
					"fieldname": "workflow_state",
					"label": "Workflow State",
					"hidden": 1,
					"allow_on_submit": 1,
					"no_copy": 1,
					"fieldtype": "Link",
					"options": "Workflow State",
				}
			).insert(ignore_permissions=True)
			frappe.db.commit()

	def setUp(self):
		super().setUp()
		ensure_user(BUYER, "Purchase User")
		ensure_user(APPROVER, "Purchase Manager")

	def make_workflow(self):
		for state in ("Draft", "Pending Approval", "Approved"):
			if not frappe.db.exists("Workflow State", state):
				frappe.get_doc({"doctype": "Workflow State", "workflow_state_name": state}).insert()
		for action in ("Submit for Approval", "Approve"):
			if not frappe.db.exists("Workflow Action Master", action):
				frappe.get_doc({"doctype": "Workflow Action Master", "workflow_action_name": action}).insert()
		workflow = frappe.get_doc(
			{
				"doctype": "Workflow",
				"workflow_name": WORKFLOW,
				"document_type": "Purchase Order",
				"workflow_state_field": "workflow_state",
				"is_active": 1,
				"send_email_alert": 0,
				"states": [
					{"state": "Draft", "doc_status": "0", "allow_edit": "Purchase User"},
					{"state": "Pending Approval", "doc_status": "0", "allow_edit": "Purchase Manager"},
					{"state": "Approved", "doc_status": "1", "allow_edit": "Purchase Manager"},
				],
				"transitions": [
					{
						"state": "Draft",
						"action": "Submit for Approval",
						"next_state": "Pending Approval",
						"allowed": "Purchase User",
						"allow_self_approval": 1,
					},
					{
						"state": "Pending Approval",
						"action": "Approve",
						"next_state": "Approved",
						"allowed": "Purchase Manager",
						"allow_self_approval": 0,
					},
				],
			}
		)
		workflow.insert(ignore_permissions=True)
		frappe.cache.hdel("workflow", "Purchase Order")
		return workflow

	def make_po(self) -> str:
		template = frappe.get_all(
			"Purchase Order Item",
			fields=["item_code", "warehouse", "parent"],
			filters={"docstatus": 1, "parenttype": "Purchase Order"},
			limit=1,
		)[0]
		supplier, company = frappe.db.get_value("Purchase Order", template.parent, ["supplier", "company"])
		po = frappe.get_doc(
			{
				"doctype": "Purchase Order",
				"supplier": supplier,
				"company": company,
				"transaction_date": nowdate(),
				"schedule_date": add_days(nowdate(), 7),
				"items": [
					{
						"item_code": template.item_code,
						"qty": 3,
						"rate": 100,
						"warehouse": template.warehouse,
						"schedule_date": add_days(nowdate(), 7),
					}
				],
			}
		)
		po.insert()
		return po.name

	def state(self, name: str) -> tuple[str, int]:
		row = frappe.db.get_value("Purchase Order", name, ["workflow_state", "docstatus"], as_dict=True)
		return row.workflow_state, row.docstatus

	def test_without_a_workflow_it_explains_the_docstatus_path(self):
		frappe.cache.hdel("workflow", "Purchase Order")
		name = frappe.get_all("Purchase Order", filters={"docstatus": 1}, pluck="name", limit=1)[0]
		result = gateway.call_tool(
			session_for(ADMIN), "workflow.describe", {"entity": "purchase_order", "name": name}
		)
		self.assertEqual(result.status, "ok", result.error)
		self.assertIsNone(result.data["workflow"])
		self.assertIn("docstatus", result.data["explanation"])
		self.assertIn("Submit", result.data["explanation"])
		self.assertEqual(result.data["docstatus"], 1)
		self.assertEqual(result.data["actions_now"], ["cancel"])

	def test_describe_lists_the_live_states_and_transitions(self):
		self.make_workflow()
		result = gateway.call_tool(session_for(BUYER), "workflow.describe", {"entity": "purchase_order"})
		self.assertEqual(result.status, "ok", result.error)
		self.assertEqual(result.data["workflow"], WORKFLOW)
		self.assertEqual(
			[(s["state"], s["docstatus"]) for s in result.data["states"]],
			[("Draft", 0), ("Pending Approval", 0), ("Approved", 1)],
		)
		self.assertEqual(
			[(t["from"], t["action"], t["to"], t["allowed_role"]) for t in result.data["transitions"]],
			[
				("Draft", "Submit for Approval", "Pending Approval", "Purchase User"),
				("Pending Approval", "Approve", "Approved", "Purchase Manager"),
			],
		)
		self.assertEqual([t.get("self_approval") for t in result.data["transitions"]], [True, False])

	def test_actions_differ_by_role_on_one_order(self):
		self.make_workflow()
		name = self.make_po()
		self.assertEqual(self.state(name), ("Draft", 0))
		buyer = gateway.call_tool(
			session_for(BUYER), "workflow.describe", {"entity": "purchase_order", "name": name}
		)
		approver = gateway.call_tool(
			session_for(APPROVER), "workflow.describe", {"entity": "purchase_order", "name": name}
		)
		self.assertEqual(buyer.status, "ok", buyer.error)
		self.assertEqual(approver.status, "ok", approver.error)
		self.assertEqual(buyer.data["current_state"], "Draft")
		self.assertEqual([a["action"] for a in buyer.data["your_actions"]], ["Submit for Approval"])
		self.assertEqual(approver.data["your_actions"], [])
		self.assertIn("Purchase User", approver.data["note"])

	def test_apply_is_a_proposal_until_the_person_confirms(self):
		self.make_workflow()
		name = self.make_po()
		buyer = session_for(BUYER)
		args = {"entity": "purchase_order", "name": name, "action": "Submit for Approval"}
		proposed = gateway.call_tool(buyer, "workflow.apply", args)
		self.assertEqual(proposed.status, "proposal", proposed.error)
		self.assertIn("Draft → Pending Approval", proposed.proposal["summary"])
		self.assertEqual(self.state(name), ("Draft", 0))

		done = gateway.confirm(session_for(BUYER), proposed.proposal["token"])
		self.assertEqual(done.status, "ok", done.error)
		self.assertEqual(self.state(name), ("Pending Approval", 0))
		self.assertEqual(frappe.db.get_value("Purchase Order", name, "modified_by"), BUYER)
		again = gateway.confirm(session_for(BUYER), proposed.proposal["token"])
		self.assertEqual(again.status, "refused")

	def test_a_direct_submit_under_the_workflow_is_refused_and_names_the_way(self):
		"""frappe's doc.submit() would put the order into Approved past the workflow's roles; the desk
		offers no Submit under a workflow, and neither the tool nor the connector does."""
		self.make_workflow()
		name = self.make_po()
		self.assertTrue(frappe.has_permission("Purchase Order", "submit", user=APPROVER))
		result = gateway.call_tool(session_for(APPROVER), "purchase_order.submit", {"name": name})
		self.assertEqual(result.status, "error")
		self.assertIsNone(result.proposal)
		self.assertIn(f'workflow "{WORKFLOW}"', result.error)
		self.assertIn("workflow.apply", result.error)
		frappe.set_user(APPROVER)
		with self.assertRaises(ValidationFailed):
			FrappeConnector(APPROVER).submit("purchase_order", name)
		frappe.set_user(ADMIN)
		self.assertEqual(self.state(name), ("Draft", 0))

	def test_approval_needs_the_role_and_then_submits_as_the_approver(self):
		self.make_workflow()
		name = self.make_po()
		frappe.set_user(BUYER)
		frappe.model.workflow.apply_workflow(frappe.get_doc("Purchase Order", name), "Submit for Approval")
		self.assertEqual(self.state(name), ("Pending Approval", 0))

		refused = gateway.call_tool(
			session_for(BUYER),
			"workflow.apply",
			{"entity": "purchase_order", "name": name, "action": "Approve"},
		)
		self.assertNotEqual(refused.status, "proposal")
		self.assertIn("'Approve' is not available", refused.error)
		self.assertEqual(self.state(name), ("Pending Approval", 0))

		args = {"entity": "purchase_order", "name": name, "action": "Approve"}
		proposed = gateway.call_tool(session_for(APPROVER), "workflow.apply", args)
		self.assertEqual(proposed.status, "proposal", proposed.error)
		stolen = gateway.confirm(session_for(BUYER), proposed.proposal["token"])
		self.assertEqual(stolen.status, "refused")
		self.assertEqual(self.state(name), ("Pending Approval", 0))

		done = gateway.confirm(session_for(APPROVER), proposed.proposal["token"])
		self.assertEqual(done.status, "ok", done.error)
		self.assertEqual(self.state(name), ("Approved", 1))
		self.assertEqual(done.data["state"], "Approved")


class TestKnowledge(SiteToolsCase):
	@classmethod
	def setUpClass(cls):
		super().setUpClass()
		# What `bench --site S noviz-agent index-knowledge` runs; unchanged documents are skipped.
		cls.values = frappe_session.load_settings(with_secrets=True)
		cls.report = frappe_knowledge.index(cls.values)

	def knowledge(self):
		from knowledge.service import open_knowledge

		return lambda: open_knowledge(frappe_knowledge.config(self.values))

	def test_search_returns_titled_passages_through_the_gateway(self):
		session = session_for(ACCOUNTS, knowledge=self.knowledge())
		result = gateway.call_tool(
			session, "knowledge.search", {"query": "why can't I edit a submitted invoice", "limit": 5}
		)
		self.assertEqual(result.status, "ok", result.error)
		passages = result.data["passages"]
		self.assertTrue(passages)
		for passage in passages:
			self.assertTrue(passage["title"])
			self.assertEqual(passage["source"], f"{passage['title']} > {passage['section']}")
		text = " ".join(p["content"].lower() for p in passages)
		self.assertTrue("submit" in text or "cancel" in text)

	# Bug: nothing on the site put the knowledge base into the session (build_session
	# leaves it empty and api.py only wires the prompt retriever), so knowledge.search as the
	# product builds the session says "No knowledge base is set up" even after indexing.
	def test_search_works_in_the_session_the_product_builds(self):
		result = gateway.call_tool(
			session_for(ACCOUNTS), "knowledge.search", {"query": "purchase order pending approval"}
		)
		self.assertEqual(result.status, "ok", result.error)
		self.assertTrue(result.data["passages"])
