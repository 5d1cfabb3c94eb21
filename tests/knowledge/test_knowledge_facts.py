"""The facts check behind the process documents (benchmarks/knowledge_facts.py), without Frappe.

The shipped facts are checked for structure and coverage; the checker itself runs against a
small repository tree written here, so a true fact must hold and a wrong one must fail.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from knowledge.documents import SHIPPED_DOCS, load_folder

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("knowledge_facts", ROOT / "benchmarks" / "knowledge_facts.py")
facts_module = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("knowledge_facts", facts_module)  # dataclasses look their module up there
_spec.loader.exec_module(facts_module)


def test_every_shipped_document_has_facts_and_there_are_at_least_a_hundred():
	facts = facts_module.load_facts()
	documents = {document.key for document in load_folder(SHIPPED_DOCS)}
	assert len(facts) >= 100
	assert {fact.doc for fact in facts} == documents
	assert all(fact.says for fact in facts)


def write_facts(path: Path, text: str) -> Path:
	path.write_text(text, encoding="utf-8")
	return path


@pytest.mark.parametrize(
	("text", "message"),
	[
		("- doc: stock/no-such-doc\n  says: x\n  report: {names: [A], exists: true}\n", "'doc' must name"),
		("- doc: stock/negative-stock\n  says: x\n", "exactly one check"),
		(
			"- doc: stock/negative-stock\n  says: x\n  report: {names: [A], exists: true}\n"
			"  default: {doctype: A, field: b, value: '1'}\n",
			"exactly one check",
		),
		("- doc: stock/negative-stock\n  says: x\n  default: {doctype: A, field: b}\n", "needs"),
		(
			"- doc: stock/negative-stock\n  says: x\n  needs: payments\n  report: {names: [A], exists: true}\n",
			"needs",
		),
		("- doc: stock/negative-stock\n  says: ''\n  report: {names: [A], exists: true}\n", "'says'"),
		("{}\n", "non-empty list"),
	],
)
def test_a_malformed_fact_is_refused_with_what_to_fix(tmp_path, text, message):
	with pytest.raises(facts_module.FactsError, match=message):
		facts_module.load_facts(write_facts(tmp_path / "facts.yaml", text))


def test_an_unquoted_yes_or_no_in_a_fact_is_refused(tmp_path):
	# YAML reads a bare No as False; the check would then compare against "False" and mislead.
	text = (
		"- doc: core/why-submission-fails\n  says: x\n  options: {doctype: A, field: b, equals: [No, Yes]}\n"
	)
	with pytest.raises(facts_module.FactsError, match="quote Yes, No"):
		facts_module.load_facts(write_facts(tmp_path / "facts.yaml", text))


def doctype_json(app_dir: Path, module: str, name: str, **data) -> None:
	slug = name.lower().replace(" ", "_")
	folder = app_dir / module / "doctype" / slug
	folder.mkdir(parents=True)
	(folder / f"{slug}.json").write_text(
		json.dumps({"doctype": "DocType", "name": name, **data}), encoding="utf-8"
	)


@pytest.fixture
def tree(tmp_path) -> Path:
	"""A folder of three tiny repositories laid out like a bench's apps folder."""
	root = tmp_path / "apps"
	for app in ("frappe", "erpnext"):
		(root / app / app).mkdir(parents=True)
		(root / app / app / "__init__.py").write_text("", encoding="utf-8")
	erpnext = root / "erpnext" / "erpnext"
	doctype_json(
		erpnext,
		"selling",
		"Widget Order",
		is_submittable=1,
		fields=[
			{
				"fieldname": "status",
				"label": "Status",
				"fieldtype": "Select",
				"options": "\nDraft\nOpen\nClosed",
			},
			{"fieldname": "auto_close", "label": "Auto Close", "fieldtype": "Check", "default": "0"},
			{"fieldname": "due_date", "label": "Due Date", "fieldtype": "Date"},
		],
		permissions=[
			{"role": "Widget User", "read": 1, "write": 1, "create": 1, "submit": 1},
			{"role": "Widget User", "permlevel": 1, "read": 1, "cancel": 1},
			{"role": "Widget Manager", "read": 1, "cancel": 1, "amend": 1},
		],
	)
	report = erpnext / "selling" / "report" / "widget_summary"
	report.mkdir(parents=True)
	(report / "widget_summary.json").write_text(json.dumps({"doctype": "Report", "name": "Widget Summary"}))
	fixtures = erpnext / "setup" / "install_fixtures.py"
	fixtures.parent.mkdir(parents=True)
	fixtures.write_text('records = [{"doctype": "Widget Priority", "name": _("Low")}]\n', encoding="utf-8")
	return root


