"""Every mapped DocType, field, type and child table exists in the apps' DocType JSON.

Needs the Frappe, ERPNext and HRMS sources: set NOVIZ_DOCTYPE_SOURCES to their folders
(separated by the path separator). Skipped without them; the site test checks the same
against a live site's meta.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

import pytest

from noviz_agent.connectors.model import STANDARD_FIELDS, load_model

ROOTS = [Path(p) for p in os.environ.get("NOVIZ_DOCTYPE_SOURCES", "").split(os.pathsep) if p.strip()]
pytestmark = pytest.mark.skipif(not ROOTS, reason="NOVIZ_DOCTYPE_SOURCES not set")


@cache
def doctype_index() -> dict[str, Path]:
	index = {}
	for root in ROOTS:
		for path in root.glob("**/doctype/*/*.json"):
			if path.stem == path.parent.name:
				index.setdefault(path.stem, path)
	return index


def load(doctype: str) -> dict | None:
	path = doctype_index().get(doctype.lower().replace(" ", "_").replace("-", "_"))
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
