"""Procedures as the site holds them: text parsed, every step resolved to an action, and chosen per request.

`compile_procedure` parses and matches every step; an unknown action is a Problem with its
line number, like malformed indentation, so the form shows all of them at once.
`choose` picks the procedure whose title and "applies when" text fit a request best, among
those the person's roles allow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from knowledge.embedding import stem, tokens
from noviz_agent.sops.matching import Match, Matcher
from noviz_agent.sops.parser import Problem, Procedure, ProcedureError, parse, problems, step_texts
from noviz_agent.sops.values import ID

# Weighted share of a request's words a procedure must use to be considered for it; the
# controller confirms a candidate (the model, or the baseline's stricter threshold).
MIN_APPLIES_SCORE = 0.45
BASELINE_APPLIES_SCORE = 0.75


@dataclass
class Compiled:
	"""A procedure ready to run: the parsed text and the action of each step, with its match."""

	name: str
	procedure: Procedure
	actions: dict[int, str]
	matches: dict[int, Match]

	def match_log(self) -> dict[str, dict]:
		return {str(line): match.to_dict() for line, match in self.matches.items()}


@dataclass(frozen=True)
class SopSpec:
	"""One procedure as stored: what it is called, when it applies, who it is for, and its text."""

	name: str
	title: str
	applies_when: str
	procedure: str
	roles: tuple[str, ...] = field(default_factory=tuple)
	enabled: bool = True


def compile_procedure(text: str, matcher: Matcher, *, title: str = "", name: str = "") -> Compiled:
	"""Parse and resolve every step, or raise ProcedureError listing each problem with its line."""
	procedure = parse(text, title)  # structural problems first: matching needs the lines
	unknown: list[Problem] = []
	actions: dict[int, str] = {}
	matches: dict[int, Match] = {}
	for line in procedure.steps():
		match = matcher.match(line.text, line.pin)
		if match is None:
			unknown.append(_unknown(line.number, line.text, line.pin, matcher))
			continue
		actions[line.number], matches[line.number] = match.action, match
	if unknown:
		raise ProcedureError(unknown)
	return Compiled(name or title, procedure, actions, matches)


def validate(text: str, matcher: Matcher) -> list[Problem]:
	"""Every problem of a procedure text, structure and unknown actions together, in line order."""
	found = problems(text)
	broken = {p.line for p in found}
	for number, step, pin in step_texts(text):
		if number not in broken and matcher.match(step, pin) is None:
			found.append(_unknown(number, step, pin, matcher))
	return sorted(found, key=lambda p: p.line)


def _unknown(number: int, step: str, pin: str | None, matcher: Matcher) -> Problem:
	if pin:
		return Problem(number, f"the action '{pin}' does not exist on this site.")
	closest = ", ".join(f"{n} ({s:.2f})" for n, s in matcher.closest(step))
	return Problem(
		number,
		f"'{step}' does not match any known action (closest: {closest}). Reword it, or name the action at "
		"the end in square brackets, e.g. [sales_order.get].",
	)


def _stems(text: str) -> set[str]:
	return {stem(word) for word in tokens(text)}


def choose(
	message: str, specs: list[SopSpec], roles, weights: dict[str, float] | None = None
) -> SopSpec | None:
	"""The enabled procedure the request fits best, if it fits well enough and the roles allow it.

	`weights` (word stem → weight, e.g. `Matcher.idf`) make generic business words ("order",
	"total") count less than the words that say what the person wants ("cancel", "leave").
	"""
	roles = set(roles or ())
	best, best_score = None, 0.0
	for spec in specs:
		if not spec.enabled or (spec.roles and not roles & set(spec.roles)):
			continue
		score = fit(message, spec, weights)
		if score > best_score:
			best, best_score = spec, score
	return best if best_score >= MIN_APPLIES_SCORE else None


def fit(message: str, spec: SopSpec, weights: dict[str, float] | None = None) -> float:
	"""How well a request fits a procedure, 0..1: the harmonic mean of two weighted shares.

	Precision: of the request's words, the share the title and "applies when" text use.
	Recall: of the title's words, the share the request uses (a request about customers'
	revenue shares "customer" with "Cancel a customer order" but not "cancel").
	"""
	said = {w for w in _stems(ID.sub(" ", message)) if not w.isdigit()}
	title = _stems(spec.title)
	if not said or not title:
		return 0.0
	wanted = _stems(f"{spec.title} {spec.applies_when}")
	# Words no action uses ("like", "please", "next") are not business vocabulary: they count little.
	weight = (lambda w: weights.get(w, 1.0)) if weights else (lambda w: 1.0)
	precision = sum(weight(w) for w in said & wanted) / sum(weight(w) for w in said)
	recall = sum(weight(w) for w in title & said) / sum(weight(w) for w in title)
	return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


__all__ = ["Compiled", "ProcedureError", "SopSpec", "choose", "compile_procedure", "fit", "validate"]
