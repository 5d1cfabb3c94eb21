"""Passages say which ERPNext release they describe, and are labelled when the site runs another.

The marks are read by ``knowledge.versions`` from the front-matter ``version``, from section
headings ending in ``(v16)`` and from ``(v15)`` / ``(v16: …)`` marks in the text; the search
results, the prompt block and the ``knowledge.search`` tool carry the releases and the note.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from knowledge.chunking import split_sections
from knowledge.documents import SHIPPED_DOCS, load_folder, parse_document
from knowledge.search import KnowledgeBase, render_context
from knowledge.store import PgVectorStore
from knowledge.versions import (
	MARK,
	marked_releases,
	passage_releases,
	releases,
	section_releases,
	short_label,
	site_major,
	version_note,
)
from noviz_agent.engine.gateway import call_tool
from noviz_agent.engine.tools import Registry
from noviz_agent.tools import knowledge as knowledge_tools
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("knowledge_facts", ROOT / "benchmarks" / "knowledge_facts.py")
facts_module = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("knowledge_facts", facts_module)  # dataclasses look their module up there
_spec.loader.exec_module(facts_module)

BUDGETS = """---
title: Budgets
module: accounting
version: ERPNext 15 and 16
---
## Budget periods (v16)

A budget runs from a From Fiscal Year to a To Fiscal Year.

## Control actions

Purchase orders are checked with booked expense (v15; v16: each amount is compared on its own).

## Reading an error

The Budget Exceeded message names the account and the amount.
"""

HR_ONLY_15 = """---
title: Leave
module: hr
version: ERPNext 15 / Frappe 15 / HRMS 15
---
## Allocation

