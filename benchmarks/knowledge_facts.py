"""Check the facts behind the process documents against ERPNext itself, release by release.

Each process document in knowledge/docs explains ERPNext behaviour: statuses, setting defaults,
who may do what by default, which reports exist, what a controller does. benchmarks/data/
knowledge_facts.yaml holds the key claims of every document as machine-checkable facts (the
file's header lists the kinds), each naming the ERPNext releases it holds for. This script
checks them and prints, per document and per release, how many facts hold; a fact for another
release than the tree's is checked too and must not hold there (otherwise its release list is
wrong). It exits non-zero when any fact fails, so a document that an upgrade made wrong is caught.

Against source trees (no Frappe needed): folders each holding the frappe, erpnext and hrms
repositories side by side, such as a bench's apps folder; the release is read from erpnext.
The documents' front-matter sources are checked to exist there too.

	python benchmarks/knowledge_facts.py --source <v15 bench>/apps --source <v16 bench>/apps

With no --source, the folders come from KNOWLEDGE_FACTS_SOURCES (separated like PATH).

Against a live site (read-only), with the bench's Python from the sites folder:

	cd <bench>/sites && ../env/bin/python <this repository>/benchmarks/knowledge_facts.py --site <site>

Facts of an app that is not there (the HR documents need the HRMS app) are skipped and counted.
"""

from __future__ import annotations

