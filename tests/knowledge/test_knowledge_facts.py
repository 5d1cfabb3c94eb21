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
		(
			"- doc: stock/no-such-doc\n  says: x\n  versions: [15, 16]\n  report: {names: [A], exists: true}\n",
			"'doc' must name",
		),
		("- doc: stock/negative-stock\n  says: x\n  versions: [15, 16]\n", "exactly one check"),
		(
			"- doc: stock/negative-stock\n  says: x\n  versions: [15, 16]\n  report: {names: [A], exists: true}\n"
			"  default: {doctype: A, field: b, value: '1'}\n",
			"exactly one check",
		),
		(
			"- doc: stock/negative-stock\n  says: x\n  versions: [15, 16]\n  default: {doctype: A, field: b}\n",
			"needs",
		),
		(
			"- doc: stock/negative-stock\n  says: x\n  versions: [15, 16]\n  needs: payments\n  report: {names: [A], exists: true}\n",
			"needs",
		),
		(
			"- doc: stock/negative-stock\n  says: ''\n  versions: [15, 16]\n  report: {names: [A], exists: true}\n",
			"'says'",
		),
		("{}\n", "non-empty list"),
	],
)
def test_a_malformed_fact_is_refused_with_what_to_fix(tmp_path, text, message):
	with pytest.raises(facts_module.FactsError, match=message):
		facts_module.load_facts(write_facts(tmp_path / "facts.yaml", text))


def test_an_unquoted_yes_or_no_in_a_fact_is_refused(tmp_path):
	# YAML reads a bare No as False; the check would then compare against "False" and mislead.
	text = "- doc: core/why-submission-fails\n  says: x\n  versions: [15, 16]\n  options: {doctype: A, field: b, equals: [No, Yes]}\n"
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
  versions: [15, 16]
  options: {{doctype: Widget Order, field: status, equals: [Draft, Open, Closed], exclude: [Manufactured]}}
- doc: selling/sales-order-statuses
  says: default
  versions: [15, 16]
  default: {{doctype: Widget Order, field: auto_close, value: "{default}"}}
- doc: selling/sales-order-statuses
  says: user rights
  versions: [15, 16]
  perm: {{doctype: Widget Order, role: Widget User, grants: [submit], denies: [{denied}]}}
- doc: selling/sales-order-statuses
  says: report
  versions: [15, 16]
  report: {{names: [Widget Summary], exists: {exists}}}
- doc: selling/sales-order-statuses
  says: due date fixed
  versions: [15, 16]
  field: {{doctype: Widget Order, field: due_date, allow_on_submit: 0}}
- doc: selling/sales-order-statuses
  says: submittable
  versions: [15, 16]
  doctype: {{name: Widget Order, is_submittable: 1}}
- doc: selling/sales-order-statuses
  says: no full-period label
  versions: [15, 16]
  no_label: {{doctypes: [Widget Order], contains: {label}}}
- doc: selling/sales-order-statuses
  says: priorities
  versions: [15, 16]
  fixture: {{doctype: Widget Priority, include: [Low], exclude: [{extra}], file: erpnext/erpnext/setup/install_fixtures.py}}
- doc: hr/attendance
  says: needs hrms
  versions: [15, 16]
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


