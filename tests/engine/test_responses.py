"""Structured responses are drawn from tool results; unsupported numbers are flagged."""

from __future__ import annotations

import hypothesis
from hypothesis import strategies as st

from noviz_agent.engine import responses
from noviz_agent.engine.gateway import ToolResult


def ok(name, data, args=None):
	return ToolResult(name, args or {}, "ok", data=data)


LIST = {
	"entity": "sales_invoice",
	"columns": [{"key": "name", "label": "Invoice"}, {"key": "grand_total", "label": "Total"}],
	"rows": [
		{"name": "SINV-0001", "grand_total": 1250.5, "_link": "/app/sales-invoice/SINV-0001"},
		{"name": "SINV-0002", "grand_total": 980, "_link": "/app/sales-invoice/SINV-0002"},
	],
	"total": 57,
	"result_id": "r1",
	"page": {"number": 1, "size": 2},
}


def test_table_comes_from_the_tool_result_not_the_text():
	response = responses.build("Here are your invoices.", [ok("sales_invoice.list", LIST)])
	assert response["type"] == "table"
	assert [r["name"] for r in response["table"]["rows"]] == ["SINV-0001", "SINV-0002"]
	assert response["table"]["page"] == {"number": 1, "size": 2, "total": 57, "result_id": "r1"}
	assert response["table"]["rows"][0]["_link"] == "/app/sales-invoice/SINV-0001"


def test_supported_numbers_are_not_flagged():
	text = "There are 57 invoices; the first is 1,250.50 and the second 980."
	response = responses.build(text, [ok("sales_invoice.list", LIST)])
	assert response["flags"] == []


def test_invented_number_is_flagged():
	response = responses.build("Total revenue was 48,211.", [ok("sales_invoice.list", LIST)])
	assert [f["value"] for f in response["flags"]] == ["48,211"]


def test_rounded_and_scaled_figures_are_supported():
	data = {"kpis": [{"label": "Revenue", "value": 1234567.89}, {"label": "Growth", "value": 0.1234}]}
	text = "Revenue reached 1.2M (1,234,567.89), up 12.3%."
	assert responses.build(text, [ok("analytics.build", data)])["flags"] == []


def test_numbers_from_the_question_and_small_counts_are_not_flagged():
	response = responses.build(
		"Your top 5 customers for 2025 are below.", [], question="top 5 customers in 2025"
	)
	assert response["flags"] == []


def test_numbers_with_no_tool_results_at_all_are_flagged():
	response = responses.build("You sold 312 units.", [])
	assert response["type"] == "text" and response["flags"][0]["value"] == "312"


def test_record_names_and_dates_are_not_numbers():
	assert responses.numbers_in_text("See SINV-2026-00012 dated 2026-03-31.") == []


def test_refusal_is_quoted_verbatim_when_nothing_else_came_back():
	refused = ToolResult(
		"sales_invoice.list", {}, "refused", error="Insufficient Permission for Sales Invoice"
	)
	response = responses.build("I can't show those.", [refused])
	assert response["type"] == "refusal"
	assert response["refusal"] == {"message": "Insufficient Permission for Sales Invoice"}


def test_proposal_wins_over_other_blocks():
	proposal = ToolResult(
		"customer.create",
		{"values": {"customer_name": "Zed"}},
		"proposal",
		proposal={
			"token": "t.s",
			"action": "create",
			"doctype": "Customer",
			"values": {"customer_name": "Zed"},
		},
	)
	response = responses.build("", [ok("customer.list", {"rows": [{"name": "A"}]}), proposal])
	assert response["type"] == "proposal"
	fields = response["proposal"]["fields"]
	assert [(f["key"], f["value"], f["editable"]) for f in fields] == [("customer_name", "Zed", True)]
	assert "confirm" in response["text"]


