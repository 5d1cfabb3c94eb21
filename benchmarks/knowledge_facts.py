"""Check the facts behind the process documents against ERPNext itself.

Each process document in knowledge/docs explains ERPNext behaviour: statuses, setting defaults,
who may do what by default, which reports exist. benchmarks/data/knowledge_facts.yaml holds
the key claims of every document as machine-checkable facts (the file's header lists the kinds).
This script checks them and prints, per document, how many facts hold; it exits non-zero when
any fact fails, so a document that an upgrade made wrong is caught.

Against a source tree (no Frappe needed): a folder holding the frappe, erpnext and hrms
repositories side by side, such as a bench's apps folder. The documents' front-matter sources
are checked to exist there too.

	python benchmarks/knowledge_facts.py --source <bench>/apps

Against a live site (read-only), with the bench's Python from the sites folder:

	cd <bench>/sites && ../env/bin/python <this repository>/benchmarks/knowledge_facts.py --site <site>

Facts of an app that is not there (the HR documents need the HRMS app) are skipped and counted.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
FACTS_FILE = HERE / "data" / "knowledge_facts.yaml"
DOCS_DIR = HERE.parent / "knowledge" / "docs"
APPS = ("frappe", "erpnext", "hrms")
PTYPES = ("read", "write", "create", "delete", "submit", "cancel", "amend", "print", "email", "report")
# kind: (required keys, optional keys)
KINDS = {
	"options": ({"doctype", "field"}, {"equals", "include", "exclude"}),
	"default": ({"doctype", "field", "value"}, {"absent_before"}),
	"field": ({"doctype", "field"}, {"label", "permlevel", "allow_on_submit", "read_only"}),
	"no_label": ({"doctypes", "contains"}, set()),
	"perm": ({"doctype", "role"}, {"grants", "denies"}),
	"report": ({"names", "exists"}, set()),
	"doctype": ({"name"}, None),  # any DocType property may be checked
	"app": ({"doctype", "app"}, set()),
	"fixture": ({"doctype", "file"}, {"include", "exclude"}),
}
# Flags a DocType file leaves out when they are 0; a site's meta has them as 0.
FLAGS = {
	"permlevel",
	"allow_on_submit",
	"read_only",
	"reqd",
	"is_submittable",
	"allow_rename",
	"istable",
	"issingle",
}
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---", re.DOTALL)


class FactsError(Exception):
	"""The facts file or a command-line argument is unusable; the message says what to fix."""


@dataclass(frozen=True)
class Fact:
	doc: str
	says: str
	kind: str
	spec: dict
	needs: str = "erpnext"


@dataclass
class DocTypeView:
	"""What the checks need of one DocType, from its JSON file or from a site's meta."""

	app: str | None
	props: dict
	fields: dict
	permissions: list = field(default_factory=list)


def load_facts(path: Path = FACTS_FILE, docs_dir: Path = DOCS_DIR) -> list[Fact]:
	"""The facts, validated: each names an existing document and exactly one known check."""
	try:
		raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
	except (OSError, yaml.YAMLError) as exc:
		raise FactsError(f"{path}: cannot be read as YAML ({' '.join(str(exc).split())})") from None
	if not isinstance(raw, list) or not raw:
		raise FactsError(f"{path}: must be a non-empty list of facts")
	facts = []
	for number, item in enumerate(raw, start=1):
		where = f"{path} fact {number}"
		if not isinstance(item, dict):
			raise FactsError(f"{where}: must be a mapping with doc, says and one check")
		doc, says, needs = item.get("doc"), item.get("says"), item.get("needs", "erpnext")
		if not isinstance(doc, str) or not (Path(docs_dir) / f"{doc}.md").is_file():
			raise FactsError(f"{where}: 'doc' must name a document in knowledge/docs (got {doc!r})")
		if not isinstance(says, str) or not says.strip():
			raise FactsError(f"{where}: 'says' must state the claim in words")
		if needs not in APPS:
			raise FactsError(f"{where}: 'needs' must be one of {', '.join(APPS)} (got {needs!r})")
		kinds = [key for key in item if key in KINDS]
		unknown = set(item) - {"doc", "says", "needs", *KINDS}
		if len(kinds) != 1 or unknown:
			raise FactsError(
				f"{where}: needs exactly one check of {', '.join(KINDS)}; extra keys {sorted(unknown)}"
			)
		kind, spec = kinds[0], item[kinds[0]]
		required, optional = KINDS[kind]
		if not isinstance(spec, dict) or not required <= set(spec):
			raise FactsError(f"{where}: '{kind}' needs {sorted(required)}")
		if optional is not None and set(spec) - required - optional:
			raise FactsError(f"{where}: '{kind}' does not take {sorted(set(spec) - required - optional)}")
		for key, value in spec.items():
			values = value if isinstance(value, list) else [value]
			if key != "exists" and not all(
				isinstance(v, str | int) and not isinstance(v, bool) for v in values
			):
				if not (key == "value" and value is None):
					raise FactsError(f"{where}: '{kind}.{key}' must be text; quote Yes, No, On and Off")
		facts.append(Fact(doc=doc, says=says.strip(), kind=kind, spec=spec, needs=needs))
	return facts