import argparse
import json
import os
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
SOURCES_ENV = "KNOWLEDGE_FACTS_SOURCES"
PTYPES = ("read", "write", "create", "delete", "submit", "cancel", "amend", "print", "email", "report")
# kind: (required keys, optional keys)
KINDS = {
	"options": ({"doctype", "field"}, {"equals", "include", "exclude"}),
	"default": ({"doctype", "field", "value"}, {"absent_before"}),
	"field": (
		{"doctype", "field"},
		{"label", "permlevel", "allow_on_submit", "read_only", "reqd", "fieldtype"},
	),
	"no_label": ({"doctypes", "contains"}, set()),
	"perm": ({"doctype", "role"}, {"grants", "denies"}),
	"report": ({"names", "exists"}, set()),
	"doctype": ({"name"}, None),  # any DocType property may be checked
	"app": ({"doctype", "app"}, set()),
	"fixture": ({"doctype", "file"}, {"include", "exclude"}),
	"code": ({"file", "pattern"}, {"absent"}),
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
_HEADING = re.compile(r"^##[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
# A front-matter source that exists in some releases only: "frappe/erpnext:path (v15)".
_SOURCE_RELEASES = re.compile(r"\s+\((v\d+(?:\s*,\s*v\d+)*)\)$")
_VERSION = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)


class FactsError(Exception):
	"""The facts file or a command-line argument is unusable; the message says what to fix."""


@dataclass(frozen=True)
class Fact:
	doc: str
	says: str
	kind: str
	spec: dict
	needs: str = "erpnext"
	versions: tuple[int, ...] = ()
	section: str | None = None


@dataclass
class DocTypeView:
	"""What the checks need of one DocType, from its JSON file or from a site's meta."""

	app: str | None
	props: dict
	fields: dict
	permissions: list = field(default_factory=list)


def sections(docs_dir: Path, doc: str) -> set[str]:
	"""The ``## `` headings of a document."""
	return set(_HEADING.findall((Path(docs_dir) / f"{doc}.md").read_text(encoding="utf-8")))


def load_facts(path: Path = FACTS_FILE, docs_dir: Path = DOCS_DIR) -> list[Fact]:
	"""The facts, validated: each names an existing document (and section), the ERPNext releases it
	holds for and exactly one known check."""
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
		versions = item.get("versions")
		if (
			not isinstance(versions, list)
			or not versions
			or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 10 for v in versions)
		):
			raise FactsError(
				f"{where}: 'versions' must list the ERPNext releases the fact holds for, e.g. [15, 16] "
				f"(got {versions!r})"
			)
		section = item.get("section")
		if section is not None and section not in sections(docs_dir, doc):
			raise FactsError(f"{where}: 'section' must be a '## ' heading of {doc} (got {section!r})")
		kinds = [key for key in item if key in KINDS]
		unknown = set(item) - {"doc", "says", "needs", "versions", "section", *KINDS}
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
			if key not in ("exists", "absent") and not all(
				isinstance(v, str | int) and not isinstance(v, bool) for v in values
			):
				if not (key == "value" and value is None):
					raise FactsError(f"{where}: '{kind}.{key}' must be text; quote Yes, No, On and Off")
		if kind == "code":
			try:
				re.compile(spec["pattern"])
			except re.error as exc:
				raise FactsError(f"{where}: 'code.pattern' is not a regular expression ({exc})") from None
		facts.append(
			Fact(
				doc=doc,
				says=says.strip(),
				kind=kind,
				spec=spec,
				needs=needs,
				versions=tuple(sorted(set(versions))),
				section=section,
			)
		)
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
		self.app_versions = {app: _tree_version(self.root / app / app / "__init__.py") for app in self.apps}
		self.version = self.app_versions["erpnext"]
		self.release = int(self.version.split(".")[0]) if self.version[:1].isdigit() else None
		self.label = f"ERPNext {self.version} source tree"
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

	def code_matches(self, file: str, pattern: str) -> bool | str:
		"""Whether ``file`` (``app/path`` in this tree) has a match for ``pattern``; "missing" when
		the file is not in this tree (a file of another release, or a wrong path: the fact fails)."""
		path = self.root / file
		if not path.is_file():
			return "missing"
		return re.search(pattern, path.read_text(encoding="utf-8"), re.MULTILINE) is not None

	def missing_sources(self, docs_dir: Path = DOCS_DIR) -> tuple[int, list[str]]:
		"""How many front-matter sources the documents name for this release, and those not found in this tree."""
		named, missing = 0, []
		for doc, source, releases, here in self._named_sources(docs_dir):
			if releases and self.release not in releases:
				continue
			named += 1
			if here is False:
				missing.append(f"{doc}: {source}")
		return named, missing

	def sources_marked_for_other_releases_but_here(self, docs_dir: Path = DOCS_DIR) -> list[str]:
		"""Front-matter sources marked as of other releases only that this tree has too: the mark
		says the file exists in those releases alone, so it is wrong (or the file came back)."""
		return [
			f"{doc}: {source}"
			for doc, source, releases, here in self._named_sources(docs_dir)
			if releases and self.release not in releases and here
		]

	def _named_sources(self, docs_dir: Path):
		"""(document, source without its mark, the releases it is marked for or an empty set, whether
		the file is in this tree: None for an app this tree lacks) for every named source file."""
		for path in sorted(Path(docs_dir).rglob("*.md")):
			match = _FRONT_MATTER.match(path.read_text(encoding="utf-8"))
			meta = (yaml.safe_load(match.group(1)) or {}) if match else {}
			for source in meta.get("sources") or []:
				if source.startswith("manual:"):
					continue
				marked = _SOURCE_RELEASES.search(source)
				releases = {int(v) for v in re.findall(r"\d+", marked.group(1))} if marked else set()
				if marked:
					source = source[: marked.start()]
				repo, _, file = source.partition(":")
				app = repo.split("/")[-1]
				here = (self.root / app / file).is_file() if app in self.apps else None
				yield path.relative_to(docs_dir), source, releases, here


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
		self.app_versions = {app: str(frappe.get_attr(f"{app}.__version__")) for app in self.apps}
		self.version = self.app_versions["erpnext"]
		self.release = int(str(self.version).split(".")[0])
		self.label = f"ERPNext {self.version} site {site}"

	def has_app(self, app: str) -> bool:
		return app in self.apps

	def code_matches(self, file: str, pattern: str) -> bool | None:
		"""Source files are read from a source tree; a site does not answer (the fact is skipped)."""
		return None

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
	"""("pass" | "fail" | "skip", detail) for one fact, read as holding for every release."""
	if not reader.has_app(fact.needs):
		return "skip", f"the {fact.needs} app is not there"
	spec = fact.spec
	if fact.kind == "code":
		# Code a release moved to another file is named by every file it lives in; the fact reads
		# those of them this tree has (a match in any of them is a match).
		files = spec["file"] if isinstance(spec["file"], list) else [spec["file"]]
		answers = [reader.code_matches(file, spec["pattern"]) for file in files]
		if None in answers:
			return "skip", "source file checks need a source tree"
		present = [file for file, answer in zip(files, answers, strict=True) if answer != "missing"]
		if not present:
			return "fail", f"{' or '.join(files)} {'is' if len(files) == 1 else 'are'} not in this tree"
		found = any(answer is True for answer in answers)
		wanted = not spec.get("absent", False)
		return _result(
			found == wanted, f"{' / '.join(present)} {'lacks' if wanted else 'has'} /{spec['pattern']}/"
		)
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
		for k in ("label", "permlevel", "allow_on_submit", "read_only", "reqd", "fieldtype")
		if k in spec and _norm(df.get(k), k) != _norm(spec[k], k)
	}
	return _result(not wrong, f"actual {wrong}")


def check_for_release(fact: Fact, reader) -> tuple[str, str]:
	"""Like ``check``, for the reader's release: a fact for other releases must not hold there
	("other" when it does not; "fail" when it does, since its release list is then wrong)."""
	status, detail = check(fact, reader)
	release = getattr(reader, "release", None)
	if release is None or release in fact.versions or status == "skip":
		return status, detail
	app_version = getattr(reader, "app_versions", {}).get(fact.needs, "")
	if "dev" in app_version:
		# A development snapshot of the app says nothing about its release: neither held nor failed.
		return "skip", f"{fact.needs} {app_version} here is a development snapshot, not a release"
	if status == "pass":
		return "fail", f"holds in ERPNext {release} too: add {release} to its versions"
	return "other", ""