def test_cards_from_kpis_and_chart_from_analysis():
	data = {
		"kpis": [
			{"label": "Revenue", "value": 10, "unit": "currency", "change": 0.1, "prior_label": "Sep 2026"}
		],
		"chart": {"data": [{"type": "bar", "x": [1], "y": [10]}], "layout": {}},
	}
	response = responses.build("", [ok("analytics.build", data)])
	assert response["type"] == "chart"
	card = response["cards"][0]
	assert (card["title"], card["value"], card["fieldtype"]) == ("Revenue", 10, "Currency")
	assert (card["change"], card["direction"], card["compared_with"]) == (0.1, "up", "Sep 2026")


def test_count_becomes_a_card():
	response = responses.build("", [ok("customer.count", {"entity": "customer", "count": 42})])
	assert response["type"] == "cards" and response["cards"][0]["value"] == 42


def test_knowledge_passages_become_sources():
	data = {
		"passages": [
			{"title": "Order to cash", "section": "Delivery", "slug": "order-to-cash", "content": "x"}
		]
	}
	response = responses.build("See Order to cash.", [ok("knowledge.search", data)])
	assert response["sources"] == [{"title": "Order to cash", "section": "Delivery", "slug": "order-to-cash"}]


def test_error_response_shape():
	response = responses.error_response("Provider down", "Ask your administrator")
	assert response["type"] == "error" and response["error"]["hint"] == "Ask your administrator"
	assert set(response) == set(responses.empty_response())


def test_an_analysis_result_id_travels_with_its_cards_for_the_pdf():
	data = {"kpis": [{"label": "Revenue", "value": 10}], "result_id": "a1", "chart": None}
	listing = dict(LIST)
	response = responses.build("", [ok("analytics.build", data), ok("sales_invoice.list", listing)])
	assert response["result_id"] == "a1"
	assert responses.build("", [ok("sales_invoice.list", listing)])["result_id"] is None


def _flagged_by_the_full_walk(text, results, question=""):
	"""The check as it was before the totals at the top were tried first: every value walked."""
	claims = [f for f in responses.numbers_in_text(text) if f[3] or f[2] or not 0 <= f[1] <= 10]
	known = {number for _, number, _, _ in responses.numbers_in_text(question)}
	for result in results:
		responses._numbers_in(result.data, known)
		responses._numbers_in(result.args, known)
	return [
		written
		for written, value, decimals, suffix in claims
		if not responses._supported(value, decimals, suffix, known)
	]


_leaves = st.one_of(
	st.none(),
	st.booleans(),
	st.integers(-(10**6), 10**6),
	st.floats(-1e7, 1e7, allow_nan=False).map(lambda f: round(f, 2)),
	st.sampled_from([float("nan"), float("inf")]),
	st.text(alphabet="0123456789.,-% kMab", max_size=12),
)
_values = st.recursive(
	_leaves,
	lambda inner: (
		st.lists(inner, max_size=5)
		| st.dictionaries(st.sampled_from(["rows", "total", "page", "count", "name", "x"]), inner, max_size=5)
	),
	max_leaves=25,
)


@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.given(
	data=st.lists(_values, min_size=0, max_size=3),
	numbers=st.lists(
		st.one_of(st.integers(0, 10**5), st.floats(0, 1e6, allow_nan=False).map(lambda f: round(f, 2))),
		max_size=4,
	),
	picked=st.lists(
		st.tuples(st.integers(0, 50), st.sampled_from([0, 0, 1, -1, 0.5, 100, 1000])), max_size=4
	),
)
def test_trying_the_totals_first_flags_exactly_what_walking_everything_flags(data, numbers, picked):
	"""The claims checked against the numbers at the top of the results first, the rows only when
	those do not support them all: the same flags as walking every value."""
	results = [ok("x.list", value, {"n": i}) for i, value in enumerate(data)]
	found: set[float] = set()
	for value in data:
		responses._numbers_in(value, found)
	written = sorted(n for n in found if abs(n) < 1e9)
	# Claims the data supports, and numbers just beside them that it may not.
	claimed = [written[i % len(written)] + near for i, near in picked] if written else []
	text = " and ".join(f"{n:g}" for n in [*numbers, *claimed])
	flagged = [f["value"] for f in responses.unsupported_numbers(text, results)]
	assert flagged == _flagged_by_the_full_walk(text, results)
