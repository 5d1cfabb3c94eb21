"""Document intake accuracy on generated documents with known contents (text-layer path).

Writes N supplier invoices and customer orders as PDFs (fpdf2: four layouts, USD/EUR/GBP/CHF,
1 to 40 lines, one or two pages, some with item codes, some with a wrong printed total), reads
each back with the intake pipeline, and prints:
- field-level extraction accuracy (header fields, every line's five fields, tax amounts);
- party and item matching accuracy against a seeded list (names printed exactly, with another
  case or legal form, with a typo, by tax id under another name, and unknown ones that must stay
  unmatched);
- wrong totals accepted: documents whose printed total is wrong yet every arithmetic check passed
  (target 0), and documents whose extracted total differs from the truth yet passed.
Targets: >= 98% of fields, >= 95% of matches, 0 wrong totals accepted.

	pip install fpdf2          # test extra; the app itself needs pdfplumber
	python benchmarks/intake.py [--docs 24] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import time

from noviz_agent.intake import checks
from noviz_agent.intake.proposal import build, read_document
from noviz_agent.testing.invoices import LAYOUTS, InvoiceSpec, Line, render_pdf

# The seeded list: bench_seed's suppliers, customers and items, plus suppliers with tax ids.
SUPPLIERS = [
	{"name": "Seed Supplier 01", "title": "Seed Supplier 01", "tax_id": None},
	{"name": "Seed Supplier 02", "title": "Seed Supplier 02", "tax_id": None},
	{"name": "Seed Supplier 03", "title": "Seed Supplier 03", "tax_id": None},
	{"name": "Harbour Paper Co", "title": "Harbour Paper Co", "tax_id": "US-45-2210987"},
	{"name": "Brightline Furniture GmbH", "title": "Brightline Furniture GmbH", "tax_id": "DE293847561"},
	{"name": "Northwind Office Ltd", "title": "Northwind Office Ltd", "tax_id": "GB123456789"},
	{"name": "Alpine Steelworks AG", "title": "Alpine Steelworks AG", "tax_id": "CHE-123.456.789"},
]
CUSTOMERS = [
	{"name": f"Seed Customer {i:02d}", "title": f"Seed Customer {i:02d}", "tax_id": None}
	for i in range(1, 21)
]
ITEM_NAMES = (
	("Office Chair", 180), ("Standing Desk", 640), ("Monitor Arm", 95), ("Filing Cabinet", 260),
	("Conference Table", 1450), ("LED Desk Lamp", 48), ("Whiteboard", 120), ("Ergonomic Keyboard", 85),
	("Printer Paper Box", 32), ("Toner Cartridge", 76), ("Coffee Beans 1kg", 24), ("Cleaning Kit", 18),
	("Steel Frame", 55), ("Oak Panel", 70), ("Gas Lift Cylinder", 22), ("Fabric Roll", 40),
	("Installation Service", 300), ("Maintenance Visit", 150), ("Office Design Consult", 900), ("Delivery Service", 60),
)  # fmt: skip
ITEMS = [
	{"item_code": f"SEED-{i + 1:02d}", "item_name": n, "supplier_parts": []}
	for i, (n, _) in enumerate(ITEM_NAMES)
]
UNKNOWN_PARTIES = ["Globex Industrial Supply", "Quantum Tea Traders"]
UNKNOWN_ITEMS = ["Espresso Machine", "Aquarium Pump", "Velvet Curtain"]


class Backend:
	def __init__(self, bills=()):
		self.bills = set(bills)

	def parties(self, party_type):
		return SUPPLIERS if party_type == "supplier" else CUSTOMERS

	def items(self):
		return ITEMS

	def currencies(self):
		return {"USD", "EUR", "GBP", "CHF"}

	def existing_bills(self, supplier, bill_no):
		return []

	def can_create(self, doctype):
		return True


def printed_party(rng: random.Random, record: dict) -> tuple[str, str | None, str]:
	"""How the document prints the party, its tax id, and the variant's kind."""
	kind = rng.choice(
		["exact", "case", "typo", "tax_id"] if record.get("tax_id") else ["exact", "case", "typo"]
	)
	name = record["title"]
	if kind == "case":
		name = name.upper() + ("" if name.endswith(("Ltd", "GmbH", "AG", "Co")) else " Inc.")
	elif kind == "typo":
		i = rng.randrange(2, len(name) - 3)
		name = name[:i] + name[i + 1 :] if name[i] != " " else name[: i + 1] + name[i + 2 :]
	elif kind == "tax_id":
		name = name.split()[0] + " Trading"  # another trading name: only the tax id says who it is
	return name, record.get("tax_id"), kind


def printed_item(rng: random.Random, name: str) -> str:
	return rng.choice([name, name.lower(), f"{name}, standard", f"{name} (model 2026)"])


