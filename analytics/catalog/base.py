"""What an analysis is, as data: key, category, title, purpose, datasets, parameters, compute."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from analytics import periods
from analytics.errors import AnalyticsError

CATEGORIES = {
	"sales": "Sales",
	"customers": "Customers",
	"items": "Items & products",
	"purchasing": "Purchasing & suppliers",
	"inventory": "Inventory",
	"receivables": "Receivables",
	"payables": "Payables",
	"cash": "Cash & payments",
	"margins": "Profitability & margins",
	"finance": "Finance & GL",
	"hr": "People & HR",
	"projects": "Projects & operations",
}

KINDS = ("int", "float", "str", "date", "bool", "choice")


@dataclass(frozen=True)
class Param:
	name: str
	kind: str
	default: object = None
	description: str = ""
	choices: tuple = ()
	minimum: float | None = None
	maximum: float | None = None

	def coerce(self, value: object) -> object:
		"""The value in its declared type, or AnalyticsError naming the parameter."""
		if value is None:
			return None
		bad = AnalyticsError(f"Parameter {self.name!r} must be {self._expects()}; got {value!r}")
		if self.kind == "int":
			if isinstance(value, bool):
				raise bad
			try:
				number = float(value)
			except (TypeError, ValueError):
				raise bad from None
			if not number.is_integer():
				raise bad
			value = int(number)
		elif self.kind == "float":
			if isinstance(value, bool):
				raise bad
			try:
				value = float(value)
			except (TypeError, ValueError):
				raise bad from None
		elif self.kind == "bool":
			if isinstance(value, str):
				if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
					raise bad
				value = value.lower() in ("true", "1", "yes")
			value = bool(value)
		elif self.kind == "date":
			value = periods.to_date(value, self.name)
			return None if value is None else str(value)
		elif self.kind == "choice":
			if value not in self.choices:
				raise bad
		else:
			value = str(value)
		if self.minimum is not None and value < self.minimum:
			raise AnalyticsError(f"Parameter {self.name!r} must be at least {self.minimum}; got {value!r}")
		if self.maximum is not None and value > self.maximum:
			raise AnalyticsError(f"Parameter {self.name!r} must be at most {self.maximum}; got {value!r}")
		return value

	def _expects(self) -> str:
		return {
			"int": "a whole number",
			"float": "a number",
			"bool": "true or false",
			"date": "a date like 2025-01-31",
			"choice": "one of " + ", ".join(map(str, self.choices)),
		}.get(self.kind, "text")

	def describe(self) -> dict:
		out = {"name": self.name, "type": self.kind, "default": self.default, "description": self.description}
		if self.choices:
			out["choices"] = list(self.choices)
		return out


# Parameters many analyses share.
START = Param("start", "date", None, "first day to include (YYYY-MM-DD)")
END = Param("end", "date", None, "last day to include (YYYY-MM-DD)")
FREQ = Param("freq", "choice", "month", "period length", choices=("week", "month", "quarter", "year"))
HORIZON = Param("horizon", "int", 3, "periods to forecast ahead (0 for none)", minimum=0, maximum=24)
TOP_N = Param("top_n", "int", 10, "how many top rows to name", minimum=1, maximum=100)
AS_OF = Param("as_of", "date", None, "reference date (default: the latest date in the data)")
THRESHOLD = Param("threshold", "float", 3.5, "robust z-score above which a period is anomalous", minimum=1.0)

Compute = Callable[[dict[str, pd.DataFrame], dict], dict]


@dataclass(frozen=True)
class Analysis:
	"""One catalogue entry. `needs` maps each dataset to the columns the computation reads."""

	key: str
	category: str
	title: str
	purpose: str
	needs: dict[str, tuple[str, ...]]
	compute: Compute
	params: tuple[Param, ...] = ()
	tags: tuple[str, ...] = ()
	# Datasets that may be absent (the analysis then says what it could not compute).
	optional: tuple[str, ...] = field(default_factory=tuple)
	# False when the computation needs the whole history (first purchases, people on the books)
	# and applies start/end itself.
	period_filter: bool = True
	# Columns read when present (e.g. a progress column), beyond the required ones in `needs`.
	uses: dict[str, tuple[str, ...]] = field(default_factory=dict)

	def __post_init__(self):
		if self.category not in CATEGORIES:
			raise ValueError(f"{self.key}: unknown category {self.category!r}")
		if not self.key.startswith(self.category + "."):
			raise ValueError(f"{self.key}: key must start with its category {self.category!r}")

	@property
	def datasets(self) -> list[str]:
		return list(self.needs)

	def all_params(self) -> tuple[Param, ...]:
		names = {p.name for p in self.params}
		common = tuple(p for p in (START, END) if p.name not in names)
		return common + self.params

	def resolve(self, given: dict | None) -> dict:
		given = dict(given or {})
		spec = {p.name: p for p in self.all_params()}
		unknown = sorted(set(given) - set(spec))
		if unknown:
			raise AnalyticsError(
				f"Analysis {self.key!r} has no parameter(s) {', '.join(map(repr, unknown))}; "
				f"its parameters are {', '.join(spec)}"
			)
		out = {}
		for name, param in spec.items():
			value = given.get(name, param.default)
			out[name] = param.coerce(value) if value is not None else None
		if out.get("start") and out.get("end") and out["start"] > out["end"]:
			raise AnalyticsError(f"Parameter 'start' ({out['start']}) is after 'end' ({out['end']})")
		return out

	def describe(self) -> dict:
		return {
			"key": self.key,
			"category": self.category,
			"title": self.title,
			"purpose": self.purpose,
			"datasets": {name: list(cols) for name, cols in self.needs.items()},
			"params": [p.describe() for p in self.all_params()],
		}
