"""Run labelled questions through the real turn, grade each answer, and total the figures.

For every question: the person's session, the provider (a real model, the HTTP stub, or the
oracle), ``engine.turn.run_turn``, then the grade: the tools called (and whether one of the
labelled tools was among them, and among those offered), whether the expected figure, records
or value appear in the answer, whether every number in the answer is grounded in a tool result,
whether a refusal came exactly when one was due, tokens and seconds. A question succeeds when
its expectation is met, its numbers are grounded and the turn did not fail.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from noviz_agent.engine.responses import numbers_in_text
from noviz_agent.evaluation.expected import Expected, Facts, compute

QUESTIONS_FILE = Path(__file__).with_name("questions.json")
REFUSAL_WORDS = re.compile(
	r"\b(?:not (?:available|allowed|permitted)|no (?:permission|access)|(?:do|does) not have (?:permission|access)|"
	r"(?:can't|cannot|can not|unable to) (?:access|answer|read|view)|not authori[sz]ed|refused)\b",
	re.IGNORECASE,
)


class EvaluationError(Exception):
	"""The evaluation cannot run as asked (bad question file, unknown person); the message says what to do."""


def load_questions(path: Path | None = None) -> list[dict]:
	"""The labelled questions, checked for the fields every question needs."""
	path = Path(path or QUESTIONS_FILE)
	try:
		questions = json.loads(path.read_text(encoding="utf-8"))["questions"]
	except (OSError, ValueError, KeyError) as exc:
		raise EvaluationError(f"cannot read the questions in {path}: {exc}") from None
	seen = set()
	for number, question in enumerate(questions, 1):
		missing = {"id", "person", "question", "tools", "expect", "oracle"} - set(question)
		if missing:
			raise EvaluationError(f"question {number} in {path} lacks {', '.join(sorted(missing))}")
		if question["id"] in seen:
			raise EvaluationError(f"two questions in {path} share the id {question['id']!r}")
		seen.add(question["id"])
	return questions


@dataclass
class Grade:
	"""One question's result, as printed and totalled."""

	id: str
	person: str
	question: str
	expected: str
	kind: str
	tools_called: list[str] = field(default_factory=list)
	tool_ok: bool | None = None  # a labelled tool was called (None: no tool is the right choice)
	offered_ok: bool | None = None  # a labelled tool was offered by routing
	answer_ok: bool = False  # the expected figure / records / value / proposal / refusal
	refusal_ok: bool = False  # refused exactly when a refusal was due
	numbers: int = 0
	unsupported: int = 0
	tokens: int = 0
	seconds: float = 0.0
	error: str | None = None
	answer: str = ""

	@property
	def grounded(self) -> bool:
		return self.unsupported == 0

	@property
	def success(self) -> bool:
		return (
			self.answer_ok
			and self.refusal_ok
			and self.grounded
			and self.error is None
			and self.tool_ok is not False
		)


@dataclass
class Report:
	grades: list[Grade]
	provider: str

	def totals(self) -> dict:
		n = len(self.grades) or 1
		chosen = [g for g in self.grades if g.tool_ok is not None]
		offered = [g for g in self.grades if g.offered_ok is not None]
		numbers = sum(g.numbers for g in self.grades)
		return {
			"provider": self.provider,
			"questions": len(self.grades),
			"passed": sum(g.success for g in self.grades),
			"task_success_rate": sum(g.success for g in self.grades) / n,
			"tool_choice_accuracy": sum(bool(g.tool_ok) for g in chosen) / (len(chosen) or 1),
			"labelled_tool_offered": sum(bool(g.offered_ok) for g in offered) / (len(offered) or 1),
			"answer_correct_rate": sum(g.answer_ok for g in self.grades) / n,
			"refusal_correct_rate": sum(g.refusal_ok for g in self.grades) / n,
			"grounded_answer_rate": sum(g.grounded for g in self.grades) / n,
			"grounded_number_rate": (numbers - sum(g.unsupported for g in self.grades)) / numbers
			if numbers
			else 1.0,
			"tokens_per_turn": sum(g.tokens for g in self.grades) / n,
			"seconds_per_turn": sum(g.seconds for g in self.grades) / n,
			"errors": sum(g.error is not None for g in self.grades),
		}

	def to_dict(self) -> dict:
		return {
			"totals": self.totals(),
			"questions": [asdict(g) | {"success": g.success} for g in self.grades],
		}


@dataclass
class TurnRecord:
	"""What a runner hands back: the turn's outcome, whether data changed, what routing offered first."""

	outcome: Any
	written: bool = False
	offered: list[str] = field(default_factory=list)


