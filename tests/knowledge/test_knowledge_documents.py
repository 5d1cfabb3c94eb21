"""Reading process documents: front matter, folders, desk records, checksums."""

from __future__ import annotations

import pytest

from knowledge.documents import SHIPPED_DOCS, collect, document_from_record, load_folder, parse_document
from knowledge.errors import DocumentError


def test_front_matter_fields_are_read(write, docs_root):
	write(
		"selling",
		"returns",
		"## Returns\n\nText.",
		title="Sales returns",
		roles=["Sales Manager"],
		doctypes=["Sales Invoice"],
	)
	[document] = load_folder(docs_root)
	assert document.key == "selling/returns"
	assert document.title == "Sales returns"
	assert document.doctypes == ("Sales Invoice",)
	assert document.roles == ("Sales Manager",)
	assert document.body.startswith("## Returns")
	assert document.path.endswith("selling/returns.md")
	assert len(document.checksum) == 64


def test_malformed_front_matter_names_the_file(docs_root):
	(docs_root / "stock").mkdir()
	bad = docs_root / "stock" / "broken.md"
	bad.write_text("---\ntitle: [unclosed\nmodule: stock\n---\nbody", encoding="utf-8")
	with pytest.raises(DocumentError) as caught:
		load_folder(docs_root)
	assert str(bad) in str(caught.value)
	assert "malformed front matter" in str(caught.value)


@pytest.mark.parametrize(
	"text, message",
	[
		("no front matter at all", "missing front matter"),
		("---\nmodule: stock\n---\nbody", "non-empty 'title'"),
		("---\ntitle: T\nmodule: Stock Things\n---\nbody", "needs a 'module'"),
		("---\ntitle: T\nmodule: stock\nroles: 3\n---\nbody", "'roles' must be a list"),
		("---\ntitle: T\nmodule: stock\ncolour: red\n---\nbody", "unknown front matter keys"),
		("---\n- just\n- a list\n---\nbody", "must be a mapping"),
	],
)
def test_invalid_documents_are_refused_with_the_origin(text, message):
	with pytest.raises(DocumentError) as caught:
		parse_document(text, origin="stock/x.md", slug="x")
	assert str(caught.value).startswith("stock/x.md: ")
	assert message in str(caught.value)


def test_module_must_match_its_folder(write, docs_root):
	path = docs_root / "stock" / "moved.md"
	path.parent.mkdir()
	path.write_text("---\ntitle: Moved\nmodule: selling\n---\nbody", encoding="utf-8")
	with pytest.raises(DocumentError, match="selling.*stock"):
		load_folder(docs_root)


def test_module_defaults_to_the_folder(docs_root):
	(docs_root / "hr").mkdir()
	(docs_root / "hr" / "leave.md").write_text("---\ntitle: Leave\n---\nbody", encoding="utf-8")
	assert load_folder(docs_root)[0].module == "hr"


def test_a_single_role_may_be_written_as_a_string():
	document = parse_document("---\ntitle: T\nmodule: hr\nroles: HR Manager\n---\nx", origin="o", slug="t")
	assert document.roles == ("HR Manager",)


def test_checksum_changes_with_body_and_roles_but_not_with_the_path(write, docs_root):
	path = write("hr", "pay", "Body one")
	first = load_folder(docs_root)[0].checksum
	write("hr", "pay", "Body one", roles=["HR Manager"])
	second = load_folder(docs_root)[0].checksum
	write("hr", "pay", "Body two", roles=["HR Manager"])
	third = load_folder(docs_root)[0].checksum
	assert len({first, second, third}) == 3
	path.rename(path.with_name("pay-copy.md"))
	assert load_folder(docs_root)[0].key == "hr/pay-copy"


def test_readme_and_hidden_files_are_not_documents(write, docs_root):
	write("stock", "valuation", "Body")
	(docs_root / "README.md").write_text("# About this folder", encoding="utf-8")
	(docs_root / "stock" / "_draft.md").write_text("not ready", encoding="utf-8")
	assert [d.key for d in load_folder(docs_root)] == ["stock/valuation"]


def test_a_missing_folder_is_a_clear_error(tmp_path):
	with pytest.raises(DocumentError, match="not a folder"):
		load_folder(tmp_path / "nowhere")


def test_organisation_documents_replace_shipped_ones_with_the_same_key(write, docs_root):
	shipped = load_folder(SHIPPED_DOCS)
	write("buying", "procure-to-pay", "Our own buying process.", title="Procure to pay at Acme")
	merged = collect(shipped, load_folder(docs_root))
	assert len(merged) == len(shipped)
	replaced = next(d for d in merged if d.key == "buying/procure-to-pay")
	assert replaced.title == "Procure to pay at Acme"
	assert replaced.source.startswith("folder:")


def test_desk_records_become_documents():
	document = document_from_record(
		"Travel Policy 2026",
		title="Travel policy",
		module="hr",
		content="## Flights\n\nEconomy only.",
		roles=["Employee"],
	)
	assert document.key == "hr/travel-policy-2026"
	assert document.source == "desk"
	assert document.roles == ("Employee",)


def test_desk_record_errors_name_the_record():
	with pytest.raises(DocumentError, match="^Agent Knowledge Document Bad: "):
		document_from_record("Bad", title="", module="hr", content="x")


def test_shipped_documents_are_valid_and_plentiful():
	documents = load_folder(SHIPPED_DOCS)
	assert len(documents) >= 40
	assert all(d.source == "shipped" for d in documents)
	assert all(d.doctypes for d in documents), "every shipped document names the DocTypes it explains"
	modules = {d.module for d in documents}
	assert {"core", "selling", "buying", "stock", "accounting", "hr", "projects", "manufacturing"} <= modules
	assert {"assets", "quality", "support"} <= modules
