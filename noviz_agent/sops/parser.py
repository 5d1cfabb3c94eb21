"""Procedure text → a tree of numbered lines, with every problem reported by line number.

A procedure is plain text, one step per line. Indentation (a tab or a fixed number of
spaces per level) puts steps under a condition: a line ending in ':' that starts with
'If' (or 'When'), optionally followed at the same level by 'Otherwise:' / 'Else:'.
Leading numbering or bullets ('1.', '-', '*') are ignored; blank lines and lines starting
with '#' are skipped. A step may pin its action explicitly with a trailing '[tool.name]'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CONDITION = re.compile(r"^(?:if|when)\s+(?P<condition>.+?)\s*:$", re.IGNORECASE)
OTHERWISE = re.compile(r"^(?:otherwise|else)\s*,?\s*:$", re.IGNORECASE)
BULLET = re.compile(r"^(?:\d+[.)]\s+|[-*•]\s+)")
PIN = re.compile(r"\s*\[(?P<action>[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*)\]\s*\.?$")


@dataclass(frozen=True)
class Problem:
	"""One thing wrong with a procedure, at a line the administrator can find in the form."""

	line: int
	message: str

	def __str__(self) -> str:
		return f"Line {self.line}: {self.message}"


class ProcedureError(ValueError):
	"""A procedure that cannot run; `problems` lists each one with its line number."""

	def __init__(self, problems: list[Problem]):
		self.problems = list(problems)
		super().__init__("; ".join(str(p) for p in self.problems))


@dataclass(eq=False)
class Line:
	"""One step or condition of a procedure, by its line number in the text."""

	number: int
	text: str
	kind: str  # "step" | "if" | "else"
	depth: int
	condition: str = ""
	pin: str | None = None
	children: list[Line] = field(default_factory=list)
	parent: Line | None = field(default=None, repr=False)

	def describe(self) -> str:
		return f"{self.number}: {self.text}"


@dataclass
class Procedure:
	"""A parsed procedure: the top-level lines and every line by number."""

	title: str
	body: list[Line]
	lines: dict[int, Line]
	text: str

	def steps(self) -> list[Line]:
		"""The lines that run an action (not conditions), in document order."""
		return [line for line in self.lines.values() if line.kind == "step"]

	def first(self) -> Line | None:
		return self.body[0] if self.body else None

	def numbered(self) -> str:
		"""The procedure with line numbers and its indentation, as the model reads it."""
		return "\n".join(f"{n:>3}  {'    ' * line.depth}{line.text}" for n, line in self.lines.items())


def _indent(raw: str) -> tuple[str, str]:
	stripped = raw.lstrip(" \t")
	return raw[: len(raw) - len(stripped)], stripped.rstrip()


def parse(text: str, title: str = "") -> Procedure:
	"""Parse a procedure, or raise ProcedureError naming every problem with its line."""
	found: list[Problem] = []
	lines: dict[int, Line] = {}
	body: list[Line] = []
	stack: list[Line] = []  # the open condition blocks, outermost first
	unit: str | None = None
	last: Line | None = None
	for number, raw in enumerate((text or "").splitlines(), start=1):
		indent, content = _indent(raw)
		if not content or content.startswith("#"):
			continue
		if " " in indent and "\t" in indent:
			found.append(Problem(number, "mixes tabs and spaces in its indentation; use one or the other."))
			continue
		if indent and unit is None:
			unit = indent
		if indent and (unit is None or len(indent) % len(unit) or indent[0] != unit[0]):
			found.append(
				Problem(
					number,
					f"is indented by {len(indent)} {'tab' if indent[0] == chr(9) else 'space'}(s), which is not a "
					f"whole number of levels ({len(unit or '')} per level, as first used); line it up with the "
					"steps above it.",
				)
			)
			continue
		depth = len(indent) // len(unit) if indent else 0
		if depth > len(stack):
			reason = (
				"is indented under a step that is not a condition; only lines under 'If ...:' or "
				"'Otherwise:' are indented."
				if last is None or last.kind == "step"
				else "is indented more than one level deeper than the line above it."
			)
			found.append(Problem(number, reason))
			continue
		del stack[depth:]
		content = BULLET.sub("", content).strip()
		pin = None
		pinned = PIN.search(content)
		if pinned:
			pin = pinned.group("action")
			content = content[: pinned.start()].strip() or content
		kind, condition = "step", ""
		if OTHERWISE.match(content):
			kind = "else"
			siblings = stack[-1].children if stack else body
			if not siblings or siblings[-1].kind != "if":
				found.append(
					Problem(
						number, "'Otherwise:' must follow the steps of an 'If ...:' at the same indentation."
					)
				)
				continue
		elif match := CONDITION.match(content):
			kind, condition = "if", match.group("condition")
		elif content.endswith(":"):
			found.append(
				Problem(
					number,
					"ends with ':' but is not a condition; start it with 'If' (e.g. 'If the order is delivered:') "
					"or remove the colon.",
				)
			)
			continue
		line = Line(number, content, kind, depth, condition, pin, parent=stack[-1] if stack else None)
		(stack[-1].children if stack else body).append(line)
		lines[number] = line
		if kind in ("if", "else"):
			stack.append(line)
		last = line
	for line in lines.values():
		if line.kind in ("if", "else") and not line.children:
			found.append(Problem(line.number, f"'{line.text}' has no indented steps under it."))
	if not lines and not found:
		found.append(Problem(1, "the procedure has no steps; write one step per line."))
	if found:
		raise ProcedureError(sorted(found, key=lambda p: p.line))
	return Procedure(title=title, body=body, lines=lines, text=text)


def step_texts(text: str) -> list[tuple[int, str, str | None]]:
	"""(line number, text, pinned action) of every line that reads as a step, even in a broken procedure."""
	found = []
	for number, raw in enumerate((text or "").splitlines(), start=1):
		content = BULLET.sub("", raw.strip()).strip()
		if not content or content.startswith("#") or content.endswith(":"):
			continue
		pinned = PIN.search(content)
		pin = pinned.group("action") if pinned else None
		found.append((number, content[: pinned.start()].strip() if pinned else content, pin))
	return found


def problems(text: str) -> list[Problem]:
	"""Every structural problem of a procedure (empty when it parses)."""
	try:
		parse(text)
	except ProcedureError as exc:
		return exc.problems
	return []


# --- moving through a procedure -----------------------------------------------------


def _siblings(line: Line, procedure: Procedure) -> list[Line]:
	return line.parent.children if line.parent is not None else procedure.body


def after(line: Line, procedure: Procedure) -> Line | None:
	"""The line that runs once `line` (and, for a condition, its whole block) is done."""
	siblings = _siblings(line, procedure)
	index = siblings.index(line) + 1
	# An 'Otherwise' block runs only instead of its 'If' block, never after it.
	while index < len(siblings) and siblings[index].kind == "else":
		index += 1
	if index < len(siblings):
		return siblings[index]
	if line.parent is None:
		return None
	return after(line.parent, procedure)


def branch(line: Line, value: bool, procedure: Procedure) -> Line | None:
	"""Where a condition leads: its first step when true; its 'Otherwise' block or what follows when false."""
	if value:
		return line.children[0]
	siblings = _siblings(line, procedure)
	index = siblings.index(line) + 1
	if index < len(siblings) and siblings[index].kind == "else":
		return siblings[index].children[0]
	return after(line, procedure)
