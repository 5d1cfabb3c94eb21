"""Seed an existing bench site with two years of realistic trading data, for benchmarks and site checks.

A development and benchmark helper, not shipped behaviour: it never creates a bench or a
site, and everything goes through the documents' own APIs (insert/submit, ERPNext's own
payment builder), so ledgers, outstanding amounts and permissions are what the desk would
produce. Run it with the bench's Python from the `sites` folder:

	cd <bench>/sites && \
		../env/bin/python <this repository>/benchmarks/bench_seed.py --site <site> [--months 24] [--seed 7]

Besides the default company's trading it adds a second company keeping its books in euros
(`bench_seed_second_company.py`: stock bought and sold, payments, a budget, and the previous
fiscal year closed with a Period Closing Voucher); `--no-second-company` leaves it out.

What it adds is tagged ("Seed Customer 01", item codes SEED-..., bill numbers SEED-BILL-...,
invoice remarks "bench_seed ...", payment references SEED-PAY-...) and a rerun skips what
already exists, so an interrupted run can simply be started again. The plan comes from one
seeded random generator, so the same arguments describe the same data.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import random
import time
from dataclasses import dataclass, field

import frappe
from frappe.utils import add_days, add_months, getdate, nowdate

# The names and prices the frappe-free evaluation seeds too, so its questions read the same here.
from noviz_agent.evaluation.seed import CUSTOMER_GROUPS, ITEMS, SUPPLIERS, TERRITORIES

TAG = "bench_seed"


@dataclass
class Counts:
	"""What this run created (and what it found already there)."""

	created: dict = field(default_factory=dict)
	skipped: dict = field(default_factory=dict)

	def add(self, kind: str, created: bool = True) -> None:
		target = self.created if created else self.skipped
		target[kind] = target.get(kind, 0) + 1


def item_code(i: int) -> str:
	return f"SEED-{i + 1:02d}"


def month_starts(months: int, today: dt.date) -> list[dt.date]:
	first = getdate(add_months(today.replace(day=1), -(months - 1)))
	return [getdate(add_months(first, i)) for i in range(months)]


def ensure_fiscal_years(start: dt.date, today: dt.date, counts: Counts) -> None:
	"""Calendar fiscal years covering the period (the demo site only has the current one)."""
	for year in range(start.year, today.year + 1):
		covering = frappe.db.get_value(
			"Fiscal Year",
			{"year_start_date": ("<=", f"{year}-06-30"), "year_end_date": (">=", f"{year}-06-30")},
		)
		if covering:
			continue
		frappe.get_doc(
			{
				"doctype": "Fiscal Year",
				"year": str(year),
				"year_start_date": f"{year}-01-01",
				"year_end_date": f"{year}-12-31",
			}
		).insert()
		counts.add("Fiscal Year")
	# ERPNext caches each company's fiscal years and does not drop the cache on insert.
	frappe.cache.delete_value("fiscal_years")


def ensure_masters(rng: random.Random, n_customers: int, valid_from: dt.date, counts: Counts) -> list[str]:
	"""Territories, customers, suppliers, items and back-dated item prices; returns the customer names."""
	for territory in TERRITORIES:
		if not frappe.db.exists("Territory", territory):
			frappe.get_doc(
				{"doctype": "Territory", "territory_name": territory, "parent_territory": "All Territories"}
			).insert()
			counts.add("Territory")
	customers = []
	for i in range(n_customers):
		name = f"Seed Customer {i + 1:02d}"
		# Drawn before the existence check so a rerun replays the same plan.
		territory = TERRITORIES[rng.randrange(len(TERRITORIES))]
		customers.append(name)
		if frappe.db.exists("Customer", name):
			counts.add("Customer", created=False)
			continue
		frappe.get_doc(
			{
				"doctype": "Customer",
				"customer_name": name,
				"customer_type": "Individual" if i % 7 == 6 else "Company",
				"customer_group": CUSTOMER_GROUPS[i % len(CUSTOMER_GROUPS)],
				"territory": territory,
			}
		).insert()
		counts.add("Customer")
	for name, group in SUPPLIERS:
		if frappe.db.exists("Supplier", name):
			counts.add("Supplier", created=False)
			continue
		frappe.get_doc({"doctype": "Supplier", "supplier_name": name, "supplier_group": group}).insert()
		counts.add("Supplier")
	for i, (title, group, rate) in enumerate(ITEMS):
		code = item_code(i)
		if not frappe.db.exists("Item", code):
			frappe.get_doc(
				{
					"doctype": "Item",
					"item_code": code,
					"item_name": title,
					"item_group": group,
					"stock_uom": "Nos",
					# Not stocked: invoices without update_stock then need no receipts or deliveries.
					"is_stock_item": 0,
				}
			).insert()
			counts.add("Item")
		for price_list, price in (("Standard Selling", rate), ("Standard Buying", round(rate * 0.62, 2))):
			if frappe.db.exists("Item Price", {"item_code": code, "price_list": price_list}):
				continue
			# valid_from defaults to today; back-dated invoices would otherwise find no price.
			frappe.get_doc(
				{
					"doctype": "Item Price",
					"item_code": code,
					"price_list": price_list,
					"price_list_rate": price,
					"valid_from": valid_from,
				}
			).insert()
			counts.add("Item Price")
	return customers


def monthly_volume(index: int, month: dt.date, rng: random.Random, base: float) -> int:
	"""Invoices in a month: about 2% growth a month, a spring dip and a Q4 peak, some noise."""
	trend = 1 + 0.02 * index
	season = (
		1 + 0.2 * math.sin(2 * math.pi * (month.month - 4) / 12) + (0.25 if month.month in (11, 12) else 0)
	)
	return max(3, round(base * trend * season * rng.uniform(0.85, 1.15)))


def plan_sales(rng, customers, months, today, base) -> list[dict]:
	weights = [1 / (i + 1) ** 0.8 for i in range(len(customers))]  # a few big customers, a long tail
	plan = []
	for index, month in enumerate(months):
		last = min(getdate(add_days(add_months(month, 1), -1)), today)
		days = (last - month).days + 1
		for n in range(monthly_volume(index, month, rng, base)):
			lines = []
			for item in rng.sample(range(len(ITEMS)), rng.choice((1, 1, 2, 2, 3))):
				qty = rng.randint(1, 4) if ITEMS[item][2] > 500 else rng.randint(1, 20)
				lines.append((item_code(item), qty))
			plan.append(
				{
					"tag": f"{TAG} {month:%Y-%m} #{n + 1:03d}",
					"customer": rng.choices(customers, weights)[0],
					"date": getdate(add_days(month, rng.randrange(days))),
					"lines": lines,
					"pay": rng.random(),
					"pay_after": rng.randint(7, 50),
				}
			)
	return plan


def plan_purchases(rng, months, today) -> list[dict]:
	plan = []
	for month in months:
		last = min(getdate(add_days(add_months(month, 1), -1)), today)
		days = (last - month).days + 1
		for supplier, _group in SUPPLIERS:
			for n in range(rng.randint(0, 2)):
				items = rng.sample(range(12, 16), rng.randint(1, 3)) + (
					[rng.randrange(8, 12)] if rng.random() < 0.4 else []
				)
				plan.append(
					{
						"bill_no": f"SEED-BILL-{month:%Y-%m}-{supplier[-2:]}-{n + 1}",
						"supplier": supplier,
						"date": getdate(add_days(month, rng.randrange(days))),
						"lines": [(item_code(i), rng.randint(20, 120)) for i in items],
						"pay": rng.random(),
						"pay_after": rng.randint(10, 40),
					}
				)
	return plan


def make_sales_invoice(row: dict, company: str):
	doc = frappe.get_doc(
		{
			"doctype": "Sales Invoice",
			"company": company,
			"customer": row["customer"],
			"set_posting_time": 1,
			"posting_date": row["date"],
			"due_date": add_days(row["date"], 30),
			"update_stock": 0,
			"selling_price_list": "Standard Selling",
			"remarks": row["tag"],
			"items": [{"item_code": code, "qty": qty} for code, qty in row["lines"]],
		}
	)
	doc.insert()
	doc.submit()
	return doc


def make_purchase_invoice(row: dict, company: str):
	doc = frappe.get_doc(
		{
			"doctype": "Purchase Invoice",
			"company": company,
			"supplier": row["supplier"],
			"bill_no": row["bill_no"],
			"bill_date": row["date"],
			"set_posting_time": 1,
			"posting_date": row["date"],
			"due_date": add_days(row["date"], 30),
			"update_stock": 0,
			"buying_price_list": "Standard Buying",
			"items": [{"item_code": code, "qty": qty} for code, qty in row["lines"]],
		}
	)
	doc.insert()
	doc.submit()
	return doc


def pay(doctype: str, name: str, when: dt.date, amount: float | None) -> None:
	"""A payment entry built by ERPNext itself against the invoice, dated `when`."""
	from erpnext.accounts.doctype.payment_entry.payment_entry import get_payment_entry

	pe = get_payment_entry(doctype, name, party_amount=amount, reference_date=when)
	pe.posting_date = when
	pe.reference_no = f"SEED-PAY-{name}"
	pe.reference_date = when
	pe.insert()
	pe.submit()


def payment_plan(row: dict, today: dt.date, grand_total: float) -> tuple[dt.date, float | None] | None:
	"""When and how much is paid: most older invoices in full, some in part, recent ones mostly open."""
	when = getdate(add_days(row["date"], row["pay_after"]))
	if when > today:
		return None
	old = (today - row["date"]).days > 60
	if row["pay"] < (0.8 if old else 0.3):
		return when, None
	if row["pay"] < (0.88 if old else 0.38):
		return when, round(grand_total * 0.5, 2)
	return None


def cancel_unpriced(counts: Counts) -> None:
	"""Cancel seeded invoices submitted at zero value, so this run recreates them priced.

	That happens when Item Prices vanish mid-run: ERPNext's own `before_tests` hook deletes
	every Item Price, and it runs whenever `bench run-tests` is called without `--app`.
	"""
	for doctype, tag_field, pattern in (
		("Sales Invoice", "remarks", f"{TAG} %"),
		("Purchase Invoice", "bill_no", "SEED-BILL-%"),
	):
		filters = {"docstatus": 1, tag_field: ("like", pattern), "grand_total": 0}
		for name in frappe.get_all(doctype, filters=filters, pluck="name"):
			frappe.get_doc(doctype, name).cancel()
			counts.add(f"{doctype} cancelled (priced at zero)")
	frappe.db.commit()


def seeded_company(named: str | None = None) -> str:
	"""The company the trading goes into: the one named, else the default company ERPNext presets
	for the evaluation's people (the agent's own `default_company`), so their questions read it."""
	from noviz_agent.edge.frappe_session import default_company
	from noviz_agent.evaluation.seed import PERSONAS

	company = named or default_company(PERSONAS["accounts"].user)
	if not company or not frappe.db.exists("Company", company):
		raise SystemExit(f"No company {company!r} on this site: name one with --company.")
	return company


def seed(
	months: int,
	customers: int,
	seed_value: int,
	base: float,
	second: bool = True,
	first: bool = True,
	company: str | None = None,
) -> Counts:
	counts = Counts()
	rng = random.Random(seed_value)
	today = getdate(nowdate())
	starts = month_starts(months, today)
	if not first:
		ensure_fiscal_years(starts[0], today, counts)
		import bench_seed_second_company

		bench_seed_second_company.seed(random.Random(seed_value + 1), starts, today, counts)
		return counts
	company = seeded_company(company)
	print(f"Seeding {company} (the default company ERPNext presets for the evaluation's people)", flush=True)
	ensure_fiscal_years(starts[0], today, counts)
	names = ensure_masters(rng, customers, getdate(add_days(starts[0], -1)), counts)
	frappe.db.commit()
	cancel_unpriced(counts)

	for kind, plan, exists, make in (
		(
			"Sales Invoice",
			plan_sales(rng, names, starts, today, base),
			lambda r: frappe.db.get_value("Sales Invoice", {"remarks": r["tag"], "docstatus": 1}),
			make_sales_invoice,
		),
		(
			"Purchase Invoice",
			plan_purchases(rng, starts, today),
			lambda r: frappe.db.get_value("Purchase Invoice", {"bill_no": r["bill_no"], "docstatus": 1}),
			make_purchase_invoice,
		),
	):
		for i, row in enumerate(plan, 1):
			name = exists(row)
			if name:
				counts.add(kind, created=False)
			else:
				name = make(row, company).name
				counts.add(kind)
			paid = frappe.db.get_value(kind, name, ["grand_total", "outstanding_amount"], as_dict=True)
			due = payment_plan(row, today, paid.grand_total)
			if due and not frappe.db.exists(
				"Payment Entry", {"reference_no": f"SEED-PAY-{name}", "docstatus": 1}
			):
				if paid.outstanding_amount > 0:
					pay(kind, name, *due)
					counts.add(f"Payment Entry ({kind})")
			if i % 50 == 0:
				frappe.db.commit()
				print(f"  {kind}: {i}/{len(plan)}", flush=True)
		frappe.db.commit()
	if second:
		import bench_seed_second_company

		bench_seed_second_company.seed(random.Random(seed_value + 1), starts, today, counts)
	return counts


def main() -> None:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--site", required=True)
	parser.add_argument("--months", type=int, default=24)
	parser.add_argument("--customers", type=int, default=20)
	parser.add_argument("--seed", type=int, default=7)
	parser.add_argument(
		"--invoices-per-month", type=float, default=11, help="average before trend and season"
	)
	parser.add_argument(
		"--no-second-company", action="store_true", help="leave out the company keeping its books in euros"
	)
	parser.add_argument(
		"--second-company-only", action="store_true", help="seed only the company keeping its books in euros"
	)
	parser.add_argument("--company", help="the company to trade in (default: the people's default company)")
	args = parser.parse_args()
	frappe.init(site=args.site, sites_path=".")
	frappe.connect()
	frappe.set_user("Administrator")
	started = time.perf_counter()
	try:
		counts = seed(
			args.months,
			args.customers,
			args.seed,
			args.invoices_per_month,
			not args.no_second_company,
			not args.second_company_only,
			args.company,
		)
		frappe.db.commit()
	finally:
		frappe.destroy()
	print(f"Seeded {args.site} in {time.perf_counter() - started:.0f} s")
	for kind, n in sorted(counts.created.items()):
		print(f"  created {n:5d} {kind}")
	for kind, n in sorted(counts.skipped.items()):
		print(f"  already there {n:5d} {kind}")


if __name__ == "__main__":
	main()
