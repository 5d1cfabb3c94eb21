"""The app uses frappe's and RQ's public API only, and only one module knows which version runs.

A private name (leading underscore) or an internal shape of frappe or RQ breaks on the next
release: Frappe 16 moved or removed several that earlier code relied on. The one exception is the
per-version adapter (`edge/frappe_versions.py`), where each use must say which versions it was
checked on. frappe's translation function `_` and its `_dict` are documented public API.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = "noviz_agent/edge/frappe_versions.py"
PUBLIC_UNDERSCORE = {"_", "_dict"}
FRAMEWORKS = ("frappe", "rq", "erpnext")


def _product_files():
	for path in sorted((ROOT / "noviz_agent").rglob("*.py")):
		rel = path.relative_to(ROOT).as_posix()
		if "/tests/" in rel or path.name.startswith("test_"):
			continue
		yield rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)


def _private(name: str) -> bool:
	return name.startswith("_") and name not in PUBLIC_UNDERSCORE and not name.startswith("__")


def _framework(module: str | None) -> bool:
	return bool(module) and module.split(".")[0] in FRAMEWORKS


def private_uses(tree: ast.AST) -> list[str]:
	"""Private names of frappe, RQ or ERPNext a module imports or reads off them."""
	found = []
	imported_as: dict[str, str] = {}
	for node in ast.walk(tree):
		if isinstance(node, ast.Import):
			for alias in node.names:
				if _framework(alias.name):
					imported_as[alias.asname or alias.name.split(".")[0]] = alias.name
					found += [alias.name for part in alias.name.split(".") if _private(part)]
		elif isinstance(node, ast.ImportFrom) and _framework(node.module):
			if any(_private(part) for part in node.module.split(".")):
				found.append(node.module)
			found += [f"{node.module}.{a.name}" for a in node.names if _private(a.name)]
	for node in ast.walk(tree):
		if isinstance(node, ast.Attribute) and _private(node.attr):
			base = node.value
			while isinstance(base, ast.Attribute):
				base = base.value
			if isinstance(base, ast.Name) and base.id in imported_as:
				found.append(f"{base.id}...{node.attr}")
	return found


def test_no_private_name_of_frappe_or_rq_is_used_outside_the_version_adapter():
	problems = {
		rel: uses for rel, tree in _product_files() if rel != ADAPTER and (uses := private_uses(tree))
	}
	assert not problems, f"private frappe/RQ names used (move them into {ADAPTER} or drop them): {problems}"


def test_the_scan_finds_private_names_it_must_refuse():
	code = (
		"import frappe\nfrom frappe.utils.background_jobs import _freeze_gc\n"
		"from rq.worker import SimpleWorker\nx = frappe.local._secret\nw._stop_requested = True\n"
	)
	uses = private_uses(ast.parse(code))
	assert "frappe.utils.background_jobs._freeze_gc" in uses
	assert "frappe..._secret" in uses
	assert private_uses(ast.parse("from frappe import _\nimport frappe\nd = frappe._dict()\n")) == []


def test_only_the_adapter_reads_the_framework_version():
	readers = []
	for rel, tree in _product_files():
		for node in ast.walk(tree):
			if (
				isinstance(node, ast.Attribute)
				and node.attr == "__version__"
				and isinstance(node.value, ast.Name)
				and node.value.id in FRAMEWORKS
			):
				readers.append(rel)
	assert set(readers) <= {ADAPTER}, f"only {ADAPTER} may look at frappe's version: {sorted(set(readers))}"
