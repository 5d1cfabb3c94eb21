"""A scripted model for goal runs: it reads the findings message it is sent and answers as a careful assistant.

For each new or changed finding it writes a sentence quoting the finding's own title, and, where the
run offers the tool, prepares a next step from the finding's subject: a material request for an item
that runs out (the quantity the finding suggests), a follow-up task for a customer who is overdue.
It never sees the planted events, only what the run sends it. Its token counts are estimates
(characters / 4 of what it was sent and what it wrote), so a run's figure reflects the prompt's size.
It measures the goal machinery, not a language model.
"""

from __future__ import annotations

import datetime as dt
import json

from noviz_agent.engine.provider import ModelReply, ToolCall, Usage
from noviz_agent.engine.tools import from_wire_name


class GoalPolicyModel:
	def __init__(self, model: str = "goal-policy"):
		self.model = model
		self.requests: list[tuple[list[dict], list[str]]] = []
		self._ids = 0

	def complete(
		self, messages: list[dict], tools: list[dict], *, timeout: float | None = None
	) -> ModelReply:
		offered = [from_wire_name(t["function"]["name"]) for t in tools]
		self.requests.append((messages, offered))
		if messages[-1]["role"] == "tool":
			text = "I prepared the next steps above for you to confirm."
			return self._reply(text, [], messages, tools)
		payload = json.loads(messages[-1]["content"].split("\n", 1)[1])
		findings = [*payload.get("new", []), *payload.get("changed", [])]
		sentences, planned = [], []
		for finding in findings:
			sentences.append(finding["title"] + ".")
			step = _next_step(finding, offered)
			if step is not None:
				planned.append(step)
		if payload.get("no_longer"):
			sentences.append(f"{len(payload['no_longer'])} earlier finding(s) no longer hold.")
		if planned:
			sentences.append(f"I prepared {len(planned)} next step(s) for you to confirm.")
		return self._reply(" ".join(sentences[:5]), planned[:3], messages, tools)

	def _reply(self, text: str, planned: list, messages: list[dict], tools: list[dict]) -> ModelReply:
		calls = []
		for name, args in planned:
			self._ids += 1
			calls.append(ToolCall.from_wire(f"goal_{self._ids}", name, args))
		sent = len(json.dumps(messages, default=str)) + len(json.dumps(tools))
		written = len(text) + len(json.dumps([a for _, a in planned]))
		usage = Usage(prompt_tokens=sent // 4, completion_tokens=max(1, written // 4))
		return ModelReply(
			text=text,
			tool_calls=calls,
			usage=usage,
			model=self.model,
			finish_reason="tool_calls" if calls else "stop",
		)


def _next_step(finding: dict, offered: list[str]) -> tuple[str, dict] | None:
	subject, period = finding.get("subject") or {}, finding.get("period") or {}
	as_of = period.get("as_of") or period.get("end")
	if subject.get("item") and subject.get("suggested_qty") and "material_request.create" in offered:
		values = {
			"type": "Purchase",
			"items": [{"item": subject["item"], "qty": subject["suggested_qty"]}],
		}
		if finding.get("company"):
			values["company"] = finding["company"]
		if as_of:
			values["date"] = as_of
			values["required_by"] = (dt.date.fromisoformat(as_of) + dt.timedelta(days=7)).isoformat()
		return "material_request.create", {"values": values}
	if subject.get("customer") and "task.create" in offered:
		values = {
			"subject": f"Follow up {subject['customer']} about overdue invoices",
			"description": finding["title"],
			"priority": "High",
		}
		if as_of:
			values["expected_end_date"] = (dt.date.fromisoformat(as_of) + dt.timedelta(days=3)).isoformat()
		return "task.create", {"values": values}
	return None
