"""An unexpected fault inside an analysis reaches the model as a ToolError in words, never a
traceback; the horizons that used to crash the forecast run through the tool."""

from __future__ import annotations

import pytest

from noviz_agent.engine.errors import ToolError
from noviz_agent.tools import analytics as tool_module
from tests.analytics.test_analytics_tools import ACCOUNTS, connector, invoice, session_for
from tests.support.memory_connector import MemoryConnector

# Three years of monthly invoices with a season: enough for the forecast to fit one.
YEARS = [
	invoice(
		f"SI-{y}-{m}", f"{y}-{m:02d}-15", "A", "North", [("X", 100.0 + 40 * (m in (11, 12)) + 5 * y % 7, 1)]
	)
	for y in (2022, 2023, 2024)
	for m in range(1, 13)
]


def test_unexpected_error_in_an_analysis_becomes_a_tool_error_not_a_traceback(monkeypatch):
	def broken(key, data, params):
		raise ValueError("operands could not be broadcast together with shapes (8,) (4,)")

	monkeypatch.setattr(tool_module, "run_analysis", broken)
	with pytest.raises(
		ToolError, match="could not be computed on this data .*ValueError.*Try other parameters"
	):
		tool_module.build_tool(session_for(connector()), "sales.monthly_trend")


@pytest.mark.parametrize(("key", "horizon"), [("sales.quarterly_trend", 8), ("sales.monthly_trend", 24)])
def test_horizon_longer_than_a_season_no_broadcast_crash_through_the_tool(key, horizon):
	three_years = MemoryConnector(
		"ana@example.com",
		data={"sales_invoice": YEARS, "gl_entry": [], "account": ACCOUNTS},
		permissions={"sales_invoice": {"read"}, "gl_entry": {"read"}, "account": {"read"}},
	)
	params = {"horizon": horizon, "start": "2022-01-01", "end": "2024-12-31"}
	answer = tool_module.build_tool(session_for(three_years), key, params)
	assert answer["result_id"]
	result = tool_module.compute(session_for(three_years), key, params)
	assert len(result["series"]["forecast"]["point"]) == horizon
