"""The frappe connector on a live site, as two people with different roles.

Runs with `bench --site S run-tests --app noviz_agent --module noviz_agent.tests.test_frappe_connector`.
Everything it writes is rolled back in tearDown.
"""

from __future__ import annotations

import frappe

from noviz_agent.connectors.frappe_connector import FrappeConnector
from noviz_agent.edge.frappe_versions import DESK_PREFIX
from noviz_agent.engine.errors import NotFound, PermissionDenied, ToolError
from noviz_agent.tests.utils import SiteTestCase

SALES_USER = "noviz-sales-user@example.com"


class TestFrappeConnector(SiteTestCase):
	def setUp(self):
		frappe.set_user("Administrator")
		if not frappe.db.exists("User", SALES_USER):
			user = frappe.new_doc("User")
			user.update({"email": SALES_USER, "first_name": "Noviz Sales", "send_welcome_email": 0})
			user.append("roles", {"role": "Sales User"})
			user.insert()
		self.group = frappe.db.get_value("Customer Group", {"is_group": 0}, "name")
		self.territory = frappe.db.get_value("Territory", {"is_group": 0}, "name")
		self.customers = []
		for i, name in enumerate(("Noviz Test Alpha", "Noviz Test Beta", "Noviz Test Gamma")):
			doc = frappe.new_doc("Customer")
			doc.update(
				{
					"customer_name": name,
					"customer_group": self.group,
					"territory": self.territory,
					"customer_type": "Company" if i else "Individual",
				}
			)
			doc.insert()
			self.customers.append(doc.name)

	def tearDown(self):
		frappe.set_user("Administrator")
		frappe.db.rollback()

	def as_sales_user(self) -> FrappeConnector:
		frappe.set_user(SALES_USER)
		return FrappeConnector()

	def test_connector_refuses_to_act_for_someone_else(self):
		with self.assertRaises(ValueError):
			FrappeConnector(user=SALES_USER)

	def test_entities_are_those_installed_on_the_site(self):
		conn = FrappeConnector()
		keys = conn.entities()
		self.assertIn("sales_invoice", keys)
		self.assertIn("employee", keys)
		has_hrms = bool(frappe.db.exists("DocType", "Leave Application"))
		self.assertEqual("leave_application" in keys, has_hrms)

	def test_permissions_differ_by_role(self):
		admin = FrappeConnector()
		self.assertIn("read", admin.permissions("sales_invoice"))
		sales = self.as_sales_user()
		self.assertIn("read", sales.permissions("sales_order"))
		self.assertNotIn("read", sales.permissions("sales_invoice"))
		self.assertNotIn("submit", sales.permissions("customer"))

	def test_sales_user_is_refused_sales_invoices_with_the_system_message(self):
		sales = self.as_sales_user()
		with self.assertRaises(PermissionDenied) as refused:
			sales.list("sales_invoice", fields=["customer", "total"])
		self.assertNotIn("<", str(refused.exception))
		self.assertIn("Sales Invoice", str(refused.exception))
		with self.assertRaises(PermissionDenied):
			sales.count("sales_invoice")
		with self.assertRaises(PermissionDenied):
			sales.aggregate("sales_invoice", metrics=[{"fn": "sum", "field": "total", "as": "amount"}])

	def test_administrator_reads_sales_invoices(self):
		admin = FrappeConnector()
		rows = admin.list("sales_invoice", fields=["customer", "total", "date"], limit=5)
		self.assertLessEqual(len(rows), 5)
		for row in rows:
			self.assertEqual(set(row), {"name", "customer", "total", "date"})
		self.assertEqual(admin.count("sales_invoice"), frappe.db.count("Sales Invoice"))

	def test_list_count_and_filters_in_canonical_names(self):
		conn = self.as_sales_user()
		rows = conn.list(
			"customer",
			fields=["customer_name", "customer_type"],
			filters=[["customer_name", "like", "Noviz Test"]],
			order_by="customer_name asc",
		)
		self.assertEqual(
			[r["customer_name"] for r in rows], ["Noviz Test Alpha", "Noviz Test Beta", "Noviz Test Gamma"]
		)
		filters = [["customer_name", "like", "Noviz Test"], ["customer_type", "=", "Company"]]
		self.assertEqual(conn.count("customer", filters), 2)
		with self.assertRaises(ToolError):
			conn.list("customer", filters=[["no_such_field", "=", 1]])

	def test_aggregate_matches_the_database(self):
		conn = self.as_sales_user()
		rows = conn.aggregate(
			"customer",
			metrics=[{"fn": "count", "as": "customers"}],
			group_by=["customer_type"],
			filters=[["customer_name", "like", "Noviz Test"]],
		)
		self.assertEqual({r["customer_type"]: r["customers"] for r in rows}, {"Company": 2, "Individual": 1})

	def test_aggregate_sum_over_orders_under_permissions(self):
		conn = self.as_sales_user()
		rows = conn.aggregate(
			"sales_order",
			metrics=[{"fn": "sum", "field": "total", "as": "amount"}, {"fn": "count", "as": "orders"}],
			group_by=["customer"],
		)
		frappe.set_user("Administrator")
		expected = {}
		for so in frappe.get_list("Sales Order", fields=["customer", "grand_total"], limit_page_length=0):
			expected[so.customer] = expected.get(so.customer, 0) + so.grand_total
		self.assertEqual(
			{r["customer"]: round(r["amount"], 2) for r in rows},
			{k: round(v, 2) for k, v in expected.items()},
		)

	def test_get_checks_permission_and_returns_link(self):
		conn = self.as_sales_user()
		record = conn.get("customer", self.customers[0])
		self.assertEqual(record["customer_name"], "Noviz Test Alpha")
		self.assertTrue(record["_link"].startswith(f"{DESK_PREFIX}/customer/"), record["_link"])
		with self.assertRaises(NotFound):
			conn.get("customer", "No Such Customer 123")
		name = frappe.db.get_value("Sales Invoice", {}, "name")
		self.assertTrue(name, "precondition: the site has a sales invoice")
		with self.assertRaises(PermissionDenied):
			conn.get("sales_invoice", name)

	def test_meta_reports_site_options(self):
		meta = FrappeConnector().meta("sales_invoice")
		fields = {f["key"]: f for f in meta["fields"]}
		self.assertIn("Overdue", fields["status"]["options"])
		self.assertEqual(fields["customer"]["link"], "Customer")
		self.assertEqual(fields["total"]["type"], "Currency")

	def test_create_and_update_as_the_person(self):
		conn = self.as_sales_user()
		record = conn.create(
			"customer",
			{"customer_name": "Noviz Test Delta", "customer_group": self.group, "territory": self.territory},
		)
		self.assertEqual(frappe.db.get_value("Customer", record["name"], "owner"), SALES_USER)
		updated = conn.update("customer", record["name"], {"website": "https://delta.example.com"})
		self.assertEqual(updated["website"], "https://delta.example.com")

	def test_reports_follow_roles(self):
		sales = self.as_sales_user()
		names = {r["name"] for r in sales.list_reports()}
		self.assertNotIn("Accounts Receivable", names)
		with self.assertRaises(PermissionDenied):
			sales.run_report("Accounts Receivable", {"company": frappe.db.get_value("Company", {}, "name")})
		frappe.set_user("Administrator")
		admin = FrappeConnector()
		reports = {r["name"]: r for r in admin.list_reports()}
		self.assertIn("Accounts Receivable", reports)
		self.assertIn("company", [f["fieldname"] for f in reports["Accounts Receivable"]["filters"]])
		company = frappe.db.get_value("Company", {}, "name")
		result = admin.run_report(
			"Accounts Receivable",
			{
				"company": company,
				"report_date": frappe.utils.today(),
				"ageing_based_on": "Due Date",
				"range": "30, 60, 90, 120",
			},
		)
		self.assertTrue(result["columns"])
		self.assertTrue(all(isinstance(r, dict) for r in result["rows"]))

	def test_workflow_is_none_without_one(self):
		self.assertIsNone(FrappeConnector().workflow("customer"))
		self.assertIsNone(FrappeConnector().workflow("customer", self.customers[0]))

	def test_every_mapped_field_exists_on_this_site(self):
		from noviz_agent.connectors.model import STANDARD_FIELDS

		standard = {v[0] for v in STANDARD_FIELDS.values()}
		conn = FrappeConnector()
		problems = []
		for key in conn.entities():
			ent = conn.model.entity(key)
			groups = [(ent.doctype, ent.fields)] + [(c.doctype, c.fields) for c in ent.children.values()]
			for doctype, fields in groups:
				meta = frappe.get_meta(doctype)
				problems += [
					f"{doctype}.{f.field}"
					for f in fields.values()
					if f.field not in standard and not meta.get_field(f.field)
				]
		self.assertEqual(problems, [])

	def test_child_table_fields_and_aggregates(self):
		conn = FrappeConnector()
		rows, offset = [], 0
		while True:  # every line, whatever the site holds: a page is at most 500 rows
			page = conn.list(
				"sales_invoice", fields=["customer", "items.item", "items.qty"], limit=500, offset=offset
			)
			rows += page
			offset += len(page)
			if not page:
				break
		lines = frappe.get_list(
			"Sales Invoice Item",
			fields=["parent", "item_code", "amount"],
			parent_doctype="Sales Invoice",
			limit_page_length=0,
		)
		self.assertEqual(
			{(r["name"], r["items.item"]) for r in rows}, {(r.parent, r.item_code) for r in lines}
		)
		totals = conn.aggregate(
			"sales_invoice",
			metrics=[{"fn": "sum", "field": "items.amount", "as": "amount"}],
			group_by=["items.item"],
		)
		expected = {}
		for line in lines:
			expected[line.item_code] = expected.get(line.item_code, 0) + line.amount
		self.assertEqual(
			{r["items.item"]: round(r["amount"], 2) for r in totals},
			{k: round(v, 2) for k, v in expected.items()},
		)
		self.assertTrue(lines, "precondition: the site has submitted sales invoice lines")
		self.assertEqual(
			conn.count("sales_invoice", {"items.item": lines[0].item_code}),
			len({line.parent for line in lines if line.item_code == lines[0].item_code}),
		)