def test_a_field_called_optional_fails_when_its_doctype_requires_it(tmp_path, tree):
	# A document that calls a mandatory field optional sends people to save records that fail.
	doctype_json(
		tree / "erpnext" / "erpnext",
		"stock",
		"Widget Price",
		fields=[
			{"fieldname": "uom", "label": "UOM", "fieldtype": "Link", "reqd": 1},
			{"fieldname": "batch_no", "label": "Batch No", "fieldtype": "Link"},
		],
	)
	text = "".join(
		f"- doc: selling/pricing-and-discounts\n  says: {says}\n  versions: [15, 16]\n"
		f"  field: {{doctype: Widget Price, field: {field}, reqd: {reqd}}}\n"
		for says, field, reqd in [
			("unit required", "uom", 1),
			("unit optional", "uom", 0),
			("batch optional", "batch_no", 0),
			("batch required", "batch_no", 1),
		]
	)
	result = dict(statuses(write_facts(tmp_path / "facts.yaml", text), tree))
	assert result == {
		"unit required": "pass",
		"unit optional": "fail",
		"batch optional": "pass",
		"batch required": "fail",
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


def sources_doc(docs: Path, module: str, sources: list[str]) -> Path:
	"""A one-document folder whose front matter names ``sources``."""
	(docs / module).mkdir(parents=True)
	lines = "".join(f"  - {source}\n" for source in sources)
	(docs / module / "a.md").write_text(
		f"---\ntitle: A\nmodule: {module}\nsources:\n{lines}---\nbody\n", encoding="utf-8"
	)
	return docs


def test_code_a_release_moved_is_read_from_whichever_of_its_files_the_tree_has(tmp_path, tree):
	# The same rule lives in budget.py in one release and budget_controller.py in the next: one
	# fact for both releases names both files, and only those present in the tree are read.
	old_home = tree / "erpnext" / "erpnext" / "accounts" / "budget.py"
	old_home.parent.mkdir(parents=True)
	old_home.write_text("if amount > budget:\n\tstop()\n", encoding="utf-8")
	files = "[erpnext/erpnext/accounts/budget.py, erpnext/erpnext/controllers/budget_controller.py]"
	text = "".join(
		f"""
- doc: accounting/budgets
  says: {says}
  versions: [15, 16]
  section: Control actions
  code: {{file: {file}, pattern: '{pattern}'{absent}}}
"""
		for says, file, pattern, absent in (
			("moved rule holds", files, r"amount > budget", ""),
			("moved rule missing", files, r"amount >= budget", ""),
			("moved rule absent", files, r"amount >= budget", ", absent: true"),
			("no file at all", "[erpnext/erpnext/a.py, erpnext/erpnext/b.py]", "x", ""),
		)
	)
	reader = facts_module.SourceTree(tree)
	results = facts_module.run(facts_module.load_facts(write_facts(tmp_path / "facts.yaml", text)), reader)
	got = {fact.says: (status, detail) for rows in results.values() for fact, status, detail in rows}
	assert {says: status for says, (status, _) in got.items()} == {
		"moved rule holds": "pass",
		"moved rule missing": "fail",
		"moved rule absent": "pass",
		"no file at all": "fail",
	}
	assert "budget_controller" not in got["moved rule missing"][1]
	assert "are not in this tree" in got["no file at all"][1]


def test_document_sources_missing_from_the_tree_are_listed(tmp_path, tree):
	sources = [
		"frappe/erpnext:erpnext/setup/install_fixtures.py",
		"frappe/erpnext:erpnext/stock/gone.py",
		"'manual: https://example.org/page'",
	]
	docs = sources_doc(tmp_path / "docs", "stock", sources)
	named, missing = facts_module.SourceTree(tree).missing_sources(docs)
	assert named == 2
	assert missing == ["stock/a.md: frappe/erpnext:erpnext/stock/gone.py"]


def test_a_setting_the_document_calls_newer_is_skipped_where_absent_and_checked_where_present(tmp_path, tree):
	text = """
- doc: hr/leave-management
  says: newer setting, absent here
  versions: [15, 16]
  default: {doctype: Widget Order, field: prevent_self_approval, value: "0", absent_before: "Widget 1.0"}
- doc: hr/leave-management
  says: newer setting, present with another default
  versions: [15, 16]
  default: {doctype: Widget Order, field: auto_close, value: "1", absent_before: "Widget 1.0"}
- doc: hr/leave-management
  says: a missing field without the note
  versions: [15, 16]
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


@pytest.mark.parametrize(
	("versions", "message"),
	[
		("", "'versions' must list"),
		("  versions: []\n", "'versions' must list"),
		("  versions: [fifteen]\n", "'versions' must list"),
	],
)
def test_a_fact_without_the_releases_it_holds_for_is_refused(tmp_path, versions, message):
	text = f"- doc: stock/negative-stock\n  says: x\n{versions}  report: {{names: [A], exists: true}}\n"
	with pytest.raises(facts_module.FactsError, match=message):
		facts_module.load_facts(write_facts(tmp_path / "facts.yaml", text))


def test_a_fact_naming_a_section_its_document_lacks_is_refused(tmp_path):
	text = (
		"- doc: stock/negative-stock\n  says: x\n  versions: [15, 16]\n  section: No Such Heading\n"
		"  report: {names: [A], exists: true}\n"
	)
	with pytest.raises(facts_module.FactsError, match="'section' must be a '## ' heading"):
		facts_module.load_facts(write_facts(tmp_path / "facts.yaml", text))


def test_shipped_facts_name_releases_15_or_16_and_sections_that_exist():
	# load_facts refuses a section that is not a heading of the document; this covers every fact.
	facts = facts_module.load_facts()
	assert {v for fact in facts for v in fact.versions} == {15, 16}
	assert sum(1 for fact in facts if fact.versions == (16,)) >= 40
	assert sum(1 for fact in facts if fact.kind == "code") >= 50
	assert all(fact.section for fact in facts if fact.kind == "code")


def release_tree(root: Path, version: str, hrms: str | None = None) -> Path:
	"""A tiny apps folder of one release: erpnext names its version; Widget Order differs by release."""
	for app in ("frappe", "erpnext") + (("hrms",) if hrms else ()):
		(root / app / app).mkdir(parents=True)
	(root / "frappe" / "frappe" / "__init__.py").write_text('__version__ = "0.0.0"\n', encoding="utf-8")
	(root / "erpnext" / "erpnext" / "__init__.py").write_text(
		f'__version__ = "{version}"\n', encoding="utf-8"
	)
	if hrms:
		(root / "hrms" / "hrms" / "__init__.py").write_text(f'__version__ = "{hrms}"\n', encoding="utf-8")
		doctype_json(
			root / "hrms" / "hrms", "hr", "Leave Type", fields=[{"fieldname": "max_days", "default": "0"}]
		)
	options = "Draft\nOpen\nClosed" + ("\nTo Pay" if version.startswith("16") else "")
	doctype_json(
		root / "erpnext" / "erpnext",
		"selling",
		"Widget Order",
		fields=[{"fieldname": "status", "fieldtype": "Select", "options": options}],
	)
	controller = root / "erpnext" / "erpnext" / "selling" / "widget.py"
	controller.write_text(
		"def set_status(self):\n\tself.status = 'Open'\n"
		+ ("\tself.check_advance()\n" if version.startswith("16") else ""),
		encoding="utf-8",
	)
	return root


RELEASE_FACTS = """
- doc: selling/sales-order-statuses
  says: the statuses of 15
  versions: [15]
  options: {doctype: Widget Order, field: status, equals: [Draft, Open, Closed]}
- doc: selling/sales-order-statuses
  says: the statuses of 16
  versions: [16]
  options: {doctype: Widget Order, field: status, equals: [Draft, Open, Closed, To Pay]}
- doc: selling/sales-order-statuses
  says: both set Open
  versions: [15, 16]
  code: {file: erpnext/erpnext/selling/widget.py, pattern: "self\\\\.status = 'Open'"}
- doc: selling/sales-order-statuses
  says: 16 checks the advance
  versions: [16]
  code: {file: erpnext/erpnext/selling/widget.py, pattern: 'check_advance\\(\\)'}
- doc: selling/sales-order-statuses
  says: no release has a refund step
  versions: [15, 16]
  code: {file: erpnext/erpnext/selling/widget.py, pattern: refund, absent: true}
- doc: selling/sales-order-statuses
  says: a file only 16 has
  versions: [16]
  code: {file: erpnext/erpnext/selling/advance.py, pattern: x}
"""


def run_release(tmp_path, facts_text, root):
	facts = facts_module.load_facts(write_facts(tmp_path / "facts.yaml", facts_text))
	rows = facts_module.run(facts, facts_module.SourceTree(root))
	return {fact.says: (status, detail) for rows_ in rows.values() for fact, status, detail in rows_}


def test_each_release_checks_its_own_facts_and_confirms_the_others_do_not_hold(tmp_path):
	v15 = release_tree(tmp_path / "v15", "15.99.1")
	v16 = release_tree(tmp_path / "v16", "16.7.3")
	on15 = {says: status for says, (status, _) in run_release(tmp_path, RELEASE_FACTS, v15).items()}
	on16 = {says: status for says, (status, _) in run_release(tmp_path, RELEASE_FACTS, v16).items()}
	assert on15 == {
		"the statuses of 15": "pass",
		"the statuses of 16": "other",
		"both set Open": "pass",
		"16 checks the advance": "other",
		"no release has a refund step": "pass",
		"a file only 16 has": "other",
	}
	assert on16["the statuses of 15"] == "other" and on16["the statuses of 16"] == "pass"
	assert on16["16 checks the advance"] == "pass" and on16["both set Open"] == "pass"
	assert on16["a file only 16 has"] == "fail"  # the 16 tree lacks the file the fact names


def test_a_fact_marked_for_one_release_that_holds_in_the_other_too_fails(tmp_path):
	# The document would then wrongly tell a reader on 16 that the claim is 15's only.
	v16 = release_tree(tmp_path / "v16", "16.7.3")
	text = RELEASE_FACTS.replace(
		"  says: both set Open\n  versions: [15, 16]", "  says: both set Open\n  versions: [15]"
	)
	status, detail = run_release(tmp_path, text, v16)["both set Open"]
	assert status == "fail" and "holds in ERPNext 16 too" in detail


def test_facts_of_an_app_that_is_a_development_snapshot_are_skipped_in_the_other_release(tmp_path):
	v16 = release_tree(tmp_path / "v16", "16.7.3", hrms="16.0.0-dev")
	text = """
- doc: hr/leave-management
  says: leave days default
  versions: [15]
  needs: hrms
  default: {doctype: Leave Type, field: max_days, value: "0"}
"""
	status, detail = run_release(tmp_path, text, v16)["leave days default"]
	assert status == "skip" and "development snapshot" in detail


def test_main_checks_every_tree_and_prints_the_facts_per_release(tmp_path, capsys, monkeypatch):
	v15 = release_tree(tmp_path / "v15", "15.99.1")
	v16 = release_tree(tmp_path / "v16", "16.7.3")
	facts = write_facts(
		tmp_path / "facts.yaml",
		RELEASE_FACTS.split("- doc: selling/sales-order-statuses\n  says: a file only")[0],
	)
	assert (
		facts_module.main(["--source", str(v15), "--source", str(v16), "--facts", str(facts), "--no-sources"])
		== 0
	)
	out = capsys.readouterr().out
	assert (
		"ERPNext 15.99.1: 3 facts checked (3 hold, 0 skipped), 0 failures; 2 facts of other releases confirmed not to hold"
		in out
	)
	assert (
		"ERPNext 16.7.3: 4 facts checked (4 hold, 0 skipped), 0 failures; 1 facts of other releases confirmed not to hold"
		in out
	)
	monkeypatch.setenv(facts_module.SOURCES_ENV, f"{v15}{facts_module.os.pathsep}{v16}")
	assert facts_module.main(["--facts", str(facts), "--no-sources"]) == 0
	assert "ERPNext 16.7.3: 4 facts checked" in capsys.readouterr().out
	monkeypatch.delenv(facts_module.SOURCES_ENV)
	assert facts_module.main(["--facts", str(facts)]) == 2
	assert "name the source trees" in capsys.readouterr().err


def test_a_source_named_for_one_release_is_looked_for_only_in_that_release(tmp_path):
	v15 = release_tree(tmp_path / "v15", "15.99.1")
	sources = [
		"frappe/erpnext:erpnext/selling/widget.py",
		"frappe/erpnext:erpnext/selling/advance.py (v16)",
		"frappe/erpnext:erpnext/selling/old.py (v15)",
	]
	docs = sources_doc(tmp_path / "docs", "crm", sources)
	named, missing = facts_module.SourceTree(v15).missing_sources(docs)
	assert named == 2 and missing == ["crm/a.md: frappe/erpnext:erpnext/selling/old.py"]


def test_a_source_marked_for_one_release_that_the_other_has_too_is_listed(tmp_path):
	# The mark says the file exists in that release only; a file both releases have is mismarked.
	v15 = release_tree(tmp_path / "v15", "15.99.1")
	sources = [
		"frappe/erpnext:erpnext/selling/widget.py (v16)",
		"frappe/erpnext:erpnext/selling/advance.py (v16)",
	]
	docs = sources_doc(tmp_path / "docs", "crm", sources)
	tree = facts_module.SourceTree(v15)
	assert tree.sources_marked_for_other_releases_but_here(docs) == [
		"crm/a.md: frappe/erpnext:erpnext/selling/widget.py"
	]
	assert tree.missing_sources(docs) == (0, [])


SOURCES = facts_module.os.environ.get(facts_module.SOURCES_ENV, "")


@pytest.mark.skipif(
	not SOURCES,
	reason=f"set {facts_module.SOURCES_ENV} to the ERPNext 15 and 16 apps folders to check the shipped facts",
)
def test_the_shipped_facts_hold_in_every_release_tree_named(capsys):
	assert facts_module.main([]) == 0, capsys.readouterr().out
	out = capsys.readouterr().out
	assert "0 failures" in out and "failures; " in out
