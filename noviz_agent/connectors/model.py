"""The canonical model: business entities mapped to DocTypes, loaded from the maps in entities/*.json.

The maps are data, one file per business module. This module reads and validates them and
answers the questions every other layer asks: which entity is this, which DocType field
does a canonical name mean, and which canonical name does a DocType field come back as.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from noviz_agent.engine.errors import NotFound, ToolError

MODULES = (
	"selling",
	"buying",
	"stock",
	"accounting",
	"crm",
	"hr",
	"projects",
	"support",
	"manufacturing",
	"assets",
	"quality",
)
ACTIONS = ("list", "get", "count", "create", "update", "submit", "cancel")
WRITE_ACTIONS = ("create", "update", "submit", "cancel")
# The site permission each entity action needs; tools whose permission is missing are not offered.
ACTION_PERMISSION = {
	"list": "read",
	"get": "read",
	"count": "read",
	"create": "create",
	"update": "write",
	"submit": "submit",
	"cancel": "cancel",
}
ENTITIES_DIR = Path(__file__).parent / "entities"
# ERPNext major releases the maps describe. A map names what holds on all of them; where a release
# renamed, retyped or removed something, the entity or field carries "versions": {"16": {...}}
# (an override of its keys; null removes the field in that release). Without a site the model
# is read for DEFAULT_RELEASE; the frappe edge sets the running release (edge/frappe_versions.py).
RELEASES = (15, 16)
DEFAULT_RELEASE = 15

KEY_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
# Fields every DocType has; maps may name them without declaring them.
STANDARD_FIELDS = {
	"name": ("name", "Data", "ID"),
	"created": ("creation", "Datetime", "Created On"),
	"modified": ("modified", "Datetime", "Last Updated On"),
	"owner": ("owner", "Link", "Created By"),
	"docstatus": ("docstatus", "Int", "Document Status"),
}


class MapError(ValueError):
	"""An entity map is malformed; the message names the file and the entity."""


@dataclass(frozen=True)
class Field:
	"""One canonical field: its DocType fieldname, type, label and options (link target or choices)."""

	name: str
	field: str
	type: str = "Data"
	label: str = ""
	options: str | tuple[str, ...] | None = None

	@property
	def choices(self) -> tuple[str, ...]:
		return self.options if isinstance(self.options, tuple) else ()

	@property
	def link(self) -> str | None:
		return (
			self.options if self.type in ("Link", "Dynamic Link") and isinstance(self.options, str) else None
		)

	def describe(self) -> dict:
		out = {"key": self.name, "label": self.label or self.name, "type": self.type}
		if self.link:
			out["link"] = self.link
		if self.choices:
			out["options"] = list(self.choices)
		return out


@dataclass(frozen=True)
class Child:
	"""A child table of an entity (e.g. `items` → Sales Invoice Item) with its own field map."""

	name: str
	doctype: str
	field: str
	label: str
	fields: dict[str, Field]
	writable: tuple[str, ...] = ()

	def docfield(self, name: str) -> str:
		return self.fields[name].field


@dataclass(frozen=True)
class Entity:
	"""A business entity and its map onto one DocType."""

	key: str
	module: str
	doctype: str
	label: str
	description: str
	fields: dict[str, Field]
	app: str = "erpnext"
	synonyms: tuple[str, ...] = ()
	submittable: bool = False
	title_field: str | None = None
	date_field: str | None = None
	actions: tuple[str, ...] = ("list", "get", "count")
	list_fields: tuple[str, ...] = ()
	aliases: dict[str, str] = field(default_factory=dict)
	writable: tuple[str, ...] = ()
	required: tuple[str, ...] = ()
	children: dict[str, Child] = field(default_factory=dict)
	# Why people never create this entity here (set up once, or posted by other documents); "" when they do.
	read_only_reason: str = ""

	# --- canonical ↔ DocType names -------------------------------------------------

	def field_names(self, with_children: bool = True) -> list[str]:
		"""Every canonical name a request may use: own fields, then `child.field` paths."""
		names = list(self.fields)
		if with_children:
			for child in self.children.values():
				names.extend(f"{child.name}.{f}" for f in child.fields)
		return names

	def resolve(self, name: str) -> tuple[Child | None, Field]:
		"""The field a canonical name (or alias, or `child.field`) means; ToolError listing valid names."""
		name = self.aliases.get(name, name)
		if name in self.fields:
			return None, self.fields[name]
		head, dot, tail = name.partition(".")
		if dot and head in self.children and tail in self.children[head].fields:
			child = self.children[head]
			return child, child.fields[tail]
		raise ToolError(
			f"'{name}' is not a field of {self.key}. Valid fields: {', '.join(self.field_names())}. "
			f"Call schema.describe with entity '{self.key}' for types and allowed values."
		)

	def docfield(self, name: str) -> str:
		return self.resolve(name)[1].field

	def canonical(self, docfield: str) -> str:
		"""The canonical name a DocType field comes back as; unmapped fields keep their own name."""
		return self._reverse.get(docfield, docfield)

	@functools.cached_property
	def _reverse(self) -> dict[str, str]:
		reverse: dict[str, str] = {}
		for name, f in self.fields.items():
			reverse.setdefault(f.field, name)
		return reverse

	def default_list_fields(self) -> list[str]:
		return list(self.list_fields) or [n for n in (self.title_field, self.date_field) if n]

	def link(self, name: str) -> str:
		return doc_url(self.doctype, name)

	def allows(self, action: str) -> bool:
		return action in self.actions


# Where the desk lives on this site: `/app` on Frappe 15, `/desk` on 16 (the frappe edge says which,
# edge/frappe_versions.py); a link built outside the desk (MCP, e-mail, a notification) must not
# lean on 16's redirect from `/app`, which reloads the page.
_desk_prefix = "/app"


def use_desk_prefix(prefix: str) -> None:
	"""Build desk links under `prefix` from now on (the frappe edge calls it once per process)."""
	global _desk_prefix
	if prefix not in ("/app", "/desk"):
		raise MapError(f"{prefix!r} is not a desk path (/app or /desk)")
	_desk_prefix = prefix


def desk_path(path: str) -> str:
	"""A desk page's path on this site: `desk_path("noviz-goals")` is `/app/noviz-goals` on 15."""
	return f"{_desk_prefix}/{path.lstrip('/')}"


