"""The oracle model: makes a question's labelled tool calls, then answers from what the tools returned.

It proves the labels and the pipeline, not a model: its calls are the labelled ones, and
its answer quotes the figure it reads back from the tool result (the JSON the model would
see), so the figure in its answer is the tools' figure. The grader then compares that with
the figure computed independently from the data. Like a model, it can only call tools it
was offered: when routing did not offer a labelled tool it asks ``tools.search`` first (with
the question, then with the tool's own words). It is a ``ScriptedModel``: it records what it
was sent, and ``remaining`` says whether it got to answer.
"""

from __future__ import annotations

import json
from typing import Any

from noviz_agent.engine.tools import from_wire_name
from noviz_agent.testing.model import ScriptedModel, answer, call, calls

_ROWS_OF = ("rows", "data", "results", "records")


class OracleModel(ScriptedModel):
	"""Searches for labelled tools routing did not offer, makes the labelled calls, then answers."""

	def __init__(self, question: dict, registry):
		plan = question["oracle"]
		self.plan = plan
		self.question = question["question"]
		self.planned = [
			(name, adapt_arguments(args, _parameters(registry, name))) for name, args in plan["calls"]
		]
		self.answers = "proposal" not in question["expect"]  # a proposal ends the turn at the person
		self.searches: list[str] = []
		self.called = False
		self.answered = False
		super().__init__([self._next_step], model="oracle")

	def _next_step(self, messages: list[dict], tools: list[dict]):
		# ScriptedModel consumes one step per request; this one step plans every reply.
		self._next = 0
		if not self.called:
			offered = {from_wire_name(t["function"]["name"]) for t in tools}
			missing = [name for name, _ in self.planned if name not in offered]
			queries = [self.question, *(name.replace(".", " ").replace("_", " ") for name, _ in self.planned)]
			if missing and "tools.search" in offered and len(self.searches) < len(queries):
				query = queries[len(self.searches)]
				self.searches.append(query)
				return call("tools.search", {"query": query, "limit": 20})
			self.called = True
			return calls(self.planned)
		self.answered = True
		return answer(compose(self.plan, messages))

	@property
	def remaining(self) -> int:
		done = self.answered or (self.called and not self.answers)
		return 0 if done else 1


def oracle_model(question: dict, registry) -> OracleModel:
	"""The oracle for one labelled question."""
	return OracleModel(question, registry)


def compose(plan: dict, messages: list[dict]) -> str:
	"""The oracle's answer: a refusal quoting the tool, or the template filled from the last result."""
	results = []
	for message in reversed(messages):
		if message.get("role") != "tool":
			break
		results.insert(0, _json(message.get("content")))
	problem = next(
		(
			r.get("message")
			for r in results
			if isinstance(r, dict) and r.get("status") in ("refused", "error")
		),
		None,
	)
	if problem:
		return f"I can't answer that: {problem}"
	value = pick(results[-1] if results else None, plan.get("pick", ""))
	if value is None and "default" in plan:
		value = plan["default"]  # a sum over no rows comes back empty; a reader says 0
	return plan.get("answer", "{value}").format(value=_format(value))


def pick(data: Any, path: str) -> Any:
	"""Follow a dotted path (``rows.0.revenue``, ``fields.territory``; ``*`` maps over a list)."""
	if not path:
		return data
	head, _, rest = path.partition(".")
	if head == "*":
		return [pick(item, rest) for item in data or []]
	if isinstance(data, list):
		try:
			return pick(data[int(head)], rest)
		except (ValueError, IndexError):
			return None
	if isinstance(data, dict):
		return pick(data.get(head), rest)
	return None


def adapt_arguments(args: dict, parameters: dict | None) -> dict:
	"""Labelled filters are ``[field, op, value]`` triples; give them in the shape the tool's schema asks for."""
	if not parameters:
		return args
	properties = parameters.get("properties") or {}
	adapted = dict(args)
	for key, value in args.items():
		if key == "filters" and isinstance(value, list):
			adapted[key] = _adapt_filters(value, properties.get(key) or {})
	return adapted


def _adapt_filters(filters: list, schema: dict) -> list:
	item = _array_items(schema)
	if not isinstance(item, dict):
		return filters
	props = item.get("properties") or {}
	if item.get("type") == "object" or {"field", "op", "value"} <= set(props):
		return [{"field": f, "op": op, "value": v} for f, op, v in filters]
	return filters


def _array_items(schema: dict) -> Any:
	if schema.get("type") == "array" or "items" in schema:
		return schema.get("items")
	for branch in schema.get("anyOf") or schema.get("oneOf") or []:
		if isinstance(branch, dict) and (branch.get("type") == "array" or "items" in branch):
			return branch.get("items")
	return None


def _parameters(registry, name: str) -> dict | None:
	tool = registry.get(name) if hasattr(registry, "get") else None
	return getattr(tool, "parameters", None)


def _json(content: Any) -> Any:
	try:
		return json.loads(content) if isinstance(content, str) else content
	except ValueError:
		return content


def _format(value: Any) -> str:
	if isinstance(value, list):
		return ", ".join(_format(v) for v in value)
	if isinstance(value, bool) or value is None:
		return str(value)
	if isinstance(value, int):
		return f"{value:,}"
	if isinstance(value, float):
		return f"{value:,.0f}" if value.is_integer() else f"{value:,.2f}"
	return str(value)
