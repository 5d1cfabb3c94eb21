"""Every row of a result kept server-side, for its owner: what a CSV/XLSX export writes.

The model sees one page of a large list or report; the full set stays behind a result id in
the person's own result store (Redis with an expiry on a site). An export reads it here:

- a kept report (`kind: "rows"`) holds its rows already;
- a kept list (`kind: "query"`) holds the query, run again now as the person, in chunks,
  through the person's own connector and only while they may still use `<entity>.list`,
  so an export never shows more than the desk would.

A result id of someone else (or an expired one) finds nothing. Frappe-free.
"""

from __future__ import annotations

from noviz_agent.engine.errors import NotFound, ToolError

EXPORT_MAX_ROWS = 50_000
CHUNK = 500
GONE = "That table is no longer available; ask the question again, then export it."


def kept(session, result_id: str) -> dict:
	"""The kept record behind `result_id`, when it belongs to the session's person."""
	record = session.results.get(result_id) if result_id else None
	if not isinstance(record, dict) or record.get("user") != session.user:
		raise NotFound(GONE)
	return record


def all_rows(session, result_id: str, *, max_rows: int = EXPORT_MAX_ROWS) -> dict:
	"""`{"title", "columns", "rows", "total"}` with every row of the kept result, for its owner.

	More than `max_rows` rows is refused with what to do, never cut silently.
	"""
	record = kept(session, result_id)
	kind = record.get("kind")
	if kind == "rows" and isinstance(record.get("rows"), list):
		rows = [row for row in record["rows"] if isinstance(row, dict)]
		_check_size(len(rows), max_rows)
		return _table(record, rows)
	if kind == "query" and record.get("entity"):
		return _table(record, _query_rows(session, record, max_rows))
	raise NotFound("This result has no table rows to export.")


def _query_rows(session, record: dict, max_rows: int) -> list[dict]:
	entity = record["entity"]
	if not session.may_use(f"{entity}.list"):
		raise NotFound(GONE)
	total = session.connector.count(entity, record.get("filters"))
	_check_size(total, max_rows)
	rows: list[dict] = []
	while len(rows) < total:
		chunk = session.connector.list(
			entity,
			fields=record.get("fields"),
			filters=record.get("filters"),
			order_by=record.get("order_by"),
			limit=CHUNK,
			offset=len(rows),
		)
		if not chunk:
			break
		rows.extend(chunk)
	return rows


def _check_size(total: int, max_rows: int) -> None:
	if total > max_rows:
		raise ToolError(
			f"This table has {total:,} rows; an export holds at most {max_rows:,}. "
			"Narrow the question (a shorter period, one customer) and export again."
		)


def _table(record: dict, rows: list[dict]) -> dict:
	columns = record.get("columns") or [
		{"key": key, "label": key.replace("_", " ").title()}
		for key in (rows[0] if rows else {})
		if not key.startswith("_")
	]
	title = record.get("title") or record.get("report") or (record.get("entity") or "").replace("_", " ")
	return {"title": title, "columns": columns, "rows": rows, "total": len(rows)}