class SourceTree:
	"""DocTypes, reports and fixtures read from repositories on disk."""

	label = "source tree"

	def __init__(self, root: Path):
		self.root = Path(root)
		if not self.root.is_dir():
			raise FactsError(
				f"{root}: not a folder; pass the folder holding the frappe, erpnext and hrms repositories"
			)
		self.apps = {app for app in APPS if (self.root / app / app / "__init__.py").is_file()}
		if not {"frappe", "erpnext"} <= self.apps:
			raise FactsError(
				f"{root}: no frappe and erpnext repositories found in it (found {sorted(self.apps)})"
			)
		self._doctypes: dict[str, tuple[str, dict]] = {}
		self._reports: dict[str, int] = {}
		for app in sorted(self.apps):
			for path in (self.root / app / app).rglob("*.json"):
				if path.parent.parent.name not in ("doctype", "report") or path.stem != path.parent.name:
					continue
				data = _json(path)
				if data.get("doctype") == "DocType" and data.get("name"):
					self._doctypes[data["name"]] = (app, data)
				elif data.get("doctype") == "Report" and data.get("name"):
					self._reports[data["name"]] = int(data.get("disabled") or 0)

	def has_app(self, app: str) -> bool:
		return app in self.apps

	def doctype(self, name: str) -> DocTypeView | None:
		if name not in self._doctypes:
			return None
		app, data = self._doctypes[name]
		fields = {f["fieldname"]: f for f in data.get("fields", []) if f.get("fieldname")}
		return DocTypeView(app=app, props=data, fields=fields, permissions=data.get("permissions", []))

	def report_usable(self, name: str) -> bool:
		return name in self._reports and not self._reports[name]

	def fixture_names(self, doctype: str, file: str) -> set[str] | None:
		path = self.root / file
		if not path.is_file():
			raise FactsError(f"{path}: fixture file not found in the source tree")
		pattern = rf'"doctype":\s*"{re.escape(doctype)}",\s*"name":\s*_?\(?"([^"]+)"'
		return set(re.findall(pattern, path.read_text(encoding="utf-8")))

	def missing_sources(self, docs_dir: Path = DOCS_DIR) -> tuple[int, list[str]]:
		"""How many front-matter sources the documents name, and those not found in this tree."""
		named, missing = 0, []
		for path in sorted(Path(docs_dir).rglob("*.md")):
			match = _FRONT_MATTER.match(path.read_text(encoding="utf-8"))
			meta = (yaml.safe_load(match.group(1)) or {}) if match else {}
			for source in meta.get("sources") or []:
				if source.startswith("manual:"):
					continue
				named += 1
				repo, _, file = source.partition(":")
				app = repo.split("/")[-1]
				if app in self.apps and not (self.root / app / file).is_file():
					missing.append(f"{path.relative_to(docs_dir)}: {source}")
		return named, missing


