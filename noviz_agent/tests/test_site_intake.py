"""Document intake on a live site: a generated supplier invoice for a seeded supplier becomes a draft
Purchase Invoice after Confirm, with the file attached, as a person with Accounts User rights; a person
without them is refused; FeRD's official Factur-X sample becomes a draft with its supplier, lines,
taxes and total exactly as its XML states. Run with
`bench --site S run-tests --app noviz_agent --module noviz_agent.tests.test_site_intake`.
Needs the seeded suppliers and items (benchmarks/bench_seed.py); everything is rolled back after.
"""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import frappe

from noviz_agent.edge import frappe_files, frappe_session
from noviz_agent.engine import gateway
from noviz_agent.intake.files import IntakeError
from noviz_agent.testing.invoices import InvoiceSpec, Line, render_pdf
from noviz_agent.tests.utils import ACCOUNTS, ADMIN, SALES, PeopleTestCase

SUPPLIER = "Seed Supplier 01"


def session_for(user: str):
	frappe.set_user(user)
	values = {**frappe_session.load_settings(), "enable_writes": 1}
	return values, frappe_session.build_session(values, progress=False)


class TestIntake(PeopleTestCase):
	def setUp(self):
		super().setUp()
		self.assertTrue(frappe.db.exists("Supplier", SUPPLIER), "the site needs bench_seed's suppliers")
		items = frappe.get_all(
			"Item",
			filters={"item_code": ["like", "SEED-%"]},
			fields=["item_code", "item_name"],
			limit=2,
			order_by="item_code",
		)
		self.assertEqual(len(items), 2, "the site needs bench_seed's items")
		number = "NOVIZ-TEST-" + frappe.generate_hash(length=6)
		self.spec = InvoiceSpec(
			party_name=SUPPLIER,
			number=number,
			# Descriptions only, as a supplier prints them: the items are found by name.
			lines=[Line(items[0].item_name, 2, 150.0), Line(items[1].item_name, 1, 600.0)],
			date=dt.date.today() - dt.timedelta(days=3),
			due_date=dt.date.today() + dt.timedelta(days=27),
		)
		self.items = [i.item_code for i in items]

	def upload(self, user: str):
		values, session = session_for(user)
		file = frappe_files.save_upload(render_pdf(self.spec), "supplier-invoice.pdf", None, values)
		return session, file

	def test_supplier_invoice_becomes_a_draft_purchase_invoice_with_the_file_attached(self):
		session, file = self.upload(ACCOUNTS)
		result = gateway.call_tool(session, "documents.intake", {"file": file})
		self.assertEqual(result.status, "proposal", result.error)
		self.assertFalse(
			frappe.db.exists("Purchase Invoice", {"bill_no": self.spec.number}), "nothing before Confirm"
		)
		self.assertEqual(result.proposal["draft"]["values"]["supplier"], SUPPLIER)
		done = gateway.confirm(session, result.proposal["token"])
		self.assertEqual(done.status, "ok", done.error)
		name = done.data["name"]
		doc = frappe.get_doc("Purchase Invoice", name)
		self.assertEqual((doc.docstatus, doc.supplier, doc.bill_no), (0, SUPPLIER, self.spec.number))
		self.assertEqual(doc.owner, ACCOUNTS)
		self.assertEqual([row.item_code for row in doc.items], self.items)
		self.assertAlmostEqual(doc.total, self.spec.subtotal)
		attached = frappe.get_all(
			"File",
			filters={"attached_to_doctype": "Purchase Invoice", "attached_to_name": name},
			fields=["file_name", "is_private"],
		)
		self.assertEqual([(f.file_name, f.is_private) for f in attached], [("supplier-invoice.pdf", 1)])

	def test_same_invoice_number_again_is_flagged_as_duplicate(self):
		session, file = self.upload(ACCOUNTS)
		first = gateway.call_tool(session, "documents.intake", {"file": file})
		self.assertEqual(gateway.confirm(session, first.proposal["token"]).status, "ok")
		session, again = self.upload(ACCOUNTS)
		second = gateway.call_tool(session, "documents.intake", {"file": again})
		self.assertEqual(len(second.proposal["duplicates"]), 1)
		self.assertIn("Likely duplicate", second.proposal["warning"]["message"])

	def test_person_without_accounts_rights_is_refused(self):
		self.assertFalse(frappe.has_permission("Purchase Invoice", "create", user=SALES))
		session, file = self.upload(SALES)
		result = gateway.call_tool(session, "documents.intake", {"file": file})
		self.assertEqual(result.status, "refused")
		self.assertIn("Purchase Invoice", result.error)
		self.assertFalse(frappe.db.exists("Purchase Invoice", {"bill_no": self.spec.number}))

	def test_upload_is_private_and_readable_only_by_its_owner(self):
		_, file = self.upload(ACCOUNTS)
		self.assertEqual(frappe.db.get_value("File", file, "is_private"), 1)
		frappe.set_user(SALES)
		with self.assertRaises(IntakeError):
			frappe_files.FrappeIntake(SALES, {}).read_file(file)
		frappe.set_user(ADMIN)

	def test_unusable_upload_writes_nothing(self):
		values, _ = session_for(ACCOUNTS)
		before = frappe.db.count("File")
		for content, name in ((b"", "empty.pdf"), (b"PK\x03\x04zip", "archive.pdf")):
			with self.assertRaises(IntakeError):
				frappe_files.save_upload(content, name, None, values)
		self.assertEqual(frappe.db.count("File"), before)


