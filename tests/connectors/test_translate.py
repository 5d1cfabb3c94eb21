"""Canonical requests become exact frappe arguments; nothing from the model reaches a query unchecked."""

from __future__ import annotations

import pytest

from noviz_agent.connectors.model import entity
from noviz_agent.connectors.translate import (
	aggregate_query,
	count_query,
	doc_to_canonical,
	doc_url,
	list_args,
	parse_js_filters,
	report_to_canonical,
	rows_to_canonical,
	to_frappe_fields,
	to_frappe_filters,
	to_frappe_order_by,
	to_frappe_values,
	to_report_filters,
)
from noviz_agent.engine.errors import ToolError

SI = "`tabSales Invoice`"
SII = "`tabSales Invoice Item`"


@pytest.fixture(scope="module")
def si():
	return entity("sales_invoice")


def test_filters_map_names_and_keep_operators(si):
	assert to_frappe_filters(
		si, [["total", ">=", 100], ["date", "between", ["2024-01-01", "2024-03-31"]]]
	) == [
		["Sales Invoice", "grand_total", ">=", 100],
		["Sales Invoice", "posting_date", "between", ["2024-01-01", "2024-03-31"]],
	]


def test_dict_filters_aliases_and_child_fields(si):
	assert to_frappe_filters(si, {"party": "Acme", "items.item": "Bolt"}) == [
		["Sales Invoice", "customer", "=", "Acme"],
		["Sales Invoice Item", "item_code", "=", "Bolt"],
	]


def test_like_wraps_bare_words_but_keeps_explicit_wildcards(si):
	assert to_frappe_filters(si, [["customer_name", "like", "acme"]])[0][3] == "%acme%"
	assert to_frappe_filters(si, [["customer_name", "like", "Ac%"]])[0][3] == "Ac%"


def test_is_set_passes_through(si):
	assert to_frappe_filters(si, [["due_date", "is", "not set"]]) == [
		["Sales Invoice", "due_date", "is", "not set"]
	]


def test_min_and_max_name_a_bare_column_frappe_does_not_read_as_a_table(si):
	# frappe 15 takes "max(`tabSales Invoice`" for a table name; sum, count and avg are exempt there.
	query = aggregate_query(
		si,
		metrics=[
			{"fn": "max", "field": "total", "as": "biggest"},
			{"fn": "min", "field": "items.qty", "as": "least"},
		],
	)
	kwargs = query.kwargs
	assert kwargs["fields"] == ["max(`grand_total`) as biggest", "min(`qty`) as least"]
	assert not any("tab" in field and "." in field for field in kwargs["fields"])
	assert ["Sales Invoice Item", "name", "is", "set"] in kwargs["filters"]


@pytest.mark.parametrize(
	"filters, message",
	[
		([["grand_totl", "=", 1]], "not a field of sales_invoice"),
		([["total", "~", 1]], "Unknown filter operator"),
		([["total", "between", 5]], "needs \\[low, high\\]"),
		([["status", "in", "Paid"]], "needs a list"),
		([["status", "=", "Payed"]], "not a value of sales_invoice.status"),
		([["total", ">"]], "Each filter must be"),
		("status = Paid", "Filters must be a list"),
		([["`tabUser`.password", "=", "x"]], "not a field"),
	],
)
def test_bad_filters_are_refused_with_what_to_do(si, filters, message):
	with pytest.raises(ToolError, match=message):
		to_frappe_filters(si, filters)


def test_fields_are_mapped_and_keyed_back_to_canonical(si):
	# The entity's own fields bare (frappe qualifies them when it joins a child), a child's qualified.
	fields, keymap = to_frappe_fields(si, ["customer", "total", "items.item"])
	assert fields == ["name", "customer", "grand_total", f"{SII}.`item_code` as items__item"]
	rows = rows_to_canonical(
		[{"name": "S1", "customer": "A", "grand_total": 5, "items__item": "Bolt"}], keymap
	)
	assert rows == [{"name": "S1", "customer": "A", "total": 5, "items.item": "Bolt"}]


def test_unknown_field_in_fields_is_refused(si):
	with pytest.raises(ToolError, match="Valid fields"):
		to_frappe_fields(si, ["customer", "sleep(5)"])


