"""Controllers: who decides the state step and fills the action step.

`BaselineController` follows the text line by line by fixed rules: every message is the
answer to the pending question, conditions are read by `conditions.evaluate`, arguments
come from the newest matching answer or lookup. It is the evaluation's baseline and the
fallback when no model is configured. `ModelController` asks the model (any `Provider`)
for each decision through one small function call, and keeps the model's short reason; a
reply it cannot use falls back to the baseline for that decision, and the reason says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol

from noviz_agent.engine.llm import Usage
from noviz_agent.sops import conditions
from noviz_agent.sops.actions import ASK, SEARCH, TELL, TOOL, Action, ActionRepository
from noviz_agent.sops.memory import RunState
from noviz_agent.sops.parser import Line, Procedure
from noviz_agent.sops.values import find_field, find_id, mentions

LEADS = (
	"ask the customer for",
	"ask the employee for",
	"ask the supplier for",
	"ask the person for",
	"ask them for",
	"ask for",
	"ask the customer",
	"ask the employee",
	"ask the person",
	"ask",
	"tell the customer that",
	"tell the employee that",
	"tell the person that",
	"tell the customer",
	"tell the employee",
	"tell the person",
	"tell them",
	"tell",
	"let the customer know that",
	"let the person know that",
	"let the customer know",
	"let the person know",
	"search the knowledge base for",
	"search the process documents for",
	"search for",
)


@dataclass
class View:
	"""What a controller may look at for one decision."""

	procedure: Procedure
	state: RunState
	line: Line
	action: Action | None
	repository: ActionRepository
	message: str = ""


class Controller(Protocol):
	name: str

	def classify(self, view: View, message: str) -> tuple[str, str]: ...

	def condition(self, view: View, line: Line) -> tuple[bool, str]: ...

	def arguments(self, view: View, line: Line, action: Action) -> tuple[dict, str]: ...


def strip_lead(text: str) -> str:
	"""A step without its instruction verb: 'Ask for the order number.' → 'the order number'."""
	lower = text.lower()
	for lead in LEADS:
		if lower.startswith(lead + " "):
			text = text[len(lead) + 1 :]
			break
	return text.strip().rstrip(".")


def question_for(line: Line) -> str:
	rest = strip_lead(line.text)
	return f"Please tell me {rest}." if rest else line.text


def message_for(line: Line) -> str:
	rest = strip_lead(line.text)
	return (rest[:1].upper() + rest[1:] + ".") if rest else line.text


class BaselineController:
	"""Line by line, fixed rules; no model."""

	name = "baseline"

	def classify(self, view: View, message: str) -> tuple[str, str]:
		return "answer", "rule: every message answers the pending question"

	def condition(self, view: View, line: Line) -> tuple[bool, str]:
		return conditions.evaluate(line.condition, view.state.memory)

	def arguments(self, view: View, line: Line, action: Action) -> tuple[dict, str]:
		return rule_arguments(view, line, action), "rule"


def _answer_for(view: View, words: str) -> str | None:
	"""The newest answer to a question whose text mentions these words."""
	asked = {e.line: e for e in view.state.memory if e.kind == "step" and e.action == "person.ask"}
	for entry in reversed(view.state.answers()):
		step = asked.get(entry.line)
		if step is not None and mentions(step.args.get("question", ""), words):
			return str(entry.observation)
	return None


def _looked_up(view: View, entity: str) -> dict | None:
	for entry in reversed(view.state.memory):
		if (
			entry.kind == "step"
			and entry.ok
			and entry.action == f"{entity}.get"
			and isinstance(entry.observation, dict)
		):
			return entry.observation
	return None


def _named_in_lookups(view: View, entity: str):
	for entry in reversed(view.state.memory):
		if entry.kind in ("step", "settled") and entry.ok and isinstance(entry.observation, (dict, list)):
			found = find_field(entry.observation, entity)
			if found:
				return found
	return None


def rule_arguments(view: View, line: Line, action: Action) -> dict:
	"""Arguments by fixed rules: a looked-up record, a field of a lookup, or the matching answer."""
	if action.kind == ASK:
		return {"question": question_for(line)}
	if action.kind == TELL:
		return {"message": message_for(line)}
	if action.kind == SEARCH:
		return {"query": strip_lead(line.text)}
	if action.kind != TOOL:
		return {}
	entity = action.entity or ""
	if "name" in action.required:
		looked = _looked_up(view, entity) if action.verb != "get" else None
		name = (looked or {}).get("name") or _named_in_lookups(view, entity)
		if not name:
			answer = _answer_for(view, entity) or _answer_for(view, entity.split("_")[-1])
			name = (find_id(answer) or answer) if answer else None
		return {"name": name} if name else {}
	if "values" in action.required:
		return {"values": _values(view, entity)}
	return {}


def _values(view: View, entity: str) -> dict:
	"""Values for a new record: each asked field from the answer whose question names it, links from lookups."""
	values: dict = {}
	asked = [e for e in view.state.memory if e.kind == "step" and e.action == "person.ask"]
	questions = {e.line: e.args.get("question", "") for e in asked}
	fields = _fields(view, entity)
	for name in fields:
		looked = _looked_up(view, name)
		if looked and looked.get("name"):
			values[name] = looked["name"]
			continue
		for answer in reversed(view.state.answers()):
			if answer.line in questions and mentions(questions[answer.line], name):
				values[name] = str(answer.observation).strip()
				break
	return values


def _fields(view: View, entity: str) -> list[str]:
	"""The fields a new record of the entity takes, from its create tool's schema."""
	action = view.repository.get(f"{entity}.create")
	values = ((action.parameters if action else {}).get("properties") or {}).get("values") or {}
	return list(values.get("properties") or {})