class TestUploadEndpoint(PeopleTestCase):
	"""The whitelisted endpoint with a real multipart request, as the chat sends it."""

	def request_with(self, content: bytes, filename: str):
		from werkzeug.test import EnvironBuilder
		from werkzeug.wrappers import Request

		builder = EnvironBuilder(method="POST", data={"file": (io.BytesIO(content), filename)})
		frappe.local.request = Request(builder.get_environ())

	def tearDown(self):
		frappe.local.request = None
		super().tearDown()
		# The settings doc is cached in Redis, which the rollback does not touch.
		frappe.clear_document_cache("Agent Settings", "Agent Settings")

	def test_upload_stores_a_private_file_in_a_new_conversation_and_answers_with_the_proposal(self):
		from noviz_agent import api

		self.assertTrue(frappe.db.exists("Supplier", SUPPLIER), "the site needs bench_seed's suppliers")
		item = frappe.get_all(
			"Item", filters={"item_code": ["like", "SEED-%"]}, fields=["item_name"], limit=1
		)[0]
		spec = InvoiceSpec(
			party_name=SUPPLIER,
			number="NOVIZ-UP-" + frappe.generate_hash(length=6),
			lines=[Line(item.item_name, 1, 99.0)],
			date=dt.date.today(),
			due_date=None,
		)
		frappe.set_user(ACCOUNTS)
		frappe.db.set_single_value("Agent Settings", "enable_writes", 1)
		self.request_with(render_pdf(spec), "upload.pdf")
		reply = api.upload_document()
		self.assertEqual(reply["response"]["type"], "proposal", reply["response"])
		shown = {f["key"]: f["value"] for f in reply["response"]["proposal"]["fields"]}
		self.assertEqual(shown["Document number"], spec.number)
		self.assertEqual(len(reply["response"]["proposal"]["tables"]["lines"]["rows"]), 1)
		conversation = frappe.get_doc("Agent Conversation", reply["conversation"])
		self.assertEqual(conversation.person, ACCOUNTS)
		self.assertIn(reply["file"], conversation.turns[-1].history_entry)
		file = frappe.db.get_value(
			"File",
			reply["file"],
			["is_private", "owner", "attached_to_doctype", "attached_to_name"],
			as_dict=True,
		)
		self.assertEqual(
			(file.is_private, file.owner, file.attached_to_doctype, file.attached_to_name),
			(1, ACCOUNTS, "Agent Conversation", conversation.name),
		)

	def test_upload_of_an_unsupported_file_is_refused_in_words(self):
		from noviz_agent import api

		frappe.set_user(ACCOUNTS)
		before = frappe.db.count("File")
		self.request_with(b"just some text", "notes.txt")
		with self.assertRaises(frappe.ValidationError) as caught:
			api.upload_document()
		self.assertIn("not a file type that can be read", str(caught.exception))
		self.assertEqual(frappe.db.count("File"), before)


