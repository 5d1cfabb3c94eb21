"""Every mapped DocType, field, type and child table exists in the apps' DocType JSON, in each
ERPNext release the maps describe: the maps as read for 15 against the version-15 sources, as read
for 16 against the version-16 ones.

Needs the Frappe, ERPNext and HRMS sources of a release: set NOVIZ_DOCTYPE_SOURCES_15 and
NOVIZ_DOCTYPE_SOURCES_16 to their folders (separated by the path separator; NOVIZ_DOCTYPE_SOURCES
is taken as the version-15 ones). A release without sources is skipped; the site tests check the
same against a live site's meta.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

import pytest

from noviz_agent.connectors import model as canonical_model
from noviz_agent.connectors.model import RELEASES, STANDARD_FIELDS


def _roots(release: int) -> tuple[Path, ...]:
	names = [f"NOVIZ_DOCTYPE_SOURCES_{release}"] + (["NOVIZ_DOCTYPE_SOURCES"] if release == 15 else [])
	text = next((os.environ[n] for n in names if os.environ.get(n, "").strip()), "")
	return tuple(Path(p) for p in text.split(os.pathsep) if p.strip())


@pytest.fixture(params=RELEASES, ids=lambda r: f"erpnext{r}", autouse=True)
def release(request):
	"""Each test once per release, with that release's maps and sources."""
	if not _roots(request.param):
		pytest.skip(f"NOVIZ_DOCTYPE_SOURCES_{request.param} not set")
	_current["release"] = request.param
	yield request.param


_current: dict = {}


def load_model():
	return canonical_model.load_model(_current["release"])


@cache
def doctype_index(release: int) -> dict[str, Path]:
	index = {}
	for root in _roots(release):
		for path in root.glob("**/doctype/*/*.json"):
			if path.stem == path.parent.name:
				index.setdefault(path.stem, path)
	return index


def load(doctype: str) -> dict | None:
	path = doctype_index(_current["release"]).get(doctype.lower().replace(" ", "_").replace("-", "_"))
	return json.loads(path.read_text()) if path else None


def _check(doctype: str, fields: dict, problems: list[str]) -> dict:
	spec = load(doctype)
	if spec is None:
		problems.append(f"DocType {doctype} not found in the sources")
		return {}
	by_name = {f["fieldname"]: f for f in spec["fields"]}
	standard = {v[0] for v in STANDARD_FIELDS.values()}
	for canonical, field in fields.items():
		if field.field in standard:
			continue
		df = by_name.get(field.field)
		if df is None:
			problems.append(f"{doctype}.{field.field} (canonical {canonical}) does not exist")
		elif df["fieldtype"] != field.type:
			problems.append(f"{doctype}.{field.field} is {df['fieldtype']}, map says {field.type}")
	return spec


def test_every_mapped_field_exists_with_its_type():
	problems: list[str] = []
	for ent in load_model():
		spec = _check(ent.doctype, ent.fields, problems)
		if spec and bool(spec.get("is_submittable")) != ent.submittable:
			problems.append(f"{ent.key}: submittable is {bool(spec.get('is_submittable'))} in {ent.doctype}")
		tables = {
			f["fieldname"]: f.get("options") for f in spec.get("fields", []) if f["fieldtype"] == "Table"
		}
		for child in ent.children.values():
			if tables.get(child.field) != child.doctype:
				problems.append(f"{ent.doctype}.{child.field} is not a table of {child.doctype}")
			_check(child.doctype, child.fields, problems)
	assert not problems, "\n".join(problems)


# Fields the desk form shows read-only that the server keeps when code sets them: the references
# "Create > Payment Request" fills on an invoice, and a lead's full name (split into first/last).
SET_FROM_SOURCE_DOCUMENT = {
	("Payment Request", "reference_doctype"),
	("Payment Request", "reference_name"),
	("Lead", "lead_name"),
}
_FORM_ONLY_TYPES = {"Read Only", "Table", "Table MultiSelect", "HTML", "Button"}


def _not_editable(doctype: str, df: dict) -> str:
	if (doctype, df["fieldname"]) in SET_FROM_SOURCE_DOCUMENT:
		return ""
	if df["fieldtype"] in _FORM_ONLY_TYPES:
		return f"a {df['fieldtype']} field"
	if df.get("read_only"):
		return "read-only in the form"
	if df.get("hidden"):
		return "hidden in the form"
	if df.get("fetch_from") and not df.get("fetch_if_empty"):
		return f"always fetched from {df['fetch_from']}"
	return ""


def _writable_problems(doctype: str, fields: dict, writable, problems: list[str]) -> None:
	spec = load(doctype)
	if spec is None:
		return
	by_name = {f["fieldname"]: f for f in spec["fields"]}
	for name in writable:
		if name not in fields:
			continue
		df = by_name.get(fields[name].field)
		why = _not_editable(doctype, df) if df else ""
		if why:
			problems.append(f"{doctype}.{df['fieldname']} is writable in the map but {why}")


def test_writable_fields_are_editable_in_the_desk_form():
	problems: list[str] = []
	for ent in load_model():
		_writable_problems(ent.doctype, ent.fields, ent.writable, problems)
		for child in ent.children.values():
			_writable_problems(child.doctype, child.fields, child.writable, problems)
	assert not problems, "\n".join(problems)


def test_mandatory_child_tables_are_required_when_created():
	problems: list[str] = []
	for ent in load_model():
		if "create" not in ent.actions:
			continue
		spec = load(ent.doctype) or {"fields": []}
		mandatory = {f["fieldname"] for f in spec["fields"] if f["fieldtype"] == "Table" and f.get("reqd")}
		for child in ent.children.values():
			if child.field in mandatory and child.name not in ent.required:
				problems.append(f"{ent.key}.{child.name}: {ent.doctype}.{child.field} is mandatory")
	assert not problems, "\n".join(problems)


def test_select_choices_are_the_doctype_options():
	problems: list[str] = []
	for ent in load_model():
		spec = load(ent.doctype) or {"fields": []}
		by_name = {f["fieldname"]: f for f in spec["fields"]}
		for name, field in ent.fields.items():
			df = by_name.get(field.field)
			if not field.choices or df is None or df["fieldtype"] != "Select":
				continue
			options = [o for o in (df.get("options") or "").split("\n") if o]
			extra = [c for c in field.choices if c not in options]
			if extra:
				problems.append(f"{ent.key}.{name}: {extra} are not options of {ent.doctype}.{field.field}")
	assert not problems, "\n".join(problems)
