"""A fake of the system intake reads and writes (what the frappe edge does on a site), and a session."""

from __future__ import annotations

from noviz_agent.engine.session import Limits, Person, Session
from noviz_agent.intake.files import IntakeError
from noviz_agent.intake.files import Limits as FileLimits
from noviz_agent.tools import build_registry

SUPPLIERS = [
	{"name": "Seed Supplier 01", "title": "Seed Supplier 01", "tax_id": "US-11-1111111"},
	{"name": "Seed Supplier 02", "title": "Seed Supplier 02", "tax_id": None},
	{"name": "Acme Office Supplies", "title": "Acme Office Supplies Inc.", "tax_id": "DE811122233"},
]
CUSTOMERS = [{"name": "Seed Customer 01", "title": "Seed Customer 01", "tax_id": None}]
ITEMS = [
	{"item_code": "SEED-01", "item_name": "Office Chair", "supplier_parts": [["Seed Supplier 01", "OC-100"]]},
	{"item_code": "SEED-02", "item_name": "Standing Desk", "supplier_parts": []},
	{"item_code": "SEED-10", "item_name": "Toner Cartridge", "supplier_parts": []},
	{"item_code": "SEED-11", "item_name": "Coffee Beans 1kg", "supplier_parts": []},
]


class FakeSystem:
	def __init__(
		self,
		*,
		vision=None,
		creatable=("Purchase Invoice", "Sales Order", "Purchase Receipt", "Supplier", "Customer", "Item"),
		bills=None,
		max_bytes=None,
	):
		self.files: dict[str, tuple[str, bytes, str]] = {}
		self.vision = vision
		self.creatable = set(creatable)
		self.bills = bills or {}
		self.inserted: list[tuple[dict, str]] = []
		self.file_limits = FileLimits(max_bytes=max_bytes) if max_bytes else FileLimits()

	def add_file(
		self, name: str, content: bytes, owner: str = "buyer@example.com", filename: str = "invoice.pdf"
	) -> str:
		self.files[name] = (filename, content, owner)
		return name

	def read_file(self, file):
		filename, content, owner = self.files[file]
		if owner != self.user:
			raise IntakeError(f"File {file} is not one of your uploads.")
		return filename, content

	user = "buyer@example.com"

	def limits(self):
		return self.file_limits

	def vision_model(self):
		return self.vision

	def parties(self, party_type):
		return SUPPLIERS if party_type == "supplier" else CUSTOMERS

	def items(self):
		return ITEMS

	def currencies(self):
		return {"USD", "EUR", "GBP", "CHF"}

	def existing_bills(self, supplier, bill_no):
		return list(self.bills.get((supplier, bill_no), []))

	def can_create(self, doctype):
		return doctype in self.creatable

	def insert_draft(self, draft, file):
		self.inserted.append((draft, file))
		return {
			"name": f"ACC-PINV-{len(self.inserted):05d}",
			"_link": "/app/purchase-invoice/x",
			"new_records": [],
		}


class NoEntities:
	user = "buyer@example.com"

	def entities(self):
		return []

	def permissions(self, entity):
		return set()


def make_session(system: FakeSystem, user: str = "buyer@example.com") -> Session:
	system.user = user
	registry = build_registry()
	connector = NoEntities()
	connector.user = user
	return Session(
		person=Person(user=user),
		connector=connector,
		registry=registry,
		allowed=frozenset(registry.names()),
		limits=Limits(),
		intake=system,
	)