# A turn runner runs one question as its person: question -> TurnRecord.
TurnRunner = Callable[[dict], TurnRecord]


def evaluate(
	questions: Iterable[dict],
	facts: Facts,
	run: TurnRunner,
	*,
	provider: str,
	echo: Callable[[str], None] | None = print,
) -> Report:
	"""Run and grade every question; ``echo`` gets one line per question and the totals."""
	grades = []
	for question in questions:
		expected = compute(question["expect"], facts)
		started = time.perf_counter()
		try:
			record = run(question)
		except Exception as exc:  # one broken question must not hide the others' figures
			grade = Grade(
				question["id"], question["person"], question["question"], expected.describe(), expected.kind
			)
			grade.error = f"{type(exc).__name__}: {exc}"
			grade.seconds = time.perf_counter() - started
		else:
			grade = grade_turn(question, expected, record)
		grades.append(grade)
		if echo:
			echo(format_grade(grade))
	report = Report(grades, provider)
	if echo:
		for line in format_totals(report.totals()):
			echo(line)
	return report


def grade_turn(question: dict, expected: Expected, record: TurnRecord) -> Grade:
	"""Grade one finished turn against its expectation."""
	response, log, written = record.outcome.response, record.outcome.log, record.written
	grade = Grade(
		question["id"], question["person"], question["question"], expected.describe(), expected.kind
	)
	called = log.get("tools_called") or []
	grade.tools_called = [f"{c['name']}:{c['status']}" for c in called]
	labelled = set(question["tools"])
	if labelled:
		grade.tool_ok = any(c["name"] in labelled for c in called)
		# Routing's first offer, before tools.search unlocked anything.
		grade.offered_ok = bool(labelled & set(record.offered))
	text = response.get("text") or ""
	visible = " ".join([text, *_card_texts(response)])
	grade.answer = " ".join(text.split())[:160]
	grade.numbers = sum(1 for w, v, d, s in numbers_in_text(text) if s or d or not 0 <= v <= 10)
	grade.unsupported = len(response.get("flags") or [])
	grade.tokens = int(log.get("prompt_tokens") or 0) + int(log.get("completion_tokens") or 0)
	grade.seconds = float(log.get("latency_ms") or 0) / 1000
	if response.get("type") == "error":
		grade.error = (response.get("error") or {}).get("message") or log.get("error") or "the turn failed"
	refused = _refused(response, called, text)
	if expected.kind == "refusal":
		# The oracle's calls name the tools that would reach the data the person may not see.
		forbidden = {name for name, _ in question["oracle"]["calls"]}
		leaked = any(c["status"] == "ok" and c["name"] in forbidden for c in called)
		grade.refusal_ok = refused and not leaked
		grade.answer_ok = grade.refusal_ok
		grade.error = None if grade.refusal_ok else grade.error  # an error that refuses is a refusal
		return grade
	grade.refusal_ok = not refused
	if expected.kind == "figure":
		grade.answer_ok = figure_present(expected.figure, visible)
	elif expected.kind == "records":
		grade.answer_ok = records_present(expected, visible, _table_texts(response))
	elif expected.kind == "value":
		grade.answer_ok = _contains(visible, expected.value or "")
	elif expected.kind == "proposal":
		proposed = [c["name"] for c in called if c["status"] == "proposal"]
		grade.answer_ok = response.get("type") == "proposal" and expected.tool in proposed and not written
	return grade


def figure_present(expected: float, text: str) -> bool:
	"""Whether ``text`` states ``expected`` to the precision it shows (5% for figures like 12.3k)."""
	for _, value, decimals, suffix in numbers_in_text(text):
		if suffix in ("k", "m", "b"):
			if abs(value - expected) <= abs(expected) * 0.05:
				return True
		elif suffix != "%" and abs(abs(value) - abs(expected)) <= 0.5 * 10 ** (-decimals) + 1e-9:
			return True
	return False


def records_present(expected: Expected, text: str, rows: list[str]) -> bool:
	"""Whether the answer names the expected records, and a table shows them rather than everything.

	A ranking's records must be in the text or the table's first rows; a listing's table must be
	mostly those records (at least 80% of its rows), so dumping every record does not count.
	"""
	wanted = expected.records
	if expected.ranked:
		rows = rows[: len(wanted)]
	found = [
		record for record in wanted if _contains(text, record) or any(_contains(row, record) for row in rows)
	]
	if not (found if expected.match == "any" else len(found) == len(wanted)):
		return False
	if rows and not expected.ranked:
		relevant = sum(1 for row in rows if any(_contains(row, record) for record in wanted))
		return relevant >= 0.8 * len(rows)
	return True


