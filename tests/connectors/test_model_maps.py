"""The entity maps load, are complete and well-formed; a bad map fails naming its file and entity."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from noviz_agent.connectors.model import MODULES, MapError, load_dir, load_model
from noviz_agent.engine.errors import NotFound, ToolError


@pytest.fixture(scope="module")
def model():
	return load_model()


def test_at_least_sixty_entities_in_all_eleven_modules(model):
	per_module = Counter(e.module for e in model)
	assert len(model) >= 60
	assert set(per_module) == set(MODULES)
	assert all(per_module[m] >= 3 for m in MODULES)


def test_keys_are_unique_snake_case_and_doctypes_are_distinct(model):
	keys = [e.key for e in model]
	assert len(keys) == len(set(keys))
	assert all(re.match(r"^[a-z][a-z0-9_]*$", k) for k in keys)
	doctypes = [e.doctype for e in model]
	assert len(doctypes) == len(set(doctypes))


def test_every_entity_is_described_and_has_synonyms(model):
	for ent in model:
		assert len(ent.description) > 30, ent.key
		assert ent.synonyms, ent.key
		assert len(ent.fields) > 1, ent.key
		assert ent.default_list_fields(), ent.key


def test_key_follows_doctype_unless_business_word_differs(model):
	renamed = {e.key: e.doctype for e in model if e.key != e.doctype.lower().replace(" ", "_")}
	# The only deliberate renames: ERPNext's Bin is what people call stock balance.
	assert renamed == {"stock_balance": "Bin"}


def test_ledgers_are_read_only_and_masters_are_not_submittable(model):
	for key in ("gl_entry", "stock_ledger_entry", "stock_balance"):
		assert model.entity(key).actions == ("list", "get", "count")
	for key in ("customer", "supplier", "item", "lead", "project", "task", "issue"):
		ent = model.entity(key)
		assert not ent.submittable and "submit" not in ent.actions


def test_read_only_entities_say_why_and_writable_ones_do_not(model):
	read_only = [e for e in model if "create" not in e.actions]
	assert read_only, "the model has read-only entities (ledgers, setup masters)"
	assert all(len(e.read_only_reason) >= 20 for e in read_only)
	assert all(e.read_only_reason == "" for e in model if "create" in e.actions)
	for key in ("gl_entry", "stock_ledger_entry", "company", "fiscal_year"):
		assert "create" not in model.entity(key).actions, key


def test_entities_people_create_every_day_have_write_tools(model):
	daily = (
		"expense_claim timesheet quality_inspection asset_movement request_for_quotation supplier_quotation "
		"stock_reconciliation bom job_card employee_advance payment_request maintenance_visit warranty_claim "
		"bank_transaction"
	).split()
	for key in daily:
		ent = model.entity(key)
		assert {"create", "update"} <= set(ent.actions), key
		assert ent.writable and set(ent.required) <= set(ent.writable), key
		if ent.submittable:
			assert {"submit", "cancel"} <= set(ent.actions), key


def test_every_required_field_is_writable(model):
	wrong = [(e.key, r) for e in model for r in e.required if r not in e.writable]
	assert wrong == []


def test_common_canonical_names_point_at_the_right_fields(model):
	si = model.entity("sales_invoice")
	assert si.docfield("total") == "grand_total"
	assert si.docfield("date") == "posting_date"
	assert si.docfield("party") == "customer"
	assert si.docfield("items.item") == "item_code"
	assert model.entity("sales_order").docfield("date") == "transaction_date"
	assert model.entity("purchase_invoice").docfield("party") == "supplier"
	assert si.canonical("outstanding_amount") == "outstanding"


def test_hr_doctypes_from_hrms_are_marked(model):
	assert model.entity("leave_application").app == "hrms"
	assert model.entity("salary_slip").app == "hrms"
	assert model.entity("employee").app == "erpnext"


def test_synonyms_include_the_abbreviations_people_type(model):
	words = {s.lower() for e in model for s in e.synonyms}
	for abbreviation in ("so", "po", "grn", "dn", "jv", "si", "pi", "bom", "wo", "rfq", "invoice", "bill"):
		assert abbreviation in words, abbreviation


def test_unknown_field_error_lists_valid_fields(model):
	with pytest.raises(ToolError, match="Valid fields: .*outstanding"):
		model.entity("sales_invoice").resolve("balance_due")


def test_unknown_entity_is_not_found_with_suggestions(model):
	with pytest.raises(NotFound, match="sales_invoice"):
		model.entity("sales_invoic")


def _write(tmp_path, name, payload):
	(tmp_path / name).write_text(json.dumps(payload))


GOOD = {
	"key": "thing",
	"doctype": "Thing",
	"label": "Thing",
	"description": "A thing",
	"fields": {"title": "title"},
	"read_only_reason": "A test master set up once by an administrator.",
}


@pytest.mark.parametrize(
	"change, message",
	[
		({"fields": {}}, "missing 'fields'"),
		({"fields": {"Bad Name": "x"}}, "must be snake_case"),
		({"actions": ["list", "explode"]}, "unknown actions"),
		({"actions": ["list", "submit"]}, "submittable"),
		({"actions": ["list", "create"]}, "'writable'"),
		({"read_only_reason": ""}, "say why people never create it"),
		({"read_only_reason": ["set up once"]}, "'read_only_reason' must be a sentence"),
		(
			{"actions": ["list", "create"], "writable": ["title"]},
			"has a create action, so it cannot give a 'read_only_reason'",
		),
		({"list_fields": ["nope"]}, "'list_fields' names unknown fields"),
		({"aliases": {"title": "title"}}, "shadow real fields"),
		({"synonyms": "abc"}, "'synonyms' must be a list"),
		({"submittable": True}, "must map docstatus"),
	],
)
def test_bad_map_names_file_and_entity(tmp_path, change, message):
	_write(tmp_path, "selling.json", {"module": "selling", "entities": [{**GOOD, **change}]})
	with pytest.raises(MapError) as err:
		load_dir(tmp_path)
	assert "selling.json" in str(err.value) and "thing" in str(err.value) and message in str(err.value)


def test_unknown_module_and_duplicate_keys_are_refused(tmp_path):
	_write(tmp_path, "x.json", {"module": "marketing", "entities": [GOOD]})
	with pytest.raises(MapError, match="x.json: 'module' must be one of"):
		load_dir(tmp_path)
	(tmp_path / "x.json").unlink()
	_write(tmp_path, "a.json", {"module": "selling", "entities": [GOOD]})
	_write(tmp_path, "b.json", {"module": "buying", "entities": [GOOD]})
	with pytest.raises(MapError, match="b.json entity 'thing': key already defined in module selling"):
		load_dir(tmp_path)
