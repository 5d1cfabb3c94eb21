"""The function-calling rules providers enforce on a request's tools, as code.

A request a provider would refuse should be caught here first: in the tests (every tool of
the registry), in the HTTP stub (which answers 400 as the provider does) and before a
request is sent. Each rule has a name; `check_tools` returns the problems, never raises.

Profiles (what was checked, from each provider's published documentation):

- `openai`: OpenAI chat completions. At most 128 tools; function names ^[a-zA-Z0-9_-]{1,64}$;
  descriptions at most 1024 characters; parameters a JSON Schema of type "object"; every
  array schema has `items` (nested ones and anyOf/type-list branches too).
- strict tools (`"strict": true`) under `openai`: the root is an object (not anyOf); every
  object has `additionalProperties: false` and lists every property in `required` (optional
  ones are nullable instead); only the supported keywords; at most 5000 properties, 10
  levels of nesting, 1000 enum values and 120,000 characters of names and values.
- `azure`: Azure OpenAI, the same rules as OpenAI, but strict schemas take no type-specific
  keywords (pattern, format, minimum, minItems, ...) and are limited to 100 properties,
  5 levels, 500 enum values and 15,000 characters; strict tools need parallel_tool_calls off.
- `gemini`: Gemini's OpenAI-compatible endpoint, which reads parameters as its OpenAPI 3.0
  subset: only those keywords (no additionalProperties, prefixItems, propertyNames,
  uniqueItems, $schema), one type per schema (`nullable` instead of a type list), string
  enums, string formats only "enum" and "date-time", no object with empty `properties`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import jsonschema

__all__ = [
	"MAX_TOOLS",
	"PROFILES",
	"Problem",
	"Profile",
	"check_parameters",
	"check_response_format",
	"check_strict_limits",
	"check_tool",
	"check_tools",
	"walk",
]

MAX_TOOLS = 128
OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
GEMINI_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
MAX_DESCRIPTION = 1024

STRICT_KEYWORDS = frozenset(
	"type properties required additionalProperties items enum const anyOf $ref $defs definitions "
	"description title".split()
)
STRICT_TYPED_KEYWORDS = frozenset(
	"pattern format multipleOf maximum exclusiveMaximum minimum exclusiveMinimum minItems maxItems".split()
)
STRICT_FORMATS = frozenset("date-time time date duration email hostname ipv4 ipv6 uuid".split())
GEMINI_KEYWORDS = frozenset(
	"type format title description nullable enum maxItems minItems properties required minProperties "
	"maxProperties minLength maxLength pattern example anyOf propertyOrdering default items minimum "
	"maximum".split()
)
GEMINI_TYPES = frozenset("string number integer boolean array object null".split())
GEMINI_FORMATS = frozenset(("enum", "date-time"))


@dataclass(frozen=True)
class Profile:
	"""One provider's rules: which keywords and limits apply, to plain and to strict tools."""

	name: str
	name_pattern: re.Pattern = OPENAI_NAME
	strict_keywords: frozenset = STRICT_KEYWORDS | STRICT_TYPED_KEYWORDS
	max_properties: int = 5000
	max_depth: int = 10
	max_enum_values: int = 1000
	max_chars: int = 120_000
	big_enum_chars: int = 15_000  # total length of one enum's strings when it has over 250 values
	strict_needs_serial_calls: bool = False
	openapi_subset: bool = False


PROFILES = {
	"openai": Profile("openai"),
	"azure": Profile(
		"azure",
		strict_keywords=STRICT_KEYWORDS,
		max_properties=100,
		max_depth=5,
		max_enum_values=500,
		max_chars=15_000,
		big_enum_chars=7_500,
		strict_needs_serial_calls=True,
	),
	"gemini": Profile("gemini", name_pattern=GEMINI_NAME, openapi_subset=True),
}


