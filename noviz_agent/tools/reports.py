"""Report tools: `report.find` (which reports this person may run) and `report.run` (one report, a page back).

A report's rows stay server-side in `session.results`; the model gets a page, the row
count and column totals computed here, so it never adds numbers up itself.
"""

from __future__ import annotations

import re
import secrets

from rapidfuzz import fuzz

from noviz_agent.engine.errors import NotFound, ToolError
from noviz_agent.engine.tools import Tool, function_tool

RESULT_TTL_SECONDS = 60 * 60
# Rows of one report kept on the server for paging: enough for any page a person reads, bounded
# so a huge report cannot fill Redis. Totals are computed from every row before the cut.
MAX_KEPT_ROWS = 5000
SUMMABLE_TYPES = ("Currency", "Float", "Int")
WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
	return {w for w in WORD.findall(str(text).lower()) if len(w) > 1}


def score(query: str, report: dict) -> float:
	"""How well a report matches the words: shared words first, fuzzy similarity to break ties."""
	haystack = " ".join(str(report.get(k) or "") for k in ("name", "module", "ref_doctype"))
	wanted = _words(query)
	found = _words(haystack)
	shared = sum(1 for w in wanted if w in found or any(f.startswith(w) for f in found))
	return shared * 100 + fuzz.token_set_ratio(query.lower(), haystack.lower()) / 10


def _find(session, words: str, limit: int = 10) -> dict:
	"""Find query and script reports this person may run, by words (e.g. "receivable ageing", "stock balance").

	Returns each report's name, module, type and its filters (fieldname, label, type, required).
	Run one with report.run; use the exact name returned here.

	Args:
		words: A few words about the report wanted.
		limit: How many reports to return at most.
	"""
	available = session.connector.list_reports()
	ranked = sorted(available, key=lambda r: score(words, r), reverse=True)
	matches = [r for r in ranked if score(words, r) >= 100] or ranked[: min(limit, 5)]
	return {
		"reports": [
			{
				"name": r["name"],
				"module": r.get("module"),
				"type": r.get("type"),
				"ref_doctype": r.get("ref_doctype"),
				"filters": [
					{
						k: f.get(k)
						for k in ("fieldname", "label", "fieldtype", "options", "reqd")
						if f.get(k) is not None
					}
					for f in r.get("filters") or []
				],
			}
			for r in matches[:limit]
		],
		"available": len(available),
		"note": "Only reports this person may run are listed."
		if matches
		else "No report matched those words.",
	}


def _sum(columns: list[dict], rows: list[dict]) -> dict:
	totals = {}
	for col in columns:
		if col.get("type") not in SUMMABLE_TYPES:
			continue
		numbers = [
			float(v)
			for v in (r.get(col["key"]) for r in rows)
			if isinstance(v, int | float) and not isinstance(v, bool)
		]
		if numbers:
			totals[col["key"]] = round(sum(numbers), 6)
	return totals


def summarise(
	columns: list[dict], rows: list[dict], kinds: list[str] | None = None, total_row: dict | None = None
) -> dict:
	"""Row count and totals of amount and quantity columns, and where the totals come from.

	The report's own total row when it has one; otherwise the sum of its leaf rows only, so
	group rows (a parent account), opening, total and closing rows are never counted again.
	"""
	kinds = kinds or ["leaf"] * len(rows)
	if total_row:
		totals = _sum(columns, [total_row])
		source = "the report's own total row"
	else:
		leaves = [r for r, kind in zip(rows, kinds, strict=False) if kind == "leaf"]
		totals = _sum(columns, leaves)
		left_out = len(rows) - len(leaves)
		source = "its leaf rows" + (
			f" ({left_out} group, opening, total or closing rows left out)" if left_out else ""
		)
	return {"row_count": len(rows), "totals": totals, "totals_from": source}