def doc_url(doctype: str, name: str) -> str:
	"""The desk path of a record: `/app/<doctype-slug>/<name>` (`/desk/...` on Frappe 16)."""
	from urllib.parse import quote

	return desk_path(f"{doctype.lower().replace(' ', '-')}/{quote(str(name), safe='')}")


@dataclass(frozen=True)
class Model:
	"""All entities by key, in file order, as they hold in one ERPNext release."""

	entities: dict[str, Entity]
	release: int = DEFAULT_RELEASE

	def entity(self, key: str) -> Entity:
		try:
			return self.entities[key]
		except KeyError:
			close = [k for k in self.entities if key and (key in k or k in key)][:8]
			hint = f" Did you mean: {', '.join(close)}?" if close else ""
			raise NotFound(
				f"There is no entity '{key}'.{hint} Use tools.search to find the right one."
			) from None

	def by_module(self, module: str) -> list[Entity]:
		return [e for e in self.entities.values() if e.module == module]

	def by_doctype(self, doctype: str) -> Entity | None:
		return next((e for e in self.entities.values() if e.doctype == doctype), None)

	def __iter__(self):
		return iter(self.entities.values())

	def __len__(self) -> int:
		return len(self.entities)


# --- loading ----------------------------------------------------------------------


def _field(name: str, spec, where: str) -> Field:
	if isinstance(spec, str):
		return Field(name=name, field=spec, label=name.replace("_", " ").title())
	if not isinstance(spec, dict) or not isinstance(spec.get("field"), str):
		raise MapError(f"{where}: field '{name}' must be a fieldname or an object with 'field'")
	options = spec.get("options")
	if isinstance(options, list):
		options = tuple(str(o) for o in options)
	return Field(
		name=name,
		field=spec["field"],
		type=spec.get("type", "Data"),
		label=spec.get("label") or name.replace("_", " ").title(),
		options=options,
	)


def _versions(raw: dict, where: str) -> dict:
	versions = raw.get("versions") or {}
	if not isinstance(versions, dict) or any(k not in {str(r) for r in RELEASES} for k in versions):
		raise MapError(
			f"{where}: 'versions' must be an object keyed by ERPNext release ({', '.join(map(str, RELEASES))})"
		)
	for key, override in versions.items():
		if override is not None and not isinstance(override, dict):
			raise MapError(f"{where}: versions['{key}'] must be an object of overrides or null")
	return versions


