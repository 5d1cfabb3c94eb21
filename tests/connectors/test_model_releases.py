"""The maps per ERPNext release: a field renamed, retyped or removed in one release, an entity
reshaped (Budget in 16), and the tools, datasets and registry rebuilt when the release changes."""

from __future__ import annotations

import json

import pytest

from noviz_agent.connectors import dataset_map, model
from noviz_agent.connectors.model import MapError, load_dir, load_model


def test_erpnext_16_fields_are_the_renamed_ones_and_15_keeps_its_own():
	"""Frappe 16's get_list returns renamed fields as empty: the map must name the field of the release."""
	v15, v16 = load_model(15), load_model(16)
	assert v15.entity("lead").fields["source"].field == "source"
	assert v16.entity("lead").fields["source"].field == "utm_source"
	assert v16.entity("lead").fields["campaign"].field == "utm_campaign"
	assert v16.entity("opportunity").fields["source"].field == "utm_source"
	assert v15.entity("asset").fields["purchase_amount"].field == "gross_purchase_amount"
	assert v16.entity("asset").fields["purchase_amount"].field == "net_purchase_amount"
	assert v16.entity("task").fields["expected_end_date"].type == "Datetime"
	for key in ("quotation", "sales_invoice", "delivery_note"):
		assert "title" in v15.entity(key).fields and "title" not in v16.entity(key).fields
	assert "cost_center" not in v16.entity("asset_repair").writable


def test_the_budget_has_one_account_and_a_range_of_years_in_16():
	v15, v16 = load_model(15).entity("budget"), load_model(16).entity("budget")
	assert "fiscal_year" in v15.fields and "accounts" in v15.children
	assert {"account", "budget_amount", "from_fiscal_year", "to_fiscal_year"} <= set(v16.fields)
	assert "fiscal_year" not in v16.fields and list(v16.children) == ["distribution"]
	assert set(v16.required) == {"account", "budget_amount", "from_fiscal_year", "to_fiscal_year"}


def test_a_release_change_rebuilds_what_was_built_from_the_model():
	from noviz_agent.tools import registry

	try:
		model.use_release(16)
		assert dataset_map.load_sources()["budget"].line == "distribution"
		assert (
			"fiscal_year"
			not in registry().get("budget.create").parameters["properties"]["values"]["properties"]
		)
		model.use_release(15)
		assert dataset_map.load_sources()["budget"].line == "accounts"
		assert (
			"fiscal_year" in registry().get("budget.create").parameters["properties"]["values"]["properties"]
		)
	finally:
		model.use_release(model.DEFAULT_RELEASE)


def test_an_unknown_release_is_refused():
	with pytest.raises(MapError, match="ERPNext 14 is not a release"):
		model.use_release(14)


def _entities(tmp_path, fields, **extra):
	entity = {
		"key": "thing",
		"doctype": "Thing",
		"label": "Thing",
		"description": "A thing.",
		"read_only_reason": "Things are set up once by an administrator.",
		"fields": fields,
		**extra,
	}
	(tmp_path / "things.json").write_text(json.dumps({"module": "stock", "entities": [entity]}))
	return tmp_path


def test_a_field_removed_in_a_release_leaves_its_lists_there_only(tmp_path):
	folder = _entities(
		tmp_path,
		{"code": "code", "title": {"field": "title", "versions": {"16": None}}},
		list_fields=["code", "title"],
	)
	assert load_dir(folder, release=15).entity("thing").list_fields == ("code", "title")
	assert load_dir(folder, release=16).entity("thing").list_fields == ("code",)


def test_a_typo_in_a_list_is_still_refused_whatever_the_release(tmp_path):
	folder = _entities(tmp_path, {"code": "code"}, list_fields=["code", "cdoe"])
	with pytest.raises(MapError, match="cdoe"):
		load_dir(folder, release=16)


def test_versions_keyed_by_something_else_than_a_release_are_refused(tmp_path):
	folder = _entities(tmp_path, {"code": {"field": "code", "versions": {"v16": {"field": "x"}}}})
	with pytest.raises(MapError, match="keyed by ERPNext release"):
		load_dir(folder)