def _page_of(stored: dict, result_id: str, page: int, size: int) -> dict:
	rows = stored["rows"]
	pages = max(1, -(-len(rows) // size))
	if page > pages:
		raise ToolError(f"The report has {pages} page(s) of {size} rows; ask for page 1 to {pages}.")
	return {
		"report": stored["report"],
		"filters": stored["filters"],
		"columns": stored["columns"],
		"rows": rows[(page - 1) * size : page * size],
		"total": len(rows),
		"summary": stored["summary"],
		"page": {"number": page, "size": size, "pages": pages, "has_more": page < pages},
		"result_id": result_id,
		"note": (
			f"Page {page} of {pages}; "
			+ (
				stored["summary"]["note"] + " "
				if stored["summary"].get("kept_rows")
				else f"all {len(rows)} rows are kept for paging and analysis under result_id. "
			)
			+ f"Totals in summary come from {stored['summary'].get('totals_from', 'every row')}; quote them "
			"rather than adding rows up. Figures are for the company in filters."
		),
	}


def _run(
	session, report: str = "", filters: dict | None = None, page: int = 1, result_id: str | None = None
) -> dict:
	"""Run one query or script report as this person and get a page of its rows plus a summary.

	The summary has the row count and totals of amount and quantity columns over all rows. The
	rows stay on the server under result_id: pass result_id and page to see more pages without
	running the report again. Find report names and their filters with report.find first.

	Args:
		report: The exact report name from report.find.
		filters: The report's filters by fieldname, e.g. {"company": "Acme", "from_date": "2024-01-01"}.
		page: Which page of rows to return.
		result_id: A result_id from an earlier report.run, to page through it.
	"""
	size = session.limits.page_size
	if result_id:
		stored = session.results.get(result_id)
		if not stored or stored.get("kind") != "rows" or stored.get("user") != session.user:
			raise NotFound("That result is no longer available; run the report again.")
		return _page_of(stored, result_id, page, size)
	if not report:
		raise ToolError("Give the report name (from report.find), or a result_id to page through.")
	result = session.connector.run_report(report, with_company(session, report, filters or {}))
	columns, rows = result["columns"], result["rows"]
	summary = summarise(columns, rows, result.get("kinds"), result.get("total_row"))
	if len(rows) > MAX_KEPT_ROWS:
		summary["kept_rows"] = MAX_KEPT_ROWS
		summary["note"] = (
			f"The report has {len(rows):,} rows; the first {MAX_KEPT_ROWS:,} are kept for paging. "
			"The totals cover every row. Narrow the filters to page through the rest."
		)
		rows = rows[:MAX_KEPT_ROWS]
	stored = {
		"kind": "rows",
		"user": session.user,
		"report": report,
		"filters": result.get("filters", filters or {}),
		"columns": columns,
		"rows": rows,
		"summary": summary,
	}
	new_id = f"r_{secrets.token_urlsafe(9)}"
	session.results.put(new_id, stored, RESULT_TTL_SECONDS)
	return _page_of(stored, new_id, page, size)


def with_company(session, report: str, filters: dict) -> dict:
	"""The report's filters with the person's default company when the report takes one and none was named."""
	if filters.get("company") or not getattr(session.person, "company", None):
		return filters
	declared = next((r for r in session.connector.list_reports() if r.get("name") == report), None)
	names = {f.get("fieldname") for f in (declared or {}).get("filters") or []}
	if "company" in names:
		return {**filters, "company": session.person.company}
	return filters


def tools() -> list[Tool]:
	find = function_tool("report.find", "reports", tags=("spine",), trusted_output=True)(_find)
	run = function_tool("report.run", "reports")(_run)
	# The generated schema allows any page; ask for a positive one.
	run.parameters["properties"]["page"]["minimum"] = 1
	find.parameters["properties"]["limit"].update(minimum=1, maximum=30)
	find.parameters["properties"]["words"]["minLength"] = 1
	return [find, run]
