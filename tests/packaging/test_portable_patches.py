"""Patches run on every database frappe supports (MariaDB and PostgreSQL): no SQL only one accepts.

A patch runs once, at a customer's upgrade, on whatever database the site has; a statement
PostgreSQL refuses (`UPDATE ... JOIN`, backtick quoting) fails their migrate. Patches and the
functions they call write through the query builder or per-row updates instead of raw SQL.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UPDATE_JOIN = re.compile(r"\bupdate\s+`?[\w ]+`?(?:\s+\w+)?\s+(?:inner\s+|left\s+)?join\b", re.IGNORECASE)


def _patch_modules() -> list[str]:
	lines = (ROOT / "noviz_agent" / "patches.txt").read_text(encoding="utf-8").splitlines()
	return [line.strip() for line in lines if line.strip() and not line.startswith(("[", "#"))]


def _source(module: str) -> tuple[Path, ast.Module]:
	path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
	return path, ast.parse(path.read_text(encoding="utf-8"))


def _functions_run_by(module: str) -> list[tuple[str, str]]:
	"""(where, source) of the patch's own code and of each noviz_agent function it imports."""
	path, tree = _source(module)
	found = [(module, path.read_text(encoding="utf-8"))]
	for node in ast.walk(tree):
		if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("noviz_agent"):
			other_path, other = _source(node.module)
			names = {alias.name for alias in node.names}
			for item in other.body:
				if isinstance(item, ast.FunctionDef) and item.name in names:
					text = ast.get_source_segment(other_path.read_text(encoding="utf-8"), item)
					found.append((f"{node.module}.{item.name}", text or ""))
	return found


def test_the_patches_are_found():
	assert "noviz_agent.patches.v1.link_procedure_runs" in _patch_modules()


def test_no_patch_runs_raw_sql_that_only_one_database_accepts():
	for module in _patch_modules():
		for where, text in _functions_run_by(module):
			assert "db.sql(" not in text, (
				f"{where} runs raw SQL during a migrate; use frappe.qb or per-row updates"
			)


def test_no_code_updates_with_a_join_which_postgres_refuses():
	for path in sorted((ROOT / "noviz_agent").rglob("*.py")):
		text = path.read_text(encoding="utf-8")
		assert not UPDATE_JOIN.search(text), f"{path.relative_to(ROOT)}: UPDATE ... JOIN is MariaDB-only"
