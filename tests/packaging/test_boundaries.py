"""The layering rules of DESIGN.md, enforced: frappe stays at the edge, packages come from here."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The frappe edge: only these may import frappe (DESIGN.md, "The five layers").
EDGE = (
	"noviz_agent/api.py",
	"noviz_agent/commands.py",
	"noviz_agent/tasks.py",
	"noviz_agent/install.py",
	"noviz_agent/hooks.py",
	"noviz_agent/connectors/frappe_connector.py",
	"noviz_agent/edge/",
	"noviz_agent/noviz_agent/",
	"noviz_agent/tests/",
)


def _imports(path: Path) -> set[str]:
	tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
	names: set[str] = set()
	for node in ast.walk(tree):
		if isinstance(node, ast.Import):
			names.update(alias.name.split(".")[0] for alias in node.names)
		elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
			names.add(node.module.split(".")[0])
		elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
			if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
				names.add(node.args[0].value.split(".")[0])
	return names


def _python_files(*folders: str):
	for folder in folders:
		yield from sorted((ROOT / folder).rglob("*.py"))


# The engine decides; the tools and connectors it runs are handed to it (DESIGN.md, "The five layers").
ENGINE = "noviz_agent/engine"
NOT_FOR_THE_ENGINE = ("noviz_agent.tools", "noviz_agent.connectors")


def _app_imports(path: Path, root: Path = ROOT) -> set[str]:
	"""Every module a file imports, at any depth (inside functions too), relative imports resolved."""
	package = path.relative_to(root).with_suffix("").parts[:-1]
	tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
	names: set[str] = set()
	for node in ast.walk(tree):
		if isinstance(node, ast.Import):
			names.update(alias.name for alias in node.names)
		elif isinstance(node, ast.ImportFrom):
			base = node.module or ""
			if node.level:
				base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
			names.add(base)
			names.update(f"{base}.{alias.name}" for alias in node.names)
		elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
			"import_module",
			"__import__",
		):
			if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
				names.add(node.args[0].value)
	return names


def _engine_leaks(root: Path = ROOT) -> list[str]:
	leaks = []
	for path in sorted((root / ENGINE).rglob("*.py")):
		for name in sorted(_app_imports(path, root)):
			if any(name == banned or name.startswith(banned + ".") for banned in NOT_FOR_THE_ENGINE):
				leaks.append(f"{path.relative_to(root).as_posix()}: {name}")
	return leaks


def test_the_engine_imports_neither_tools_nor_connectors():
	assert sorted((ROOT / ENGINE).rglob("*.py")), "the engine package was not found"
	leaks = _engine_leaks()
	assert leaks == [], (
		"The engine must not import tools or connectors: pass what it needs in (the registry and its "
		f"vocabulary, the session, Tool fields) from the edge, the console script or the evaluation: {leaks}"
	)


@pytest.mark.parametrize(
	"source",
	[
		"def route():\n    from noviz_agent.connectors.model import load_model\n",
		"import noviz_agent.tools\n",
		"from noviz_agent import tools\n",
		"from ..connectors import model\n",
		"import importlib\nimportlib.import_module('noviz_agent.tools.entities')\n",
	],
)
def test_the_engine_boundary_check_catches_a_late_or_relative_import(tmp_path, source):
	engine = tmp_path / "noviz_agent" / "engine"
	engine.mkdir(parents=True)
	(engine / "leak.py").write_text(source)
	assert _engine_leaks(tmp_path) != []
	(engine / "leak.py").write_text("from noviz_agent.engine.tools import Registry\nimport analytics\n")
	assert _engine_leaks(tmp_path) == []


def test_frappe_is_imported_only_at_the_edge():
	offenders = []
	for path in _python_files("noviz_agent", "analytics", "knowledge"):
		rel = path.relative_to(ROOT).as_posix()
		if rel.startswith(EDGE):
			continue
		if "frappe" in _imports(path):
			offenders.append(rel)
	assert offenders == [], f"frappe imported outside the edge: {offenders}"


def test_analytics_and_knowledge_never_import_the_app():
	offenders = [
		path.relative_to(ROOT).as_posix()
		for path in _python_files("analytics", "knowledge")
		if _imports(path) & {"noviz_agent", "frappe"}
	]
	assert offenders == [], f"analytics/knowledge must stay independent of the app: {offenders}"


def test_generic_packages_import_from_this_repository():
	for name in ("analytics", "knowledge", "noviz_agent"):
		module = importlib.import_module(name)
		origin = Path(module.__file__).resolve()
		assert origin.is_relative_to(ROOT), f"{name} imported from {origin}, not from {ROOT}"


def test_the_engine_imports_without_frappe():
	assert "frappe" not in sys.modules or sys.modules["frappe"] is None
	for name in ("noviz_agent.engine.gateway", "noviz_agent.engine.tools", "noviz_agent.tools"):
		importlib.import_module(name)
	assert "frappe" not in sys.modules


def test_the_boundary_check_detects_a_leak(tmp_path):
	leaky = tmp_path / "leak.py"
	leaky.write_text("import os\nfrom frappe.utils import now\n")
	assert "frappe" in _imports(leaky)
