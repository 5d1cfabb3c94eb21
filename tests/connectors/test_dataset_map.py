"""The dataset bindings are data checked on load: a binding that could never be served fails at start."""

from __future__ import annotations

import json

import pytest

from noviz_agent.connectors.dataset_map import DATASETS_DIR, load_dir
from noviz_agent.connectors.model import MapError


def write(tmp_path, datasets: dict):
	(tmp_path / "x.json").write_text(json.dumps({"datasets": datasets}), encoding="utf-8")
	return tmp_path


def test_shipped_bindings_load_and_scope_every_company_entity():
	sources = load_dir(DATASETS_DIR)
	assert sources["sales"].line == "items"
	assert sources["sales"].sort_keys() == ["name", "items.line_id"]
	assert sources["stock"].entity == "stock_ledger_entry" and sources["stock"].group_by == (
		"item",
		"warehouse",
	)
	assert ["voucher_type", "!=", "Period Closing Voucher"] in [list(f) for f in sources["gl"].filters]


def test_a_field_the_entity_does_not_have_fails_on_load(tmp_path):
	bad = {"sales": {"entity": "sales_invoice", "company": "company", "columns": {"amount": "no_such_field"}}}
	with pytest.raises(MapError, match="no_such_field"):
		load_dir(write(tmp_path, bad))


def test_line_fields_without_a_line_table_fail_on_load(tmp_path):
	"""Without a line table the paging order would not be unique and lines could be read twice."""
	bad = {
		"sales": {"entity": "sales_invoice", "company": "company", "columns": {"amount": "items.net_amount"}}
	}
	with pytest.raises(MapError, match="line"):
		load_dir(write(tmp_path, bad))


def test_an_entity_with_a_company_but_no_company_scope_fails_on_load(tmp_path):
	bad = {"sales": {"entity": "sales_invoice", "columns": {"document": "name"}}}
	with pytest.raises(MapError, match="company"):
		load_dir(write(tmp_path, bad))


def test_a_lookup_on_a_column_the_dataset_lacks_fails_on_load(tmp_path):
	bad = {
		"gl": {
			"entity": "gl_entry",
			"company": "company",
			"columns": {"id": "name"},
			"lookups": {
				"root_type": {"entity": "account", "match": {"account": "name"}, "field": "root_type"}
			},
		}
	}
	with pytest.raises(MapError, match="account"):
		load_dir(write(tmp_path, bad))