def test_order_by_maps_fields_and_directions(si):
	assert to_frappe_order_by(si, "date desc, total") == f"{SI}.`posting_date` desc, {SI}.`grand_total` asc"
	with pytest.raises(ToolError, match="asc or desc"):
		to_frappe_order_by(si, "date sideways")
	with pytest.raises(ToolError):
		to_frappe_order_by(si, "date desc; drop table x")


def test_list_args_page_and_distinct_for_child_fields(si):
	kwargs, _ = list_args(si, fields=["customer"], limit=20, offset=40)
	assert kwargs["limit_start"] == 40 and kwargs["limit_page_length"] == 20 and "distinct" not in kwargs
	assert kwargs["order_by"] == f"{SI}.`modified` desc"
	kwargs, _ = list_args(si, fields=["items.item"])
	assert kwargs["distinct"] is True
	with pytest.raises(ToolError):
		list_args(si, limit=0)


def test_count_is_distinct_so_child_filters_do_not_double_count(si):
	args = count_query(si, {"items.item": "Bolt"}).kwargs
	assert args["fields"] == [f"count(distinct {SI}.`name`) as count"]


def test_aggregate_uses_only_allowed_functions_and_groups(si):
	query = aggregate_query(
		si,
		metrics=[{"fn": "sum", "field": "total", "as": "revenue"}, {"fn": "count", "as": "invoices"}],
		group_by=["customer"],
		filters={"status": "Paid"},
		order_by="revenue desc",
		limit=10,
	)
	kwargs, keymap = query.kwargs, query.keymap
	assert kwargs["fields"] == [
		f"{SI}.`customer`",
		f"sum({SI}.`grand_total`) as revenue",
		f"count(distinct {SI}.`name`) as invoices",
	]
	assert kwargs["group_by"] == f"{SI}.`customer`"
	assert kwargs["order_by"] == "revenue desc"
	assert kwargs["limit_page_length"] == 10
	assert keymap == {"customer": "customer", "revenue": "revenue", "invoices": "invoices"}


def test_aggregate_over_a_child_field_joins_the_child_table(si):
	query = aggregate_query(
		si, metrics=[{"fn": "sum", "field": "items.amount", "as": "amount"}], group_by=["customer"]
	)
	kwargs = query.kwargs
	assert ["Sales Invoice Item", "name", "is", "set"] in kwargs["filters"]
	query = aggregate_query(
		si, metrics=[{"fn": "sum", "field": "items.qty", "as": "qty"}], group_by=["items.item"]
	)
	kwargs, keymap = query.kwargs, query.keymap
	assert kwargs["fields"][0] == f"{SII}.`item_code` as items__item"
	assert keymap["items__item"] == "items.item"


@pytest.mark.parametrize(
	"metric, message",
	[
		({"fn": "group_concat", "field": "customer", "as": "x"}, "Unknown aggregate function"),
		({"fn": "sum", "as": "x"}, "needs a field"),
		({"fn": "sum", "field": "total", "as": "total; drop"}, "snake_case"),
		({"fn": "sum", "field": "total", "as": "order"}, "snake_case"),
		({"fn": "sum", "field": "password", "as": "x"}, "not a field"),
	],
)
def test_bad_metrics_are_refused(si, metric, message):
	with pytest.raises(ToolError, match=message):
		aggregate_query(si, metrics=[metric])


def test_values_for_writes_map_fields_and_child_rows(si):
	values = {
		"customer": "Acme",
		"due_date": "2024-05-01",
		"items": [{"item": "Bolt", "qty": 2, "rate": 3.5}],
	}
	assert to_frappe_values(si, values) == {
		"customer": "Acme",
		"due_date": "2024-05-01",
		"items": [{"item_code": "Bolt", "qty": 2, "rate": 3.5}],
	}


