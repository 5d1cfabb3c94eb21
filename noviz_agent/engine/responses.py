"""Structured responses: one plain-data object per turn, drawn from tool results.

The model's prose becomes `text`; tables, cards, charts, proposals and refusals are built
from what the tools returned, never from model text. Numbers in the prose that no tool
result supports are flagged.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable
from typing import Any

from noviz_agent.engine.gateway import ToolResult

RESPONSE_TYPES = ("text", "table", "cards", "chart", "proposal", "refusal", "error")
MAX_TABLE_ROWS = 200


def empty_response() -> dict:
	return {
		"type": "text",
		"text": "",
		"table": None,
		"cards": None,
		"chart": None,
		"proposal": None,
		"refusal": None,
		"error": None,
		"flags": [],
		"sources": [],
		# The analysis kept server-side behind the cards and chart (for its PDF).
		"result_id": None,
	}


def error_response(message: str, hint: str | None = None) -> dict:
	response = empty_response()
	response.update(type="error", error={"message": message, "hint": hint})
	return response


# --- blocks from tool results ----------------------------------------------------------


def table_from(data: Any) -> dict | None:
	"""A table block from a list/report-shaped tool result."""
	if not isinstance(data, dict) or not isinstance(data.get("rows"), list) or not data["rows"]:
		return None
	rows = [r for r in data["rows"] if isinstance(r, dict)][:MAX_TABLE_ROWS]
	if not rows:
		return None
	columns = data.get("columns") or [{"key": k, "label": k.replace("_", " ").title()} for k in rows[0]]
	columns = [
		c if isinstance(c, dict) else {"key": str(c), "label": str(c).replace("_", " ").title()}
		for c in columns
	]
	columns = [c for c in columns if not str(c.get("key", "")).startswith("_")]
	page = data.get("page") or {}
	return {
		"title": data.get("title") or data.get("label") or "",
		"columns": columns,
		"rows": rows,
		"page": {
			"number": page.get("number", 1),
			"size": page.get("size", len(rows)),
			"total": data.get("total", page.get("total", len(rows))),
			"result_id": data.get("result_id") or page.get("result_id"),
		},
	}


def cards_from(data: Any) -> list[dict] | None:
	"""Cards from KPIs (analytics) or a single count."""
	if not isinstance(data, dict):
		return None
	kpis = data.get("kpis")
	if isinstance(kpis, list) and kpis:
		cards = []
		for kpi in kpis[:8]:
			if isinstance(kpi, dict) and "label" in kpi:
				card = {"title": str(kpi["label"]), "value": kpi.get("value")}
				if kpi.get("unit"):
					card["subtitle"] = str(kpi["unit"])
				if kpi.get("change") is not None:
					card["change"] = kpi["change"]
				cards.append(card)
		return cards or None
	if "count" in data and isinstance(data["count"], int) and not data.get("rows"):
		title = data.get("label") or data.get("entity") or "Count"
		return [{"title": str(title), "value": data["count"]}]
	return None


def chart_from(data: Any) -> dict | None:
	chart = data.get("chart") if isinstance(data, dict) else None
	if isinstance(chart, dict) and isinstance(chart.get("data"), list):
		return safe_chart(chart)
	return None


# Plotly draws a subset of HTML in every text it shows (titles, tick labels, legend, hover): a
# customer named '<a href=...>' would become a link. Plotly decodes entities, so escaped text is
# shown exactly as written. Templates are the chart builder's own markup and are kept.
_CHART_MARKUP_KEYS = frozenset({"hovertemplate", "texttemplate"})


def safe_chart(figure: dict) -> dict:
	"""A copy of a Plotly figure whose every text shows literally; markup in data never renders."""
	return _escaped(figure)


def _escaped(value: Any, key: str = "") -> Any:
	if isinstance(value, str):
		return value if key in _CHART_MARKUP_KEYS else html.escape(value, quote=False)
	if isinstance(value, dict):
		return {k: _escaped(v, k) for k, v in value.items()}
	if isinstance(value, list | tuple):
		return [_escaped(v, key) for v in value]
	return value


def sources_from(data: Any) -> list[dict]:
	if not isinstance(data, dict) or not isinstance(data.get("passages"), list):
		return []
	return [
		{"title": p.get("title"), "section": p.get("section"), "slug": p.get("slug")}
		for p in data["passages"]
		if isinstance(p, dict)
	]


def proposal_block(result: ToolResult) -> dict:
	proposal = dict(result.proposal or {})
	proposal.setdefault("title", proposal.get("summary") or result.name)
	proposal.setdefault("values", result.args.get("values", {}))
	return proposal


def build(text: str, results: Iterable[ToolResult], *, question: str = "") -> dict:
	"""The turn's response from the model's final text and the tool results of the turn."""
	results = list(results)
	response = empty_response()
	response["text"] = (text or "").strip()

	proposals = [r for r in results if r.status == "proposal"]
	if proposals:
		response["type"] = "proposal"
		response["proposal"] = proposal_block(proposals[-1])
		if not response["text"]:
			response["text"] = "Please review this change. Nothing is written until you confirm."

	refused = [r for r in results if r.status == "refused"]
	if refused:
		response["refusal"] = {"message": refused[-1].error}

	for result in reversed([r for r in results if r.ok]):
		data = result.data
		if not (response["chart"] or response["cards"]) and isinstance(data, dict) and data.get("kpis"):
			response["result_id"] = data.get("result_id")
		response["chart"] = response["chart"] or chart_from(data)
		response["table"] = response["table"] or table_from(data)
		response["cards"] = response["cards"] or cards_from(data)
		response["sources"] = response["sources"] or sources_from(data)

	if response["type"] != "proposal":
		if response["chart"]:
			response["type"] = "chart"
		elif response["table"]:
			response["type"] = "table"
		elif response["cards"]:
			response["type"] = "cards"
		elif response["refusal"]:
			response["type"] = "refusal"
		else:
			response["type"] = "text"

	response["flags"] = unsupported_numbers(response["text"], results, question=question)
	return response


# --- numbers in prose ---------------------------------------------------------------

_NUMBER = re.compile(
	r"(?<![\w./-])(?P<sign>[-−])?(?P<cur>[$€£₹])?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
	r"\s?(?P<suffix>%|[kKmMbB](?![a-zA-Z]))?(?![\w/-]|\.\d)"
)
_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9}


def numbers_in_text(text: str) -> list[tuple[str, float, int, str]]:
	"""Each number written in the text: (as written, value, decimals shown, suffix)."""
	found = []
	for match in _NUMBER.finditer(text or ""):
		raw = match.group("num")
		value = float(raw.replace(",", ""))
		if match.group("sign"):
			value = -value
		suffix = (match.group("suffix") or "").lower()
		if suffix in _SCALE:
			value *= _SCALE[suffix]
		decimals = len(raw.split(".")[1]) if "." in raw else 0
		found.append((match.group(0).strip(), value, decimals, suffix))
	return found


def _numbers_in(value: Any, out: set[float], depth: int = 0) -> None:
	if depth > 12:
		return
	if isinstance(value, bool):
		return
	if isinstance(value, (int, float)):
		if math.isfinite(value):
			out.add(float(value))
	elif isinstance(value, str):
		for _, number, _, _ in numbers_in_text(value):
			out.add(number)
		# Digits inside dates and record names ("2026-03-31", "SINV-2026-00012") support years and ids.
		out.update(float(d) for d in re.findall(r"\d+", value)[:50])
		try:
			out.add(float(value.replace(",", "")))
		except ValueError:
			pass
	elif isinstance(value, dict):
		for item in value.values():
			_numbers_in(item, out, depth + 1)
		rows = value.get("rows")
		if isinstance(rows, list):
			out.add(float(len(rows)))
	elif isinstance(value, (list, tuple)):
		out.add(float(len(value)))
		for item in value:
			_numbers_in(item, out, depth + 1)


def _supported(value: float, decimals: int, suffix: str, known: set[float]) -> bool:
	candidates = {value, abs(value)}
	if suffix == "%":
		candidates |= {value / 100, abs(value) / 100}
	for candidate in candidates:
		for number in known:
			# Agree to the precision the prose shows (and 1% for scaled figures like 1.2M).
			tolerance = 0.5 * 10 ** (-decimals) if suffix not in _SCALE else abs(number) * 0.05
			if suffix == "%" and candidate != value:
				tolerance /= 100
			if abs(abs(number) - candidate) <= tolerance + 1e-9:
				return True
	return False


def unsupported_numbers(text: str, results: Iterable[ToolResult], *, question: str = "") -> list[dict]:
	"""Numbers in the model's text that nothing the tools returned (or the person asked) supports."""
	known: set[float] = set()
	for result in results:
		if result.status == "ok":
			_numbers_in(result.data, known)
		elif result.status == "proposal":
			_numbers_in(result.proposal, known)
		_numbers_in(result.args, known)
	for _, number, _, _ in numbers_in_text(question):
		known.add(number)
	flags = []
	for written, value, decimals, suffix in numbers_in_text(text):
		if not suffix and decimals == 0 and 0 <= value <= 10:
			continue  # small counts and list ordinals carry no claim worth checking
		if not _supported(value, decimals, suffix, known):
			flags.append(
				{"value": written, "message": "No tool result in this turn supports this number; verify it."}
			)
	return flags