@dataclass(frozen=True)
class Problem:
	"""One broken rule: its name, where (a path into the request) and what the provider would say."""

	rule: str
	where: str
	message: str

	def __str__(self) -> str:
		return f"{self.where}: {self.message}"


def walk(schema, path: tuple = ()) -> Iterator[tuple[tuple, dict]]:
	"""Every subschema with its path: properties, items, anyOf/oneOf/allOf branches, $defs, ..."""
	if not isinstance(schema, dict):
		return
	yield path, schema
	for step, sub in _children(schema):
		yield from walk(sub, (*path, *step))


def _children(schema: dict) -> Iterator[tuple[tuple, dict]]:
	for key in ("properties", "$defs", "definitions", "patternProperties"):
		if isinstance(schema.get(key), dict):
			for name, sub in schema[key].items():
				yield (key, name), sub
	for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
		if isinstance(schema.get(key), list):
			for i, sub in enumerate(schema[key]):
				yield (key, i), sub
	for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"):
		sub = schema.get(key)
		if isinstance(sub, dict):
			yield (key,), sub
		elif key == "items" and isinstance(sub, list):
			for i, item in enumerate(sub):
				yield (key, i), item


def _types(node: dict) -> set[str]:
	kind = node.get("type")
	return set(kind) if isinstance(kind, list) else ({kind} if isinstance(kind, str) else set())


def _context(path: tuple) -> str:
	return "context=(" + ", ".join(repr(str(p)) for p in path) + ")" if path else "the root"


def check_tools(tools, profile: str = "openai", *, parallel_tool_calls: bool | None = None) -> list[Problem]:
	"""Everything the provider would refuse in a request's `tools` (and its parallel_tool_calls)."""
	rules = PROFILES[profile]
	if not isinstance(tools, list):
		return [Problem("tools-array", "tools", "tools must be an array of tool objects.")]
	problems = []
	if len(tools) > MAX_TOOLS:
		problems.append(
			Problem(
				"tool-count",
				"tools",
				f"Invalid 'tools': array too long. Expected an array with maximum length {MAX_TOOLS}, "
				f"but got an array with length {len(tools)} instead.",
			)
		)
	for i, tool in enumerate(tools):
		problems += check_tool(tool, profile, where=f"tools[{i}]")
		strict = isinstance(tool, dict) and (tool.get("function") or {}).get("strict") is True
		if strict and rules.strict_needs_serial_calls and parallel_tool_calls is not False:
			problems.append(
				Problem(
					"strict-parallel",
					f"tools[{i}]",
					"Strict function tools need parallel_tool_calls set to false.",
				)
			)
	return problems


def check_tool(tool, profile: str = "openai", *, where: str = "tools[0]") -> list[Problem]:
	"""The problems of one `{"type": "function", "function": {...}}` entry."""
	rules = PROFILES[profile]
	if (
		not isinstance(tool, dict)
		or tool.get("type") != "function"
		or not isinstance(tool.get("function"), dict)
	):
		return [Problem("tool-type", where, 'Each tool must be {"type": "function", "function": {...}}.')]
	fn = tool["function"]
	name = fn.get("name")
	problems = []
	if not isinstance(name, str) or not rules.name_pattern.match(name):
		problems.append(
			Problem(
				"function-name",
				f"{where}.function.name",
				f"Invalid 'function.name': {name!r} does not match '{rules.name_pattern.pattern}'.",
			)
		)
	description = fn.get("description")
	if description is not None and (not isinstance(description, str) or len(description) > MAX_DESCRIPTION):
		size = len(description) if isinstance(description, str) else "not a string"
		problems.append(
			Problem(
				"description-length",
				f"{where}.function.description",
				f"Invalid 'function.description': string too long. Expected a string with maximum length "
				f"{MAX_DESCRIPTION}, but got {size}.",
			)
		)
	if "parameters" not in fn:
		return problems
	return problems + check_parameters(
		fn["parameters"],
		profile,
		name=str(name),
		strict=fn.get("strict") is True,
		where=f"{where}.function.parameters",
	)


