"""Invoices and orders with known contents, written as real files: PDFs with a text layer (fpdf2) and
photos-like images (Pillow). For tests, the site test and the intake benchmark; fpdf2 is a test
dependency and is imported only here.

    spec = InvoiceSpec(party_name="Seed Supplier 01", number="INV-7", lines=[Line("Office Chair", 2, 180)])
    pdf = render_pdf(spec)            # bytes of a PDF
    truth = spec.expected()           # what a perfect extraction returns (the schema of intake.document)
"""

from __future__ import annotations

import datetime as dt
import io
import random
from dataclasses import dataclass, field

LAYOUTS = ("classic", "modern", "european", "order")


@dataclass
class Line:
	description: str
	quantity: float
	rate: float
	item_code: str | None = None

	@property
	def amount(self) -> float:
		return round(self.quantity * self.rate, 2)


@dataclass
class InvoiceSpec:
	party_name: str
	number: str
	lines: list[Line]
	tax_id: str | None = None
	date: dt.date = dt.date(2026, 11, 20)
	due_date: dt.date | None = dt.date(2026, 12, 20)
	currency: str = "USD"
	tax_rate: float = 0.0
	layout: str = "classic"
	# Added to the printed total only: a document whose arithmetic is wrong.
	total_error: float = 0.0
	buyer: str = "Noviz Trading"
	extra: dict = field(default_factory=dict)

	@property
	def subtotal(self) -> float:
		return round(sum(line.amount for line in self.lines), 2)

	@property
	def tax(self) -> float:
		return round(self.subtotal * self.tax_rate, 2)

	@property
	def total(self) -> float:
		return round(self.subtotal + self.tax + self.total_error, 2)

	@property
	def kind(self) -> str:
		return "customer_order" if self.layout == "order" else "supplier_invoice"

	def expected(self) -> dict:
		return {
			"document_type": self.kind,
			"party_name": self.party_name,
			"party_tax_id": self.tax_id,
			"document_number": self.number,
			"date": self.date.isoformat(),
			"due_date": self.due_date.isoformat() if self.due_date else None,
			"currency": self.currency,
			"lines": [
				{
					"description": x.description,
					"quantity": x.quantity,
					"rate": x.rate,
					"amount": x.amount,
					"item_code": x.item_code,
				}
				for x in self.lines
			],
			"taxes": [{"description": self._tax_label(), "amount": self.tax}] if self.tax_rate else [],
			"subtotal": self.subtotal,
			"total": self.total,
		}

	def _tax_label(self) -> str:
		pct = f"{self.tax_rate * 100:g}%"
		return {"european": f"VAT {pct}", "modern": f"Sales Tax {pct}"}.get(self.layout, f"Tax {pct}")


def money(value: float, layout: str) -> str:
	text = f"{value:,.2f}"
	if layout == "european":
		text = text.replace(",", "_").replace(".", ",").replace("_", ".")
	return text


def qty(value: float, layout: str) -> str:
	text = f"{value:g}"
	return text.replace(".", ",") if layout == "european" else text


def printed_date(value: dt.date, layout: str) -> str:
	if layout == "european":
		return value.strftime("%d.%m.%Y")
	if layout == "modern":
		return f"{value.day} {value.strftime('%B %Y')}"
	if layout == "order":
		return value.strftime("%B %-d, %Y")
	return value.isoformat()


# --- PDF (fpdf2) ----------------------------------------------------------------------------


