"""Tool calls that open-weights models print as text instead of sending structured `tool_calls`.

Recognised formats (what the models' chat templates actually print):

- Hermes / Qwen: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, one block per call
  (a stop token may cut the last closing tag);
- Llama 3.1+: `<|python_tag|>` and/or bare `{"name": ..., "parameters": {...}}` objects, several
  separated by `;`, ending in `<|eom_id|>` or `<|eot_id|>`;
- Llama 3.2 / 4 pythonic: `[f(a=1), g(b="x")]` (read with `ast`, never evaluated);
- Mistral: `[TOOL_CALLS][{"name": ..., "arguments": {...}, "id": "..."}]` and the newer
  `[TOOL_CALLS]name[ARGS]{...}` (optionally `[CALL_ID]id` before `[ARGS]`);
- a fenced ```json block holding exactly a call object, and a `functions.` prefix on names.

Calls are taken only from the end of a message: the calls must run to the end (nothing but
whitespace and end-of-turn tokens after them). With `lead_in=False` (the `auto` setting) the
message must also *start* with them; with `lead_in=True` (the `text` setting) a short lead-in
sentence before them is kept as the reply's text. A tag quoted inside prose is never a call.
Formats without an explicit marker (bare JSON, pythonic lists, fenced blocks) count only when
every name is among the offered tools, so data that merely looks like a call stays text.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from typing import Any

from noviz_agent.engine.provider.interface import ToolCall, new_call_id
from noviz_agent.engine.tools import from_wire_name, to_wire_name

__all__ = ["clean_name", "parse_text_tool_calls"]

HERMES_OPEN, HERMES_CLOSE = "<tool_call>", "</tool_call>"
MISTRAL = "[TOOL_CALLS]"
PYTHON_TAG = "<|python_tag|>"
END_TOKENS = ("<|eom_id|>", "<|eot_id|>", "<|im_end|>", "<|end|>", "</s>", "<|python_end|>")
START_TOKENS = ("<|python_start|>",)
CALL_KEYS = {"name", "arguments", "parameters", "type", "id"}
FENCE = re.compile(r"```(?:json)?[ \t]*\n?(.*?)\n?[ \t]*```\s*$", re.DOTALL)
NAME_IN_TEXT = re.compile(r'"name"\s*:\s*"([^"]+)"')
MISTRAL_NAME = re.compile(r"\s*([A-Za-z_][\w.\-]*)\s*(?:\[CALL_ID\]\s*([A-Za-z0-9_\-]+)\s*)?\[ARGS\]")
# Where a call region may begin when a lead-in is allowed: an explicit marker anywhere, or a
# line that starts with JSON, a pythonic list or a fence.
MARKERS = re.compile(
	r"<tool_call>|\[TOOL_CALLS\]|<\|python_tag\|>|<\|python_start\|>|(?:^|\n)[ \t]*(?=[{\[`])"
)

_decoder = json.JSONDecoder()


def clean_name(name: str) -> str:
	"""A tool name as printed → our dotted name: drops a `functions.` prefix, maps the wire form back."""
	name = (name or "").strip()
	if name.startswith("functions."):
		name = name[len("functions.") :]
	return from_wire_name(name)


def parse_text_tool_calls(
	text: str, names: Iterable[str] | None = None, *, lead_in: bool = True
) -> tuple[str, list[ToolCall]]:
	"""(the text that is not calls, the calls); `(text.strip(), [])` when the message carries none.

	`names` are the wire names offered; `lead_in` allows prose before the calls (see the module doc).
	"""
	stripped = (text or "").strip()
	offered = {to_wire_name(clean_name(n)) for n in names} if names is not None else None
	calls = _region(stripped, offered)
	if calls is not None:
		return "", calls
	if lead_in:
		for match in MARKERS.finditer(stripped):
			start = match.end() if match.group(0).strip() == "" else match.start()
			if start == 0:
				continue
			calls = _region(stripped[start:].lstrip(), offered)
			if calls is not None:
				return stripped[:start].strip(), calls
	return stripped, []


def _region(text: str, offered: set[str] | None) -> list[ToolCall] | None:
	"""The calls when `text` is nothing but calls in one recognised format; else None."""
	body = _trim(text)
	if not body:
		return None
	if body.startswith(HERMES_OPEN):
		return _hermes(body)
	if body.startswith(MISTRAL):
		return _mistral(body)
	if body.startswith(PYTHON_TAG):
		return _json_calls(body[len(PYTHON_TAG) :].strip(), None)
	for token in START_TOKENS:
		if body.startswith(token):
			return _pythonic(body[len(token) :].strip(), offered)
	if body.startswith("```"):
		fenced = FENCE.fullmatch(body)
		return _json_calls(fenced.group(1).strip(), offered) if fenced else None
	# Calls run to the end, so a region that does not end like one is not worth parsing.
	if body.startswith("{") and body.endswith("}"):
		return _json_calls(body, offered)
	if body.startswith("[") and body.endswith("]"):
		return _json_calls(body, offered) or _pythonic(body, offered)
	return None


def _trim(text: str) -> str:
	"""Text without trailing end-of-turn tokens."""
	text = text.strip()
	changed = True
	while changed:
		changed = False
		for token in END_TOKENS:
			if text.endswith(token):
				text, changed = text[: -len(token)].rstrip(), True
	return text


def _hermes(text: str) -> list[ToolCall] | None:
	calls, pos = [], 0
	while pos < len(text):
		if not text.startswith(HERMES_OPEN, pos):
			return None  # something other than another block follows: prose, so not calls
		end = text.find(HERMES_CLOSE, pos)
		if end == -1:
			body, pos = text[pos + len(HERMES_OPEN) :], len(text)  # a stop token cut the closing tag
			if not body.strip().startswith("{"):
				return None  # an unclosed tag before prose is a mention, not a call
		else:
			body, pos = text[pos + len(HERMES_OPEN) : end], end + len(HERMES_CLOSE)
		calls.append(_tagged_call(body.strip()))
		while pos < len(text) and text[pos].isspace():
			pos += 1
	return calls or None


def _tagged_call(body: str) -> ToolCall:
	value = _loads(body)
	if isinstance(value, dict) and isinstance(value.get("function"), dict):
		value = value["function"]
	if isinstance(value, dict) and isinstance(value.get("name"), str):
		return _call(value.get("id"), value["name"], value.get("arguments", value.get("parameters")))
	found = NAME_IN_TEXT.search(body)
	return ToolCall(
		new_call_id(),
		clean_name(found.group(1)) if found else "",
		None,
		body,
		"the <tool_call> block is not a JSON object with a name and arguments",
	)


def _mistral(text: str) -> list[ToolCall] | None:
	calls: list[ToolCall] = []
	rest = text
	while rest:
		if not rest.startswith(MISTRAL):
			return None
		rest = rest[len(MISTRAL) :].lstrip()
		if rest.startswith("["):  # [TOOL_CALLS][{...}, {...}]
			try:
				value, end = _decoder.raw_decode(rest)
			except ValueError:
				return None
			found = _call_objects(value, None)
			if found is None:
				return None
			calls.extend(found)
			rest = rest[end:].strip()
			continue
		while True:  # [TOOL_CALLS]name[ARGS]{...} (several calls may follow one marker)
			match = MISTRAL_NAME.match(rest)
			if not match:
				return None
			try:
				args, end = _decoder.raw_decode(rest, match.end())
			except ValueError:
				return None
			calls.append(_call(match.group(2), match.group(1), args))
			rest = rest[end:].strip()
			if not rest or rest.startswith(MISTRAL):
				break
	return calls or None


def _json_calls(text: str, offered: set[str] | None) -> list[ToolCall] | None:
	"""One or more call objects (or one array of them), separated by `;` and nothing else."""
	values, pos = [], 0
	while pos < len(text):
		try:
			value, pos = _decoder.raw_decode(text, pos)
		except ValueError:
			return None
		values.extend(value if isinstance(value, list) else [value])
		pos = _skip(text, pos)
		if pos < len(text):
			if text[pos] != ";":
				return None
			pos = _skip(text, pos + 1)
	return _call_objects(values, offered) if values else None


def _skip(text: str, pos: int) -> int:
	while pos < len(text) and text[pos].isspace():
		pos += 1
	return pos


def _call_objects(values: Any, offered: set[str] | None) -> list[ToolCall] | None:
	values = values if isinstance(values, list) else [values]
	calls = []
	for value in values:
		if (
			isinstance(value, dict)
			and value.get("type") == "function"
			and isinstance(value.get("function"), dict)
		):
			value = {**value["function"], "id": value.get("id")}
		if (
			not isinstance(value, dict)
			or not isinstance(value.get("name"), str)
			or not set(value) <= CALL_KEYS
		):
			return None
		if "arguments" not in value and "parameters" not in value:
			return None
		if offered is not None and to_wire_name(clean_name(value["name"])) not in offered:
			return None
		calls.append(_call(value.get("id"), value["name"], value.get("arguments", value.get("parameters"))))
	return calls or None


def _pythonic(text: str, offered: set[str] | None) -> list[ToolCall] | None:
	"""`[f(a=1), g(b="x")]`: a list of calls with literal keyword arguments, read by `ast`."""
	try:
		tree = ast.parse(text, mode="eval")
	except (SyntaxError, ValueError):
		return None
	if not isinstance(tree.body, ast.List) or not tree.body.elts:
		return None
	calls = []
	for node in tree.body.elts:
		if not isinstance(node, ast.Call) or node.args:
			return None
		name = _dotted(node.func)
		if name is None:
			return None
		try:
			args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
		except (ValueError, TypeError, SyntaxError):
			return None
		if len(args) != len(node.keywords):
			return None  # **kwargs
		if offered is not None and to_wire_name(clean_name(name)) not in offered:
			return None
		calls.append(_call(None, name, args))
	return calls


def _dotted(node: ast.AST) -> str | None:
	if isinstance(node, ast.Name):
		return node.id
	if isinstance(node, ast.Attribute):
		base = _dotted(node.value)
		return f"{base}.{node.attr}" if base else None
	return None


def _call(call_id: Any, name: str, arguments: Any) -> ToolCall:
	call = ToolCall.from_wire(call_id if isinstance(call_id, str) and call_id else None, "", arguments)
	call.name = clean_name(name)
	return call


def _loads(text: str) -> Any:
	try:
		return json.loads(text)
	except ValueError:
		return None
