"""What a labelled question expects, computed from the data itself: plain Python over plain rows.

Nothing here calls a tool, the connector or its filter code: the figures are a second,
independent reading of the same data, so a tool that sums the wrong field or drops a
filter fails the evaluation instead of defining the answer. ``facts`` is anything with
``rows(entity) -> list[dict]`` in canonical names (children as lists under their name):
the seeded data in memory, or a site read by the frappe edge.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Protocol


class Facts(Protocol):
	"""Rows of every company the person can read; `company` is the one money is added up for (the
	person's default company), None when the data keeps no companies apart."""

	company: str | None

	def rows(self, entity: str) -> list[dict]: ...


class DataFacts:
	"""Facts from canonical rows held in memory (the seeded data)."""

	def __init__(self, data: dict[str, list[dict]], company: str | None = None):
		self.data = data
		self.company = company

	def rows(self, entity: str) -> list[dict]:
		return list(self.data.get(entity, []))


@dataclass
class Expected:
	"""One question's expectation: a figure, records, a value, a proposal or a refusal."""

	kind: str  # figure | records | value | proposal | refusal
	figure: float | None = None
	records: list[str] = field(default_factory=list)
	match: str = "all"  # records: all of them, or any one
	ranked: bool = False  # records: the top n of a ranking (order matters), not a listing
	value: str | None = None
	tool: str | None = None  # proposal: the write tool that should be proposed

	def describe(self) -> str:
		if self.kind == "figure":
			return f"{self.figure:,.2f}"
		if self.kind == "records":
			return f"{self.match} of {', '.join(self.records) or '(none)'}"
		if self.kind == "value":
			return str(self.value)
		if self.kind == "proposal":
			return f"proposal via {self.tool}"
		return "refusal"


class SpecError(ValueError):
	"""A labelled question whose expectation cannot be computed as written."""


def compute(spec: dict, facts: Facts) -> Expected:
	"""The expectation of one question's ``expect`` block."""
	if "figure" in spec:
		return Expected("figure", figure=_figure(spec["figure"], facts))
	if "records" in spec:
		return Expected(
			"records", records=_records(spec["records"], facts), match=spec["records"].get("match", "all")
		)
	if "value" in spec:
		value = spec["value"]
		row = next((r for r in facts.rows(value["entity"]) if r.get("name") == value["name"]), None)
		if row is None:
			raise SpecError(f"{value['entity']} {value['name']!r} is not in the data")
		return Expected("value", value=str(row.get(value["field"])))
	if "proposal" in spec:
		return Expected("proposal", tool=spec["proposal"]["tool"])
	if "refusal" in spec:
		return Expected("refusal")
	raise SpecError(f"unknown expectation {sorted(spec)}")


def matches(row: dict, where: list) -> bool:
	"""Whether ``row`` satisfies every ``[field, op, value]`` condition (dates compare as ISO text)."""
	return all(_test(row.get(name), op, target) for name, op, target in where or [])


def _test(value: Any, op: str, target: Any) -> bool:
	if op == "=":
		return _same(value, target)
	if op == "!=":
		return not _same(value, target)
	if op == "in":
		return any(_same(value, t) for t in target)
	if value is None:
		return False
	value, low = _comparable(value, target[0] if op == "between" else target)
	if op == "between":
		_, high = _comparable(value, target[1])
		return low <= value <= high
	return {">": value > low, ">=": value >= low, "<": value < low, "<=": value <= low}[op]


def _same(value: Any, target: Any) -> bool:
	if isinstance(target, int | float) and not isinstance(target, bool):
		try:
			return float(value) == float(target)
		except (TypeError, ValueError):
			return False
	return str(value if value is not None else "") == str(target)


def _comparable(value: Any, target: Any) -> tuple[Any, Any]:
	if isinstance(target, int | float):
		return float(value), float(target)
	return str(value)[: len(str(target))] if len(str(target)) == 10 else str(value), str(target)


def _values(spec: dict, facts: Facts, money: bool = False) -> list[dict]:
	"""The rows a spec reads: matching documents, or their matching lines when ``lines`` is given.

	As the desk counts and lists them, records of every company; an amount added up (`money`) is
	one company's, the default one's, unless the spec names a company itself."""
	where = list(spec.get("where", []))
	company = getattr(facts, "company", None)
	if money and company and not any(w[0] == "company" for w in where):
		where.append(["company", "=", company])
	rows = [row for row in facts.rows(spec["entity"]) if matches(row, where)]
	lines = spec.get("lines")
	if not lines:
		return rows
	out = []
	for row in rows:
		out.extend(
			line for line in row.get(lines["child"], []) or [] if matches(line, lines.get("where", []))
		)
	return out


def _aggregate(fn: str, rows: list[dict], name: str | None) -> float:
	if fn == "count":
		return float(len(rows))
	numbers = [float(row[name]) for row in rows if row.get(name) is not None]
	if not numbers:
		return 0.0
	if fn == "sum":
		return sum(numbers)
	if fn == "avg":
		return sum(numbers) / len(numbers)
	return max(numbers) if fn == "max" else min(numbers)


def _figure(spec: dict, facts: Facts) -> float:
	money = spec["fn"] != "count"
	return round(_aggregate(spec["fn"], _values(spec, facts, money), spec.get("field")), 2)


def _records(spec: dict, facts: Facts) -> list[str]:
	top = spec.get("top")
	rows = _values(spec, facts, money=bool(top) and top.get("fn") != "count")
	if top is None:
		key = spec.get("field", "name")
		return sorted({str(row.get(key)) for row in rows})
	groups: dict[str, list[dict]] = defaultdict(list)
	for row in rows:
		groups[str(row.get(top["group"]))].append(row)
	scored = sorted(
		((_aggregate(top["fn"], members, top.get("field")), group) for group, members in groups.items()),
		key=lambda pair: (-pair[0], pair[1]),
	)
	return [group for _, group in scored[: top.get("n", 1)]]
