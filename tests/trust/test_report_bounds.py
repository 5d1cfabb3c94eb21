"""A huge report keeps a bounded number of rows on the server; its totals still cover every row."""

from __future__ import annotations

import pytest

from noviz_agent.engine.gateway import call_tool
from noviz_agent.tools import reports
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

pytestmark = pytest.mark.attack("bad input")

ROWS = 6_200


def test_a_huge_report_keeps_a_bounded_page_store_and_whole_totals():
	spec = {
		"roles": None,
		"columns": [
			{"key": "party", "label": "Party", "type": "Data"},
			{"key": "amount", "label": "Amount", "type": "Currency"},
		],
		"rows": [{"party": f"P{i}", "amount": 1.0} for i in range(ROWS)],
	}
	session = make_session(MemoryConnector("ann@example.com", {}, {}, reports={"Big Report": spec}))
	session.offered = set(session.allowed)
	result = call_tool(session, "report.run", {"report": "Big Report"})
	assert result.status == "ok", result.error
	stored = session.results.get(result.data["result_id"])
	assert len(stored["rows"]) == reports.MAX_KEPT_ROWS < ROWS
	assert result.data["summary"]["row_count"] == ROWS
	assert result.data["summary"]["totals"]["amount"] == float(ROWS)
	assert f"{ROWS:,} rows" in result.data["note"] and "every row" in result.data["note"]
	last = -(-reports.MAX_KEPT_ROWS // session.limits.page_size)
	assert call_tool(session, "report.run", {"result_id": result.data["result_id"], "page": last}).ok
	assert (
		call_tool(session, "report.run", {"result_id": result.data["result_id"], "page": last + 1}).status
		== "error"
	)
