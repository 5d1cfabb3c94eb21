"""One run of a standing goal, as its owner: stop checks, watches, what changed, and the model only then.

The run is a turn as the owner in everything that matters: the session is theirs (allowance, the
administrator's role policy, their permissions), every read and every write goes through the one
gateway, writes come back as proposals bound to the owner with a confirmation token, the model
is called through the same bounded loop, and the run leaves one interaction-log row (channel
"goal"). Most runs need no model at all: the watches are computed; only new or changed findings
are explained, and only then is the model called (after the goal's own caps and the site's
budgets are reserved). Runs of one goal never overlap (`Lock`); a failed run is tried once more,
then reported.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from noviz_agent.engine import loop, responses, turn
from noviz_agent.engine.errors import ProviderError, TokenLimitExceeded
from noviz_agent.engine.gateway import ToolResult
from noviz_agent.engine.provider import Provider, Usage
from noviz_agent.goals import digest as digests
from noviz_agent.goals.findings import Changes, Finding, compare, remember
from noviz_agent.goals.spec import GoalSpec
from noviz_agent.goals.watches import KINDS, WatchContext, WatchFailed, WatchRefused, needs, params_of
from noviz_agent.governance.budgets import BudgetExceeded, Spend
from noviz_agent.records import Rates, estimate_cost

CHANNEL = "goal"
MAX_FINDINGS_FOR_MODEL = 20
MAX_PROPOSALS = 3
LOCK_SECONDS = 30 * 60

PROMPT = """You work for {person} on their standing goal: "{goal}"{company}. Today is {today}.

The system has just computed what changed in the books since the goal's last run. The findings in the
next message are the only facts you have: every figure in them was computed by the system, so quote
figures as given, with their currency, and never compute or estimate new ones.

Write {person} a short note in plain text (at most five sentences): what changed, why it matters for the
goal, and what to do next. The findings themselves are listed for them already; do not repeat them as a
table. {may_do}"""

MAY_PROPOSE = """You may prepare at most {most} next steps with the tools offered. Each becomes a
proposal that {person} confirms or cancels; nothing is written until they confirm. Prepare one only where a
finding calls for it, with the values the finding gives (customer, item, quantity, company), and say in
your note what you prepared."""

MAY_REPORT = "This goal may only report: suggest next steps in words; you have no tools."


class Lock(Protocol):
	"""At most one holder per key at a time; a holder that dies frees the key after `seconds`."""

	def acquire(self, key: str, seconds: int) -> bool: ...

	def release(self, key: str) -> None: ...


class MemoryLock:
	"""A Lock in one process (tests, the benchmark); the site uses Redis."""

	def __init__(self):
		self.held: set[str] = set()

	def acquire(self, key: str, seconds: int) -> bool:
		if key in self.held:
			return False
		self.held.add(key)
		return True

	def release(self, key: str) -> None:
		self.held.discard(key)


class BudgetGate(Protocol):
	"""The site's budgets (the chat's own): hold a run's worst case, then settle what it spent."""

	def reserve(self, worst: Spend): ...

	def settle(self, held, usage: Usage) -> None: ...


@dataclass
class RunInputs:
	goal: GoalSpec
	session: object
	# Made only when the model is needed, so a run with nothing new never touches the provider.
	provider: Callable[[], Provider] | None
	today: dt.date
	memory: dict = field(default_factory=dict)
	month_spent: Spend = field(default_factory=Spend)
	rates: Rates = field(default_factory=Rates)
	owner_enabled: bool = True
	budget: BudgetGate | None = None
	base_url: str = ""


@dataclass
class RunOutcome:
	status: str  # "nothing_new" | "reported" | "stopped" | "failed" | "skipped"
	changes: Changes = field(default_factory=Changes)
	findings: list[Finding] = field(default_factory=list)
	digest: digests.Digest | None = None
	proposals: list[dict] = field(default_factory=list)
	model_calls: int = 0
	usage: Usage = field(default_factory=Usage)
	cost: float = 0.0
	error: str | None = None
	stop_reason: str | None = None
	memory: dict = field(default_factory=dict)
	log: dict = field(default_factory=dict)
	attempts: int = 1
	results: list[ToolResult] = field(default_factory=list)
	problems: list[str] = field(default_factory=list)

	@property
	def tokens(self) -> int:
		return self.usage.total_tokens

	@property
	def delivers(self) -> bool:
		"""Whether the owner is told about this run (a run with nothing new tells no one)."""
		return self.status in ("reported", "stopped", "failed")


