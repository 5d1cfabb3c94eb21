"""Which entity feeds each analytics dataset: the bindings in datasets/*.json, read and checked on load.

The bindings are data, beside the entity maps. Each names the entity, the canonical field
behind every contract column, the period field, the company scope, the child table whose
rows are the dataset's rows (so paging orders by parent and line), fixed filters, lookups
into other entities and columns computed from others. Loading checks every name against the
entity maps, so a binding that could never be served fails at start, not on a person's question.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from noviz_agent.connectors.model import MapError, Model, for_release, load_model, register_cache

DATASETS_DIR = Path(__file__).parent / "datasets"
REDUCERS = ("first", "max", "sum", "ratio")


@dataclass(frozen=True)
class Lookup:
	"""A column filled from another entity: rows whose `match` fields equal this row's columns.

	`match` maps this dataset's columns to the other entity's fields; the first pair is the one
	fetched by (`field in [...]`). `reduce` folds several matches: first, max, sum, or ratio of
	two fields' sums (e.g. stock value ÷ quantity = the rate goods left stock at).
	"""

	entity: str
	match: dict[str, str]
	field: tuple[str, ...]
	reduce: str = "first"
	filters: tuple = ()


@dataclass(frozen=True)
class CompanyScope:
	"""How a dataset is narrowed to one company: its own field, or a column whose records belong to one."""

	field: str | None = None
	via_column: str | None = None
	via_entity: str | None = None


@dataclass(frozen=True)
class Source:
	"""Where one analytics dataset comes from."""

	key: str
	entity: str
	columns: dict[str, str]
	date: str | None = None
	line: str | None = None
	order: tuple[str, ...] = ("name",)
	company: CompanyScope | None = None
	filters: tuple = ()
	default_months: int | None = 24
	lookups: dict[str, Lookup] = field(default_factory=dict)
	coalesce: dict[str, tuple[str, ...]] = field(default_factory=dict)
	# Columns computed as the product of two others (e.g. cost = quantity × unit cost).
	derived: dict[str, tuple[str, str]] = field(default_factory=dict)
	# Amounts in the party's currency brought to the company's: column → (amount, currency, rate).
	converted: dict[str, tuple[str, str, str]] = field(default_factory=dict)
	notes: dict[str, str] = field(default_factory=dict)
	# A balance read as sums per group (e.g. stock per item and warehouse from the stock ledger).
	group_by: tuple[str, ...] = ()
	sums: dict[str, str] = field(default_factory=dict)

	def served(self) -> set[str]:
		"""Every column this source can fill."""
		return (
			set(self.columns)
			| set(self.sums)
			| set(self.lookups)
			| set(self.coalesce)
			| set(self.derived)
			| set(self.converted)
		)

	def sort_keys(self) -> list[str]:
		"""A unique order: the parent, then its line when rows are child lines."""
		keys = list(self.order)
		if self.line:
			keys.append(f"{self.line}.line_id")
		return keys


def _resolve(model: Model, entity: str, name: str, where: str) -> None:
	try:
		model.entity(entity).resolve(name)
	except Exception as exc:
		raise MapError(f"{where}: {exc}") from None


def _lookup(model: Model, column: str, raw, known: set[str], where: str) -> Lookup:
	where = f"{where} lookup '{column}'"
	if not isinstance(raw, dict) or not raw.get("entity") or not isinstance(raw.get("match"), dict):
		raise MapError(f"{where}: needs 'entity', 'match' and 'field'")
	if raw["entity"] not in model.entities:
		raise MapError(f"{where}: unknown entity {raw['entity']!r}")
	fields = raw.get("field")
	fields = (fields,) if isinstance(fields, str) else tuple(fields or ())
	reduce = raw.get("reduce", "first")
	if reduce not in REDUCERS:
		raise MapError(f"{where}: reduce must be one of {', '.join(REDUCERS)}")
	if not fields or (reduce == "ratio") != (len(fields) == 2) or (reduce != "ratio" and len(fields) != 1):
		raise MapError(f"{where}: 'field' is one field, or two for reduce 'ratio'")
	for mine, theirs in raw["match"].items():
		if mine not in known:
			raise MapError(f"{where}: matches on {mine!r}, which the dataset does not have")
		_resolve(model, raw["entity"], theirs, where)
	for name in fields:
		_resolve(model, raw["entity"], name, where)
	return Lookup(
		raw["entity"], dict(raw["match"]), fields, reduce, tuple(tuple(f) for f in raw.get("filters", []))
	)


def _source(model: Model, key: str, raw: dict, where: str) -> Source:
	where = f"{where} dataset '{key}'"
	if not isinstance(raw, dict) or raw.get("entity") not in model.entities:
		raise MapError(f"{where}: 'entity' must name a canonical entity")
	entity = raw["entity"]
	ent = model.entity(entity)
	columns = raw.get("columns")
	if not isinstance(columns, dict) or not columns:
		raise MapError(f"{where}: 'columns' must map contract columns to fields")
	for name in columns.values():
		_resolve(model, entity, name, where)
	line = raw.get("line")
	if line is not None:
		if line not in ent.children or "line_id" not in ent.children[line].fields:
			raise MapError(f"{where}: line {line!r} must be a child table of {entity} that maps line_id")
	elif any("." in name for name in columns.values()):
		raise MapError(f"{where}: child fields are read only with 'line' set, so each line is one row")
	for name in (raw.get("date"), *raw.get("order", ())):
		if name:
			_resolve(model, entity, name, where)
	company = raw.get("company")
	scope = None
	if isinstance(company, str):
		_resolve(model, entity, company, where)
		scope = CompanyScope(field=company)
	elif isinstance(company, dict):
		if company.get("via") not in columns or company.get("entity") not in model.entities:
			raise MapError(f"{where}: company 'via' must be a column and 'entity' an entity with a company")
		_resolve(model, company["entity"], "company", where)
		scope = CompanyScope(via_column=company["via"], via_entity=company["entity"])
	elif "company" in ent.fields:
		raise MapError(f"{where}: {entity} has a company field; say how the dataset is scoped to a company")
	for f in raw.get("filters", []):
		_resolve(model, entity, f[0], where)
	group_by = tuple(raw.get("group_by") or ())
	sums = dict(raw.get("sums") or {})
	if sums and (not group_by or not set(group_by) <= set(columns)):
		raise MapError(f"{where}: 'sums' need 'group_by' naming columns of the dataset")
	for name in sums.values():
		_resolve(model, entity, name, where)
	known = set(columns) | set(sums)
	coalesce = {k: tuple(v) for k, v in (raw.get("coalesce") or {}).items()}
	for name, parts in coalesce.items():
		if not set(parts) <= known:
			raise MapError(f"{where}: coalesce '{name}' names unknown columns {parts}")
	known |= set(coalesce)
	lookups = {c: _lookup(model, c, spec, known, where) for c, spec in (raw.get("lookups") or {}).items()}
	known |= set(lookups)
	derived = {k: tuple(v) for k, v in (raw.get("derived") or {}).items()}
	converted = {k: tuple(v) for k, v in (raw.get("converted") or {}).items()}
	for name, parts in [*derived.items(), *converted.items()]:
		if not set(parts) <= known:
			raise MapError(f"{where}: '{name}' is computed from unknown columns {parts}")
	return Source(
		key=key,
		entity=entity,
		columns=dict(columns),
		date=raw.get("date"),
		line=line,
		order=tuple(raw.get("order") or ("name",)),
		company=scope,
		filters=tuple(tuple(f) for f in raw.get("filters", [])),
		default_months=raw.get("default_months", 24),
		lookups=lookups,
		coalesce=coalesce,
		derived=derived,
		converted=converted,
		notes=dict(raw.get("notes") or {}),
		group_by=group_by,
		sums=sums,
	)


def load_dir(directory: Path, model: Model | None = None) -> dict[str, Source]:
	"""Every binding in the folder; MapError naming the file and dataset on any fault."""
	model = model or load_model()
	sources: dict[str, Source] = {}
	for path in sorted(directory.glob("*.json")):
		try:
			raw = json.loads(path.read_text(encoding="utf-8"))
		except json.JSONDecodeError as exc:
			raise MapError(f"{path.name}: not valid JSON ({exc})") from exc
		if not isinstance(raw, dict) or not isinstance(raw.get("datasets"), dict):
			raise MapError(f"{path.name}: needs an object 'datasets'")
		for key, spec in raw["datasets"].items():
			if key in sources:
				raise MapError(f"{path.name} dataset '{key}': already bound in another file")
			spec = for_release(spec, model.release, f"{path.name} dataset '{key}'")
			if spec is not None:
				sources[key] = _source(model, key, spec, path.name)
	return sources


@register_cache
@functools.lru_cache(maxsize=1)
def load_sources() -> dict[str, Source]:
	"""The bindings shipped with the app (read once per process)."""
	return load_dir(DATASETS_DIR)