Leave is allocated per leave period.
"""


@pytest.mark.parametrize(
	("version", "expected"),
	[
		("ERPNext 15 and 16", {15, 16}),
		("ERPNext 15 / Frappe 15 / HRMS 15", {15}),
		("ERPNext 16", {16}),
		("ERPNext v15, v16", {15, 16}),
		("Our own policy", set()),
		("", set()),
	],
)
def test_the_releases_a_version_line_names(version, expected):
	assert releases(version) == expected


def test_marks_in_text_and_headings_name_their_releases():
	assert marked_releases("checked with booked expense (v15; v16: each on its own)") == {15, 16}
	assert marked_releases("a Reserve Stock box (v16: ticked when (auto) reserve is on)") == {16}
	assert marked_releases("A Lead Source record (v15).") == {15}
	# Parentheses that merely start with a v are not marks.
	assert marked_releases("the VAT (value added tax) and (via timesheets)") == set()
	assert section_releases("Defining a budget (v16)") == {16}
	assert section_releases("Defining a budget") == set()
	assert passage_releases("ERPNext 15 and 16", "Defining a budget (v16)") == {16}
	assert passage_releases("ERPNext 15 and 16", "Control actions") == {15, 16}


@pytest.mark.parametrize(
	("reported", "major"),
	[
		(16, 16),
		("16", 16),
		("16.7.3", 16),
		("v15.99.1", 15),
		(None, None),
		("", None),
		("develop", None),
		(True, None),
	],
)
def test_the_site_release_is_read_from_what_a_site_reports(reported, major):
	assert site_major(reported) == major


def test_a_passage_for_another_release_gets_a_note_and_a_label():
	note = version_note({16}, set(), 15)
	assert "describes ERPNext 16" in note and "this site runs ERPNext 15" in note
	assert short_label({16}, 15) == "ERPNext 16 only"
	assert short_label({15, 16}, 16) == "" and version_note({15, 16}, set(), 16) == ""


def test_marked_parts_for_the_other_release_are_pointed_out_and_nothing_without_a_site():
	note = version_note({15, 16}, {15, 16}, 16)
	assert "parts marked (v16)" in note and "ERPNext 15 do not" in note
	assert version_note({15, 16}, {15, 16}, None) == ""
	# A document that names no release gets no note whatever the site runs.
	assert version_note(set(), set(), 16) == ""


def test_every_release_token_in_the_shipped_documents_is_a_mark_the_reader_finds():
	# A "(v16 ...)" written in a shape MARK does not match would reach readers unlabelled.
	for document in load_folder(SHIPPED_DOCS):
		body = document.body
		spans = [m.span() for m in MARK.finditer(body)]
		for token in re.finditer(r"\bv1[5-9]\b", body):
			inside = any(start <= token.start() < end for start, end in spans)
			assert inside, (
				f"{document.key}: unmarked release at …{body[token.start() - 40 : token.end() + 20]}…"
			)


def test_shipped_documents_that_describe_16_have_marks_and_the_hr_ones_describe_15_only():
	documents = load_folder(SHIPPED_DOCS)
	both = [d for d in documents if d.releases == {15, 16}]
	assert len(both) == 44
	assert {d.key for d in documents if d.releases == {15}} == {
		"hr/attendance",
		"hr/expense-claims",
		"hr/leave-management",
		"hr/payroll-and-salary-slips",
	}


def test_a_fact_that_holds_for_one_release_only_is_marked_in_its_document():
	# The machine-checked facts say where 15 and 16 differ; the document must say so to readers.
	facts = facts_module.load_facts()
	documents = {d.key: d for d in load_folder(SHIPPED_DOCS)}
	unmarked = []
	for fact in facts:
		document = documents[fact.doc]
		only = set(fact.versions)
		if only == document.releases:
			continue
		# The section the fact names, or the whole document when it names none.
		text = document.body
		if fact.section:
			text = (
				fact.section + "\n" + dict(split_sections(document.body, title=document.title))[fact.section]
			)
		# "(v16: …)" after a claim marks the claim as 15's, so a mark of either side will do.
		marked = marked_releases(text)
		if not (only <= marked or (document.releases - only) <= marked):
			unmarked.append(f"{fact.doc} > {fact.section}: {fact.says} ({sorted(only)})")
	assert not unmarked, unmarked


def index(store, *texts):
	kb = KnowledgeBase(store)
	kb.index([parse_document(text, origin="t", slug=slug, module=module) for slug, module, text in texts])
	return kb


def test_search_results_carry_the_releases_of_their_passage(store):
	kb = index(store, ("budgets", "accounting", BUDGETS), ("leave", "hr", HR_ONLY_15))
	[period] = kb.search("From Fiscal Year To Fiscal Year", k=1)
	assert period.section == "Budget periods (v16)" and period.releases == (16,)
	[leave] = kb.search("leave allocated per leave period", k=1)
	assert leave.releases == (15,) and leave.version_note == ""


def test_on_a_version_15_site_a_passage_for_16_is_labelled_in_citation_text_and_prompt(store):
	kb = index(store, ("budgets", "accounting", BUDGETS))
	[period] = kb.search("From Fiscal Year To Fiscal Year", k=1, site_version="15.99.1")
	assert period.citation == "Budgets (ERPNext 15 and 16) > Budget periods (v16) [ERPNext 16 only]"
	assert period.text.startswith("(This passage describes ERPNext 16; this site runs ERPNext 15")
	data = period.to_dict()
	assert data["releases"] == [16] and data["section"].endswith("[ERPNext 16 only]")
	assert data["content"].startswith("(This passage describes ERPNext 16")
	block = render_context([period])
	assert "[Budgets (ERPNext 15 and 16) > Budget periods (v16) [ERPNext 16 only]]" in block
	assert "this site runs ERPNext 15" in block


def test_a_passage_with_marks_tells_which_parts_apply_and_an_unmarked_one_is_left_alone(store):
	kb = index(store, ("budgets", "accounting", BUDGETS))
	[control] = kb.search("purchase orders checked booked expense", k=1, site_version=16)
	assert control.section == "Control actions" and control.citation.endswith("> Control actions")
	assert "parts marked (v16)" in control.version_note
	[error] = kb.search("Budget Exceeded message names the account", k=1, site_version=16)
	assert error.version_note == "" and error.text == error.content


def test_a_site_on_16_sees_hr_passages_labelled_as_describing_15(store):
	kb = index(store, ("leave", "hr", HR_ONLY_15))
	[leave] = kb.context("leave allocated per leave period", site_version=16)
	assert "describes ERPNext 15" in leave.version_note and leave.citation.endswith("[ERPNext 15 only]")


def test_a_store_made_before_documents_carried_their_version_reindexes_them_once(store, pg_dsn):
	kb = index(store, ("budgets", "accounting", BUDGETS))
	# The store as an earlier release of this app left it: no version column.
	store._conn.execute(f'ALTER TABLE "{store.schema}".documents DROP COLUMN version')
	upgraded = PgVectorStore(pg_dsn, schema=store.schema)
	try:
		[period] = KnowledgeBase(upgraded).search("From Fiscal Year To Fiscal Year", k=1)
		assert period.releases == (16,)  # the section mark is in the stored text already
		report = KnowledgeBase(upgraded).index(
			[parse_document(BUDGETS, origin="t", slug="budgets", module="accounting")]
		)
		assert report.updated == ["accounting/budgets"]
		[control] = KnowledgeBase(upgraded).search("purchase orders checked booked expense", k=1)
		assert control.releases == (15, 16)
	finally:
		upgraded.close()
	assert kb.search("Budget Exceeded", k=1)


def session_for(kb, erpnext_version=None):
	s = make_session(MemoryConnector(roles=set()), registry=Registry(knowledge_tools.tools()))
	s.knowledge = kb
	if erpnext_version is not None:
		s.erpnext_version = erpnext_version
	return s


def test_the_tool_labels_passages_for_the_sites_release(store):
	kb = index(store, ("budgets", "accounting", BUDGETS))
	query = {"query": "From Fiscal Year To Fiscal Year", "limit": 1}
	result = call_tool(session_for(kb, "15.99.1"), "knowledge.search", query)
	assert result.ok, result.error
	[passage] = result.data["passages"]
	assert passage["source"].endswith("[ERPNext 16 only]") and passage["releases"] == ["ERPNext 16"]
	assert "this site runs ERPNext 15" in passage["version_note"]
	assert passage["content"].startswith("(This passage describes ERPNext 16")
	assert result.data["site_release"] == "ERPNext 15"


def test_the_tool_without_a_site_release_cites_plainly(store):
	kb = index(store, ("budgets", "accounting", BUDGETS))
	result = call_tool(session_for(kb), "knowledge.search", {"query": "From Fiscal Year To Fiscal Year"})
	[first, *_] = result.data["passages"]
	assert first["source"] == "Budgets (ERPNext 15 and 16) > Budget periods (v16)"
	assert first["version_note"] == "" and "site_release" not in result.data
