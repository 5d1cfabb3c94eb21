"""What differs between Frappe/ERPNext 15 and 16, in one place.

Every other module asks this one; none checks a version itself. Importing it tells the canonical
model which ERPNext release the maps are read for (`connectors.model.use_release`), so the entity
tools, the dataset bindings and the registry describe the fields this site really has.

| what | Frappe 15 | Frappe 16 |
| --- | --- | --- |
| aggregates in `get_list` fields | SQL text: ``"sum(`tabX`.`f`) as total"`` | objects: ``{"SUM": "f", "as": "total"}``; no COUNT(DISTINCT) |
| the maps' release (renamed and removed fields) | 15 | 16 |
| a record's desk path | `/app/<doctype>/<name>` | `/desk/<doctype>/<name>` (`/app` answers 301) |
| the test case class of site tests | `frappe.tests.utils.FrappeTestCase` | `frappe.tests.IntegrationTestCase` |

Each row was checked on Frappe 15.101.1 / ERPNext 15.99.1 and Frappe 16.10.7 / ERPNext 16.7.3.
"""

from __future__ import annotations

import frappe
from frappe.utils import get_url_to_form

from noviz_agent.connectors import model
from noviz_agent.connectors.translate import syntax_for

MAJOR = int(frappe.__version__.split(".")[0])
# The maps describe ERPNext releases; ERPNext's major release always equals Frappe's.
RELEASE = max(r for r in model.RELEASES if r <= MAJOR) if MAJOR >= min(model.RELEASES) else MAJOR
model.use_release(RELEASE)
# Frappe 16 moved the desk from /app to /desk (frappe.utils.get_url_to_form, get_absolute_url on
# 16.10.7; get_url_to_form on 15.101.1 builds /app/...).
DESK_PREFIX = "/desk" if MAJOR >= 16 else "/app"
model.use_desk_prefix(DESK_PREFIX)

# How `frappe.get_list` takes aggregate fields here (connectors/translate.py).
AGGREGATE_SYNTAX = syntax_for(frappe.__version__)


def form_url(doctype: str, name: str | None = None) -> str:
	"""The absolute desk URL of a record (or a single DocType), as frappe builds it here."""
	return get_url_to_form(doctype, name)


def form_path(doctype: str, name: str | None = None) -> str:
	"""The desk path of a record on this site: `/app/...` on 15, `/desk/...` on 16."""
	from urllib.parse import urlsplit

	return urlsplit(get_url_to_form(doctype, name)).path


def test_case_class():
	"""The framework's integration test case: IntegrationTestCase on 16, FrappeTestCase on 15."""
	if MAJOR >= 16:
		from frappe.tests import IntegrationTestCase

		return IntegrationTestCase
	from frappe.tests.utils import FrappeTestCase

	return FrappeTestCase