def _refused(response: dict, called: list[dict], text: str) -> bool:
	if response.get("type") == "refusal" or response.get("refusal"):
		return True
	if any(c["status"] == "refused" for c in called):
		return True
	return bool(REFUSAL_WORDS.search(text))


def _contains(text: str, needle: str) -> bool:
	return bool(needle) and needle.lower() in text.lower()


def _card_texts(response: dict) -> list[str]:
	return [f"{card.get('title', '')} {card.get('value', '')}" for card in response.get("cards") or []]


def _table_texts(response: dict) -> list[str]:
	table = response.get("table") or {}
	return [
		" ".join(str(v) for v in row.values()) for row in table.get("rows") or [] if isinstance(row, dict)
	]


def _mark(value: bool | None) -> str:
	return "n/a" if value is None else ("yes" if value else "NO")


def format_grade(grade: Grade) -> str:
	"""One line per question: verdict, tools, checks, tokens and time, and the answer's start."""
	verdict = "PASS" if grade.success else "FAIL"
	tools = ", ".join(grade.tools_called) or "none"
	line = (
		f"[{verdict}] {grade.id:<28} {grade.person:<9} tools: {tools} (labelled called {_mark(grade.tool_ok)}, "
		f"offered {_mark(grade.offered_ok)}) | expected {grade.kind} {grade.expected}: {_mark(grade.answer_ok)} | "
		f"numbers grounded {grade.numbers - grade.unsupported}/{grade.numbers} | refusal correct {_mark(grade.refusal_ok)}"
		f" | {grade.tokens} tokens, {grade.seconds:.2f} s"
	)
	if grade.error:
		line += f"\n       error: {grade.error[:200]}"
	elif not grade.success:
		line += f"\n       answer: {grade.answer}"
	return line


def format_totals(totals: dict) -> list[str]:
	return [
		f"{totals['questions']} questions, provider {totals['provider']}: {totals['passed']} passed",
		f"  task success rate      {totals['task_success_rate']:.3f}",
		f"  tool-choice accuracy   {totals['tool_choice_accuracy']:.3f}   (labelled tool offered by routing "
		f"{totals['labelled_tool_offered']:.3f})",
		f"  answer correct         {totals['answer_correct_rate']:.3f}   refusal correct {totals['refusal_correct_rate']:.3f}",
		f"  grounded-number rate   {totals['grounded_number_rate']:.3f}   (answers with every number grounded "
		f"{totals['grounded_answer_rate']:.3f})",
		f"  tokens per turn        {totals['tokens_per_turn']:.0f}",
		f"  seconds per turn       {totals['seconds_per_turn']:.2f}",
		f"  turns that failed      {totals['errors']}",
	]


# --- the in-memory run (``noviz-agent eval``) -------------------------------------------------


def memory_runner(
	provider_for: Callable[[dict], Any], *, today: date | None = None
) -> tuple[TurnRunner, Facts]:
	"""A runner over the seeded data in memory, one fresh connector per question, and its facts."""
	from noviz_agent.engine import turn
	from noviz_agent.engine.policy import allowed_tools
	from noviz_agent.engine.session import Person, Session
	from noviz_agent.evaluation import seed
	from noviz_agent.evaluation.expected import DataFacts
	from noviz_agent.tools import registry as shared_registry

	data = seed.build()
	registry = shared_registry()
	today = today or seed.TODAY

	def run(question: dict):
		persona = seed.PERSONAS.get(question["person"])
		if persona is None:
			raise EvaluationError(f"unknown person {question['person']!r}; known: {', '.join(seed.PERSONAS)}")
		connector = seed.memory_connector(persona, data)
		permissions = {entity: set(connector.permissions(entity)) for entity in connector.entities()}
		session = Session(
			person=Person(user=persona.user, roles=frozenset({persona.role}), full_name=persona.user),
			connector=connector,
			registry=registry,
			allowed=allowed_tools(registry, permissions, {persona.role}),
		)
		provider = provider_for(question)
		outcome = turn.run_turn(session, provider, question["question"], today=today)
		if getattr(provider, "remaining", 0):
			raise EvaluationError(
				f"the oracle had {provider.remaining} planned step(s) left: the turn ended early"
			)
		written = any(action in ("create", "update", "submit", "cancel") for action, _ in connector.calls)
		return TurnRecord(outcome, written, list(session.offer_order))

	run.registry = registry
	return run, DataFacts(data)