class ModelFailed(Exception):
	"""The model could not explain the run; the computed outcome is kept for the retry's last word."""

	def __init__(self, message: str, outcome: RunOutcome):
		super().__init__(message)
		self.outcome = outcome


# --- stop checks ---------------------------------------------------------------------------------


def stop_reason(inputs: RunInputs) -> str | None:
	"""Why this goal must stop before it reads anything, in words for its owner; None when it may run."""
	goal, session = inputs.goal, inputs.session
	if not inputs.owner_enabled:
		return (
			f"The goal stopped because its owner {goal.owner} is disabled; it runs only as the person it works "
			"for. Once the user is enabled again, they can switch the goal back on."
		)
	tools, entities = needs(goal.watches)
	for tool in sorted(tools):
		if not session.may_use(tool):
			return (
				f"The goal stopped because {goal.owner} may no longer use {tool}, which its watches need (their "
				"roles or the administrator's policy changed). It can be switched on again once they may."
			)
	from noviz_agent.connectors.model import load_model

	model = load_model()
	for entity in sorted(entities):
		if "read" not in (session.connector.permissions(entity) or set()):
			doctype = model.entity(entity).doctype if entity in model.entities else entity
			return (
				f"The goal stopped because {goal.owner} can no longer read {doctype}, which its watches need "
				"(a role was removed). It can be switched on again once they can."
			)
	return None


def _month_problem(goal: GoalSpec, spent: Spend, worst: Spend) -> str | None:
	caps = goal.caps
	if caps.month_tokens and spent.tokens + worst.tokens > caps.month_tokens:
		return (
			f"The goal stopped because this month's model budget is used up: {spent.tokens:,} of "
			f"{caps.month_tokens:,} tokens spent, and a run may take {worst.tokens:,}. Raise the goal's monthly cap "
			"or switch it on again next month; nothing was sent to the model."
		)
	if caps.month_cost and spent.money + worst.money > caps.month_cost + 1e-9:
		return (
			f"The goal stopped because this month's model budget is used up: {spent.money:,.4f} of "
			f"{caps.month_cost:,.4f} spent, and a run may cost {worst.money:,.4f}. Raise the goal's monthly cap "
			"or switch it on again next month; nothing was sent to the model."
		)
	return None


def run_tokens(goal: GoalSpec, rates: Rates) -> int:
	"""The most tokens one run may use: the run's token cap, lowered by its cost cap at the dearer rate."""
	tokens = goal.caps.run_tokens
	dearest = max(rates.prompt, rates.completion)
	if goal.caps.run_cost and dearest:
		tokens = min(tokens, int(goal.caps.run_cost / dearest * 1_000_000))
	return tokens


def worst_case(goal: GoalSpec, rates: Rates) -> Spend:
	tokens = run_tokens(goal, rates)
	return Spend(tokens, round(tokens * max(rates.prompt, rates.completion) / 1_000_000, 6))


# --- the run ---------------------------------------------------------------------------------------


def _base_log(goal: GoalSpec) -> dict:
	return {
		**turn.base_log(goal.owner, f"[goal] {goal.label}"),
		"modules": ["goals"],
		"response_type": "text",
		"channel": CHANNEL,
	}


def compute(inputs: RunInputs) -> tuple[list[Finding], set[str], list[str], WatchContext]:
	"""Every watch's findings as the owner: (findings, watches computed, problems, the context with its calls)."""
	goal = inputs.goal
	ctx = WatchContext(inputs.session, goal.company, inputs.today)
	findings, computed, problems = [], set(), []
	for spec in goal.watches:
		kind = KINDS[spec.kind]
		try:
			findings.extend(kind.evaluate(ctx, params_of(spec)))
			computed.add(spec.kind)
		except WatchRefused:
			raise
		except WatchFailed as exc:
			problems.append(f"{kind.title}: {exc}")
	if goal.watches and not computed:
		raise WatchFailed("No watch could be computed: " + " ".join(problems))
	return findings, computed, problems, ctx


def _proposal_tools(goal: GoalSpec, session, reported: list[Finding]) -> list[str]:
	if goal.may_do != "propose":
		return []
	wanted = {f.watch for f in reported}
	tools = [t for spec in goal.watches if spec.kind in wanted for t in KINDS[spec.kind].proposes]
	return [t for t in dict.fromkeys(tools) if session.may_use(t)]


