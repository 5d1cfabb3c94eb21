"""A scripted policy model for procedures: a `Provider` that decides from the prompt text it is sent.

It stands in for a model in tests and in `benchmarks/sops.py`, and it is honest about what it
is: it never sees labels or the generated facts, only the prompt the `ModelController` sends
(the numbered procedure, the memory as JSON, the current line and the task). It decides by
a few hand-written readings:

- a message is a question of the person's own when it ends with '?' or opens with a question
  word and carries no id or date;
- "delivered" means the sales order's `per_delivered` is above 0, "active" means the status
  is exactly 'Active', "A is higher than B" compares the `total` of the two records;
- arguments come from the newest looked-up record, a field of a lookup (items' purchase_order),
  or the answer to the question that names the parameter.

So the benchmark's "model" figures measure the controller's machinery (prompts, decisions,
arguments, faults) driven by this policy; a real model's figures come from pointing the
benchmark at a provider.
"""

from __future__ import annotations

import json
import re

from noviz_agent.engine.llm import ModelReply, ToolCall, Usage
from noviz_agent.sops.controllers import strip_lead
from noviz_agent.sops.values import ID, ISO_DATE, find_field, find_id, mentions

QUESTION_WORDS = (
	"how",
	"what",
	"why",
	"when",
	"where",
	"which",
	"who",
	"can",
	"could",
	"is",
	"are",
	"do",
	"does",
)
MEMORY = re.compile(r"Memory \(JSON, oldest first\):\n(?P<json>.*?)\n\nCurrent line", re.DOTALL)
CURRENT = re.compile(r"Current line (?P<line>\d+): (?P<text>.*)")
MESSAGE = re.compile(r"Their message is: (?P<json>\".*?\")\. Is it", re.DOTALL)
CONDITION = re.compile(r"Does the condition '(?P<condition>.*)' hold")
ACTION = re.compile(r"for the action '(?P<action>[a-z_.]+)'")


def _record(observation) -> dict:
	if isinstance(observation, dict) and isinstance(observation.get("fields"), dict):
		return {**observation["fields"], "name": observation.get("name")}
	return observation if isinstance(observation, dict) else {}