FACTS = """
- doc: selling/sales-order-statuses
  says: statuses
  options: {{doctype: Widget Order, field: status, equals: [Draft, Open, Closed], exclude: [Manufactured]}}
- doc: selling/sales-order-statuses
  says: default
  default: {{doctype: Widget Order, field: auto_close, value: "{default}"}}
- doc: selling/sales-order-statuses
  says: user rights
  perm: {{doctype: Widget Order, role: Widget User, grants: [submit], denies: [{denied}]}}
- doc: selling/sales-order-statuses
  says: report
  report: {{names: [Widget Summary], exists: {exists}}}
- doc: selling/sales-order-statuses
  says: due date fixed
  field: {{doctype: Widget Order, field: due_date, allow_on_submit: 0}}
- doc: selling/sales-order-statuses
  says: submittable
  doctype: {{name: Widget Order, is_submittable: 1}}
- doc: selling/sales-order-statuses
  says: no full-period label
  no_label: {{doctypes: [Widget Order], contains: {label}}}
- doc: selling/sales-order-statuses
  says: priorities
  fixture: {{doctype: Widget Priority, include: [Low], exclude: [{extra}], file: erpnext/erpnext/setup/install_fixtures.py}}
- doc: hr/attendance
  says: needs hrms
  app: {{doctype: Attendance, app: hrms}}
  needs: hrms
"""


def statuses(facts_file: Path, tree: Path) -> list[tuple[str, str]]:
	reader = facts_module.SourceTree(tree)
	results = facts_module.run(facts_module.load_facts(facts_file), reader)
	return [(fact.says, status) for rows in results.values() for fact, status, _ in rows]


def test_true_facts_hold_in_a_source_tree_and_an_absent_app_is_skipped(tmp_path, tree):
	text = FACTS.format(default="0", denied="cancel", exists="true", label="full period", extra="Urgent")
	result = dict(statuses(write_facts(tmp_path / "facts.yaml", text), tree))
	assert result.pop("needs hrms") == "skip"
	assert set(result.values()) == {"pass"}, result


def test_wrong_facts_fail_in_a_source_tree(tmp_path, tree):
	# The rights at permission level 1 (cancel) do not count as the role's document rights.
	text = FACTS.format(default="1", denied="submit", exists="false", label="due", extra="Low")
	result = dict(statuses(write_facts(tmp_path / "facts.yaml", text), tree))
	assert {says for says, status in result.items() if status == "fail"} == {
		"default",
		"user rights",
		"report",
		"no full-period label",
		"priorities",
	}


def test_main_exits_non_zero_when_a_fact_fails_and_two_on_a_bad_source(tmp_path, tree, capsys):
	good = write_facts(
		tmp_path / "good.yaml",
		FACTS.format(default="0", denied="cancel", exists="true", label="full period", extra="Urgent"),
	)
	bad = write_facts(
		tmp_path / "bad.yaml",
		FACTS.format(default="1", denied="cancel", exists="true", label="x", extra="Urgent"),
	)
	assert facts_module.main(["--source", str(tree), "--facts", str(good), "--no-sources"]) == 0
	out = capsys.readouterr().out
	assert "PASS  selling/sales-order-statuses" in out and "8 hold, 0 fail, 1 skipped" in out
	assert facts_module.main(["--source", str(tree), "--facts", str(bad), "--no-sources"]) == 1
	assert "default is '0'" in capsys.readouterr().out
	assert facts_module.main(["--source", str(tmp_path / "nowhere"), "--facts", str(good)]) == 2
	assert "not a folder" in capsys.readouterr().err


def test_document_sources_missing_from_the_tree_are_listed(tmp_path, tree):
	docs = tmp_path / "docs" / "stock"
	docs.mkdir(parents=True)
	(docs / "a.md").write_text(
		"---\ntitle: A\nmodule: stock\nsources:\n  - frappe/erpnext:erpnext/setup/install_fixtures.py\n"
		"  - frappe/erpnext:erpnext/stock/gone.py\n  - 'manual: https://example.org/page'\n---\nbody\n",
		encoding="utf-8",
	)
	named, missing = facts_module.SourceTree(tree).missing_sources(tmp_path / "docs")
	assert named == 2
	assert missing == ["stock/a.md: frappe/erpnext:erpnext/stock/gone.py"]


def test_a_setting_the_document_calls_newer_is_skipped_where_absent_and_checked_where_present(tmp_path, tree):
	text = """
- doc: hr/leave-management
  says: newer setting, absent here
  default: {doctype: Widget Order, field: prevent_self_approval, value: "0", absent_before: "Widget 1.0"}
- doc: hr/leave-management
  says: newer setting, present with another default
  default: {doctype: Widget Order, field: auto_close, value: "1", absent_before: "Widget 1.0"}
- doc: hr/leave-management
  says: a missing field without the note
  default: {doctype: Widget Order, field: prevent_self_approval, value: "0"}
"""
	result = dict(statuses(write_facts(tmp_path / "facts.yaml", text), tree))
	assert result == {
		"newer setting, absent here": "skip",
		"newer setting, present with another default": "fail",
		"a missing field without the note": "fail",
	}
	printed, failed = facts_module.report(
		facts_module.run(facts_module.load_facts(tmp_path / "facts.yaml"), facts_module.SourceTree(tree)),
		"source tree",
	)
	assert failed == 2
	assert "skipped, newer setting, absent here" in printed and "Widget 1.0" in printed
