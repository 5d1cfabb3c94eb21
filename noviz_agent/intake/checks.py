"""Checks in code, not in the model: the arithmetic, the dates and the currency of an extracted document.

Each check reports what it compared; a failed check is shown to the person as it is. Nothing is
corrected here, so a wrong total stays wrong in the proposal and is flagged.
"""

from __future__ import annotations

from noviz_agent.intake.document import parse_date

TOLERANCE = 0.01  # one cent: printed amounts are rounded to cents


def _money(value) -> str:
	return f"{value:,.2f}"


def _close(a: float, b: float, tolerance: float = TOLERANCE) -> bool:
	return abs(a - b) <= tolerance + 1e-9


def check(doc: dict, known_currencies: set[str] | None = None) -> list[dict]:
	"""Every check on the document, passed or failed: `{"check", "ok", "message"}`."""
	out: list[dict] = []

	def add(name: str, ok: bool, message: str) -> None:
		out.append(_row(name, ok, message))

	lines = doc.get("lines") or []
	if not lines:
		add("lines", False, "No line items were found on the document.")
	for i, line in enumerate(lines, start=1):
		q, r, a = line.get("quantity"), line.get("rate"), line.get("amount")
		if a is None:
			add("line_amount", False, f"Line {i} ({line.get('description')!r}): no amount could be read.")
		elif q is not None and r is not None:
			# A rate printed to more places than cents leaves a rounding of up to half a cent per unit.
			tolerance = max(TOLERANCE, abs(q) * 0.005)
			adjust = (line.get("charge") or 0.0) - (line.get("allowance") or 0.0)
			expected = q * r + adjust
			ok = _close(expected, a, tolerance)
			adjusted = (f" − {_money(line['allowance'])}" if line.get("allowance") else "") + (
				f" + {_money(line['charge'])}" if line.get("charge") else ""
			)
			add(
				"line_amount",
				ok,
				f"Line {i}: {q:g} × {_money(r)}{adjusted} = {_money(expected)}"
				+ ("" if ok else f", but the document prints {_money(a)}."),
			)
	amounts = [line["amount"] for line in lines if line.get("amount") is not None]
	line_sum = round(sum(amounts), 2)
	subtotal, total = doc.get("subtotal"), doc.get("total")
	taxes = round(sum(t.get("amount") or 0 for t in doc.get("taxes") or []), 2)
	if subtotal is not None and lines:
		ok = _close(line_sum, subtotal)
		add(
			"subtotal",
			ok,
			f"The lines add up to {_money(line_sum)}"
			+ (" = the subtotal." if ok else f", but the subtotal printed is {_money(subtotal)}."),
		)
	if total is None:
		add("total", False, "No total could be read from the document.")
	else:
		base = subtotal if subtotal is not None else line_sum
		# Document-level allowances and charges (an e-invoice states them; BR-CO-13 of EN 16931).
		allowances, charges = doc.get("allowance_total") or 0.0, doc.get("charge_total") or 0.0
		expected = round(base - allowances + charges + taxes, 2)
		ok = _close(expected, total)
		what = "subtotal" if subtotal is not None else "lines"
		adjusted = (f" − allowances {_money(allowances)}" if allowances else "") + (
			f" + charges {_money(charges)}" if charges else ""
		)
		add(
			"total",
			ok,
			f"{what.capitalize()} {_money(base)}{adjusted} + taxes {_money(taxes)} = {_money(expected)}"
			+ (" = the total." if ok else f", but the total printed is {_money(total)}."),
		)
	out.extend(_einvoice_checks(doc.get("einvoice")))
	for key in ("date", "due_date"):
		value = doc.get(key)
		if value in (None, ""):
			if key == "date":
				add("date", False, "No document date could be read.")
			continue
		parsed = parse_date(value)
		add(
			key,
			parsed is not None,
			f"{key.replace('_', ' ').capitalize()} {value!r}"
			+ (
				" is a valid date."
				if parsed
				else " is not a date that can be read unambiguously; enter it by hand."
			),
		)
	start, due = parse_date(doc.get("date")), parse_date(doc.get("due_date"))
	if start and due and due < start:
		add("due_date_order", False, f"The due date {due} is before the document date {start}.")
	currency = doc.get("currency")
	if not currency:
		add(
			"currency",
			False,
			"No currency could be read; the company's currency will be assumed only if you confirm it.",
		)
	elif known_currencies is not None:
		ok = currency in known_currencies
		add(
			"currency",
			ok,
			f"Currency {currency} " + ("exists on this site." if ok else "is not a currency on this site."),
		)
	return out


def _einvoice_checks(einvoice: dict | None) -> list[dict]:
	"""An e-invoice's own sums: each tax amount from its basis and rate, and the tax total (EN 16931)."""
	if not einvoice:
		return []
	out = []
	breakdown = einvoice.get("tax_breakdown") or []
	for row in breakdown:
		basis, rate, amount = row.get("basis"), row.get("rate"), row.get("amount")
		if None in (basis, rate, amount):
			continue
		expected = round(basis * rate / 100, 2)
		ok = _close(expected, amount)
		where = f"VAT {row.get('category')} {rate:g}% of {_money(basis)} = {_money(expected)}"
		out.append(
			_row("tax_amount", ok, where + ("" if ok else f", but the e-invoice states {_money(amount)}."))
		)
	tax_total = (einvoice.get("totals") or {}).get("tax_total")
	if tax_total is not None and breakdown:
		stated = round(sum(r.get("amount") or 0 for r in breakdown), 2)
		ok = _close(stated, tax_total)
		said = " = the tax total." if ok else f", but the tax total stated is {_money(tax_total)}."
		out.append(_row("tax_total", ok, f"The tax breakdown adds up to {_money(stated)}{said}"))
	return out


def _row(name: str, ok: bool, message: str) -> dict:
	return {"check": name, "ok": bool(ok), "message": message}


def failures(results: list[dict]) -> list[dict]:
	return [r for r in results if not r["ok"]]


def totals_accepted(results: list[dict]) -> bool:
	"""Whether every arithmetic check passed (no line, subtotal or total disagreement)."""
	arithmetic = {"line_amount", "subtotal", "total", "lines", "tax_amount", "tax_total"}
	return all(r["ok"] for r in results if r["check"] in arithmetic)