class Site:
	"""DocTypes, reports and records read from a live site (read-only, as Administrator)."""

	label = "site"

	def __init__(self, site: str):
		import frappe

		self.frappe = frappe
		try:
			frappe.init(site=site, sites_path=".")
			frappe.connect()
		except Exception as exc:  # frappe raises several kinds here; all mean the same to the user
			raise FactsError(
				f"cannot open site {site!r} ({exc}); run this from the bench's sites folder with the bench's Python"
			) from None
		self.apps = set(frappe.get_installed_apps())

	def has_app(self, app: str) -> bool:
		return app in self.apps

	def doctype(self, name: str) -> DocTypeView | None:
		frappe = self.frappe
		if not frappe.db.exists("DocType", name):
			return None
		meta = frappe.get_meta(name)
		fields = {df.fieldname: df.as_dict() for df in meta.fields}
		# The DocType record's own table holds the standard (default) permissions.
		permissions = [row.as_dict() for row in frappe.get_doc("DocType", name).permissions]
		app = frappe.db.get_value("Module Def", meta.module, "app_name")
		return DocTypeView(app=app, props=meta.as_dict(), fields=fields, permissions=permissions)

	def report_usable(self, name: str) -> bool:
		disabled = self.frappe.db.get_value("Report", name, "disabled")
		return disabled is not None and not int(disabled)

	def fixture_names(self, doctype: str, file: str) -> set[str] | None:
		return set(self.frappe.get_list(doctype, pluck="name", limit_page_length=0))

	def close(self) -> None:
		self.frappe.destroy()


def check(fact: Fact, reader) -> tuple[str, str]:
	"""("pass" | "fail" | "skip", detail) for one fact."""
	if not reader.has_app(fact.needs):
		return "skip", f"the {fact.needs} app is not there"
	spec = fact.spec
	if fact.kind == "report":
		wrong = [name for name in spec["names"] if reader.report_usable(name) != bool(spec["exists"])]
		return _result(not wrong, f"{'missing' if spec['exists'] else 'still present'}: {', '.join(wrong)}")
	if fact.kind == "fixture":
		names = reader.fixture_names(spec["doctype"], spec["file"])
		missing = sorted(set(spec.get("include", [])) - names)
		# A site may add its own records, so absences are checked only in a source tree.
		extra = sorted(set(spec.get("exclude", [])) & names) if isinstance(reader, SourceTree) else []
		return _result(not missing and not extra, f"missing {missing}, unexpected {extra}")
	if fact.kind == "no_label":
		found = []
		for name in spec["doctypes"]:
			view = reader.doctype(name)
			if view is None:
				return "fail", f"DocType {name} does not exist"
			found += [
				f"{name}.{f}"
				for f, df in view.fields.items()
				if spec["contains"].lower() in (df.get("label") or "").lower()
			]
		return _result(not found, f"labels containing {spec['contains']!r}: {found}")
	name = spec.get("doctype") or spec.get("name")
	view = reader.doctype(name)
	if fact.kind == "doctype" and spec.get("exists") is False:
		return _result(view is None, f"DocType {name} exists")
	if view is None:
		return "fail", f"DocType {name} does not exist"
	if fact.kind == "doctype":
		wrong = {
			k: view.props.get(k)
			for k, v in spec.items()
			if k not in ("name", "exists") and _norm(view.props.get(k), k) != _norm(v, k)
		}
		return _result(not wrong, f"actual {wrong}")
	if fact.kind == "app":
		return _result(view.app == spec["app"], f"shipped by {view.app}")
	if fact.kind == "perm":
		rows = [
			r for r in view.permissions if r.get("role") == spec["role"] and not int(r.get("permlevel") or 0)
		]
		rights = {p for p in PTYPES if any(int(r.get(p) or 0) for r in rows)}
		lacking, extra = set(spec.get("grants", [])) - rights, set(spec.get("denies", [])) & rights
		return _result(not lacking and not extra, f"{spec['role']} has {sorted(rights)}")
	df = view.fields.get(spec["field"])
	if df is None and fact.kind == "default" and spec.get("absent_before"):
		# The document says the setting came in a later release: older ones lack it, which is
		# counted apart (neither held nor failed) and named in the report.
		return (
			"skip",
			f"{name} has no field {spec['field']} (the document says it is newer than {spec['absent_before']})",
		)
	if df is None:
		return "fail", f"{name} has no field {spec['field']}"
	if fact.kind == "default":
		actual = _norm(df.get("default"))
		return _result(actual == _norm(spec["value"]), f"default is {actual!r}")
	if fact.kind == "options":
		options = [o.strip() for o in (df.get("options") or "").split("\n") if o.strip()]
		problems = []
		if "equals" in spec and sorted(options) != sorted(spec["equals"]):
			problems.append(f"options are {options}")
		problems += [f"{o!r} missing" for o in spec.get("include", []) if o not in options]
		problems += [f"{o!r} present" for o in spec.get("exclude", []) if o in options]
		return _result(not problems, "; ".join(problems))
	wrong = {
		k: df.get(k)
		for k in ("label", "permlevel", "allow_on_submit", "read_only")
		if k in spec and _norm(df.get(k), k) != _norm(spec[k], k)
	}
	return _result(not wrong, f"actual {wrong}")


