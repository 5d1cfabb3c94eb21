"""A response object as terminal text, for `bench noviz-agent ask` and logs read by people."""

from __future__ import annotations

import json

MAX_CELL = 40


def _cell(value) -> str:
	text = "" if value is None else str(value)
	text = " ".join(text.split())
	return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def table_text(table: dict) -> str:
	"""A table as aligned columns with its title and paging line."""
	columns = table.get("columns") or []
	rows = table.get("rows") or []
	header = [_cell(c.get("label") or c.get("key")) for c in columns]
	body = [[_cell(row.get(c.get("key"))) for c in columns] for row in rows]
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


def response_text(response: dict) -> str:
	"""Every part of a response, in reading order, as plain text."""
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
	if response.get("table"):
		parts.append(table_text(response["table"]))
	for card in response.get("cards") or ():
		line = f"[{card.get('title')}] {card.get('value')}"
		if card.get("change"):
			line += f" ({card['change']})"
		if card.get("subtitle"):
			line += f" — {card['subtitle']}"
		parts.append(line)
	if response.get("chart"):
		traces = (response["chart"] or {}).get("data") or []
		title = ((response["chart"] or {}).get("layout") or {}).get("title")
		if isinstance(title, dict):
			title = title.get("text")
		parts.append(f"[chart: {title or 'untitled'}, {len(traces)} series]")
	if response.get("proposal"):
		proposal = response["proposal"]
		parts.append(
			f"Proposal ({proposal.get('action')} {proposal.get('doctype')} {proposal.get('name') or ''}): "
			f"{proposal.get('summary') or proposal.get('title')}\n"
			+ json.dumps(proposal.get("values") or {}, indent=2, default=str, ensure_ascii=False)
			+ f"\ntoken: {proposal.get('token')}"
		)
	for flag in response.get("flags") or ():
		parts.append(f"Check: {flag.get('value')} — {flag.get('message')}")
	if response.get("sources"):
		parts.append(
			"Sources: " + "; ".join(f"{s.get('title')} > {s.get('section')}" for s in response["sources"])
		)
	return "\n\n".join(p for p in parts if p)
