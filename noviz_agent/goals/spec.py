"""A standing goal as data: whose it is, what it watches, when it runs, what it may do and spend, where it reports.

`GoalSpec.from_dict` checks everything at once and raises `GoalError` listing every problem with
what to write instead, so a goal proposed in the chat or typed in the desk form fails the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from noviz_agent.goals.schedule import Schedule, ScheduleError

MAY_DO = ("report", "propose")
DELIVERY = ("notification", "email", "conversation")
MAX_GOAL_CHARS = 500
MAX_WATCHES = 6
DEFAULT_RUN_TOKENS = 20_000
DEFAULT_MONTH_TOKENS = 200_000
MAX_STEPS = 6


class GoalError(ValueError):
	"""A goal that cannot be kept; `problems` lists each thing to fix."""

	def __init__(self, problems: list[str]):
		self.problems = list(problems)
		super().__init__(" ".join(self.problems))


@dataclass(frozen=True)
class Caps:
	"""What one run and one calendar month of a goal may spend on the model; 0 means no cap of that kind."""

	run_tokens: int = DEFAULT_RUN_TOKENS
	month_tokens: int = DEFAULT_MONTH_TOKENS
	run_cost: float = 0.0
	month_cost: float = 0.0

	def problems(self) -> list[str]:
		found = []
		if self.run_tokens < 1_000:
			found.append("A run needs at least 1,000 tokens to explain a change; raise the tokens per run.")
		for label, value in (("month tokens", self.month_tokens), ("costs", self.run_cost + self.month_cost)):
			if value < 0:
				found.append(f"The {label} cannot be negative.")
		if self.month_tokens and self.month_tokens < self.run_tokens:
			found.append(
				f"The monthly token cap ({self.month_tokens:,}) is below one run's ({self.run_tokens:,}): "
				"no run could ever call the model. Raise the monthly cap or lower the run's."
			)
		if self.month_cost and self.run_cost and self.month_cost < self.run_cost:
			found.append("The monthly cost cap is below one run's; raise it or lower the run's.")
		return found


@dataclass(frozen=True)
class WatchSpec:
	"""One watch of a goal: a watch kind (see watches.py) and its parameters."""

	kind: str
	params: dict = field(default_factory=dict)

	def to_dict(self) -> dict:
		return {"kind": self.kind, "params": dict(self.params)}


@dataclass(frozen=True)
class GoalSpec:
	owner: str
	goal: str
	watches: tuple[WatchSpec, ...]
	schedule: Schedule = field(default_factory=Schedule)
	company: str | None = None
	may_do: str = "report"
	delivery: tuple[str, ...] = ("notification",)
	caps: Caps = field(default_factory=Caps)
	max_steps: int = 3
	proposal_days: int = 7
	title: str = ""
	name: str | None = None
	active: bool = True

	@property
	def label(self) -> str:
		return self.title or short_title(self.goal)

	@classmethod
	def from_dict(cls, raw: dict) -> GoalSpec:
		"""A goal from plain values (the DocType's fields, or the goals.propose tool's arguments)."""
		from noviz_agent.goals.watches import check_watch

		raw = dict(raw or {})
		problems: list[str] = []
		owner = str(raw.get("owner") or "").strip()
		if not owner:
			problems.append("A goal works for one person: name its owner.")
		goal = " ".join(str(raw.get("goal") or "").split())
		if not goal:
			problems.append(
				"Say the goal in a sentence, e.g. 'tell me each Monday which items run out within two weeks'."
			)
		elif len(goal) > MAX_GOAL_CHARS:
			problems.append(f"Say the goal in at most {MAX_GOAL_CHARS} characters.")
		try:
			schedule = Schedule.from_dict(raw.get("schedule"))
		except ScheduleError as exc:
			problems.append(str(exc))
			schedule = Schedule()
		may_do = str(raw.get("may_do") or "report").strip().lower()
		if may_do not in MAY_DO:
			problems.append(
				"A goal may 'report' what it finds, or also 'propose' the next step for you to confirm."
			)
		delivery = tuple(
			dict.fromkeys(str(d).strip().lower() for d in raw.get("delivery") or ("notification",))
		)
		unknown = [d for d in delivery if d not in DELIVERY]
		if unknown or not delivery:
			problems.append(
				f"Findings go to one or more of: {', '.join(DELIVERY)}; not {', '.join(unknown) or 'nowhere'}."
			)
		watches = []
		for index, item in enumerate(raw.get("watches") or ()):
			item = item if isinstance(item, dict) else {"kind": item}
			spec = WatchSpec(str(item.get("kind") or ""), dict(item.get("params") or {}))
			problem = check_watch(spec)
			if problem:
				problems.append(f"Watch {index + 1}: {problem}")
			else:
				watches.append(spec)
		if not raw.get("watches"):
			problems.append(
				"A goal needs at least one watch (what to compute), e.g. stock_cover or overdue_customers."
			)
		elif len(raw["watches"]) > MAX_WATCHES:
			problems.append(f"A goal keeps at most {MAX_WATCHES} watches; split it into two goals.")
		caps = Caps(
			run_tokens=_int(raw, "run_tokens", DEFAULT_RUN_TOKENS, problems),
			month_tokens=_int(raw, "month_tokens", DEFAULT_MONTH_TOKENS, problems),
			run_cost=_float(raw, "run_cost", problems),
			month_cost=_float(raw, "month_cost", problems),
		)
		problems += caps.problems()
		max_steps = _int(raw, "max_steps", 3, problems)
		if not 1 <= max_steps <= MAX_STEPS:
			problems.append(f"A run takes 1 to {MAX_STEPS} model steps, not {max_steps}.")
		proposal_days = _int(raw, "proposal_days", 7, problems)
		if not 1 <= proposal_days <= 30:
			problems.append(f"Prepared proposals stay open 1 to 30 days, not {proposal_days}.")
		if problems:
			raise GoalError(problems)
		return cls(
			owner=owner,
			goal=goal,
			watches=tuple(watches),
			schedule=schedule,
			company=(str(raw.get("company") or "").strip() or None),
			may_do=may_do,
			delivery=delivery,
			caps=caps,
			max_steps=max_steps,
			proposal_days=proposal_days,
			title=" ".join(str(raw.get("title") or "").split())[:140],
			name=raw.get("name") or None,
			active=bool(raw.get("active", True)),
		)

	def to_dict(self) -> dict:
		return {
			"name": self.name,
			"owner": self.owner,
			"title": self.label,
			"goal": self.goal,
			"watches": [w.to_dict() for w in self.watches],
			"schedule": self.schedule.to_dict(),
			"company": self.company,
			"may_do": self.may_do,
			"delivery": list(self.delivery),
			"run_tokens": self.caps.run_tokens,
			"month_tokens": self.caps.month_tokens,
			"run_cost": self.caps.run_cost,
			"month_cost": self.caps.month_cost,
			"max_steps": self.max_steps,
			"proposal_days": self.proposal_days,
			"active": self.active,
		}


def short_title(goal: str, limit: int = 70) -> str:
	text = " ".join((goal or "").split())
	if len(text) <= limit:
		return text
	return text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _int(raw: dict, key: str, default: int, problems: list[str]) -> int:
	value = raw.get(key)
	if value in (None, ""):
		return default
	try:
		number = float(value)
	except (TypeError, ValueError):
		problems.append(f"{key.replace('_', ' ').capitalize()} must be a whole number, not {value!r}.")
		return default
	if not number.is_integer():
		problems.append(f"{key.replace('_', ' ').capitalize()} must be a whole number, not {value!r}.")
	return int(number)


def _float(raw: dict, key: str, problems: list[str]) -> float:
	value = raw.get(key)
	if value in (None, ""):
		return 0.0
	try:
		return float(value)
	except (TypeError, ValueError):
		problems.append(f"{key.replace('_', ' ').capitalize()} must be a number, not {value!r}.")
		return 0.0