def run(facts: list[Fact], reader) -> dict[str, list[tuple[Fact, str, str]]]:
	results: dict[str, list[tuple[Fact, str, str]]] = defaultdict(list)
	for fact in facts:
		status, detail = check(fact, reader)
		results[fact.doc].append((fact, status, detail))
	return results


def report(results: dict, label: str) -> tuple[str, int]:
	"""The printed report and the number of failed facts."""
	lines, totals = [], {"pass": 0, "fail": 0, "skip": 0}
	for doc in sorted(results):
		rows = results[doc]
		counts = {s: sum(1 for _, status, _ in rows if status == s) for s in totals}
		for s in totals:
			totals[s] += counts[s]
		state = "FAIL" if counts["fail"] else ("SKIP" if not counts["pass"] else "PASS")
		skipped = f", {counts['skip']} skipped" if counts["skip"] else ""
		lines.append(f"{state}  {doc:<46} {counts['pass']}/{len(rows)} hold{skipped}")
		lines += [f"      - {fact.says}: {detail}" for fact, status, detail in rows if status == "fail"]
		lines += [
			f"      - skipped, {fact.says}: {detail}"
			for fact, status, detail in rows
			if status == "skip" and "absent_before" in fact.spec
		]
	lines.append(
		f"{sum(totals.values())} facts over {len(results)} documents ({label}): "
		f"{totals['pass']} hold, {totals['fail']} fail, {totals['skip']} skipped"
	)
	return "\n".join(lines), totals["fail"]


def main(argv: list[str] | None = None) -> int:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	target = parser.add_mutually_exclusive_group(required=True)
	target.add_argument("--source", help="folder holding the frappe, erpnext and hrms repositories")
	target.add_argument("--site", help="site name; run from the bench's sites folder with its Python")
	parser.add_argument("--facts", default=str(FACTS_FILE), help="facts file (default: the shipped one)")
	parser.add_argument(
		"--no-sources", action="store_true", help="with --source: skip checking the documents' named sources"
	)
	args = parser.parse_args(argv)
	try:
		facts = load_facts(Path(args.facts))
		reader = SourceTree(Path(args.source)) if args.source else Site(args.site)
		text, failed = report(run(facts, reader), reader.label)
		print(text)
		if isinstance(reader, SourceTree) and not args.no_sources:
			named, missing = reader.missing_sources()
			print(f"document sources: {named} files named, {len(missing)} not found in the tree")
			print("\n".join(f"      - {m}" for m in missing) or "", end="\n" if missing else "")
			failed += len(missing)
		elif isinstance(reader, Site):
			reader.close()
	except FactsError as exc:
		print(f"error: {exc}", file=sys.stderr)
		return 2
	return 1 if failed else 0


def _result(ok: bool, detail: str) -> tuple[str, str]:
	return ("pass", "") if ok else ("fail", detail)


def _norm(value, key: str = ""):
	"""Defaults and flags compare as text: 1, "1" and True are the same; None and "" are none
	(or "0" for a flag, which a DocType file leaves out when unset)."""
	if value is None or value == "":
		return "0" if key in FLAGS else None
	if isinstance(value, bool):
		return str(int(value))
	return str(value)


def _json(path: Path) -> dict:
	try:
		data = json.loads(path.read_text(encoding="utf-8"))
	except (OSError, ValueError):
		return {}
	return data if isinstance(data, dict) else {}


if __name__ == "__main__":
	sys.exit(main())