def for_release(spec, release: int, where: str):
	"""A map entry as it holds in one release: its own keys, then that release's overrides; None
	when the release has no such thing."""
	if not isinstance(spec, dict) or "versions" not in spec:
		return spec
	versions = _versions(spec, where)
	base = {k: v for k, v in spec.items() if k != "versions"}
	if str(release) not in versions:
		return base
	override = versions[str(release)]
	if override is None:
		return None
	return {**base, **override}


def _fields(raw, where: str, release: int = DEFAULT_RELEASE) -> dict[str, Field]:
	if not isinstance(raw, dict) or not raw:
		raise MapError(f"{where}: 'fields' must be a non-empty object of canonical name → DocType field")
	fields = {}
	for name, spec in raw.items():
		if not KEY_PATTERN.match(name):
			raise MapError(f"{where}: canonical field name '{name}' must be snake_case")
		spec = for_release(spec, release, f"{where} field '{name}'")
		if spec is not None:
			fields[name] = _field(name, spec, where)
	return fields


def _present(names, known, declared) -> list:
	"""Names of a list (writable, list_fields, ...) without the fields the map declares but this
	release does not have; any other unknown name stays, for the check to refuse."""
	return [n for n in names or [] if n in known or n not in declared]


def _check_names(names, known, what: str, where: str) -> tuple[str, ...]:
	unknown = [n for n in names if n not in known]
	if unknown:
		raise MapError(f"{where}: {what} names unknown fields {unknown}")
	return tuple(names)


def _entity(raw: dict, module: str, where: str, release: int = DEFAULT_RELEASE) -> Entity | None:
	if not isinstance(raw, dict) or not raw.get("key"):
		raise MapError(f"{where}: each entity needs a 'key'")
	key = raw["key"]
	where = f"{where} entity '{key}'"
	raw = for_release(raw, release, where)
	if raw is None:
		return None
	for required in ("doctype", "label", "description", "fields"):
		if not raw.get(required):
			raise MapError(f"{where}: missing '{required}'")
	if not KEY_PATTERN.match(key):
		raise MapError(f"{where}: key must be snake_case")
	fields = _fields(raw["fields"], where, release)
	fields.setdefault("name", Field("name", "name", "Data", "ID"))
	children = {}
	for cname, craw in (raw.get("children") or {}).items():
		cwhere = f"{where} child '{cname}'"
		craw = for_release(craw, release, cwhere)
		if craw is None:
			continue
		if not isinstance(craw, dict) or not craw.get("doctype"):
			raise MapError(f"{cwhere}: needs 'doctype' and 'fields'")
		cfields = _fields(craw.get("fields"), cwhere, release)
		children[cname] = Child(
			name=cname,
			doctype=craw["doctype"],
			field=craw.get("field", cname),
			label=craw.get("label", cname.title()),
			fields=cfields,
			writable=_check_names(
				_present(craw.get("writable"), cfields, set(craw.get("fields") or ())),
				cfields,
				"'writable'",
				cwhere,
			),
		)
	known = set(fields) | set(children)
	declared = set(raw["fields"]) | set(raw.get("children") or ())
	raw = {
		**raw,
		**{
			k: _present(raw.get(k), known, declared)
			for k in ("writable", "required", "list_fields")
			if raw.get(k) is not None
		},
	}
	actions = tuple(raw.get("actions", ("list", "get", "count")))
	bad = [a for a in actions if a not in ACTIONS]
	if bad:
		raise MapError(f"{where}: unknown actions {bad}; use {', '.join(ACTIONS)}")
	submittable = bool(raw.get("submittable", False))
	if not submittable and ({"submit", "cancel"} & set(actions)):
		raise MapError(f"{where}: submit/cancel make sense only for a submittable DocType")
	aliases = raw.get("aliases") or {}
	_check_names(aliases.values(), fields, "'aliases'", where)
	clash = set(aliases) & set(fields)
	if clash:
		raise MapError(f"{where}: aliases {sorted(clash)} shadow real fields")
	if submittable and "docstatus" not in fields:
		raise MapError(
			f"{where}: a submittable entity must map docstatus (submit and cancel previews read it)"
		)
	writable_known = set(fields) | set(children)
	writable = _check_names(raw.get("writable", []), writable_known, "'writable'", where)
	if ({"create", "update"} & set(actions)) and not writable:
		raise MapError(f"{where}: create/update need a 'writable' list")
	synonyms = raw.get("synonyms", [])
	if not isinstance(synonyms, list) or not all(isinstance(s, str) and s.strip() for s in synonyms):
		raise MapError(f"{where}: 'synonyms' must be a list of words")
	return Entity(
		key=key,
		module=module,
		doctype=raw["doctype"],
		label=raw["label"],
		description=raw["description"],
		fields=fields,
		app=raw.get("app", "erpnext"),
		synonyms=tuple(synonyms),
		submittable=submittable,
		title_field=_check_names([raw["title_field"]], fields, "'title_field'", where)[0]
		if raw.get("title_field")
		else None,
		date_field=_check_names([raw["date_field"]], fields, "'date_field'", where)[0]
		if raw.get("date_field")
		else None,
		actions=actions,
		list_fields=_check_names(raw.get("list_fields", []), fields, "'list_fields'", where),
		aliases=dict(aliases),
		writable=writable,
		required=_check_names(raw.get("required", []), writable_known, "'required'", where),
		children=children,
		read_only_reason=_read_only_reason(raw, actions, where),
	)


