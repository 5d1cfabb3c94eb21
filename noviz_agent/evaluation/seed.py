"""The evaluation's data: two years of trading shaped like ``benchmarks/bench_seed.py``, in canonical rows.

The same names as the bench seed (``Seed Customer 01``, items ``SEED-01``…, ``Seed Supplier 01``…)
so the labelled questions read the same against the in-memory connector and against a site
seeded with that script. One seeded random generator and a fixed ``today`` make the data,
and so every expected figure, identical on every run.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import date, timedelta

TODAY = date(2026, 11, 30)
MONTHS = 24
TERRITORIES = ("North America", "Europe", "Asia Pacific", "United States", "Rest Of The World")
CUSTOMER_GROUPS = ("Commercial", "Government", "Non Profit", "Individual")
ITEMS = (
	("Office Chair", "Products", 180),
	("Standing Desk", "Products", 640),
	("Monitor Arm", "Products", 95),
	("Filing Cabinet", "Products", 260),
	("Conference Table", "Products", 1450),
	("LED Desk Lamp", "Products", 48),
	("Whiteboard", "Products", 120),
	("Ergonomic Keyboard", "Products", 85),
	("Printer Paper Box", "Consumable", 32),
	("Toner Cartridge", "Consumable", 76),
	("Coffee Beans 1kg", "Consumable", 24),
	("Cleaning Kit", "Consumable", 18),
	("Steel Frame", "Raw Material", 55),
	("Oak Panel", "Raw Material", 70),
	("Gas Lift Cylinder", "Raw Material", 22),
	("Fabric Roll", "Raw Material", 40),
	("Installation Service", "Services", 300),
	("Maintenance Visit", "Services", 150),
	("Office Design Consult", "Services", 900),
	("Delivery Service", "Services", 60),
)
SUPPLIERS = (
	("Seed Supplier 01", "Raw Material"),
	("Seed Supplier 02", "Hardware"),
	("Seed Supplier 03", "Local"),
)


@dataclass(frozen=True)
class Persona:
	"""Someone who asks: a site user with one role, and what that role may do out of the box."""

	key: str
	user: str
	role: str
	permissions: dict[str, frozenset[str]]


READ = frozenset({"read"})
EDIT = frozenset({"read", "create", "write"})
SUBMIT = frozenset({"read", "create", "write", "submit", "cancel"})

# ERPNext 15's default role permissions (tabDocPerm, level 0) for the entities the questions touch:
# a Sales User cannot read Sales Invoice, Purchase Invoice, Journal Entry, Employee or GL Entry; an
# Accounts User reads customers, suppliers, items and sales orders but does not create them.
PERSONAS = {
	"accounts": Persona(
		"accounts",
		"accounts.user@noviz.test",
		"Accounts User",
		{
			"sales_invoice": SUBMIT,
			"purchase_invoice": SUBMIT,
			"payment_entry": SUBMIT,
			"journal_entry": SUBMIT,
			"gl_entry": READ,
			"customer": READ,
			"supplier": READ,
			"item": READ,
			"sales_order": READ,
			"company": READ,
		},
	),
	"sales": Persona(
		"sales",
		"sales.user@noviz.test",
		"Sales User",
		{"customer": EDIT, "item": READ, "sales_order": SUBMIT, "quotation": SUBMIT, "company": READ},
	),
}


# The one company the seeded books belong to; every figure of the demo and the evaluation names it.
COMPANY = "Seed Trading Ltd"


def item_code(index: int) -> str:
	return f"SEED-{index + 1:02d}"


def _month_starts(months: int, today: date) -> list[date]:
	year, month = today.year, today.month
	starts = []
	for _ in range(months):
		starts.append(date(year, month, 1))
		year, month = (year, month - 1) if month > 1 else (year - 1, 12)
	return starts[::-1]


def _month_end(start: date) -> date:
	following = date(start.year + (start.month == 12), start.month % 12 + 1, 1)
	return following - timedelta(days=1)


def _status(outstanding: float, total: float, due: date, today: date) -> str:
	if outstanding <= 0:
		return "Paid"
	if due < today:
		return "Overdue"
	return "Partly Paid" if outstanding < total else "Unpaid"


def build(
	today: date = TODAY, months: int = MONTHS, seed: int = 7, base: float = 11
) -> dict[str, list[dict]]:
	"""Canonical rows per entity: the company, customers, suppliers, items, sales and purchase invoices, sales orders."""
	rng = random.Random(seed)
	customers = []
	for i in range(20):
		customers.append(
			{
				"name": f"Seed Customer {i + 1:02d}",
				"customer_name": f"Seed Customer {i + 1:02d}",
				"customer_type": "Individual" if i % 7 == 6 else "Company",
				"customer_group": CUSTOMER_GROUPS[i % len(CUSTOMER_GROUPS)],
				"territory": TERRITORIES[rng.randrange(len(TERRITORIES))],
				"disabled": 0,
			}
		)
	suppliers = [
		{"name": name, "supplier_name": name, "supplier_group": group, "disabled": 0}
		for name, group in SUPPLIERS
	]
	items = [
		{
			"name": item_code(i),
			"item_code": item_code(i),
			"item_name": title,
			"item_group": group,
			"standard_rate": rate,
			"uom": "Nos",
			"is_stock_item": 0,
			"disabled": 0,
		}
		for i, (title, group, rate) in enumerate(ITEMS)
	]
	starts = _month_starts(months, today)
	invoices = _sales_invoices(rng, customers, starts, today, base)
	purchases = _purchase_invoices(rng, starts, today)
	orders = _sales_orders(rng, customers, today)
	for document in (*invoices, *purchases, *orders):
		# A child row's name is unique across its table, as frappe names them (not per document).
		for line in document.get("items") or ():
			if "line_id" in line:
				line["line_id"] = f"{document['name']}-{line['line_id']}"
	for document in (*invoices, *purchases, *orders):
		document["company"] = COMPANY
	return {
		"company": [
			{
				"name": COMPANY,
				"company_name": COMPANY,
				"abbr": "STL",
				"country": "United States",
				"currency": "USD",
				"is_group": 0,
			}
		],
		"customer": customers,
		"supplier": suppliers,
		"item": items,
		"sales_invoice": invoices,
		"purchase_invoice": purchases,
		"sales_order": orders,
	}


def _sales_invoices(
	rng: random.Random, customers: list[dict], starts: list[date], today: date, base: float
) -> list[dict]:
	"""Invoices a month: about 2% growth a month, a spring dip and a Q4 peak, a few big customers."""
	weights = [1 / (i + 1) ** 0.8 for i in range(len(customers))]
	invoices, numbers = [], {}
	for index, month in enumerate(starts):
		last = min(_month_end(month), today)
		season = (
			1
			+ 0.2 * math.sin(2 * math.pi * (month.month - 4) / 12)
			+ (0.25 if month.month in (11, 12) else 0)
		)
		volume = max(3, round(base * (1 + 0.02 * index) * season * rng.uniform(0.85, 1.15)))
		for _ in range(volume):
			posted = month + timedelta(days=rng.randrange((last - month).days + 1))
			customer = rng.choices(customers, weights)[0]
			lines = []
			for position, item in enumerate(rng.sample(range(len(ITEMS)), rng.choice((1, 1, 2, 2, 3))), 1):
				qty = rng.randint(1, 4) if ITEMS[item][2] > 500 else rng.randint(1, 20)
				rate = float(ITEMS[item][2])
				lines.append(
					{
						"line_id": f"L{position}",
						"item": item_code(item),
						"item_name": ITEMS[item][0],
						"item_group": ITEMS[item][1],
						"qty": qty,
						"rate": rate,
						"amount": qty * rate,
						"net_amount": qty * rate,
					}
				)
			total = round(sum(line["amount"] for line in lines), 2)
			due = posted + timedelta(days=30)
			paid = _paid(rng, posted, today, total)
			numbers[posted.year] = numbers.get(posted.year, 0) + 1
			invoices.append(
				{
					"name": f"ACC-SINV-{posted.year}-{numbers[posted.year]:05d}",
					"customer": customer["name"],
					"customer_name": customer["customer_name"],
					"territory": customer["territory"],
					"customer_group": customer["customer_group"],
					"date": posted.isoformat(),
					"due_date": due.isoformat(),
					"currency": "USD",
					"net_total": total,
					"tax_total": 0.0,
					"total": total,
					"outstanding": round(total - paid, 2),
					"paid_amount": paid,
					"status": _status(total - paid, total, due, today),
					"is_return": 0,
					"docstatus": 1,
					"items": lines,
				}
			)
	return invoices


def _purchase_invoices(rng: random.Random, starts: list[date], today: date) -> list[dict]:
	"""Up to two bills a month from each supplier, mostly raw materials."""
	purchases, numbers = [], {}
	for month in starts:
		last = min(_month_end(month), today)
		for supplier, _group in SUPPLIERS:
			for n in range(rng.randint(0, 2)):
				picked = rng.sample(range(12, 16), rng.randint(1, 3)) + (
					[rng.randrange(8, 12)] if rng.random() < 0.4 else []
				)
				posted = month + timedelta(days=rng.randrange((last - month).days + 1))
				lines = []
				for position, item in enumerate(picked, 1):
					qty, rate = rng.randint(20, 120), round(ITEMS[item][2] * 0.62, 2)
					lines.append(
						{
							"line_id": f"L{position}",
							"item": item_code(item),
							"item_name": ITEMS[item][0],
							"item_group": ITEMS[item][1],
							"qty": qty,
							"rate": rate,
							"amount": round(qty * rate, 2),
							"net_amount": round(qty * rate, 2),
						}
					)
				total = round(sum(line["amount"] for line in lines), 2)
				due = posted + timedelta(days=30)
				paid = _paid(rng, posted, today, total)
				numbers[posted.year] = numbers.get(posted.year, 0) + 1
				purchases.append(
					{
						"name": f"ACC-PINV-{posted.year}-{numbers[posted.year]:05d}",
						"supplier": supplier,
						"supplier_name": supplier,
						"bill_no": f"SEED-BILL-{month:%Y-%m}-{supplier[-2:]}-{n + 1}",
						"date": posted.isoformat(),
						"due_date": due.isoformat(),
						"currency": "USD",
						"net_total": total,
						"tax_total": 0.0,
						"total": total,
						"outstanding": round(total - paid, 2),
						"paid_amount": paid,
						"status": _status(total - paid, total, due, today),
						"is_return": 0,
						"docstatus": 1,
						"items": lines,
					}
				)
	return purchases


def _sales_orders(rng: random.Random, customers: list[dict], today: date) -> list[dict]:
	"""Forty orders of the last six months, some delivered (the bench seed makes none: a site has its own)."""
	weights = [1 / (i + 1) ** 0.8 for i in range(len(customers))]
	orders = []
	for n in range(40):
		posted = today - timedelta(days=rng.randrange(180))
		customer = rng.choices(customers, weights)[0]
		item = rng.randrange(len(ITEMS))
		qty = rng.randint(1, 10)
		total = float(qty * ITEMS[item][2])
		delivered = rng.choice((0, 0, 50, 100))
		orders.append(
			{
				"name": f"SAL-ORD-2026-{n + 1:05d}",
				"customer": customer["name"],
				"customer_name": customer["customer_name"],
				"territory": customer["territory"],
				"date": posted.isoformat(),
				"delivery_date": (posted + timedelta(days=14)).isoformat(),
				"status": "Completed" if delivered == 100 else "To Deliver and Bill",
				"per_delivered": delivered,
				"per_billed": delivered,
				"currency": "USD",
				"net_total": total,
				"total": total,
				"docstatus": 1,
				"items": [
					{
						"item": item_code(item),
						"item_name": ITEMS[item][0],
						"qty": qty,
						"rate": float(ITEMS[item][2]),
						"amount": total,
					}
				],
			}
		)
	return orders


def _paid(rng: random.Random, posted: date, today: date, total: float) -> float:
	"""Most older invoices paid in full, some in part, recent ones mostly open (as the bench seed pays)."""
	draw, after = rng.random(), rng.randint(7, 50)
	if posted + timedelta(days=after) > today:
		return 0.0
	old = (today - posted).days > 60
	if draw < (0.8 if old else 0.3):
		return total
	if draw < (0.88 if old else 0.38):
		return round(total * 0.5, 2)
	return 0.0


def memory_connector(persona: Persona, data: dict[str, list[dict]] | None = None):
	"""The persona's view of the seeded data, with that role's permissions."""
	from noviz_agent.testing.memory_connector import MemoryConnector

	return MemoryConnector(
		persona.user,
		data=data if data is not None else build(),
		permissions={entity: set(actions) for entity, actions in persona.permissions.items()},
		roles={persona.role},
	)
