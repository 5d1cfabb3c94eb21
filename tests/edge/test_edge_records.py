"""Translation from the engine's turn outcome to log and conversation rows."""

from __future__ import annotations

import json

from noviz_agent import records as r

ENGINE_LOG = {
	"modules": ["selling", "accounting"],
	"tools_offered": ["sales_invoice.list", "tools.search"],
	"tools_cut": ["sales_order.cancel"],
	"tools_called": [
		{"name": "sales_invoice.list", "status": "ok", "ms": 12.5},
		{"name": "customer.get", "status": "error", "ms": 3, "error": "Not found"},
	],
	"guards": ["repeated_identical_call"],
	"response_type": "table",
	"latency_ms": 1834,
	"prompt_tokens": 3000,
	"cached_tokens": 2000,
	"completion_tokens": 500,
	"model": "m1",
	"provider": "stub",
	"error": None,
}


def test_cost_charges_cached_tokens_at_their_own_rate():
	rates = r.Rates(prompt=2.0, cached=0.5, completion=8.0)
	# 1000 uncached * 2 + 2000 cached * 0.5 + 500 * 8 = 7000 per million
	assert r.estimate_cost(3000, 2000, 500, rates) == 0.007
	assert r.estimate_cost(3000, 2000, 500, r.Rates(prompt=2.0, completion=8.0)) == 0.01


def test_cached_tokens_never_exceed_prompt_tokens():
	assert r.estimate_cost(100, 500, 0, r.Rates(prompt=1.0, cached=0.0)) == 0.0


def test_rates_from_settings_treat_blank_as_zero():
	rates = r.Rates.from_settings({"prompt_cost_per_million": "1.5", "cached_cost_per_million": None})
	assert rates == r.Rates(prompt=1.5, cached=None, completion=0.0)


def test_log_values_map_every_field():
	values = r.log_values(ENGINE_LOG, request="q", person="a@x", conversation="C1", rates=r.Rates(prompt=1.0))
	assert values["modules"] == "selling, accounting"
	assert values["tools_cut"] == "sales_order.cancel"
	assert values["tool_calls"][1] == {
		"tool": "customer.get",
		"status": "error",
		"ms": 3.0,
		"error": "Not found",
	}
	assert values["tool_calls"][0]["error"] is None
	assert values["response_type"] == "table"
	assert values["failed"] == 0
	assert values["estimated_cost"] == 0.003
	assert (values["person"], values["conversation"], values["model"]) == ("a@x", "C1", "m1")


def test_a_turn_names_its_channel_and_client_so_mcp_calls_are_not_counted_as_desk_turns():
	desk = r.log_values(ENGINE_LOG, request="q", person="a@x", conversation="C1", rates=r.Rates())
	assert (desk["channel"], desk["client"], desk["oauth_client"]) == ("desk", None, None)
	mcp = {**ENGINE_LOG, "channel": "mcp", "client": "claude-ai 0.1.0", "oauth_client": "a1b2c3"}
	values = r.log_values(mcp, request="q", person="a@x", conversation="C1", rates=r.Rates())
	assert (values["channel"], values["client"], values["oauth_client"]) == (
		"mcp",
		"claude-ai 0.1.0",
		"a1b2c3",
	)


def test_a_turn_with_an_error_is_marked_failed():
	values = r.log_values(
		r.failure_log("provider down"), request="q", person="a", conversation=None, rates=r.Rates()
	)
	assert values["failed"] == 1 and values["error"] == "provider down" and values["response_type"] == "error"


def test_unknown_response_type_is_logged_as_error():
	values = r.log_values(
		{"response_type": "html"}, request="q", person="a", conversation=None, rates=r.Rates()
	)
	assert values["response_type"] == "error"


def test_title_cuts_at_a_word():
	assert r.conversation_title("  Show   my invoices ") == "Show my invoices"
	long = "word " * 40
	title = r.conversation_title(long)
	assert len(title) <= r.TITLE_CHARS and title.endswith("…") and not title.endswith(" …")
	assert r.conversation_title("") == "New conversation"


def test_turn_rows_round_trip_into_history():
	response = {"type": "text", "text": "You have 3 overdue invoices."}
	entry = {"question": "overdue?", "answer": "You have 3 overdue invoices.", "tool_calls": [{"name": "x"}]}
	row = r.turn_values("overdue?", response, entry, "LOG-1")
	assert row["response_type"] == "text" and row["log"] == "LOG-1"
	assert json.loads(row["tool_calls"]) == [{"name": "x"}]
	history = r.history_from_rows([row, {"question": "old", "response": json.dumps({"text": "ans"})}])
	assert history[0]["answer"] == "You have 3 overdue invoices."
	assert history[1] == {"question": "old", "answer": "ans"}


def test_turn_for_client_parses_the_stored_response():
	row = r.turn_values("q", {"type": "refusal", "refusal": {"message": "No."}}, None, "L")
	shown = r.turn_for_client(row)
	assert shown["response"]["refusal"]["message"] == "No." and shown["log"] == "L"


def test_error_response_has_the_full_shape():
	response = r.error_response("Provider is down", "Ask your administrator")
	assert response["type"] == "error" and response["error"]["hint"] == "Ask your administrator"
	assert set(response) >= {"text", "table", "cards", "chart", "proposal", "refusal", "flags", "sources"}
	assert r.error_response("No.", kind="refusal")["refusal"] == {"message": "No."}


def test_paging_a_kept_result():
	record = {
		"title": "Orders",
		"result_id": "r1",
		"rows": [{"name": f"SO-{i}", "_link": "/x"} for i in range(7)],
	}
	page = r.page_of_result(record, 3, 3)
	assert [row["name"] for row in page["rows"]] == ["SO-6"]
	assert page["page"] == {"number": 3, "size": 3, "total": 7, "result_id": "r1"}
	assert page["columns"] == [{"key": "name", "label": "Name"}]
	assert r.page_of_result(record, 99, 3)["page"]["number"] == 3
	assert r.page_of_result({"nothing": 1}, 1, 3) is None


def test_paging_a_kept_query_reruns_the_list_tool():
	record = {
		"kind": "query",
		"entity": "sales_order",
		"fields": ["name"],
		"filters": None,
		"order_by": "date desc",
	}
	assert r.page_call(record, "r_1", 3) == (
		"sales_order.list",
		{"page": 3, "fields": ["name"], "order_by": "date desc"},
	)


def test_paging_a_kept_report_asks_report_run_for_the_page():
	assert r.page_call({"kind": "rows", "rows": []}, "r_9", 2) == (
		"report.run",
		{"result_id": "r_9", "page": 2},
	)
	assert r.page_call({"kind": "other"}, "r_9", 2) is None
	assert r.page_call(None, "r_9", 2) is None


def test_a_settled_proposal_loses_its_token_and_says_how_it_ended():
	from noviz_agent import records as r

	response = {"type": "proposal", "proposal": {"token": "n.s", "values": {"a": 1}}}
	assert not r.settle_proposal(response, "other.token", "confirmed")
	assert r.settle_proposal(response, "n.s", "confirmed")
	assert response["proposal"] == {"values": {"a": 1}, "settled": "confirmed"}
	assert not r.settle_proposal({"type": "text", "proposal": None}, "n.s", "confirmed")


def test_settled_state_follows_the_outcome():
	from noviz_agent import records as r

	assert r.settled_state(True, {"type": "cards"}) == "confirmed"
	assert r.settled_state(False, {"type": "text"}) == "cancelled"
	assert r.settled_state(True, {"type": "refusal"}) == "closed"