def check_parameters(
	schema, profile: str = "openai", *, name: str = "f", strict: bool = False, where: str = "parameters"
) -> list[Problem]:
	"""The problems of one function's parameters schema under a profile (and strict mode)."""
	rules = PROFILES[profile]

	def problem(rule: str, path: tuple, text: str) -> Problem:
		return Problem(
			rule,
			where + "".join(f".{p}" for p in path),
			f"Invalid schema for function '{name}': In {_context(path)}, {text}",
		)

	if not isinstance(schema, dict) or schema.get("type") != "object":
		got = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
		return [
			problem(
				"parameters-object",
				(),
				f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{got}\"'.",
			)
		]
	problems = []
	error = _schema_errors(json.dumps(schema, sort_keys=True, default=str))
	if error is not None:
		problems.append(problem("valid-json-schema", error[0], f"{error[1]}."))
	for path, node in walk(schema):
		kinds = _types(node)
		if "array" in kinds and "items" not in node:
			problems.append(problem("array-items", path, "array schema missing items."))
		if rules.openapi_subset:
			problems += _openapi_subset(node, path, problem)
	if strict:
		problems += _strict(schema, rules, problem)
	return problems


@functools.lru_cache(maxsize=1)
def _meta_validator() -> jsonschema.Draft7Validator:
	"""The meta-schema validator, built once; draft 7 checks the same keywords several times faster."""
	return jsonschema.Draft7Validator(jsonschema.Draft7Validator.META_SCHEMA)


@functools.lru_cache(maxsize=4096)
def _schema_errors(text: str) -> tuple[tuple, str] | None:
	"""(path, message) of the worst meta-schema error of a serialised schema; the same tools come often."""
	error = jsonschema.exceptions.best_match(_meta_validator().iter_errors(json.loads(text)))
	return None if error is None else (tuple(error.path), error.message)


RESPONSE_FORMAT_TYPES = ("text", "json_object", "json_schema")


def check_response_format(response_format, profile: str = "openai", messages=None) -> list[Problem]:
	"""The problems of a request's `response_format` (structured output) as the provider checks it.

	OpenAI's rules: the type is text, json_object or json_schema; json_object needs the word "json"
	in the messages; json_schema needs a name like a function's and an object schema, which under
	`strict: true` follows the strict-mode rules of tools."""
	where = "response_format"
	if not isinstance(response_format, dict) or response_format.get("type") not in RESPONSE_FORMAT_TYPES:
		return [
			Problem("response-format-type", where, f"type must be one of {', '.join(RESPONSE_FORMAT_TYPES)}.")
		]
	kind = response_format["type"]
	if kind == "json_object":
		text = json.dumps(messages or [], ensure_ascii=False).lower()
		if "json" not in text:
			return [
				Problem(
					"response-format-json-word",
					"messages",
					"'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
				)
			]
		return []
	if kind != "json_schema":
		return []
	spec = response_format.get("json_schema")
	if not isinstance(spec, dict):
		return [Problem("response-format-schema", f"{where}.json_schema", "Missing required parameter.")]
	out = []
	if not OPENAI_NAME.match(str(spec.get("name") or "")):
		out.append(
			Problem("response-format-name", f"{where}.json_schema.name", "must match ^[a-zA-Z0-9_-]{1,64}$.")
		)
	schema = spec.get("schema")
	if not isinstance(schema, dict) or schema.get("type") != "object":
		out.append(
			Problem(
				"response-format-schema",
				f"{where}.json_schema.schema",
				"must be a JSON schema of type object.",
			)
		)
		return out
	if spec.get("strict") is True:
		out += _strict(
			schema,
			PROFILES[profile],
			lambda rule, path, text: Problem(rule, f"{where}.json_schema.schema ({_context(path)})", text),
		)
	return out