def make_documents(n: int, seed: int) -> list[tuple[InvoiceSpec, dict]]:
	rng = random.Random(seed)
	out = []
	for i in range(n):
		layout = LAYOUTS[i % len(LAYOUTS)]
		order = layout == "order"
		if i % 11 == 5:
			record, (party, tax_id, kind) = None, (rng.choice(UNKNOWN_PARTIES), None, "unknown")
		else:
			record = rng.choice(CUSTOMERS if order else SUPPLIERS)
			party, tax_id, kind = printed_party(rng, record)
		n_lines = rng.choice([1, 2, 3, 5, 8, 12, 20, 38]) if i % 6 else 40  # 38+ lines run onto a second page
		lines, truth_items = [], []
		with_codes = rng.random() < 0.3
		for _ in range(n_lines):
			if rng.random() < 0.08:
				desc, code, rate = rng.choice(UNKNOWN_ITEMS), None, rng.uniform(20, 400)
				truth_items.append(None)
			else:
				idx = rng.randrange(len(ITEM_NAMES))
				name, base = ITEM_NAMES[idx]
				code = ITEMS[idx]["item_code"] if with_codes else None
				desc, rate = printed_item(rng, name), base * rng.uniform(0.9, 1.1)
				truth_items.append(ITEMS[idx]["item_code"])
			lines.append(Line(desc, rng.choice([1, 2, 3, 4, 6, 10, 12, 2.5]), round(rate, 2), code))
		currency = (
			rng.choice(["EUR", "CHF"])
			if layout == "european"
			else ("USD" if layout == "modern" else rng.choice(["USD", "GBP"]))
		)
		spec = InvoiceSpec(
			party_name=party,
			tax_id=tax_id,
			number=f"{'PO' if order else rng.choice(['INV', 'BILL', 'F'])}-{rng.randint(1000, 99999)}",
			lines=lines,
			currency=currency,
			tax_rate=rng.choice([0, 0.05, 0.08, 0.2]),
			layout=layout,
			# One document in five prints a wrong total.
			total_error=rng.choice([-10.0, 0.5, 99.99]) if i % 5 == 3 else 0.0,
		)
		out.append(
			(spec, {"party": record["name"] if record else None, "party_kind": kind, "items": truth_items})
		)
	return out


def compare(expected: dict, got: dict) -> tuple[int, int, list[str]]:
	right = total = 0
	misses = []
	for key in (
		"document_type",
		"party_name",
		"party_tax_id",
		"document_number",
		"date",
		"due_date",
		"currency",
		"subtotal",
		"total",
	):
		total += 1
		if got.get(key) == expected[key]:
			right += 1
		else:
			misses.append(f"{key}: {got.get(key)!r} != {expected[key]!r}")
	for i, line in enumerate(expected["lines"]):
		other = got["lines"][i] if i < len(got["lines"]) else {}
		for key in ("description", "quantity", "rate", "amount", "item_code"):
			total += 1
			if other.get(key) == line[key]:
				right += 1
			else:
				misses.append(f"line {i + 1} {key}: {other.get(key)!r} != {line[key]!r}")
	extra = max(0, len(got["lines"]) - len(expected["lines"]))
	total += extra * 5  # lines that are not on the document count as wrong fields
	for i, tax in enumerate(expected["taxes"]):
		total += 1
		if i < len(got["taxes"]) and got["taxes"][i]["amount"] == tax["amount"]:
			right += 1
		else:
			misses.append(f"tax {i + 1}")
	return right, total, misses


def main() -> None:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--docs", type=int, default=24)
	parser.add_argument("--seed", type=int, default=7)
	parser.add_argument("--verbose", action="store_true")
	args = parser.parse_args()
	docs = make_documents(args.docs, args.seed)
	backend = Backend()
	fields_right = fields_total = 0
	party_right = item_right = item_total = 0
	wrong_printed_accepted = wrong_extracted_accepted = wrong_printed = 0
	pages = seconds = 0.0
	kinds: dict[str, list[int]] = {}
	for spec, truth in docs:
		content = render_pdf(spec)
		started = time.perf_counter()
		doc, meta = read_document(content, "doc.pdf")
		result = build(doc, backend)
		seconds += time.perf_counter() - started
		pages += meta["pages"]
		right, total, misses = compare(spec.expected(), doc)
		fields_right, fields_total = fields_right + right, fields_total + total
		if misses and args.verbose:
			print(f"  {spec.layout} {spec.number}: {misses[:5]}")
		got_party = result["party"]["name"] if result["party"]["status"] == "matched" else None
		ok = got_party == truth["party"]
		party_right += ok
		kinds.setdefault(truth["party_kind"], [0, 0])
		kinds[truth["party_kind"]][0] += ok
		kinds[truth["party_kind"]][1] += 1
		for line, want in zip(result["lines"], truth["items"], strict=False):
			got = line["match"]["name"] if line["match"]["status"] == "matched" else None
			item_right += got == want
			item_total += 1
		item_total += max(0, len(truth["items"]) - len(result["lines"]))
		accepted = checks.totals_accepted(result["checks"])
		if spec.total_error:
			wrong_printed += 1
			wrong_printed_accepted += accepted
		if doc.get("total") != spec.total and accepted:
			wrong_extracted_accepted += 1
	matches = party_right + item_right
	n_match = len(docs) + item_total
	two_page = sum(1 for s, _ in docs if len(s.lines) >= 38)
	print(
		f"documents: {len(docs)} ({two_page} of two pages; layouts {', '.join(LAYOUTS)}), pages read: {int(pages)}"
	)
	print(
		f"field-level extraction accuracy (text layer): {fields_right}/{fields_total} = {fields_right / fields_total:.2%}"
	)
	print(
		f"party matching: {party_right}/{len(docs)} = {party_right / len(docs):.2%}  by variant: "
		+ ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(kinds.items()))
	)
	print(f"item matching: {item_right}/{item_total} = {item_right / item_total:.2%}")
	print(f"party+item matching: {matches}/{n_match} = {matches / n_match:.2%}")
	print(f"wrong printed totals: {wrong_printed}, accepted by the checks: {wrong_printed_accepted}")
	print(f"extracted total differs from the truth yet accepted: {wrong_extracted_accepted}")
	print(
		f"reading + checks + matching: {seconds / len(docs) * 1000:.0f} ms per document, {seconds / pages * 1000:.0f} ms per page"
	)


if __name__ == "__main__":
	main()
