"""The typed response contract the chat renders: its keys are pinned, so a change is deliberate."""

from __future__ import annotations

import pytest

from analytics.result import kpi
from noviz_agent.engine import progress, responses
from noviz_agent.engine.gateway import ToolResult
from noviz_agent.tools.vocabulary import vocabulary

RESPONSE_KEYS = {
	"type",
	"text",
	"table",
	"cards",
	"chart",
	"proposal",
	"refusal",
	"error",
	"flags",
	"sources",
	"result_id",
	"scope",
}
CARD_KEYS = {
	"title",
	"value",
	"fieldtype",
	"currency",
	"unit",
	"change",
	"change_kind",
	"direction",
	"compared_with",
	"link",
}
COLUMN_KEYS = {"key", "label", "fieldtype", "options", "currency"}
TABLE_KEYS = {"title", "columns", "rows", "page", "doctype"}
PROPOSAL_KEYS = {
	"token",
	"tool",
	"action",
	"doctype",
	"name",
	"title",
	"effect",
	"fields",
	"tables",
	"missing",
	"editable",
	"expires",
	"link",
}
FIELD_KEYS = {"key", "label", "value", "fieldtype", "options", "before", "changed", "required", "editable"}


def ok(name, data):
	return ToolResult(name, {}, "ok", data=data)


def test_response_keys_are_pinned_for_every_type():
	assert responses.RESPONSE_TYPES == ("text", "table", "cards", "chart", "proposal", "refusal", "error")
	for kind in responses.RESPONSE_TYPES:
		assert set(responses.Response(type=kind).to_dict()) == RESPONSE_KEYS
	assert set(responses.empty_response()) == RESPONSE_KEYS


def test_unknown_response_type_is_refused():
	with pytest.raises(ValueError, match="use one of"):
		responses.Response(type="banner").to_dict()


def test_records_use_the_one_list_of_response_types():
	from noviz_agent import records

	assert records.RESPONSE_TYPES is responses.RESPONSE_TYPES


def test_card_keys_and_units_become_fieldtypes_not_words():
	kpis = [
		kpi("Sales Oct 2026", 1767095.4, "currency", prior=357000.0, prior_label="Sep 2026"),
		kpi("Customers", 23.0, "count"),
		kpi("Top 3 share", 61.25, "%", prior=58.0),
		kpi("Average days overdue", 12.4, "days"),
	]
	cards = responses.cards_from({"kpis": kpis, "currency": "USD"})
	assert all(set(c) == CARD_KEYS for c in cards)
	sales, customers, share, days = cards
	assert (sales["fieldtype"], sales["currency"], sales["direction"]) == ("Currency", "USD", "up")
	assert sales["change"] == pytest.approx(395.0, abs=0.1) and sales["compared_with"] == "Sep 2026"
	assert (
		customers["fieldtype"] == "Int" and customers["value"] == 23 and isinstance(customers["value"], int)
	)
	# A change of a percentage is in points, not a ratio of ratios.
	assert (share["fieldtype"], share["change_kind"], share["change"]) == ("Percent", "points", 3.25)
	assert days["unit"] == "days" and days["currency"] is None


def test_table_columns_carry_labels_and_fieldtypes_from_the_model():
	data = {
		"entity": "sales_invoice",
		"columns": [
			{"key": "name", "label": "ID"},
			{"key": "customer", "label": "Customer"},
			{"key": "grand_total", "label": "Grand Total"},
		],
		"rows": [{"name": "SINV-1", "customer": "Acme", "grand_total": 10.5}],
	}
	table = responses.table_from(data, vocabulary().entities)
	assert set(table) == TABLE_KEYS and all(set(c) == COLUMN_KEYS for c in table["columns"])
	types = {c["key"]: (c["fieldtype"], c["options"]) for c in table["columns"]}
	assert types["name"] == ("Link", "Sales Invoice")
	assert types["customer"] == ("Link", "Customer")
	assert types["grand_total"][0] == "Currency"


def test_analysis_tables_without_a_model_guess_money_from_the_column_name():
	data = {"rows": [{"customer": "A", "revenue": 10.0, "share_pct": 50.0, "invoices": 3}]}
	types = {c["key"]: c["fieldtype"] for c in responses.table_from(data)["columns"]}
	assert types == {"customer": "Data", "revenue": "Currency", "share_pct": "Float", "invoices": "Int"}