FACTUR_X = (
	Path(__file__).parents[2]
	/ "benchmarks"
	/ "data"
	/ "intake_real"
	/ "einvoice"
	/ "ferd22-EN16931_Einfach.pdf"
)
SELLER, SELLER_VAT = "Lieferant GmbH", "DE123456789"
# What the sample's XML states (benchmarks/data/intake_real/einvoice/ferd22-EN16931_Einfach.pdf.json).
LINES = [("TB100A4", "Trennblätter A4", 20.0, 9.9), ("ARNR2", "Joghurt Banane", 50.0, 5.5)]
TAXES = {7.0: 19.25, 19.0: 37.62}
TOTAL, BILL_NO, BILL_DATE = 529.87, "471102", "2018-03-05"


class TestFacturX(PeopleTestCase):
	"""An uploaded Factur-X PDF read from its XML into a Purchase Invoice draft, confirmed as the person."""

	def setUp(self):
		super().setUp()
		self.assertTrue(FACTUR_X.exists(), "the official Factur-X sample ships with the benchmark data")
		self.company = frappe.defaults.get_user_default(
			"Company", user=ACCOUNTS
		) or frappe.defaults.get_global_default("company")
		self.assertTrue(self.company, "the site needs a default company")
		self.supplier = self._supplier()
		for code, name, _, _ in LINES:
			if not frappe.db.exists("Item", code):
				frappe.get_doc(
					{
						"doctype": "Item",
						"item_code": code,
						"item_name": name,
						"item_group": "All Item Groups",
						"stock_uom": "Nos",
						"is_stock_item": 0,
					}
				).insert()
		self.accounts = {rate: self._tax_account(rate) for rate in TAXES}
		self._books_for(BILL_DATE)

	def _supplier(self) -> str:
		existing = frappe.get_all("Supplier", filters={"tax_id": SELLER_VAT}, pluck="name")
		self.assertLessEqual(len(existing), 1, "one supplier per VAT id, or the match is ambiguous")
		if existing:
			return existing[0]
		group = frappe.db.get_single_value("Buying Settings", "supplier_group") or "All Supplier Groups"
		doc = frappe.get_doc(
			{"doctype": "Supplier", "supplier_name": SELLER, "tax_id": SELLER_VAT, "supplier_group": group}
		).insert()
		return doc.name

	def _tax_account(self, rate: float) -> str:
		filters = {
			"company": self.company,
			"account_type": "Tax",
			"is_group": 0,
			"disabled": 0,
			"tax_rate": rate,
		}
		existing = frappe.get_all("Account", filters=filters, pluck="name")
		self.assertLessEqual(len(existing), 1, f"the site has several {rate:g}% tax accounts")
		if existing:
			return existing[0]
		parent = frappe.db.get_value(
			"Account",
			{"company": self.company, "is_group": 1, "root_type": "Liability", "account_type": "Tax"},
		) or frappe.db.get_value(
			"Account", {"company": self.company, "is_group": 1, "root_type": "Liability"}
		)
		self.assertTrue(parent, "the company's chart of accounts needs a liability group")
		doc = frappe.get_doc(
			{
				"doctype": "Account",
				"account_name": f"Noviz Test VAT {rate:g}",
				"company": self.company,
				"parent_account": parent,
				"account_type": "Tax",
				"tax_rate": rate,
			}
		).insert()
		return doc.name

	def _books_for(self, day: str) -> None:
		"""The invoice is of 2018: its fiscal year, and the euro with a rate into the company's currency."""
		from erpnext.accounts.utils import FiscalYearError, get_fiscal_year

		try:
			get_fiscal_year(day, company=self.company)
		except FiscalYearError:
			frappe.get_doc(
				{
					"doctype": "Fiscal Year",
					"year": "Noviz Test 2018",
					"year_start_date": "2018-01-01",
					"year_end_date": "2018-12-31",
				}
			).insert()
		frappe.db.set_value("Currency", "EUR", "enabled", 1)
		currency = frappe.get_cached_value("Company", self.company, "default_currency")
		if currency != "EUR":
			self._payable_in_euro()
			frappe.get_doc(
				{
					"doctype": "Currency Exchange",
					"date": "2018-01-01",
					"from_currency": "EUR",
					"to_currency": currency,
					"exchange_rate": 1.1,
					"for_buying": 1,
					"for_selling": 1,
				}
			).insert()

	def _payable_in_euro(self) -> None:
		"""ERPNext books a euro invoice on a payable account in euros: the supplier gets one, as a
		supplier billing in euros has on a site whose company keeps its books in another currency."""
		default = frappe.get_cached_value("Company", self.company, "default_payable_account")
		parent = frappe.db.get_value("Account", default, "parent_account")
		account = frappe.get_doc(
			{
				"doctype": "Account",
				"account_name": "Noviz Test Creditors EUR",
				"company": self.company,
				"parent_account": parent,
				"account_type": "Payable",
				"account_currency": "EUR",
			}
		).insert()
		supplier = frappe.get_doc("Supplier", self.supplier)
		supplier.default_currency = "EUR"
		supplier.set("accounts", [{"company": self.company, "account": account.name}])
		supplier.save()

	def test_factur_x_pdf_becomes_a_purchase_invoice_draft_with_its_supplier_lines_taxes_and_total(self):
		values, session = session_for(ACCOUNTS)
		file = frappe_files.save_upload(FACTUR_X.read_bytes(), "factur-x-invoice.pdf", None, values)
		result = gateway.call_tool(session, "documents.intake", {"file": file})
		self.assertEqual(result.status, "proposal", result.error)
		proposal = result.proposal
		self.assertIn("read exactly from the e-invoice", proposal["values"]["Document"])
		draft = proposal["draft"]["values"]
		self.assertEqual(draft["supplier"], self.supplier)
		self.assertEqual(
			[(r["item_code"], r["qty"], r["rate"]) for r in draft["items"]],
			[(c, q, r) for c, _, q, r in LINES],
		)
		self.assertEqual(
			[(t["account_head"], t["tax_amount"]) for t in draft["taxes"]],
			[(self.accounts[rate], amount) for rate, amount in TAXES.items()],
		)
		self.assertEqual(proposal["draft"]["new_records"], [])
		self.assertFalse(
			frappe.db.exists("Purchase Invoice", {"supplier": self.supplier, "bill_no": BILL_NO})
		)

		done = gateway.confirm(session, proposal["token"])
		self.assertEqual(done.status, "ok", done.error)
		doc = frappe.get_doc("Purchase Invoice", done.data["name"])
		self.assertEqual(
			(doc.docstatus, doc.supplier, doc.bill_no, str(doc.bill_date)),
			(0, self.supplier, BILL_NO, BILL_DATE),
		)
		self.assertEqual((doc.owner, doc.currency), (ACCOUNTS, "EUR"))
		self.assertEqual(
			[(r.item_code, r.qty, r.rate) for r in doc.items], [(c, q, r) for c, _, q, r in LINES]
		)
		self.assertAlmostEqual(doc.total_taxes_and_charges, sum(TAXES.values()), places=2)
		self.assertAlmostEqual(doc.grand_total, TOTAL, places=2)
		attached = frappe.get_all(
			"File",
			filters={"attached_to_doctype": "Purchase Invoice", "attached_to_name": doc.name},
			fields=["file_name", "is_private"],
		)
		self.assertEqual([(f.file_name, f.is_private) for f in attached], [("factur-x-invoice.pdf", 1)])

	def test_same_einvoice_again_is_flagged_as_a_duplicate_of_the_entered_bill(self):
		values, session = session_for(ACCOUNTS)
		first = gateway.call_tool(
			session,
			"documents.intake",
			{"file": frappe_files.save_upload(FACTUR_X.read_bytes(), "first.pdf", None, values)},
		)
		self.assertEqual(gateway.confirm(session, first.proposal["token"]).status, "ok")
		again = gateway.call_tool(
			session,
			"documents.intake",
			{"file": frappe_files.save_upload(FACTUR_X.read_bytes(), "again.pdf", None, values)},
		)
		self.assertEqual(len(again.proposal["duplicates"]), 1)
		self.assertIn("Likely duplicate", again.proposal["warning"]["message"])

	def test_malformed_einvoice_xml_upload_is_refused_and_nothing_is_stored(self):
		values, _ = session_for(ACCOUNTS)
		before = frappe.db.count("File")
		with self.assertRaises(IntakeError):
			frappe_files.save_upload(b'<?xml version="1.0"?><Invoice><cbc:ID>', "broken.xml", None, values)
		self.assertEqual(frappe.db.count("File"), before)