def test_values_refuse_read_only_and_missing_fields(si):
	with pytest.raises(ToolError, match="outstanding cannot be written"):
		to_frappe_values(si, {"customer": "A", "items": [], "outstanding": 0})
	with pytest.raises(ToolError, match="also give: items"):
		to_frappe_values(si, {"customer": "A"})
	with pytest.raises(ToolError, match="amount cannot be set on sales_invoice.items"):
		to_frappe_values(si, {"customer": "A", "items": [{"item": "B", "amount": 9}]})
	assert to_frappe_values(si, {"remarks": "x"}, creating=False) == {"remarks": "x"}


def test_documents_come_back_canonical_with_link(si):
	doc = {
		"name": "ACC-SINV-2024-00001",
		"customer": "Acme",
		"grand_total": 10,
		"items": [{"item_code": "Bolt", "qty": 1}],
	}
	record = doc_to_canonical(si, doc)
	assert record["total"] == 10 and record["items"][0]["item"] == "Bolt"
	assert record["_link"] == "/app/sales-invoice/ACC-SINV-2024-00001"


def test_link_urls_quote_names():
	assert doc_url("Journal Entry", "JV/2024 #1") == "/app/journal-entry/JV%2F2024%20%231"


def test_report_filters_validate_against_definitions():
	defs = [{"fieldname": "company", "reqd": 1}, {"fieldname": "from_date", "default": "2024-01-01"}]
	assert to_report_filters(defs, {"company": "X"}) == {"from_date": "2024-01-01", "company": "X"}
	with pytest.raises(ToolError, match="its filters are: company, from_date"):
		to_report_filters(defs, {"company": "X", "customer": "Y"})
	with pytest.raises(ToolError, match="needs these filters: company"):
		to_report_filters(defs, {})
	assert to_report_filters([], {"company": "X"}) == {"company": "X"}
	with pytest.raises(ToolError):
		to_report_filters([], {"company; drop": "X"})


def test_report_output_is_normalised_and_total_row_dropped():
	result = {
		"columns": [
			{"fieldname": "party", "label": "Party", "fieldtype": "Link", "options": "Customer"},
			"Outstanding:Currency/currency:120",
		],
		"result": [["Acme", 10.0], {"party": "Globex", "outstanding": 5.0}, ["Total", 15.0]],
		"add_total_row": 1,
	}
	out = report_to_canonical(result)
	assert [c["key"] for c in out["columns"]] == ["party", "outstanding"]
	assert out["columns"][1]["type"] == "Currency"
	assert out["rows"] == [{"party": "Acme", "outstanding": 10.0}, {"party": "Globex", "outstanding": 5.0}]


def test_report_filters_are_read_from_a_report_script():
	script = """
	frappe.query_reports["Accounts Receivable"] = {
		filters: [
			{ fieldname: "company", label: __("Company"), fieldtype: "Link", options: "Company", reqd: 1,
				default: frappe.defaults.get_user_default("Company") },
			{ fieldname: "report_date", label: __("Posting Date"), fieldtype: "Date" },
			{ fieldname: "range", label: __("Range"), fieldtype: "Select", options: "Monthly\\nQuarterly" },
			{ fieldname: "customer", label: __("Customer"), fieldtype: "Link", options: "Customer",
				on_change: () => { frappe.query_report.set_filter_value("customer_name", ""); } },
		],
	};
	"""
	assert parse_js_filters(script) == [
		{"fieldname": "company", "label": "Company", "fieldtype": "Link", "options": "Company", "reqd": 1},
		{"fieldname": "report_date", "label": "Posting Date", "fieldtype": "Date"},
		{"fieldname": "range", "label": "Range", "fieldtype": "Select", "options": ["Monthly", "Quarterly"]},
		{"fieldname": "customer", "label": "Customer", "fieldtype": "Link", "options": "Customer"},
	]


def test_database_values_come_back_as_json_ready_data(si):
	import datetime
	import decimal

	_, keymap = to_frappe_fields(si, ["date", "total", "created"])
	row = {
		"name": "S1",
		"posting_date": datetime.date(2024, 5, 1),
		"grand_total": decimal.Decimal("10.50"),
		"creation": datetime.datetime(2024, 5, 1, 9, 30),
	}
	assert rows_to_canonical([row], keymap) == [
		{"name": "S1", "date": "2024-05-01", "total": 10.5, "created": "2024-05-01 09:30:00"}
	]
