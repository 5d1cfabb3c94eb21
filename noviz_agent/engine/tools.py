"""Tool definitions and the registry that holds them.

A tool is data plus a handler: the registry is what the gateway, the router and the
prompt read. Names are `<module_or_entity>.<action>` and globally unique.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

from noviz_agent.engine.errors import ToolError

__all__ = [
	"DuplicateToolError",
	"EntityWords",
	"FrozenRegistryError",
	"Registry",
	"Tool",
	"ToolError",
	"Vocabulary",
	"function_tool",
]

# Each part is snake_case without "__" or a trailing "_", so the wire form maps back to one name.
_PART = r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*"
# Tools of another system carry its name first: `helpdesk.ticket.list`.
NAME_PATTERN = re.compile(rf"^(?:{_PART}\.)?{_PART}\.{_PART}$")

# OpenAI function names may not contain dots; the wire name swaps them for "__".
WIRE_SEPARATOR = "__"


class DuplicateToolError(ValueError):
	"""Raised when a second tool is registered under a name already taken."""


class FrozenRegistryError(RuntimeError):
	"""Raised when a tool is added to a registry that is shared by the whole process."""


Handler = Callable[[dict, Any], Any]


@dataclass(frozen=True)
class Tool:
	"""One capability offered to the model."""

	name: str
	description: str
	module: str
	parameters: dict
	handler: Handler
	writes: bool = False
	prompt_rules: str | None = None
	# For writes: builds the exact document and values the person is asked to confirm.
	preview: Callable[[dict, Any], dict] | None = None
	entity: str | None = None
	action: str | None = None
	tags: tuple[str, ...] = field(default_factory=tuple)
	# The site permission an entity tool needs on its entity ("read", "create", "write", "submit",
	# "cancel"); None: "write" for a tool that writes, else "read". Set where entity tools are built.
	permission: str | None = None
	# The result is the agent's own text or the administrator's configuration (tool lists, schemas,
	# the analysis catalogue), never what people wrote into records: it brings no untrusted text.
	trusted_output: bool = False

	def __post_init__(self):
		if not NAME_PATTERN.match(self.name):
			raise ValueError(f"Tool name {self.name!r} must look like 'module.action' in snake_case")
		if not self.description.strip():
			raise ValueError(f"Tool {self.name!r} needs a description written for the model")
		if self.parameters.get("type") != "object":
			raise ValueError(f"Tool {self.name!r}: parameters must be a JSON schema of type 'object'")

	@property
	def wire_name(self) -> str:
		return to_wire_name(self.name)

	def schema(self) -> dict:
		"""The function definition sent to an OpenAI-compatible provider."""
		return {
			"type": "function",
			"function": {
				"name": self.wire_name,
				"description": self.description,
				"parameters": self.parameters,
			},
		}


def to_wire_name(name: str) -> str:
	return name.replace(".", WIRE_SEPARATOR)


def from_wire_name(wire: str) -> str:
	"""Accept both the wire form and the dotted form that some models echo back."""
	if "." in wire:
		return wire
	return wire.replace(WIRE_SEPARATOR, ".")


@dataclass(frozen=True)
class EntityWords:
	"""What a person may call one entity: its key, module, label, synonyms and description."""

	key: str
	module: str
	label: str = ""
	synonyms: tuple[str, ...] = ()
	description: str = ""

	def phrases(self) -> list[str]:
		return [self.key.replace("_", " "), self.label, *self.synonyms]


@dataclass(frozen=True)
class Vocabulary:
	"""The business words of the entities behind a registry's tools, handed to the engine by its builder.

	`words`: every entity a question may name (this site's and other systems'), for routing,
	similarity and tool search. `entities`: this site's entity descriptions by key, for rendering
	tables (label, doctype, `resolve(field)` giving a field's type and link); an entity of another
	system is not here, so its rows never link into this site's desk.
	"""

	words: tuple[EntityWords, ...] = ()
	entities: Mapping[str, Any] = field(default_factory=dict)


class Registry:
	"""All tools known to the engine, by name. Registration order is kept (prompts stay stable).

	It also carries the vocabulary of its entities (see `Vocabulary`), so that routing and rendering
	learn the business words from whoever built the tools instead of importing the model themselves.
	"""

	def __init__(self, tools: Iterable[Tool] = (), vocabulary: Vocabulary | None = None):
		self._tools: dict[str, Tool] = {}
		self._frozen = False
		self.vocabulary = vocabulary or Vocabulary()
		self.extend(tools)

	def freeze(self) -> Registry:
		"""Refuse any further tool: a registry shared by every turn of a process never changes."""
		self._frozen = True
		return self

	@property
	def frozen(self) -> bool:
		return self._frozen

	def register(self, tool: Tool) -> Tool:
		if self._frozen:
			raise FrozenRegistryError(
				f"Cannot add {tool.name!r}: this registry is shared by every turn of the process; "
				"build a new Registry for a different set of tools."
			)
		if tool.name in self._tools:
			raise DuplicateToolError(f"A tool named {tool.name!r} is already registered")
		self._tools[tool.name] = tool
		return tool

	def extend(self, tools: Iterable[Tool]) -> None:
		for tool in tools:
			self.register(tool)

	def get(self, name: str) -> Tool | None:
		return self._tools.get(name)

	def __getitem__(self, name: str) -> Tool:
		return self._tools[name]

	def __contains__(self, name: object) -> bool:
		return name in self._tools

	def __iter__(self) -> Iterator[Tool]:
		return iter(self._tools.values())

	def __len__(self) -> int:
		return len(self._tools)

	def names(self) -> list[str]:
		return list(self._tools)

	def by_module(self, module: str) -> list[Tool]:
		return [t for t in self._tools.values() if t.module == module]

	def modules(self) -> list[str]:
		return sorted({t.module for t in self._tools.values()})


# --- tools from typed functions -------------------------------------------------

_SCALARS: dict[Any, dict] = {
	str: {"type": "string"},
	int: {"type": "integer"},
	float: {"type": "number"},
	bool: {"type": "boolean"},
	dict: {"type": "object"},
	list: {"type": "array"},
	Any: {},
}


def _json_type(annotation: Any) -> dict:
	if annotation in _SCALARS:
		return dict(_SCALARS[annotation])
	origin = get_origin(annotation)
	args = get_args(annotation)
	if origin is Literal:
		return {"enum": list(args)}
	if origin in (list, tuple, set, frozenset) or annotation in (list, tuple):
		item = _json_type(args[0]) if args else {}
		return {"type": "array", "items": item} if item else {"type": "array"}
	if origin is dict:
		return {"type": "object"}
	if origin in (typing.Union, types.UnionType):
		options = [a for a in args if a is not type(None)]
		if len(options) == 1:
			return _json_type(options[0])
		return {"anyOf": [_json_type(a) for a in options]}
	raise TypeError(f"Cannot describe parameter type {annotation!r} as JSON schema")


def _param_docs(doc: str) -> tuple[str, dict[str, str]]:
	"""Split a docstring into its description and `name: text` lines under an Args: heading."""
	description, _, rest = doc.partition("\nArgs:")
	params: dict[str, str] = {}
	for line in rest.splitlines():
		name, sep, text = line.strip().partition(":")
		if sep and name.isidentifier():
			params[name] = text.strip()
	return inspect.cleandoc(description), params


def function_tool(
	name: str,
	module: str,
	*,
	writes: bool = False,
	prompt_rules: str | None = None,
	preview: Callable[[dict, Any], dict] | None = None,
	tags: tuple[str, ...] = (),
	trusted_output: bool = False,
) -> Callable[[Callable], Tool]:
	"""Make a Tool from `fn(session, **params)`: the schema comes from the signature and docstring."""

	def build(fn: Callable) -> Tool:
		signature = inspect.signature(fn)
		hints = typing.get_type_hints(fn, include_extras=False)
		description, docs = _param_docs(inspect.getdoc(fn) or "")
		properties: dict[str, dict] = {}
		required: list[str] = []
		for index, (pname, param) in enumerate(signature.parameters.items()):
			if index == 0:
				continue  # the session
			schema = _json_type(hints.get(pname, Any))
			if pname in docs:
				schema["description"] = docs[pname]
			if param.default is inspect.Parameter.empty:
				required.append(pname)
			elif param.default is not None:
				schema["default"] = param.default
			properties[pname] = schema
		parameters = {"type": "object", "properties": properties, "additionalProperties": False}
		if required:
			parameters["required"] = required

		def handler(args: dict, session: Any) -> Any:
			return fn(session, **args)

		return Tool(
			name=name,
			description=description,
			module=module,
			parameters=parameters,
			handler=handler,
			writes=writes,
			prompt_rules=prompt_rules,
			preview=preview,
			tags=tags,
			trusted_output=trusted_output,
		)

	return build