class SopPolicyModel:
	"""Answers `sop_decide` / `sop_arguments` calls by reading the prompt; counts its calls."""

	def __init__(self):
		self.calls = 0
		self.requests: list[str] = []

	def complete(
		self, messages: list[dict], tools: list[dict], *, timeout: float | None = None
	) -> ModelReply:
		self.calls += 1
		text = messages[-1]["content"]
		self.requests.append(text)
		function = tools[0]["function"]["name"]
		memory = json.loads(MEMORY.search(text).group("json")) if MEMORY.search(text) else []
		if "Is this a case for the procedure" in text:
			args = {"choice": "yes", "reason": "the request names what the procedure is for"}
		elif (found := MESSAGE.search(text)) is not None:
			args = self._classify(json.loads(found.group("json")))
		elif (found := CONDITION.search(text)) is not None:
			args = self._condition(found.group("condition"), memory)
		elif (found := ACTION.search(text)) is not None:
			current = CURRENT.search(text)
			args = self._arguments(found.group("action"), current.group("text") if current else "", memory)
		else:
			return ModelReply(text="I do not know what to do.", model="sop-policy")
		call = ToolCall(f"call_{self.calls}", function, args, json.dumps(args))
		return ModelReply(
			text="", tool_calls=[call], usage=Usage(), model="sop-policy", finish_reason="tool_calls"
		)

	# --- readings ---------------------------------------------------------------------

	@staticmethod
	def _classify(message: str) -> dict:
		lowered = message.strip().lower()
		carries_value = bool(ID.search(message) or ISO_DATE.search(message))
		asks = lowered.endswith("?") or lowered.split(" ", 1)[0] in QUESTION_WORDS
		if asks and not carries_value:
			return {"choice": "question", "reason": "the person asks something of their own"}
		return {"choice": "answer", "reason": "the message answers the pending question"}

	@staticmethod
	def _records(memory: list[dict]) -> list[tuple[str, dict]]:
		return [
			(e["action"], _record(e.get("observation")))
			for e in reversed(memory)
			if e.get("kind") in ("step", "settled") and e.get("ok") and isinstance(e.get("observation"), dict)
		]

	def _condition(self, condition: str, memory: list[dict]) -> dict:
		lowered = condition.lower()
		negated = bool(re.search(r"\bnot\b|n't\b", lowered))
		records = self._records(memory)
		compared = re.match(r"(.+?) is (?:higher|more|greater) than (.+)", lowered)
		if compared:
			totals = []
			for side in compared.groups():
				hint = next((w for w in ("invoice", "order", "receipt") if w in side), "")
				value = next((r.get("total") for a, r in records if hint and hint in a.split(".")[0]), None)
				totals.append(value)
			if None in totals:
				return {"choice": "false", "reason": "one of the totals is not in the memory"}
			holds = float(totals[0]) > float(totals[1])
			return {"choice": str(holds).lower(), "reason": f"totals {totals[0]} vs {totals[1]}"}
		if "deliver" in lowered:
			order = next((r for a, r in records if a.startswith("sales_order.")), {})
			holds = float(order.get("per_delivered") or 0) > 0
			return {
				"choice": str(holds != negated).lower(),
				"reason": f"per_delivered={order.get('per_delivered')}",
			}
		if "active" in lowered:
			person = next((r for a, r in records if a.startswith("employee.")), {})
			holds = person.get("status") == "Active"
			return {"choice": str(holds != negated).lower(), "reason": f"status={person.get('status')}"}
		return {"choice": "false", "reason": "I cannot judge this condition from the memory"}

	def _arguments(self, action: str, line: str, memory: list[dict]) -> dict:
		entity, _, verb = action.partition(".")
		if action == "person.ask":
			rest = strip_lead(line)
			return {"arguments": {"question": f"Could you give me {rest}?"}, "reason": "ask as written"}
		if action == "person.tell":
			rest = strip_lead(line)
			return {"arguments": {"message": rest[:1].upper() + rest[1:] + "."}, "reason": "tell as written"}
		if action == "knowledge.search":
			return {"arguments": {"query": strip_lead(line)}, "reason": "search the topic of the line"}
		records = self._records(memory)
		if verb == "create":
			return {
				"arguments": {"values": self._values(entity, memory, records)},
				"reason": "from the answers",
			}
		name = None
		if verb != "get":
			name = next((r.get("name") for a, r in records if a == f"{entity}.get"), None)
		for entry in reversed(memory):
			if name:
				break
			if entry.get("kind") in ("step", "settled") and entry.get("ok"):
				name = find_field(entry.get("observation"), entity)
		if not name:
			name = self._answer(memory, entity.replace("_", " ")) or self._answer(
				memory, entity.split("_")[-1]
			)
			name = find_id(name or "") or name
		return {"arguments": {"name": name} if name else {}, "reason": "the id from the memory"}

	@staticmethod
	def _answer(memory: list[dict], words: str) -> str | None:
		questions = {
			e.get("line"): (e.get("args") or {}).get("question", "")
			for e in memory
			if e.get("action") == "person.ask"
		}
		for entry in reversed(memory):
			if entry.get("kind") == "answer" and mentions(questions.get(entry.get("line"), ""), words):
				return str(entry.get("observation"))
		return None

	def _values(self, entity: str, memory: list[dict], records) -> dict:
		values = {}
		employee = next((r.get("name") for a, r in records if a == "employee.get"), None)
		if employee and entity == "leave_application":
			values["employee"] = employee
		for field in ("leave_type", "from_date", "to_date", "reason"):
			answer = self._answer(memory, field)
			if answer:
				values[field] = answer.strip()
		return values
