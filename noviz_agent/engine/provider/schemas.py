"""Tool definitions as one provider takes them: strict function calling, and Gemini's schema subset.

The registry's schemas are the truth the gateway validates against; what is sent may say less
(a strict or OpenAPI-subset schema cannot carry every keyword), never more. `strict_tool`
makes the strict form from the normal one: every object closed (`additionalProperties:
false`), every property required, the optional ones nullable (the gateway reads null as
absent), unsupported keywords dropped. A tool whose schema cannot be closed (a free-form
object) is sent with `strict: false`, as OpenAI allows per function.
"""

from __future__ import annotations

import copy
from urllib.parse import urlparse

from noviz_agent.engine.schema_rules import (
	GEMINI_FORMATS,
	GEMINI_KEYWORDS,
	STRICT_KEYWORDS,
	check_strict_limits,
	check_tools,
)

__all__ = ["check_as_sent", "dialect_for", "for_provider", "gemini_tool", "strict_schema", "strict_tool"]

GEMINI_HOSTS = ("generativelanguage.googleapis.com",)
AZURE_SUFFIXES = (".openai.azure.com", ".services.ai.azure.com", ".cognitiveservices.azure.com")


class NotStrict(ValueError):
	"""This schema cannot be expressed in strict mode (the message says where)."""


def dialect_for(base_url: str) -> str:
	"""Which rule profile a server follows, from its base URL: gemini, azure or openai (the default)."""
	host = (urlparse(base_url or "").hostname or "").lower()
	if host in GEMINI_HOSTS:
		return "gemini"
	if host.endswith(AZURE_SUFFIXES):
		return "azure"
	return "openai"


def for_provider(tools: list[dict], *, strict: bool = False, dialect: str = "openai") -> list[dict]:
	"""The tools to send: converted for strict mode and/or the provider's schema dialect."""
	if dialect == "gemini":
		return [gemini_tool(t) for t in tools]
	if strict:
		return [strict_tool(t, dialect) for t in tools]
	return tools


def check_as_sent(
	tools: list[dict], *, strict: bool = False, dialect: str = "openai"
) -> tuple[list[dict], list]:
	"""(the tools as they would be sent, what the provider's rules find wrong with them)."""
	sent = for_provider(tools, strict=strict, dialect=dialect)
	problems = [p for tool in sent for p in check_tools([tool], dialect, parallel_tool_calls=False)]
	return sent, problems


def strict_tool(tool: dict, profile: str = "openai") -> dict:
	"""A tool definition with `strict: true` and its strict schema; `strict: false` when it has none."""
	fn = tool["function"]
	try:
		parameters = strict_schema(fn.get("parameters") or {"type": "object", "properties": {}})
	except NotStrict:
		return {**tool, "function": {**fn, "strict": False}}
	if check_strict_limits(parameters, profile):
		return {**tool, "function": {**fn, "strict": False}}  # over the provider's size limits
	return {**tool, "function": {**fn, "parameters": parameters, "strict": True}}


def strict_schema(schema: dict) -> dict:
	"""The strict form of a parameters schema; NotStrict when a part cannot be closed."""
	return _strict(copy.deepcopy(schema), ())


def _strict(node: dict, path: tuple) -> dict:
	if not isinstance(node, dict):
		raise NotStrict(f"{path}: not a schema")
	out = {k: v for k, v in node.items() if k in STRICT_KEYWORDS}
	if "anyOf" in node:
		out["anyOf"] = [_strict(sub, (*path, "anyOf", i)) for i, sub in enumerate(node["anyOf"])]
	if "items" in node:
		if not isinstance(node["items"], dict):
			raise NotStrict(f"{path}: tuple items")
		out["items"] = _strict(node["items"], (*path, "items"))
	kinds = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
	if "object" in kinds or "properties" in node:
		properties = node.get("properties")
		if not properties or node.get("additionalProperties") not in (None, False):
			raise NotStrict(f"{path}: a free-form object")
		required = set(node.get("required") or ())
		out["properties"] = {
			name: _strict(sub, (*path, "properties", name))
			if name in required
			else _nullable(_strict(sub, (*path, "properties", name)))
			for name, sub in properties.items()
		}
		out["required"] = list(properties)
		out["additionalProperties"] = False
	if "type" not in out and not any(k in out for k in ("anyOf", "enum", "const", "$ref")):
		raise NotStrict(f"{path}: a schema without a type")
	return out


def _nullable(schema: dict) -> dict:
	"""The same schema, also accepting null (how strict mode says "optional")."""
	kind = schema.get("type")
	if isinstance(kind, str) and "enum" not in schema and "anyOf" not in schema:
		return {**schema, "type": [kind, "null"]}
	if isinstance(kind, list) and "enum" not in schema:
		return {**schema, "type": [*kind, "null"] if "null" not in kind else kind}
	outer = {"description": schema["description"]} if "description" in schema else {}
	inner = {k: v for k, v in schema.items() if k != "description"}
	return {**outer, "anyOf": [inner, {"type": "null"}]}


def gemini_tool(tool: dict) -> dict:
	"""A tool definition in Gemini's OpenAPI subset; a function without parameters sends none."""
	fn = dict(tool["function"])
	fn.pop("strict", None)
	parameters = _gemini(copy.deepcopy(fn.get("parameters") or {}))
	if not parameters.get("properties"):
		fn.pop("parameters", None)  # Gemini refuses an object with empty properties
	else:
		fn["parameters"] = parameters
	return {**tool, "function": fn}


def _gemini(node: dict) -> dict:
	if not isinstance(node, dict):
		return {}
	out = {k: v for k, v in node.items() if k in GEMINI_KEYWORDS}
	kinds = out.get("type")
	if isinstance(kinds, list):
		real = [k for k in kinds if k != "null"]
		if "null" in kinds:
			out["nullable"] = True
		if len(real) == 1:
			out["type"] = real[0]
		else:
			out.pop("type")
			out["anyOf"] = [{"type": k} for k in real]
	if "enum" in out and not all(isinstance(v, str) for v in out["enum"]):
		out.pop("enum")  # Gemini takes string enums only; the gateway still checks the values
	if "format" in out and out.get("type") == "string" and out["format"] not in GEMINI_FORMATS:
		out.pop("format")
	if "properties" in out:
		out["properties"] = {k: _gemini(v) for k, v in out["properties"].items()}
		if not out["properties"]:
			out.pop("properties")
	if "items" in out:
		out["items"] = _gemini(out["items"])
	if "anyOf" in out:
		out["anyOf"] = [_gemini(sub) for sub in out["anyOf"]]
	if "default" in out and "enum" in out and out["default"] not in out["enum"]:
		out.pop("default")
	return out