def check_strict_limits(schema: dict, profile: str = "openai") -> list[Problem]:
	"""The strict-mode problems of a parameters schema alone (keywords, closed objects, sizes)."""
	return _strict(schema, PROFILES[profile], lambda rule, path, text: Problem(rule, str(path), text))


def _openapi_subset(node: dict, path: tuple, problem) -> list[Problem]:
	out = []
	unknown = sorted(set(node) - GEMINI_KEYWORDS)
	if unknown:
		out.append(
			problem(
				"gemini-keywords",
				path,
				f"unknown field(s) {', '.join(unknown)} (not in the OpenAPI schema subset).",
			)
		)
	kind = node.get("type")
	if kind is not None and (not isinstance(kind, str) or kind not in GEMINI_TYPES):
		out.append(
			problem("gemini-type", path, f"type must be one type name, not {kind!r}; use nullable for null.")
		)
	if "enum" in node and not all(isinstance(v, str) for v in node["enum"] or []):
		out.append(problem("gemini-enum-strings", path, "enum values must be strings."))
	if "format" in node and kind == "string" and node["format"] not in GEMINI_FORMATS:
		out.append(
			problem(
				"gemini-format",
				path,
				f"format {node['format']!r} is not supported for strings (only enum, date-time).",
			)
		)
	if kind == "object" and isinstance(node.get("properties"), dict) and not node["properties"]:
		out.append(problem("gemini-empty-object", path, "properties should be non-empty for OBJECT type."))
	return out


def _strict(schema: dict, rules: Profile, problem) -> list[Problem]:
	out = []
	if "anyOf" in schema:
		out.append(problem("strict-root-object", (), "the root schema must be an object, not anyOf."))
	properties = enum_values = chars = 0
	for path, node in walk(schema):
		unknown = sorted(set(node) - rules.strict_keywords)
		if unknown:
			out.append(
				problem("strict-keywords", path, f"{', '.join(repr(k) for k in unknown)} is not permitted.")
			)
		if "format" in node and "format" in rules.strict_keywords and node["format"] not in STRICT_FORMATS:
			out.append(problem("strict-keywords", path, f"format {node['format']!r} is not supported."))
		if "object" in _types(node) or "properties" in node:
			props = node.get("properties") or {}
			if node.get("additionalProperties") is not False:
				out.append(
					problem(
						"strict-additional-properties",
						path,
						"'additionalProperties' is required to be supplied and to be false.",
					)
				)
			missing = [k for k in props if k not in (node.get("required") or [])]
			if missing:
				out.append(
					problem(
						"strict-required",
						path,
						f"'required' is required to be supplied and to be an array including every key in properties. Missing {', '.join(repr(k) for k in missing)}.",
					)
				)
			properties += len(props)
			chars += sum(len(k) for k in props)
		values = node.get("enum") or []
		enum_values += len(values)
		strings = sum(len(v) for v in values if isinstance(v, str))
		chars += strings
		if len(values) > 250 and strings > rules.big_enum_chars:
			out.append(
				problem(
					"strict-limits",
					path,
					f"an enum of {len(values)} values may total at most {rules.big_enum_chars} characters, got {strings}.",
				)
			)
	depth = _depth(schema)
	for label, value, limit in (
		("object properties", properties, rules.max_properties),
		("levels of nesting", depth, rules.max_depth),
		("enum values", enum_values, rules.max_enum_values),
		("characters of property names and enum values", chars, rules.max_chars),
	):
		if value > limit:
			out.append(
				problem(
					"strict-limits", (), f"a strict schema may have at most {limit} {label}, got {value}."
				)
			)
	return out


def _depth(schema) -> int:
	"""Levels of object nesting (the root object is level 1)."""
	if not isinstance(schema, dict):
		return 0
	own = 1 if ("object" in _types(schema) or "properties" in schema) else 0
	return own + max((_depth(sub) for _, sub in _children(schema)), default=0)
