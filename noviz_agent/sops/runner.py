"""Running a procedure: the state step, the action step, and what happens when things fail.

State step: the controller decides what comes next — whether a condition holds, whether
the person's message answers the pending question or asks something else. Action step:
the controller extracts the parameters from memory and the person's answers; they are
checked (ids exist because they are looked up first, dates parse) and the action runs
through the gateway like any tool call, so writes become proposals the person confirms.

Faults: a failed call repeats the step; invalid input goes back to the step that supplied
it (the question is asked again); the same step more than `max_repeats` times in a row
ends the run with a message and a log entry; a question mid-procedure is answered from
knowledge and the run resumes at the pending step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from noviz_agent.engine import gateway
from noviz_agent.engine.gateway import ToolResult
from noviz_agent.sops import memory as mem
from noviz_agent.sops.actions import ASK, END, SEARCH, TELL, Action, ActionRepository
from noviz_agent.sops.controllers import Controller, View
from noviz_agent.sops.memory import Entry, RunState
from noviz_agent.sops.parser import Line, Procedure, after, branch
from noviz_agent.sops.values import InvalidValue, find_id, parse_date

MAX_REPEATS = 2
# A whole message of these words leaves the procedure (a word inside an answer never does).
STOP_WORDS = {"stop", "stop the procedure", "never mind", "nevermind", "abort", "quit"}
# A run never takes more steps than this in one turn, whatever the procedure says.
MAX_STEPS_PER_TURN = 40
INVALID_INPUT_MARKERS = ("not found", "does not exist", "do not fit its parameters", "not a valid", "invalid")


@dataclass
class Output:
	"""What one turn of a run produced for the person and the log."""

	state: RunState
	messages: list[str] = field(default_factory=list)
	results: list[ToolResult] = field(default_factory=list)
	log: list[str] = field(default_factory=list)

	@property
	def proposal(self) -> dict | None:
		return next((r.proposal for r in reversed(self.results) if r.status == "proposal"), None)

	@property
	def text(self) -> str:
		return "\n\n".join(m for m in self.messages if m)


def check_answer(question: str, answer: str) -> str | None:
	"""Why an answer cannot be used for what the step asks (a date, a document number); None if it can."""
	words = set(question.lower().replace("?", " ").replace(".", " ").split())
	if "date" in words:
		try:
			parse_date(answer)
		except InvalidValue as exc:
			return str(exc)
	elif words & {"number", "id"} and not find_id(answer):
		return (
			f"'{answer[:60]}' does not contain a document number; it looks like SAL-ORD-2026-00012 or "
			"HR-EMP-00003."
		)
	return None


def classify_failure(result: ToolResult) -> str:
	"""Why a call failed: the person's input was wrong, the system refused, or the API failed."""
	if result.status == "refused":
		return "refused"
	message = (result.error or "").lower()
	if not result.meta.get("exception") and any(marker in message for marker in INVALID_INPUT_MARKERS):
		return "invalid_input"
	return "api_error"