def run(facts: list[Fact], reader) -> dict[str, list[tuple[Fact, str, str]]]:
	results: dict[str, list[tuple[Fact, str, str]]] = defaultdict(list)
	for fact in facts:
		status, detail = check_for_release(fact, reader)
		results[fact.doc].append((fact, status, detail))
	return results


def report(results: dict, label: str) -> tuple[str, int]:
	"""The printed report and the number of failed facts."""
	lines, totals = [], {"pass": 0, "fail": 0, "skip": 0, "other": 0}
	for doc in sorted(results):
		rows = results[doc]
		counts = {s: sum(1 for _, status, _ in rows if status == s) for s in totals}
		for s in totals:
			totals[s] += counts[s]
		state = "FAIL" if counts["fail"] else ("SKIP" if not counts["pass"] else "PASS")
		skipped = f", {counts['skip']} skipped" if counts["skip"] else ""
		other = f", {counts['other']} of other releases do not hold here" if counts["other"] else ""
		checked = len(rows) - counts["other"]
		lines.append(f"{state}  {doc:<46} {counts['pass']}/{checked} hold{skipped}{other}")
		lines += [f"      - {fact.says}: {detail}" for fact, status, detail in rows if status == "fail"]
		lines += [
			f"      - skipped, {fact.says}: {detail}"
			for fact, status, detail in rows
			if status == "skip" and "absent_before" in fact.spec
		]
	checked = totals["pass"] + totals["fail"] + totals["skip"]
	lines.append(
		f"{checked} facts for this release over {len(results)} documents ({label}): "
		f"{totals['pass']} hold, {totals['fail']} fail, {totals['skip']} skipped; "
		f"{totals['other']} facts of other releases checked not to hold here"
	)
	return "\n".join(lines), totals["fail"]


def main(argv: list[str] | None = None) -> int:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	target = parser.add_mutually_exclusive_group()
	target.add_argument(
		"--source",
		action="append",
		help=f"folder holding the frappe, erpnext and hrms repositories; repeat it for each release "
		f"(default: the folders in {SOURCES_ENV})",
	)
	target.add_argument("--site", help="site name; run from the bench's sites folder with its Python")
	parser.add_argument("--facts", default=str(FACTS_FILE), help="facts file (default: the shipped one)")
	parser.add_argument(
		"--no-sources", action="store_true", help="with --source: skip checking the documents' named sources"
	)
	args = parser.parse_args(argv)
	sources = args.source or [p for p in os.environ.get(SOURCES_ENV, "").split(os.pathsep) if p.strip()]
	if not sources and not args.site:
		print(
			f"error: name the source trees with --source (once per release) or in {SOURCES_ENV}, or a site with --site",
			file=sys.stderr,
		)
		return 2
	try:
		facts = load_facts(Path(args.facts))
		readers = [SourceTree(Path(source)) for source in sources] if sources else [Site(args.site)]
		failed, summary = 0, []
		for reader in readers:
			results = run(facts, reader)
			text, tree_failed = report(results, reader.label)
			print(text)
			if isinstance(reader, SourceTree) and not args.no_sources:
				named, missing = reader.missing_sources()
				print(f"document sources: {named} files named, {len(missing)} not found in the tree")
				print("\n".join(f"      - {m}" for m in missing) or "", end="\n" if missing else "")
				mismarked = reader.sources_marked_for_other_releases_but_here()
				print(
					f"document sources marked for other releases only: {len(mismarked)} found in this tree too"
				)
				print("\n".join(f"      - {m}" for m in mismarked) or "", end="\n" if mismarked else "")
				tree_failed += len(missing) + len(mismarked)
			elif isinstance(reader, Site):
				reader.close()
			print()
			failed += tree_failed
			rows = [status for doc_rows in results.values() for _, status, _ in doc_rows]
			summary.append(
				f"ERPNext {reader.version}: {len(rows) - rows.count('other')} facts checked "
				f"({rows.count('pass')} hold, {rows.count('skip')} skipped), {tree_failed} failures; "
				f"{rows.count('other')} facts of other releases confirmed not to hold"
			)
		print("\n".join(summary))
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


def _tree_version(path: Path) -> str:
	"""The ``__version__`` of an app's ``__init__.py``; "unknown" when it has none."""
	try:
		match = _VERSION.search(path.read_text(encoding="utf-8"))
	except OSError:
		match = None
	return match.group(1) if match else "unknown"


def _json(path: Path) -> dict:
	try:
		data = json.loads(path.read_text(encoding="utf-8"))
	except (OSError, ValueError):
		return {}
	return data if isinstance(data, dict) else {}


if __name__ == "__main__":
	sys.exit(main())