def _read_only_reason(raw: dict, actions: tuple[str, ...], where: str) -> str:
	"""An entity without a create tool must say why; one with a create tool must not claim to be read-only."""
	reason = raw.get("read_only_reason", "")
	if not isinstance(reason, str):
		raise MapError(f"{where}: 'read_only_reason' must be a sentence")
	reason = reason.strip()
	if "create" in actions and reason:
		raise MapError(f"{where}: has a create action, so it cannot give a 'read_only_reason'")
	if "create" not in actions and len(reason) < 20:
		raise MapError(
			f"{where}: has no create action; say why people never create it here in 'read_only_reason' "
			"(set up once, posted by other documents, ...) or give it create/update and 'writable'"
		)
	return reason


def load_file(path: Path, release: int = DEFAULT_RELEASE) -> list[Entity]:
	"""Entities of one module file as they hold in one ERPNext release; MapError naming the file
	and entity on any fault."""
	where = path.name
	try:
		raw = json.loads(path.read_text(encoding="utf-8"))
	except json.JSONDecodeError as exc:
		raise MapError(f"{where}: not valid JSON ({exc})") from exc
	module = raw.get("module") if isinstance(raw, dict) else None
	if module not in MODULES:
		raise MapError(f"{where}: 'module' must be one of {', '.join(MODULES)}; got {module!r}")
	if not isinstance(raw.get("entities"), list):
		raise MapError(f"{where}: 'entities' must be a list")
	found = (_entity(item, module, f"{where} #{i}", release) for i, item in enumerate(raw["entities"]))
	return [ent for ent in found if ent is not None]


def load_dir(directory: Path, namespace: str | None = None, release: int = DEFAULT_RELEASE) -> Model:
	"""Every entity map in a folder; with a namespace (another system) keys become `system.key`."""
	entities: dict[str, Entity] = {}
	for path in sorted(directory.glob("*.json")):
		for ent in load_file(path, release):
			if namespace:
				ent = dataclasses.replace(ent, key=f"{namespace}.{ent.key}")
			if ent.key in entities:
				raise MapError(
					f"{path.name} entity '{ent.key}': key already defined in module {entities[ent.key].module}"
				)
			entities[ent.key] = ent
	return Model(entities, release)


_release = DEFAULT_RELEASE


def release() -> int:
	"""The ERPNext release this process's model describes."""
	return _release


def use_release(major: int) -> None:
	"""Read the maps for this ERPNext release from now on (the frappe edge calls it once per process
	with the running release). Caches built for another release are dropped."""
	global _release
	if major not in RELEASES:
		raise MapError(
			f"ERPNext {major} is not a release the maps describe ({', '.join(map(str, RELEASES))})"
		)
	if major != _release:
		_release = major
		for cached in _RELEASE_CACHES:
			cached.cache_clear()


def load_model(release: int | None = None) -> Model:
	"""The canonical model shipped with the app for an ERPNext release (default: this process's)."""
	return _load_model(release or _release)


@functools.lru_cache(maxsize=len(RELEASES))
def _load_model(release: int) -> Model:
	return load_dir(ENTITIES_DIR, release=release)


# Caches of things built from the model (the tool registry, the dataset map, ...): `register_cache`
# adds theirs so that a change of release rebuilds them too.
_RELEASE_CACHES: list = [_load_model]


def register_cache(cached):
	"""Decorator for an lru_cache'd function whose result is built from the model."""
	_RELEASE_CACHES.append(cached)
	return cached


def entity(key: str) -> Entity:
	return load_model().entity(key)