def _messages(goal: GoalSpec, session, changes: Changes, tools: list[str], today: dt.date) -> list[dict]:
	person = getattr(session.person, "full_name", "") or goal.owner
	may_do = MAY_PROPOSE.format(most=MAX_PROPOSALS, person=person) if tools else MAY_REPORT
	system = PROMPT.format(
		person=person,
		goal=goal.goal,
		company=f" for {goal.company}" if goal.company else "",
		today=today.isoformat(),
		may_do=may_do,
	)
	payload = {
		"new": [f.for_model() for f in changes.new[:MAX_FINDINGS_FOR_MODEL]],
		"changed": [f.for_model() for f in changes.changed[:MAX_FINDINGS_FOR_MODEL]],
		"no_longer": [e.get("title") for e in changes.resolved[:MAX_FINDINGS_FOR_MODEL]],
	}
	return [
		{"role": "system", "content": system},
		{
			"role": "user",
			"content": "Findings of this run:\n" + json.dumps(payload, default=str, ensure_ascii=False),
		},
	]


def run_once(inputs: RunInputs) -> RunOutcome:
	"""One attempt; raises on a fault (the caller tries once more), ModelFailed when only the model failed."""
	started = time.perf_counter()
	goal, session = inputs.goal, inputs.session
	log = _base_log(goal)
	outcome = RunOutcome("nothing_new", memory=inputs.memory, log=log)
	reason = stop_reason(inputs)
	if reason:
		return _stopped(outcome, reason, started)
	# The run is already a background job: an analysis is computed in it, never queued again.
	session.enqueue_analysis = None
	try:
		findings, computed, problems, ctx = compute(inputs)
	except WatchRefused as exc:
		return _stopped(
			outcome, f"The goal stopped because its owner was refused what it reads: {exc}", started
		)
	outcome.findings, outcome.problems = findings, problems
	outcome.results = list(ctx.calls)
	changes = compare(findings, inputs.memory, computed, inputs.today.isoformat())
	outcome.changes = changes
	log["tools_called"] = loop.tool_calls_for_log(outcome.results)
	explanation, proposals, flags = "", [], []
	if changes.reported and inputs.provider is not None:
		worst = worst_case(goal, inputs.rates)
		over = _month_problem(goal, inputs.month_spent, worst)
		if over:
			return _stopped(outcome, over, started)
		try:
			held = inputs.budget.reserve(worst) if inputs.budget is not None else None
		except BudgetExceeded as exc:
			return _stopped(outcome, f"The goal stopped: {exc}", started)
		try:
			explanation, proposals, flags = _explain(inputs, outcome, changes, worst.tokens)
		finally:
			if inputs.budget is not None:
				inputs.budget.settle(held, outcome.usage)
			outcome.cost = estimate_cost(
				outcome.usage.prompt_tokens,
				outcome.usage.cached_tokens,
				outcome.usage.completion_tokens,
				inputs.rates,
			)
			log.update(
				prompt_tokens=outcome.usage.prompt_tokens,
				cached_tokens=outcome.usage.cached_tokens,
				completion_tokens=outcome.usage.completion_tokens,
				tools_called=loop.tool_calls_for_log(outcome.results),
			)
	outcome.memory = remember(inputs.memory, changes, inputs.today.isoformat())
	if changes.anything or problems:
		outcome.status = "reported"
		outcome.proposals = proposals
		outcome.digest = digests.build(
			goal,
			changes,
			explanation=explanation,
			proposals=proposals,
			problems=problems,
			base_url=inputs.base_url,
		)
		outcome.digest.response["flags"] = flags
		log["response_type"] = outcome.digest.response["type"]
	log["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
	return outcome


def _explain(
	inputs: RunInputs, outcome: RunOutcome, changes: Changes, max_tokens: int
) -> tuple[str, list, list]:
	"""The model's note and the proposals it prepared, through the turn's loop and gateway."""
	goal, session, log = inputs.goal, inputs.session, outcome.log
	tools = _proposal_tools(goal, session, changes.reported)
	session.limits = dataclasses.replace(
		session.limits,
		max_steps=goal.max_steps,
		max_tokens=max_tokens,
		proposal_ttl_seconds=goal.proposal_days * 24 * 3600,
	)
	session.offered = set(tools)
	session.offer_order = list(tools)
	log["tools_offered"] = list(tools)
	try:
		provider = inputs.provider()
	except Exception as exc:  # not configured, or unreachable: the findings still go out without a note
		log["error"] = f"{type(exc).__name__}: {exc}"
		raise ModelFailed(str(exc), outcome) from exc
	result = loop.run(session, provider, _messages(goal, session, changes, tools, inputs.today))
	outcome.model_calls += result.model_calls
	outcome.usage = outcome.usage + result.usage
	outcome.results.extend(result.results)
	log.update(steps=result.steps, guards=result.guards, model=result.model)
	made = [r for r in result.results if r.status == "proposal"]
	proposals = [{**responses.proposal_block(r), "conversation": session.conversation or ""} for r in made]
	facts = ToolResult("goals.findings", {}, "ok", data=[f.for_model() for f in changes.reported])
	flags = responses.unsupported_numbers(result.text, [facts, *outcome.results])
	if isinstance(result.error, ProviderError):
		log["error"] = f"ProviderError: {result.error}"
		raise ModelFailed(str(result.error), outcome)
	if result.error is not None:
		# A bound of the run (its steps, its token cap): the computed findings still go out, with why the
		# note is short.
		outcome.problems.append(
			"The agent's note was cut short: "
			+ (
				"this run's token cap was reached."
				if isinstance(result.error, TokenLimitExceeded)
				else str(result.error)
			)
		)
		log["error"] = f"{type(result.error).__name__}: {result.error}"
	return result.text, proposals[:MAX_PROPOSALS], flags


def _stopped(outcome: RunOutcome, reason: str, started: float) -> RunOutcome:
	outcome.status = "stopped"
	outcome.stop_reason = reason
	outcome.log.update(response_type="refusal", error=f"stopped: {reason}")
	outcome.log["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
	return outcome


def lock_key(goal: GoalSpec) -> str:
	return f"goal:{goal.name or goal.owner + ':' + goal.goal}"


def execute(inputs: RunInputs, lock: Lock) -> RunOutcome:
	"""A run with its guards: never two at once for one goal, a failure tried once more and then reported."""
	key = lock_key(inputs.goal)
	if not lock.acquire(key, LOCK_SECONDS):
		outcome = RunOutcome("skipped", memory=inputs.memory, log=_base_log(inputs.goal))
		outcome.error = "The goal's previous run is still going; this one was skipped."
		return outcome
	try:
		failure = None
		for attempt in (1, 2):
			try:
				outcome = run_once(inputs)
				outcome.attempts = attempt
				return outcome
			except ModelFailed as exc:
				failure = exc
				if attempt == 2:
					return _unexplained(exc, inputs)
			except Exception as exc:  # a bug or an outage: tried once more, then told to the owner
				failure = exc
				if attempt == 2:
					return _failed(inputs, exc)
		raise AssertionError(failure)  # not reached: the second attempt returns
	finally:
		lock.release(key)


def _unexplained(exc: ModelFailed, inputs: RunInputs) -> RunOutcome:
	"""Twice the model failed: the computed findings still reach the owner, with what went wrong."""
	outcome = exc.outcome
	outcome.attempts = 2
	outcome.error = f"The model failed twice: {exc}"
	outcome.problems.append(
		"The agent could not write its note or prepare next steps (the model failed twice); the findings "
		"above were computed and are complete."
	)
	outcome.memory = remember(inputs.memory, outcome.changes, inputs.today.isoformat())
	outcome.status = "reported"
	outcome.digest = digests.build(
		inputs.goal, outcome.changes, problems=outcome.problems, base_url=inputs.base_url
	)
	outcome.log["response_type"] = outcome.digest.response["type"]
	return outcome


def _failed(inputs: RunInputs, exc: Exception) -> RunOutcome:
	return failed(inputs.goal, exc, inputs.memory)


def failed(goal: GoalSpec, exc: Exception, memory: dict | None = None, attempts: int = 2) -> RunOutcome:
	"""The outcome of a run that could not be done; the owner is told, nothing is remembered."""
	outcome = RunOutcome("failed", memory=memory or {}, log=_base_log(goal), attempts=attempts)
	outcome.error = f"{type(exc).__name__}: {exc}"
	outcome.log.update(response_type="error", error=outcome.error + "\n" + traceback.format_exc(limit=5))
	return outcome


def stopped(goal: GoalSpec, reason: str, memory: dict | None = None) -> RunOutcome:
	"""The outcome of a goal that may not run any more, with the reason its owner reads."""
	return _stopped(
		RunOutcome("nothing_new", memory=memory or {}, log=_base_log(goal)), reason, time.perf_counter()
	)
