"""Guards: named checks on the calls a model proposes, run before the gateway.

A guard that fires does not run the call; its message goes back to the model as the
tool's answer, saying what to do instead. Each guard has a test named after the
failure it prevents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from noviz_agent.engine.gateway import args_hash

# Untrusted text and the warning writes carry after it are the gateway's (engine/provenance.py).


@dataclass
class GuardState:
	"""What the turn has done so far, as the guards need to know it."""

	calls: dict[tuple[str, str], int] = field(default_factory=dict)
	pages: dict[str, set[int]] = field(default_factory=dict)
	fired: list[str] = field(default_factory=list)

	def record(self, name: str, args: dict) -> None:
		key = (name, args_hash(args))
		self.calls[key] = self.calls.get(key, 0) + 1
		page = page_of(name, args)
		if page is not None:
			self.pages.setdefault(name, set()).add(page)


@dataclass(frozen=True)
class Verdict:
	guard: str
	message: str


Guard = Callable[[str, dict, GuardState], Verdict | None]


def page_of(name: str, args: dict) -> int | None:
	"""The page a list-like call asks for (1-based), or None if it is not a list call."""
	if not name.endswith(".list") and name != "report.page":
		return None
	page = args.get("page")
	if isinstance(page, int):
		return page
	offset, limit = args.get("offset"), args.get("limit") or args.get("page_size") or 20
	if isinstance(offset, int) and isinstance(limit, int) and limit > 0:
		return offset // limit + 1
	return 1


def repeated_identical_call(name: str, args: dict, state: GuardState) -> Verdict | None:
	"""Stops a model that loops on the same call: the answer is already in the conversation."""
	if state.calls.get((name, args_hash(args)), 0) >= 1:
		return Verdict(
			"repeated_identical_call",
			f"You already called {name} with exactly these arguments in this turn; its result is above. "
			"Use that result, change the arguments, or answer the person now.",
		)
	return None


def paging_to_build_a_total(name: str, args: dict, state: GuardState) -> Verdict | None:
	"""Stops adding up rows page by page: totals come from an aggregate computed by the system."""
	page = page_of(name, args)
	if page is None or page <= 1:
		return None
	seen = state.pages.get(name, set())
	if not seen:
		return None
	entity = name.rsplit(".", 1)[0]
	return Verdict(
		"paging_to_build_a_total",
		f"Do not page through {entity} rows to count or add them up: a page is only for showing rows. "
		f"For totals, counts or averages call analytics.aggregate (group-by sums/counts/averages) "
		f"or {entity}.count with the same filters. The person can page the table themselves.",
	)


GUARDS: tuple[Guard, ...] = (repeated_identical_call, paging_to_build_a_total)


def check(name: str, args: dict, state: GuardState, guards: tuple[Guard, ...] = GUARDS) -> Verdict | None:
	"""The first guard that fires for this call, recorded in the state; None when the call may run."""
	for guard in guards:
		verdict = guard(name, args, state)
		if verdict is not None:
			state.fired.append(verdict.guard)
			return verdict
	return None