def render_pdf(spec: InvoiceSpec) -> bytes:
	"""The document as a PDF with a text layer; long line lists continue on further pages."""
	from fpdf import FPDF

	pdf = FPDF(format="A4", unit="pt")
	pdf.set_auto_page_break(False)
	pdf.add_page()
	lay = spec.layout
	left, right = 40, 555
	title = {"order": "PURCHASE ORDER", "european": "INVOICE"}.get(lay, "INVOICE")
	pdf.set_font("Helvetica", "B", 16)
	if lay == "modern":
		pdf.text(left, 50, title)
		pdf.set_font("Helvetica", "", 10)
		pdf.text(left, 80, f"From: {spec.party_name}")
		pdf.text(left, 95, "12 Harbour Road, Springfield")
		if spec.tax_id:
			pdf.text(left, 110, f"VAT No: {spec.tax_id}")
		pdf.text(340, 80, f"Invoice #: {spec.number}")
		pdf.text(340, 95, f"Invoice Date: {printed_date(spec.date, lay)}")
		if spec.due_date:
			pdf.text(340, 110, f"Due Date: {printed_date(spec.due_date, lay)}")
		pdf.text(340, 125, f"Currency: {spec.currency}")
		pdf.text(left, 140, f"Bill to: {spec.buyer}")
	else:
		pdf.text(left, 50, spec.party_name)
		pdf.text(400, 50, title)
		pdf.set_font("Helvetica", "", 10)
		pdf.text(left, 68, "Unit 4, Riverside Estate")
		if spec.tax_id:
			label = {"european": "VAT Number:", "order": "Tax ID:"}.get(lay, "Tax ID:")
			pdf.text(left, 83, f"{label} {spec.tax_id}")
		number_label = "PO Number:" if lay == "order" else "Invoice No:"
		date_label = "Order Date:" if lay == "order" else "Date:"
		if lay == "european":
			# Label and value in separate columns, no colon after the value's label.
			for i, (label, value) in enumerate(
				(
					("Invoice No:", spec.number),
					("Date:", printed_date(spec.date, lay)),
					("Due Date:", printed_date(spec.due_date, lay) if spec.due_date else ""),
					("Currency:", spec.currency),
				)
			):
				if value:
					pdf.text(360, 75 + 15 * i, label)
					pdf.text(450, 75 + 15 * i, value)
		else:
			pdf.text(360, 75, f"{number_label} {spec.number}")
			pdf.text(360, 90, f"{date_label} {printed_date(spec.date, lay)}")
			if spec.due_date:
				pdf.text(360, 105, f"Due Date: {printed_date(spec.due_date, lay)}")
			pdf.text(360, 120, f"Currency: {spec.currency}")
		pdf.text(left, 140, f"{'Vendor' if lay == 'order' else 'Bill to'}: {spec.buyer}")
	ruled = lay in ("classic", "european", "order")
	with_code = any(x.item_code for x in spec.lines)
	cols = [("Description", 250, "L"), ("Qty", 55, "R"), ("Unit Price", 90, "R"), ("Amount", 90, "R")]
	if lay == "modern":
		cols = [("Description", 250, "L"), ("Quantity", 55, "R"), ("Rate", 90, "R"), ("Line Total", 90, "R")]
	if with_code:
		cols = [("Item Code", 70, "L"), (cols[0][0], 180, "L"), *cols[1:]]
	y = 165
	row_h = 18

	def header(y):
		pdf.set_font("Helvetica", "B", 9)
		x = left
		for name, width, align in cols:
			if ruled:
				pdf.set_xy(x, y)
				pdf.cell(width, row_h, name, border=1, align=align)
			else:
				pdf.text(x + (width - pdf.get_string_width(name) - 3 if align == "R" else 0), y + 12, name)
			x += width
		pdf.set_font("Helvetica", "", 9)
		return y + row_h + (0 if ruled else 4)

	y = header(y)
	for line in spec.lines:
		if y > 760:
			pdf.set_font("Helvetica", "I", 8)
			pdf.text(left, 800, "Continued on next page")
			pdf.add_page()
			y = header(60)
		cells = [line.description, qty(line.quantity, lay), money(line.rate, lay), money(line.amount, lay)]
		if with_code:
			cells = [line.item_code or "", *cells]
		x = left
		for (_, width, align), value in zip(cols, cells, strict=False):
			if ruled:
				pdf.set_xy(x, y)
				pdf.cell(width, row_h, value, border=1, align=align)
			else:
				pdf.text(x + (width - pdf.get_string_width(value) - 3 if align == "R" else 0), y + 12, value)
			x += width
		y += row_h
	if y > 720:
		pdf.add_page()
		y = 60
	y += 20
	label_x, value_right = right - 230, left + sum(w for _, w, _ in cols) - 3
	code = spec.currency if lay != "modern" else ""
	rows = [({"modern": "Net amount", "european": "Net total"}.get(lay, "Subtotal"), spec.subtotal)]
	if spec.tax_rate:
		rows.append((spec._tax_label(), spec.tax))
	rows.append(({"modern": "Amount Due"}.get(lay, "Total"), spec.total))
	for label, value in rows:
		pdf.set_font("Helvetica", "B" if label in ("Total", "Amount Due") else "", 10)
		shown = f"{code} {money(value, lay)}".strip()
		if lay == "modern" and spec.currency == "USD":
			shown = "$" + money(value, lay)
		pdf.text(label_x, y, label)
		pdf.text(value_right - pdf.get_string_width(shown), y, shown)
		y += 16
	return bytes(pdf.output())


# --- image (Pillow) ------------------------------------------------------------------------


def render_image(spec: InvoiceSpec, *, size=(1240, 1754)) -> bytes:
	"""The first page drawn as a PNG with no text layer, as a phone photo or scan would be."""
	from PIL import Image, ImageDraw

	image = Image.new("RGB", size, "white")
	draw = ImageDraw.Draw(image)
	y = 60
	for text in (
		spec.party_name,
		"INVOICE",
		f"Invoice No: {spec.number}",
		f"Date: {spec.date.isoformat()}",
		f"Currency: {spec.currency}",
	):
		draw.text((80, y), text, fill="black")
		y += 40
	for line in spec.lines:
		draw.text(
			(80, y),
			f"{line.description}   {line.quantity:g} x {line.rate:.2f} = {line.amount:.2f}",
			fill="black",
		)
		y += 30
	draw.text((700, y + 40), f"Total {spec.currency} {spec.total:.2f}", fill="black")
	out = io.BytesIO()
	image.save(out, format="PNG")
	return out.getvalue()


# --- random documents for the benchmark ------------------------------------------------------


def random_spec(
	rng: random.Random, party: dict, catalogue: list[dict], *, layout: str, n_lines: int
) -> InvoiceSpec:
	"""A document from `party` ({name, tax_id}) over items of `catalogue` ({item_code, item_name, rate})."""
	picked = rng.sample(catalogue, min(n_lines, len(catalogue)))
	while len(picked) < n_lines:
		picked.append(rng.choice(catalogue))
	with_codes = rng.random() < 0.5
	lines = [
		Line(
			item["item_name"],
			rng.choice([1, 2, 3, 5, 10, 12, 2.5]),
			round(item["rate"] * rng.uniform(0.9, 1.1), 2),
			item["item_code"] if with_codes else None,
		)
		for item in picked
	]
	currency = {"european": rng.choice(["EUR", "CHF"]), "modern": "USD"}.get(
		layout, rng.choice(["USD", "GBP", "USD"])
	)
	date = dt.date(2026, rng.randint(1, 11), rng.randint(1, 28))
	return InvoiceSpec(
		party_name=party["name"],
		tax_id=party.get("tax_id"),
		number=f"{rng.choice(['INV', 'BILL', 'PO', 'F'])}-{rng.randint(1000, 99999)}",
		lines=lines,
		date=date,
		due_date=date + dt.timedelta(days=rng.choice([14, 30, 45])),
		currency=currency,
		tax_rate=rng.choice([0, 0.05, 0.08, 0.2]),
		layout=layout,
	)
