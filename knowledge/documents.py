"""Process documents: Markdown with YAML front matter, read from folders or desk records.

A document lives at ``<module>/<slug>.md``. Its front matter names the ``title``, the
``module`` (defaults to the folder), the ``doctypes`` it describes and, optionally, the
``roles`` allowed to see it, and may name the ``version`` of ERPNext it describes (for example
"ERPNext 15 and 16"), the ``sources`` it was checked against and the releases it was
``checked`` on; the version is cited with the title (``cited_title``) so an answer says which
release it describes, and ``knowledge.versions`` reads the releases from it and from the marks
in the body. Documents from later sources replace earlier ones with the
same ``module/slug``, so an organisation can replace a shipped explanation with its own.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from knowledge.errors import DocumentError
from knowledge.versions import releases

SHIPPED_DOCS = Path(__file__).resolve().parent / "docs"

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
# Files that describe a folder rather than a process are not documents.
_SKIPPED = {"readme.md", "index.md"}


@dataclass(frozen=True)
class Document:
	"""One process document, ready to chunk and index."""

	slug: str
	module: str
	title: str
	body: str
	doctypes: tuple[str, ...] = ()
	roles: tuple[str, ...] = ()
	version: str = ""
	sources: tuple[str, ...] = ()
	# The releases the document was checked against ("ERPNext 15.99.1, 16.7.3"); not cited.
	checked: str = ""
	source: str = "shipped"
	path: str | None = None
	checksum: str = field(default="", compare=False)

	@property
	def key(self) -> str:
		return f"{self.module}/{self.slug}"

	@property
	def releases(self) -> frozenset[int]:
		"""The ERPNext major releases the document describes (from ``version``); empty when unnamed."""
		return releases(self.version)

	@property
	def cited_title(self) -> str:
		"""The title as cited: with the version it describes, when the document names one."""
		return f"{self.title} ({self.version})" if self.version else self.title

	def with_checksum(self) -> Document:
		payload = json.dumps(
			[
				self.slug,
				self.module,
				self.title,
				list(self.doctypes),
				sorted(self.roles),
				self.body,
				self.version,
				list(self.sources),
			],
			ensure_ascii=False,
		)
		digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()
		return replace(self, checksum=digest)


def parse_document(
	text: str, *, origin: str, slug: str, module: str | None = None, source: str = "shipped"
) -> Document:
	"""Parse one Markdown document; ``origin`` (a path or record name) starts every error message."""
	match = _FRONT_MATTER.match(text.lstrip("\ufeff"))
	if not match:
		raise DocumentError(
			f"{origin}: missing front matter (a '---' block with title and module at the top)"
		)
	try:
		meta = yaml.safe_load(match.group(1)) or {}
	except yaml.YAMLError as exc:
		raise DocumentError(f"{origin}: malformed front matter: {_first_line(exc)}") from None
	if not isinstance(meta, dict):
		raise DocumentError(f"{origin}: front matter must be a mapping of keys to values")
	body = text.lstrip("\ufeff")[match.end() :].strip()
	return build_document(
		meta, body, origin=origin, slug=slug, default_module=module, source=source, path=None
	)


def build_document(
	meta: dict,
	body: str,
	*,
	origin: str,
	slug: str,
	default_module: str | None = None,
	source: str = "shipped",
	path: str | None = None,
) -> Document:
	"""Validate front-matter values (from a file or a desk record) and build the document."""
	title = meta.get("title")
	if not isinstance(title, str) or not title.strip():
		raise DocumentError(f"{origin}: front matter needs a non-empty 'title'")
	module = meta.get("module", default_module)
	if not isinstance(module, str) or not _NAME.match(module.strip().lower()):
		raise DocumentError(
			f"{origin}: front matter needs a 'module' such as selling or stock (got {module!r})"
		)
	module = module.strip().lower()
	if default_module and module != default_module:
		raise DocumentError(
			f"{origin}: front matter says module {module!r} but the file is in the {default_module!r} folder"
		)
	slug = slug.strip().lower()
	if not _NAME.match(slug):
		raise DocumentError(f"{origin}: the file name must be a lowercase slug like 'sales-returns'")
	unknown = set(meta) - {"title", "module", "doctypes", "roles", "version", "sources", "checked"}
	if unknown:
		raise DocumentError(f"{origin}: unknown front matter keys {sorted(unknown)}")
	return Document(
		slug=slug,
		module=module,
		title=title.strip(),
		body=body.strip(),
		doctypes=_names(meta.get("doctypes"), origin, "doctypes"),
		roles=_names(meta.get("roles"), origin, "roles"),
		version=_one_line(meta.get("version"), origin, "version", "'ERPNext 15 and 16'"),
		sources=_names(meta.get("sources"), origin, "sources"),
		checked=_one_line(meta.get("checked"), origin, "checked", "'ERPNext 15.99.1, 16.7.3'"),
		source=source,
		path=path,
	).with_checksum()


def load_file(path: Path, *, root: Path | None = None, source: str = "shipped") -> Document:
	"""Read one document file; the module defaults to its folder under ``root``."""
	path = Path(path)
	module = None
	if root is not None:
		relative = path.resolve().relative_to(Path(root).resolve())
		if len(relative.parts) > 1:
			module = relative.parts[0].lower()
	try:
		text = path.read_text(encoding="utf-8")
	except UnicodeDecodeError:
		raise DocumentError(f"{path}: not UTF-8 text") from None
	except OSError as exc:
		raise DocumentError(f"{path}: cannot be read ({exc.strerror})") from None
	document = parse_document(text, origin=str(path), slug=path.stem, module=module, source=source)
	return replace(document, path=str(path))


def load_folder(root: Path | str, *, source: str | None = None) -> list[Document]:
	"""Every document under ``root`` (``<module>/<slug>.md``), in a stable order."""
	root = Path(root)
	if not root.is_dir():
		raise DocumentError(f"{root}: not a folder of process documents")
	source = source or ("shipped" if root.resolve() == SHIPPED_DOCS else f"folder:{root.resolve()}")
	documents = []
	for path in sorted(root.rglob("*.md")):
		if path.name.lower() in _SKIPPED or any(
			part.startswith((".", "_")) for part in path.relative_to(root).parts
		):
			continue
		documents.append(load_file(path, root=root, source=source))
	return _unique(documents, within=str(root))


def document_from_record(
	name: str,
	*,
	title: str,
	module: str,
	content: str,
	doctypes: Iterable[str] = (),
	roles: Iterable[str] = (),
	slug: str | None = None,
) -> Document:
	"""A document edited in the desk (an ``Agent Knowledge Document`` record)."""
	meta = {"title": title, "module": module, "doctypes": list(doctypes), "roles": list(roles)}
	return build_document(
		meta,
		content or "",
		origin=f"Agent Knowledge Document {name}",
		slug=slug or slugify(name),
		source="desk",
	)


def collect(*groups: Iterable[Document]) -> list[Document]:
	"""Merge groups of documents; a later group replaces an earlier document with the same key."""
	merged: dict[str, Document] = {}
	for group in groups:
		for document in group:
			merged[document.key] = document
	return [merged[key] for key in sorted(merged)]


def slugify(text: str) -> str:
	slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
	return slug or "document"


def _names(value, origin: str, key: str) -> tuple[str, ...]:
	if value is None:
		return ()
	if isinstance(value, str):
		value = [value]
	if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
		if key == "sources":
			raise DocumentError(
				f"{origin}: front matter 'sources' must be a list of texts; quote an entry with ': ' in it, "
				'such as "manual: https://..."'
			)
		raise DocumentError(f"{origin}: front matter '{key}' must be a list of names")
	return tuple(dict.fromkeys(item.strip() for item in value))


def _one_line(value, origin: str, key: str, example: str) -> str:
	if value is None:
		return ""
	if isinstance(value, (int, float)) and not isinstance(value, bool):
		value = str(value)
	if not isinstance(value, str) or not value.strip() or "\n" in value.strip():
		raise DocumentError(
			f"{origin}: front matter '{key}' must be one line such as {example} (got {value!r})"
		)
	return value.strip()


def _unique(documents: list[Document], *, within: str) -> list[Document]:
	seen: dict[str, Document] = {}
	for document in documents:
		if document.key in seen:
			raise DocumentError(
				f"{document.path}: the key {document.key!r} is already used by {seen[document.key].path} in {within}"
			)
		seen[document.key] = document
	return documents


def _first_line(exc: Exception) -> str:
	return " ".join(str(exc).split())