# --- the model-driven controller ----------------------------------------------------

DECIDE = "sop_decide"
ARGUMENTS = "sop_arguments"
SYSTEM = (
	"You run a written operating procedure for a person, one decision at a time. Read the procedure, the "
	"memory of what was done and observed, and the task; answer only by calling the function you are "
	"given, with a one-sentence reason. Never invent ids, dates or amounts: take them from the memory "
	"or the person's answers."
)


def _schema(name: str, description: str, properties: dict) -> dict:
	return {
		"type": "function",
		"function": {
			"name": name,
			"description": description,
			"parameters": {
				"type": "object",
				"properties": {**properties, "reason": {"type": "string"}},
				"required": [*properties, "reason"],
				"additionalProperties": False,
			},
		},
	}


def prompt(view: View, task: str) -> str:
	"""The state or action step as text: procedure, memory as JSON, the current line and the task."""
	memory = [
		{k: v for k, v in vars(e).items() if v not in ("", None, {}) or k == "ok"} for e in view.state.memory
	]
	return (
		f"Procedure '{view.procedure.title}':\n{view.procedure.numbered()}\n\n"
		f"Memory (JSON, oldest first):\n{json.dumps(memory, default=str, ensure_ascii=False)}\n\n"
		f"Current line {view.line.number}: {view.line.text}\n"
		f"Task: {task}"
	)


class ModelController:
	"""State and action steps decided by a model; the baseline covers replies that cannot be used."""

	name = "model"

	def __init__(self, provider, *, timeout: float = 30.0):
		self.provider = provider
		self.timeout = timeout
		self.fallback = BaselineController()
		self.fallbacks = 0
		# What the model calls cost, for the turn's log and budget.
		self.usage = Usage()
		self.model = ""

	def _ask(self, view: View, task: str, tool: dict) -> tuple[dict | None, str]:
		messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt(view, task)}]
		try:
			reply = self.provider.complete(messages, [tool], timeout=self.timeout)
		except Exception as exc:  # a provider fault must not break the run: the baseline decides this step
			return None, f"model unavailable ({type(exc).__name__}); rule used"
		self.usage, self.model = self.usage + reply.usage, reply.model or self.model
		call = next((c for c in reply.tool_calls if c.arguments is not None), None)
		if call is None or call.name.replace(".", "__") != tool["function"]["name"]:
			return None, "model reply unusable; rule used"
		return call.arguments, str(call.arguments.get("reason", ""))[:300]

	def applies(self, message: str, spec) -> bool:
		"""Whether a request is a case for this procedure (a candidate the lexical match proposed)."""
		task = (
			f"A person wrote: {json.dumps(message, ensure_ascii=False)}. Is this a case for the procedure "
			f"'{spec.title}', which applies when: {spec.applies_when}"
		)
		messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]
		tool = _schema(DECIDE, "Say whether the procedure applies.", {"choice": {"enum": ["yes", "no"]}})
		try:
			reply = self.provider.complete(messages, [tool], timeout=self.timeout)
		except Exception:  # without the model, only the lexical candidate speaks for it
			return True
		self.usage, self.model = self.usage + reply.usage, reply.model or self.model
		call = next((c for c in reply.tool_calls if c.arguments is not None), None)
		return call is None or call.arguments.get("choice") != "no"

	def classify(self, view: View, message: str) -> tuple[str, str]:
		task = (
			f"The procedure asked the person a question at line {view.line.number}. Their message is: "
			f"{json.dumps(message, ensure_ascii=False)}. Is it the answer to that question, or a different "
			"question of theirs to answer first?"
		)
		tool = _schema(DECIDE, "Say what comes next.", {"choice": {"enum": ["answer", "question"]}})
		args, reason = self._ask(view, task, tool)
		if args is None or args.get("choice") not in ("answer", "question"):
			self.fallbacks += 1
			return self.fallback.classify(view, message)[0], reason or "model reply unusable; rule used"
		return args["choice"], reason

	def condition(self, view: View, line: Line) -> tuple[bool, str]:
		task = f"Does the condition '{line.condition}' hold, judging by the memory?"
		tool = _schema(DECIDE, "Say whether the condition holds.", {"choice": {"enum": ["true", "false"]}})
		args, reason = self._ask(view, task, tool)
		if args is None or args.get("choice") not in ("true", "false"):
			self.fallbacks += 1
			return self.fallback.condition(view, line)[0], reason or "model reply unusable; rule used"
		return args["choice"] == "true", reason

	def arguments(self, view: View, line: Line, action: Action) -> tuple[dict, str]:
		if action.kind not in (TOOL, ASK, TELL, SEARCH):
			return {}, ""
		schema = _parameters(view, action)
		task = (
			f"Give the arguments for the action '{action.name}' ({action.description}) for this line, from the "
			f"memory and the person's answers. Parameters (JSON schema): {json.dumps(schema, ensure_ascii=False)}"
		)
		tool = _schema(ARGUMENTS, "Give the action's arguments.", {"arguments": {"type": "object"}})
		args, reason = self._ask(view, task, tool)
		if args is None or not isinstance(args.get("arguments"), dict):
			self.fallbacks += 1
			return self.fallback.arguments(view, line, action)[0], reason or "model reply unusable; rule used"
		return args["arguments"], reason


def _parameters(view: View, action: Action) -> dict:
	if action.kind == ASK:
		return {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}
	if action.kind == TELL:
		return {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}
	if action.kind == SEARCH:
		return {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
	return action.parameters or {"type": "object", "required": list(action.required)}