class Runner:
	"""Runs one parsed procedure for one session with one controller."""

	def __init__(
		self,
		procedure: Procedure,
		actions: dict[int, str],
		repository: ActionRepository,
		controller: Controller,
		session,
		*,
		sop: str = "",
		max_repeats: int = MAX_REPEATS,
	):
		self.procedure = procedure
		self.actions = actions
		self.repository = repository
		self.controller = controller
		self.session = session
		self.sop = sop or procedure.title
		self.max_repeats = max_repeats

	# --- entry points -------------------------------------------------------------------

	def start(self, message: str, matches: dict | None = None) -> Output:
		first = self.procedure.first()
		state = RunState(sop=self.sop, title=self.procedure.title, position=first.number if first else None)
		state.matches = dict(matches or {})
		state.add(Entry("answer", None, "person.request", observation=message))
		return self._advance(Output(state))

	def resume(self, state: RunState, message: str) -> Output:
		"""The person wrote while the run waits: an answer moves it on; a question is answered first."""
		out = Output(state)
		line = self.procedure.lines.get(state.position or -1)
		if state.status == mem.AWAITING_CONFIRMATION:
			out.messages.append(
				f"'{state.title}' is waiting for you to confirm or cancel the change proposed above."
			)
			return out
		if state.status != mem.AWAITING_ANSWER or line is None:
			return out
		if message.strip().lower().rstrip(".!") in STOP_WORDS:
			state.add(
				Entry(
					"answer", line.number, "person.answer", ok=False, observation=message, failure="stopped"
				)
			)
			return self._end(out, f"Stopped '{state.title}' as you asked. Nothing else was changed.")
		kind, reason = self.controller.classify(self._view(state, line, message=message), message)
		if kind == "question":
			return self._interrupt(out, line, message, reason)
		state.status = mem.RUNNING
		problem = check_answer(line.text, message)
		if problem:
			# The question is asked again (and counts as a repeat of that step).
			state.add(
				Entry(
					"answer",
					line.number,
					"person.answer",
					ok=False,
					observation=message,
					failure="invalid_input",
				)
			)
			out.messages.append(problem)
			return self._advance(out)
		state.add(Entry("answer", line.number, "person.answer", observation=message, reason=reason))
		state.position = self._next(line)
		return self._advance(out)

	def settled(self, state: RunState, confirmed: bool, result: ToolResult) -> Output:
		"""The person confirmed or cancelled the proposal the run was waiting on."""
		out = Output(state)
		line = self.procedure.lines.get(state.position or -1)
		if state.status != mem.AWAITING_CONFIRMATION or line is None:
			return out
		state.pending_token = None
		action = self.actions[line.number]
		if not confirmed:
			state.add(
				Entry(
					"settled", line.number, action, ok=False, failure="cancelled", reason="person cancelled"
				)
			)
			return self._end(
				out, f"You cancelled the change, so '{state.title}' stops here. Nothing was changed."
			)
		state.status = mem.RUNNING
		if result.ok:
			state.add(
				Entry("settled", line.number, action, args=result.args, observation=mem.short(result.data))
			)
			state.position = self._next(line)
		else:
			self._failed(out, line, action, result, sources=[])
		return self._advance(out)

	# --- the loop -----------------------------------------------------------------------

	def _advance(self, out: Output) -> Output:
		state = out.state
		for _ in range(MAX_STEPS_PER_TURN):
			if state.status != mem.RUNNING:
				return out
			line = self.procedure.lines.get(state.position) if state.position is not None else None
			if line is None:
				state.status, state.position = mem.COMPLETED, None
				return out
			if line.number not in state.reached:
				# Progress: a line never reached before starts every repeat count afresh.
				state.reached.append(line.number)
				state.attempts = {}
			if line.kind == "if":
				holds, reason = self.controller.condition(self._view(state, line), line)
				state.add(Entry("decision", line.number, "condition", observation=bool(holds), reason=reason))
				out.log.append(f"line {line.number}: {line.condition} -> {bool(holds)} ({reason})")
				state.position = self._number(branch(line, bool(holds), self.procedure))
				continue
			attempts = state.attempts.get(str(line.number), 0) + 1
			if attempts > self.max_repeats:
				return self._give_up(out, line)
			state.attempts[str(line.number)] = attempts
			self._step(out, line, self.repository.get(self.actions[line.number]))
		return self._end(out, f"'{state.title}' took more than {MAX_STEPS_PER_TURN} steps and was stopped.")

	def _step(self, out: Output, line: Line, action: Action) -> None:
		state = out.state
		view = self._view(state, line, action=action)
		args, reason = self.controller.arguments(view, line, action)
		if action.kind == ASK:
			question = str(args.get("question") or line.text)
			state.add(Entry("step", line.number, action.name, args={"question": question}, reason=reason))
			out.messages.append(question)
			state.status = mem.AWAITING_ANSWER
			return
		if action.kind == TELL:
			message = str(args.get("message") or line.text)
			state.add(Entry("step", line.number, action.name, args={"message": message}, reason=reason))
			out.messages.append(message)
			state.position = self._next(line)
			return
		if action.kind == END:
			state.add(Entry("step", line.number, action.name, reason=reason))
			state.status, state.position = mem.COMPLETED, None
			return
		tool = "knowledge.search" if action.kind == SEARCH else action.name
		sources = self._sources(state, args)
		try:
			args = self._checked(tool, args)
		except InvalidValue as exc:
			result = ToolResult(tool, args, "error", error=f"invalid input: {exc}")
			bad = [str(v) for v in exc.args[1:]]
			self._failed(
				out, line, action.name, result, self._sources(state, {"bad": bad}) if bad else sources
			)
			return
		if not self.session.may_use(tool):
			# Not granted is final for this person: asking the system again changes nothing.
			result = ToolResult(
				tool,
				args,
				"refused",
				error=f"the step '{line.text}' needs '{tool}', which your roles or the administrator's policy "
				"do not allow. Ask someone who may do it.",
			)
			self._failed(out, line, action.name, result, sources)
			return
		result = gateway.call_tool(self.session, tool, args)
		out.results.append(result)
		if result.status == "proposal":
			state.add(
				Entry(
					"step",
					line.number,
					action.name,
					args=args,
					observation="awaiting confirmation",
					reason=reason,
				)
			)
			state.status, state.pending_token = (
				mem.AWAITING_CONFIRMATION,
				(result.proposal or {}).get("token"),
			)
			out.messages.append(f"Please confirm or cancel the change below to continue '{state.title}'.")
			return
		if not result.ok:
			self._failed(out, line, action.name, result, sources)
			return
		state.add(
			Entry(
				"step", line.number, action.name, args=args, observation=mem.short(result.data), reason=reason
			)
		)
		if action.kind == SEARCH:
			out.messages.append(_passages_text(result.data))
		state.position = self._next(line)

	def _failed(self, out: Output, line: Line, action: str, result: ToolResult, sources: list[int]) -> None:
		state = out.state
		failure = classify_failure(result)
		state.add(
			Entry(
				"step",
				line.number,
				action,
				ok=False,
				args=result.args,
				observation=result.error,
				failure=failure,
			)
		)
		out.log.append(f"line {line.number}: {action} failed ({failure}): {result.error}")
		if failure == "refused":
			self._end(out, f"'{state.title}' cannot go on: {result.error}")
			return
		if failure == "invalid_input" and sources:
			# Back to the question that supplied the bad value; it is asked again.
			state.position = max(sources)
			out.messages.append(f"That did not work: {result.error}")
		# Otherwise the same step runs again (the repeat limit ends it if it keeps failing).

	def _interrupt(self, out: Output, line: Line, message: str, reason: str) -> Output:
		state = out.state
		result = gateway.call_tool(self.session, "knowledge.search", {"query": message})
		out.results.append(result)
		state.add(
			Entry(
				"interrupt",
				line.number,
				"knowledge.search",
				ok=result.ok,
				args={"query": message},
				observation=mem.short(result.data if result.ok else result.error),
				reason=reason,
			)
		)
		out.messages.append(
			_passages_text(result.data)
			if result.ok
			else "I could not look that up in the process documents right now."
		)
		question = next(
			(
				e.args.get("question")
				for e in reversed(state.memory)
				if e.line == line.number and e.kind == "step"
			),
			line.text,
		)
		out.messages.append(f"Back to '{state.title}': {question}")
		return out

	def _give_up(self, out: Output, line: Line) -> Output:
		last = next((e for e in reversed(out.state.memory) if e.kind == "step" and not e.ok), None)
		detail = f" The last error was: {last.observation}" if last and last.observation else ""
		message = (
			f"I could not complete '{out.state.title}': the step '{line.text}' would have run more than "
			f"{self.max_repeats} times in a row, so I stopped here. Nothing else was changed.{detail}"
		)
		out.state.add(Entry("ended", line.number, self.actions[line.number], ok=False, reason="repeat limit"))
		out.log.append(f"line {line.number}: repeat limit reached; procedure ended")
		return self._end(out, message)

	def _end(self, out: Output, message: str) -> Output:
		out.state.status, out.state.position = mem.ENDED, None
		out.messages.append(message)
		return out

	# --- helpers ------------------------------------------------------------------------

	def _next(self, line: Line) -> int | None:
		return self._number(after(line, self.procedure))

	@staticmethod
	def _number(line: Line | None) -> int | None:
		return line.number if line is not None else None

	def _view(self, state: RunState, line: Line, *, action: Action | None = None, message: str = "") -> View:
		return View(self.procedure, state, line, action, self.repository, message)

	@staticmethod
	def _sources(state: RunState, args: dict) -> list[int]:
		"""The question lines whose answers supplied these argument values."""
		values = [str(v).lower() for v in _leaves(args) if isinstance(v, str) and v.strip()]
		lines = []
		for entry in state.answers():
			text = str(entry.observation or "").lower()
			if entry.ok and entry.line is not None and any(v in text or text.strip() in v for v in values):
				lines.append(entry.line)
		return lines

	def _checked(self, tool: str, args: dict) -> dict:
		"""Arguments after the checks people's answers need: ids present, dates parse (as ISO)."""
		spec = self.session.registry.get(tool)
		required = (spec.parameters.get("required", ()) if spec else ()) or ()
		if "name" in required:
			name = str(args.get("name") or "").strip()
			if not name:
				raise InvalidValue("no record id was given; the id looks like SAL-ORD-2026-00012.")
			args = {**args, "name": find_id(name) or name}
		values = args.get("values")
		if isinstance(values, dict):
			checked = dict(values)
			for key, value in values.items():
				if key.endswith("date") and isinstance(value, str):
					try:
						checked[key] = parse_date(value)
					except InvalidValue as exc:
						raise InvalidValue(str(exc), value) from None
			args = {**args, "values": checked}
		return args


def _leaves(value):
	if isinstance(value, dict):
		for child in value.values():
			yield from _leaves(child)
	elif isinstance(value, list):
		for child in value:
			yield from _leaves(child)
	else:
		yield value


def _passages_text(data) -> str:
	passages = (data or {}).get("passages", []) if isinstance(data, dict) else []
	if not passages:
		return "The process documents say nothing about that."
	top = passages[0]
	return f"{top.get('content', '').strip()[:600]} [{top.get('source', '')}]"
