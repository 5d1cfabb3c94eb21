"""A response object as terminal text, for `bench noviz-agent ask` and logs read by people."""

from __future__ import annotations

import json

MAX_CELL = 40


NUMERIC = ("Currency", "Float", "Int", "Percent")


def _cell(value, fieldtype: str | None = None) -> str:
	if fieldtype in NUMERIC and isinstance(value, int | float) and not isinstance(value, bool):
		text = _number(value, fieldtype)
	else:
		text = "" if value is None else str(value)
	text = " ".join(text.split())
	return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def _number(value: float, fieldtype: str | None) -> str:
	"""1234.5 as 1,234.50 (money), whole counts without decimals, percentages with a % sign."""
	if fieldtype == "Int" or (fieldtype != "Currency" and float(value).is_integer()):
		text = f"{value:,.0f}"
	else:
		text = f"{value:,.2f}"
	return f"{text}%" if fieldtype == "Percent" else text


def card_text(card: dict) -> str:
	"""`[Revenue 2026-11] 34,857.00 USD (-8.7% vs 2026-10)`: a KPI card's value and change."""
	value = card.get("value")
	if isinstance(value, int | float) and not isinstance(value, bool):
		shown = _number(value, card.get("fieldtype") or "Float")
		if card.get("currency"):
			shown = f"{shown} {card['currency']}"
		elif card.get("unit"):
			shown = f"{shown} {card['unit']}"
	else:
		shown = "n/a" if value is None else str(value)
	line = f"[{card.get('title')}] {shown}"
	change = card.get("change")
	if isinstance(change, int | float) and not isinstance(change, bool):
		text = f"{change:+.1f}{' pts' if card.get('change_kind') == 'points' else '%'}"
		line += f" ({text} vs {card['compared_with']})" if card.get("compared_with") else f" ({text})"
	elif change:
		line += f" ({change})"
	if card.get("subtitle"):
		line += f" — {card['subtitle']}"
	return line


def proposal_text(proposal: dict) -> str:
	"""What would be written: the action, the document, each field (before → after), what is missing."""
	head = " ".join(
		str(p) for p in (proposal.get("action"), proposal.get("doctype"), proposal.get("name")) if p
	)
	lines = [f"Proposal ({head}): {proposal.get('title') or proposal.get('summary') or ''}".rstrip()]
	if proposal.get("effect"):
		lines.append(str(proposal["effect"]))
	for field in proposal.get("fields") or ():
		value = field.get("value")
		shown = f"{field.get('before')} → {value}" if field.get("changed") else value
		lines.append(f"  {field.get('label') or field.get('key')}: {shown}")
	if proposal.get("values"):
		lines.append(json.dumps(proposal["values"], indent=2, default=str, ensure_ascii=False))
	if proposal.get("missing"):
		lines.append(f"  still empty (ERPNext will ask): {', '.join(proposal['missing'])}")
	lines.append(f"token: {proposal.get('token')}")
	return "\n".join(lines)


def table_text(table: dict) -> str:
	"""A table as aligned columns with its title and paging line."""
	columns = table.get("columns") or []
	rows = table.get("rows") or []
	header = [_cell(c.get("label") or c.get("key")) for c in columns]
	body = [[_cell(row.get(c.get("key")), c.get("fieldtype")) for c in columns] for row in rows]
	widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]

	def line(cells):
		return "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(cells)).rstrip()

	out = []
	if table.get("title"):
		out.append(str(table["title"]))
	out.append(line(header))
	out.append("  ".join("-" * w for w in widths))
	out.extend(line(r) for r in body)
	page = table.get("page") or {}
	if page.get("total") is not None:
		size = int(page.get("size") or len(rows) or 1)
		number = int(page.get("number") or 1)
		first = (number - 1) * size + 1 if rows else 0
		out.append(f"rows {first}–{first + len(rows) - 1 if rows else 0} of {page['total']}")
	return "\n".join(out)


def scope_text(scope: dict | None) -> str:
	"""Whose figures these are, as the chat's caption says it: `Noviz Trading · USD · 2025-01-01 to
	2026-12-01 (last period still running)`, or the companies a list of records covers."""
	if not isinstance(scope, dict):
		return ""
	parts = []
	if scope.get("company"):
		parts.append(str(scope["company"]))
	elif scope.get("companies"):
		parts.append("All companies you can read: " + ", ".join(map(str, scope["companies"])))
	if scope.get("currency"):
		parts.append(str(scope["currency"]))
	period = scope.get("period") or {}
	if period.get("as_of"):
		parts.append(f"as of {period['as_of']}")
	elif period.get("start") and period.get("end"):
		parts.append(f"{period['start']} to {period['end']}")
	elif period.get("end"):
		parts.append(f"up to {period['end']}")
	text = " · ".join(parts)
	if text and period.get("partial") and (period.get("start") or period.get("end")):
		text += " (last period still running)"
	if scope.get("company") and scope.get("other_companies"):
		text += ". Not included: " + ", ".join(map(str, scope["other_companies"]))
	return text


def response_text(response: dict) -> str:
	"""Every part of a response, in reading order, as plain text; figures under the line saying
	whose they are."""
	parts = []
	if response.get("text"):
		parts.append(str(response["text"]).strip())
	if response.get("refusal"):
		parts.append(f"Refused: {response['refusal'].get('message')}")
	if response.get("error"):
		error = response["error"]
		parts.append(
			f"Error: {error.get('message')}" + (f"\nHint: {error['hint']}" if error.get("hint") else "")
		)
	figures = response.get("table") or response.get("cards") or response.get("chart")
	if figures and scope_text(response.get("scope")):
		parts.append(f"({scope_text(response.get('scope'))})")
	if response.get("table"):
		parts.append(table_text(response["table"]))
	if response.get("cards"):
		parts.append("\n".join(card_text(card) for card in response["cards"]))
	if response.get("chart"):
		traces = (response["chart"] or {}).get("data") or []
		title = ((response["chart"] or {}).get("layout") or {}).get("title")
		if isinstance(title, dict):
			title = title.get("text")
		parts.append(f"[chart: {title or 'untitled'}, {len(traces)} series]")
	if response.get("proposal"):
		parts.append(proposal_text(response["proposal"]))
	for flag in response.get("flags") or ():
		parts.append(f"Check: {flag.get('value')} — {flag.get('message')}")
	if response.get("sources"):
		parts.append(
			"Sources: " + "; ".join(f"{s.get('title')} > {s.get('section')}" for s in response["sources"])
		)
	return "\n\n".join(p for p in parts if p)
