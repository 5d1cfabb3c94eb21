"""A simulated company for standing goals: months of trading, then days with planted events, as canonical rows.

The generator plants what the goals should find, and knows where: a customer who stops paying, an
item whose demand jumps, a month of sales far below the usual (half of it), and quiet weeks before any of it
shows. `snapshot(day)` is the books as they stand at the end of `day` (invoices posted by then,
outstanding as paid by then, the stock ledger up to then), for the in-memory connector. Because the
same hand plants the events and writes the watches, what the benchmark measures on it is a regression
figure for the machinery, never accuracy on real books.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from dataclasses import dataclass, field

COMPANY = "Sim Trading"
CURRENCY = "USD"
WAREHOUSE = "Stores - ST"
START = dt.date(2026, 1, 1)
DAYS = 120
HISTORY_MONTHS = 18
LEAD_DAYS = 3
REORDER_DAYS = 30  # the buyer re-orders when stock falls under 30 days of the usual demand
ORDER_DAYS = 45  # ... and orders 45 days of it

# (code, name, rate, usual units a day)
ITEMS = (
	("SIM-01", "Office Chair", 180.0, 3.0),
	("SIM-02", "Standing Desk", 640.0, 1.0),
	("SIM-03", "Monitor Arm", 95.0, 4.0),
	("SIM-04", "LED Desk Lamp", 48.0, 6.0),
	("SIM-05", "Printer Paper Box", 32.0, 8.0),
	("SIM-06", "Toner Cartridge", 76.0, 3.0),
)
CUSTOMERS = tuple(f"Sim Customer {i:02d}" for i in range(1, 11))


@dataclass(frozen=True)
class PlantedEvent:
	key: str
	description: str
	starts: dt.date
	# A finding is about this event when its key starts with one of these.
	finding_keys: tuple[str, ...]

	def matches(self, finding_key: str, day: dt.date) -> bool:
		return day >= self.starts and finding_key.startswith(self.finding_keys)


@dataclass
class World:
	seed: int = 7
	start: dt.date = START
	days: int = DAYS
	stops_paying: str = "Sim Customer 04"
	stops_on_day: int = 20
	jumping_item: str = "SIM-03"
	jump_on_day: int = 40
	jump_factor: float = 3.0
	low_month: str = "2026-03"
	low_factor: float = 0.5
	history_months: int = HISTORY_MONTHS
	invoices: list[dict] = field(default_factory=list)
	stock_moves: list[dict] = field(default_factory=list)

	def __post_init__(self):
		self._generate()

	@property
	def end(self) -> dt.date:
		return self.start + dt.timedelta(days=self.days - 1)

	def day(self, index: int) -> dt.date:
		return self.start + dt.timedelta(days=index)

	@property
	def events(self) -> list[PlantedEvent]:
		year, month = (int(x) for x in self.low_month.split("-"))
		return [
			PlantedEvent(
				"customer_stops_paying",
				f"{self.stops_paying} pays none of its invoices from {self.day(self.stops_on_day)} on",
				self.day(self.stops_on_day),
				(f"overdue_customers:{self.stops_paying}", "receivables_over:"),
			),
			PlantedEvent(
				"demand_jumps",
				f"demand for {self.jumping_item} is {self.jump_factor:g} times the usual from {self.day(self.jump_on_day)}",
				self.day(self.jump_on_day),
				(
					f"stock_cover:{self.jumping_item}",
					f"demand_change:{self.jumping_item}:",
					f"below_reorder:{self.jumping_item}:",
				),
			),
			PlantedEvent(
				"month_below_forecast",
				f"sales in {self.low_month} are {self.low_factor:g} times the usual",
				dt.date(year, month, 1),
				(f"sales_forecast:{self.low_month}",),
			),
		]

	@property
	def quiet_until(self) -> dt.date:
		"""The weeks before this day are planted quiet: nothing any goal watches has happened yet."""
		return min(e.starts for e in self.events)

	# --- generation --------------------------------------------------------------------------

	def _generate(self) -> None:
		rng = random.Random(self.seed)
		first = _months_back(self.start, self.history_months)
		weights = [1 / (i + 1) ** 0.6 for i in range(len(CUSTOMERS))]
		stock = {code: usual * ORDER_DAYS for code, _, _, usual in ITEMS}
		arriving: dict[dt.date, list[tuple[str, float]]] = {}
		month_factor: dict[str, float] = {}
		day, number, line_number = first, 0, 0
		self.stock_moves = [
			_move(f"OPEN-{code}", first - dt.timedelta(days=1), code, qty, rate, "Stock Reconciliation")
			for (code, _, rate, _), qty in zip(ITEMS, stock.values(), strict=True)
		]
		while day <= self.end:
			label = f"{day:%Y-%m}"
			if label not in month_factor:
				index = (day.year - first.year) * 12 + day.month - first.month
				season = 1 + 0.12 * math.sin(2 * math.pi * (day.month - 3) / 12)
				month_factor[label] = (1 + 0.01 * index) * season * rng.gauss(1.0, 0.04)
			for code, qty in arriving.pop(day, []):
				stock[code] += qty
				self.stock_moves.append(
					_move(f"REC-{day}-{code}", day, code, qty, _rate(code), "Purchase Receipt")
				)
			lines_by_customer: dict[str, list[dict]] = {}
			for code, _name, rate, usual in ITEMS:
				factor = month_factor[label] * (self.low_factor if label == self.low_month else 1.0)
				if code == self.jumping_item and day >= self.day(self.jump_on_day):
					factor *= self.jump_factor
				qty = _poisson(rng, usual * factor)
				qty = min(qty, int(stock[code]))
				if qty <= 0:
					continue
				customer = rng.choices(CUSTOMERS, weights)[0]
				line_number += 1
				line = {
					"line_id": f"L{line_number:07d}",
					"item": code,
					"item_name": _name,
					"item_group": "Products",
					"qty": qty,
					"rate": rate,
					"amount": qty * rate,
					"net_amount": qty * rate,
					"warehouse": WAREHOUSE,
				}
				lines_by_customer.setdefault(customer, []).append(line)
				stock[code] -= qty
				self.stock_moves.append(
					_move(
						f"SLE-{line['line_id']}",
						day,
						code,
						-qty,
						rate * 0.6,
						"Sales Invoice",
						line["line_id"],
					)
				)
				# The buyer re-orders from the usual demand: a jump in demand is not seen in the orders.
				pending = sum(q for when in arriving.values() for c, q in when if c == code)
				if stock[code] + pending < usual * REORDER_DAYS:
					arriving.setdefault(day + dt.timedelta(days=LEAD_DAYS), []).append(
						(code, usual * ORDER_DAYS)
					)
			for customer, lines in lines_by_customer.items():
				number += 1
				total = round(sum(line["amount"] for line in lines), 2)
				stopped = customer == self.stops_paying and day >= self.day(self.stops_on_day)
				paid_on = None if stopped else day + dt.timedelta(days=rng.randint(5, 40))
				self.invoices.append(
					{
						"name": f"SINV-{day.year}-{number:05d}",
						"customer": customer,
						"customer_name": customer,
						"company": COMPANY,
						"date": day.isoformat(),
						"due_date": (day + dt.timedelta(days=30)).isoformat(),
						"currency": CURRENCY,
						"party_account_currency": CURRENCY,
						"conversion_rate": 1.0,
						"total": total,
						"base_total": total,
						"net_total": total,
						"territory": "United States",
						"docstatus": 1,
						"is_return": 0,
						"items": lines,
						"_paid_on": paid_on,
					}
				)
			day += dt.timedelta(days=1)

	# --- the books on a day ----------------------------------------------------------------------

	def snapshot(self, day: dt.date) -> dict[str, list[dict]]:
		"""Canonical rows as they stand at the end of `day`."""
		invoices = []
		for row in self.invoices:
			if row["date"] > day.isoformat():
				break
			paid = row["_paid_on"] is not None and row["_paid_on"] <= day
			out = {k: v for k, v in row.items() if k != "_paid_on"}
			out["outstanding"] = 0.0 if paid else row["total"]
			out["status"] = "Paid" if paid else ("Overdue" if row["due_date"] < day.isoformat() else "Unpaid")
			invoices.append(out)
		moves = [m for m in self.stock_moves if m["date"] <= day.isoformat()]
		return {
			"company": [{"name": COMPANY, "company_name": COMPANY, "abbr": "ST", "currency": CURRENCY}],
			"customer": [
				{
					"name": c,
					"customer_name": c,
					"customer_group": "Commercial",
					"territory": "United States",
					"disabled": 0,
				}
				for c in CUSTOMERS
			],
			"item": [
				{
					"name": code,
					"item_code": code,
					"item_name": name,
					"item_group": "Products",
					"is_stock_item": 1,
					"standard_rate": rate,
					"disabled": 0,
					"reorder_levels": [
						{
							"line_id": f"R-{code}",
							"warehouse": WAREHOUSE,
							"level": usual * REORDER_DAYS,
							"qty": usual * ORDER_DAYS,
						}
					],
				}
				for code, name, rate, usual in ITEMS
			],
			"warehouse": [{"name": WAREHOUSE, "warehouse_name": "Stores", "company": COMPANY}],
			"sales_invoice": invoices,
			"stock_ledger_entry": moves,
		}


def _rate(code: str) -> float:
	return next(rate for c, _, rate, _ in ITEMS if c == code) * 0.6


def _move(name, day, code, qty, rate, voucher, line=None) -> dict:
	return {
		"name": name,
		"item": code,
		"warehouse": WAREHOUSE,
		"date": day.isoformat(),
		"qty_change": qty,
		"value_change": round(qty * rate, 2),
		"valuation_rate": rate,
		"voucher_type": voucher,
		"voucher_line": line,
		"company": COMPANY,
		"is_cancelled": 0,
	}


def _months_back(day: dt.date, months: int) -> dt.date:
	year, month = day.year, day.month - months
	while month <= 0:
		year, month = year - 1, month + 12
	return dt.date(year, month, 1)


def _poisson(rng: random.Random, lam: float) -> int:
	"""Knuth's method: a few draws for the small daily rates here."""
	if lam <= 0:
		return 0
	limit, k, p = math.exp(-lam), 0, 1.0
	while True:
		p *= rng.random()
		if p <= limit:
			return k
		k += 1