def test_update_proposal_shows_before_and_after_and_only_changed_fields_marked():
	preview = {
		"token": "n.s",
		"tool": "customer.update",
		"expires": 1,
		"action": "update",
		"doctype": "Customer",
		"name": "Acme",
		"_link": "/app/customer/Acme",
		"summary": "Change Customer Acme",
		"effect": "Changes customer Acme: territory from North to South.",
		"fields": [
			{
				"key": "territory",
				"label": "Territory",
				"value": "South",
				"before": "North",
				"type": "Link",
				"options": "Territory",
			},
			{"key": "customer_group", "label": "Customer Group", "value": "Retail", "before": "Retail"},
		],
		"tables": {},
		"missing": [],
		"warning": {"message": "Read text that looks like an instruction.", "sources": ["ToDo TD-1"]},
	}
	block = responses.proposal_block(ToolResult("customer.update", {}, "proposal", proposal=preview))
	assert set(block) == PROPOSAL_KEYS | {"warning"} and all(set(f) == FIELD_KEYS for f in block["fields"])
	territory, group = block["fields"]
	assert (territory["before"], territory["value"], territory["changed"]) == ("North", "South", True)
	assert (territory["fieldtype"], territory["options"]) == ("Link", "Territory")
	assert group["changed"] is False
	assert block["editable"] is True and block["link"] == "/app/customer/Acme"
	assert block["warning"]["sources"] == ["ToDo TD-1"]


def test_submit_proposal_is_not_editable():
	preview = {
		"action": "submit",
		"doctype": "Sales Invoice",
		"name": "S1",
		"summary": "Submit S1",
		"fields": [{"key": "customer", "label": "Customer", "value": "Acme"}],
	}
	block = responses.proposal_block(ToolResult("sales_invoice.submit", {}, "proposal", proposal=preview))
	assert block["editable"] is False and block["fields"][0]["editable"] is False
	# Without instruction-like reads there is no warning at all, so the chat shows none.
	assert set(block) == PROPOSAL_KEYS


def test_background_analysis_is_published_as_a_built_response():
	answer = {
		"status": "ok",
		"title": "Monthly sales",
		"result_id": "a1",
		"kpis": [kpi("Revenue", 5.0, "currency")],
		"observations": ["Up in <b>May</b>."],
		"chart": {"data": [{"type": "bar", "x": ["<b>x</b>"], "y": [1]}], "layout": {}},
	}
	response = responses.analysis_response(answer)
	assert set(response) == RESPONSE_KEYS and response["type"] == "chart"
	assert response["cards"][0]["fieldtype"] == "Currency" and response["result_id"] == "a1"
	assert response["chart"]["data"][0]["x"] == ["&lt;b&gt;x&lt;/b&gt;"]
	failed = responses.analysis_response({"status": "error", "error": "No permission"})
	assert failed["type"] == "error" and failed["error"]["message"] == "No permission"


@pytest.mark.parametrize(
	("tool", "args", "expected"),
	[
		("sales_invoice.list", None, "Reading sales invoices…"),
		("customer.count", None, "Counting customers…"),
		("customer.create", None, "Preparing a new customer…"),
		("analytics.build", {"key": "sales.monthly_trend"}, "Computing monthly revenue trend…"),
		("analytics.build", {"key": "no.such"}, "Computing the analysis…"),
		("chart.build", None, "Drawing the chart…"),
		("mystery", None, "Working…"),
		(None, None, "Thinking…"),
	],
)
def test_progress_labels_name_the_step(tool, args, expected):
	assert progress.label(tool, args) == expected


def test_progress_event_fields_are_a_template_and_its_arguments():
	assert progress.event_fields("territory.list") == {"label": "Reading {0}…", "label_args": ["territories"]}


def test_figures_say_whose_they_are_company_currency_and_period():
	"""A card of revenue that names no company cannot be told apart from another company's."""
	data = {
		"kpis": [kpi("Total revenue", 1200.0, "currency")],
		"company": "Noviz Trading",
		"currency": "USD",
		"other_companies": ["Dev Company"],
		"period": {"start": "2025-01-01", "end": "2026-12-01", "partial": True},
	}
	response = responses.build("", [ok("analytics.build", data)])
	assert response["scope"] == {
		"company": "Noviz Trading",
		"currency": "USD",
		"other_companies": ["Dev Company"],
		"period": {"start": "2025-01-01", "end": "2026-12-01", "partial": True},
	}
	listing = {
		"entity": "sales_invoice",
		"rows": [{"name": "A"}],
		"companies": ["Dev Company", "Noviz Trading"],
	}
	assert responses.build("", [ok("sales_invoice.list", listing)])["scope"] == {
		"companies": ["Dev Company", "Noviz Trading"]
	}
	assert responses.build("Hello.", [])["scope"] is None
