"""The model provider: what the loop sends, what comes back, and an OpenAI-compatible client.

Base URL, model and key are settings, never code, so the same path serves OpenAI, a hosted
compatible API or a local server (vLLM, Ollama, llama.cpp). Faults end in `ProviderError`
with a message that says what to check; the API key never appears in a repr or a message.
Tool calls that open-weights models print as text are recognised by `parse_text_tool_calls`.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import re
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import openai

from noviz_agent.engine.errors import ProviderError
from noviz_agent.engine.tools import from_wire_name, to_wire_name

__all__ = [
	"ModelReply",
	"ModelSettings",
	"OpenAICompatibleProvider",
	"Provider",
	"ProviderError",
	"ProviderFailure",
	"ProviderSettings",
	"SettingsError",
	"ToolCall",
	"Usage",
	"parse_text_tool_calls",
]

log = logging.getLogger(__name__)

# Local servers ignore the key, but the SDK refuses an empty one and would otherwise fall back
# to OPENAI_API_KEY from the environment, sending a real key to whatever server is configured.
PLACEHOLDER_KEY = "no-key"
MAX_BACKOFF_S = 8.0
# A Retry-After longer than this ends the turn now rather than holding the person's request.
MAX_RETRY_AFTER_S = 30.0
THINK_BLOCK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


@dataclass
class ToolCall:
	"""One tool the model asked for, by dotted name; `error` says why the arguments could not be read."""

	id: str
	name: str
	arguments: dict | None
	raw_arguments: str = ""
	error: str | None = None

	@classmethod
	def from_wire(cls, call_id: str | None, wire_name: str, raw: Any) -> ToolCall:
		arguments, raw_text, error = _parse_arguments(raw)
		return cls(call_id or _new_id(), from_wire_name(wire_name or ""), arguments, raw_text, error)

	def to_wire(self) -> dict:
		"""The call as it appears in an assistant message (wire name, arguments as a JSON string)."""
		# The model's own text when there is one: what it sent is what it should see again.
		raw = self.raw_arguments or json.dumps(self.arguments or {}, ensure_ascii=False)
		return {
			"id": self.id,
			"type": "function",
			"function": {"name": to_wire_name(self.name), "arguments": raw},
		}


@dataclass(frozen=True)
class Usage:
	"""Tokens of one call (or a sum of calls): cached tokens are the part of the prompt the provider reused."""

	prompt_tokens: int = 0
	cached_tokens: int = 0
	completion_tokens: int = 0

	@property
	def total_tokens(self) -> int:
		return self.prompt_tokens + self.completion_tokens

	def __add__(self, other: Usage) -> Usage:
		return Usage(
			self.prompt_tokens + other.prompt_tokens,
			self.cached_tokens + other.cached_tokens,
			self.completion_tokens + other.completion_tokens,
		)


@dataclass
class ModelReply:
	"""One answer of the model: text, the tool calls it asked for, and what it cost."""

	text: str
	tool_calls: list[ToolCall] = field(default_factory=list)
	usage: Usage = field(default_factory=Usage)
	model: str = ""
	finish_reason: str | None = None
	latency_ms: float = 0.0
	attempts: int = 1

	def to_message(self) -> dict:
		"""The assistant message to append to the conversation before the tool results."""
		message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
		if self.tool_calls:
			message["tool_calls"] = [call.to_wire() for call in self.tool_calls]
		return message


class Provider(Protocol):
	"""Anything that answers a chat: the OpenAI-compatible client, the scripted test model."""

	def complete(
		self, messages: list[dict], tools: list[dict], *, timeout: float | None = None
	) -> ModelReply: ...


class SettingsError(ValueError):
	"""Agent Settings do not describe a usable model; the message names the field to fill in."""


@dataclass(frozen=True, repr=False)
class ModelSettings:
	"""Where one model lives and how patiently to call it."""

	base_url: str = ""
	api_key: str = ""
	model: str = ""
	timeout: float = 60.0
	max_retries: int = 2
	temperature: float | None = None
	max_tokens: int | None = None
	extra_headers: dict[str, str] = field(default_factory=dict)
	extra_body: dict[str, Any] = field(default_factory=dict)
	role: str = field(default="reasoning", compare=False)

	def __post_init__(self):
		self.validate()

	def validate(self) -> None:
		where = f"Agent Settings ({self.role} model)"
		if not (self.base_url or "").strip():
			raise SettingsError(
				f"{where}: the base URL is missing, e.g. https://api.openai.com/v1 or http://localhost:8000/v1."
			)
		if not re.match(r"^https?://", self.base_url.strip()):
			raise SettingsError(
				f"{where}: the base URL must start with http:// or https:// (got {self.base_url!r})."
			)
		if not (self.model or "").strip():
			raise SettingsError(
				f"{where}: the model name is missing, e.g. gpt-4o-mini or Qwen/Qwen2.5-7B-Instruct."
			)
		if not self.timeout or self.timeout <= 0:
			raise SettingsError(f"{where}: the timeout must be a positive number of seconds.")
		if self.max_retries < 0:
			raise SettingsError(f"{where}: retries cannot be negative.")

	def __repr__(self) -> str:
		shown = []
		for f in fields(self):
			value = getattr(self, f.name)
			if f.name == "role":
				continue
			if f.name == "api_key":
				value = "***" if value else ""
			elif f.name == "extra_headers":
				# Header values may carry credentials too (Azure's api-key, proxies' tokens).
				value = {name: "***" for name in value}
			shown.append(f"{f.name}={value!r}")
		return f"ModelSettings({', '.join(shown)})"

	__str__ = __repr__

	@classmethod
	def from_dict(
		cls, data: dict, role: str = "reasoning", inherit: ModelSettings | None = None
	) -> ModelSettings:
		"""Build from a settings mapping; `inherit` fills a missing base URL and key (same server, other model)."""
		known = {f.name for f in fields(cls)} - {"role"}
		values = {k: v for k, v in (data or {}).items() if k in known and v not in (None, "")}
		if inherit is not None:
			values.setdefault("base_url", inherit.base_url)
			if values["base_url"] == inherit.base_url:
				values.setdefault("api_key", inherit.api_key)
		try:
			for name, kind in (
				("timeout", float),
				("temperature", float),
				("max_retries", int),
				("max_tokens", int),
			):
				if name in values:
					values[name] = kind(values[name])
		except (TypeError, ValueError):
			raise SettingsError(f"Agent Settings ({role} model): {name} must be a number.") from None
		if not values.get("max_tokens"):
			values.pop("max_tokens", None)  # a blank Int field reads as 0, which means "no limit" here
		return cls(**values, role=role)


@dataclass(frozen=True)
class ProviderSettings:
	"""The models the agent uses: one for reasoning, optional ones for images and embeddings."""

	reasoning: ModelSettings
	vision: ModelSettings | None = None
	embedding: ModelSettings | None = None

	@classmethod
	def from_dict(cls, data: dict) -> ProviderSettings:
		"""`{"reasoning": {...}, "vision": {...}, "embedding": {...}}`; the others inherit base URL and key."""
		if not isinstance(data, dict) or not data.get("reasoning"):
			raise SettingsError(
				"Agent Settings: the reasoning model is not configured (base URL and model name)."
			)
		reasoning = ModelSettings.from_dict(data["reasoning"], "reasoning")
		optional = {}
		for role in ("vision", "embedding"):
			part = data.get(role)
			if part and part.get("model"):
				optional[role] = ModelSettings.from_dict(part, role, inherit=reasoning)
		return cls(reasoning=reasoning, **optional)


class ProviderFailure(ProviderError):
	"""A `ProviderError` with what failed: `kind`, HTTP `status` when there was one, and `attempts`."""

	def __init__(self, message: str, *, kind: str, attempts: int, status: int | None = None):
		super().__init__(message)
		self.kind = kind
		self.attempts = attempts
		self.status = status


@dataclass
class _Fault:
	kind: str  # timeout | connection | rate_limit | server | auth | not_found | rejected | bad_response
	retry: bool
	status: int | None = None
	detail: str = ""
	retry_after: float | None = None


class OpenAICompatibleProvider:
	"""Chat completions and embeddings over the `openai` SDK, with our own bounded retry loop."""

	def __init__(
		self,
		settings: ModelSettings,
		*,
		sleep: Callable[[float], None] = time.sleep,
		rng: Callable[[], float] = random.random,
		client: Any = None,
	):
		self.settings = settings
		self.sleep = sleep
		self.rng = rng
		self.client = client or openai.OpenAI(
			base_url=settings.base_url,
			api_key=settings.api_key or PLACEHOLDER_KEY,
			timeout=settings.timeout,
			max_retries=0,
			default_headers=dict(settings.extra_headers) or None,
		)

	def __repr__(self) -> str:
		return f"OpenAICompatibleProvider(base_url={self.settings.base_url!r}, model={self.settings.model!r})"

	def complete(
		self, messages: list[dict], tools: list[dict], *, timeout: float | None = None
	) -> ModelReply:
		s = self.settings
		request: dict[str, Any] = {"model": s.model, "messages": messages}
		if tools:
			request["tools"] = tools
		if s.temperature is not None:
			request["temperature"] = s.temperature
		if s.max_tokens is not None:
			request["max_tokens"] = s.max_tokens
		if s.extra_body:
			request["extra_body"] = s.extra_body
		seconds = timeout or s.timeout
		started = time.monotonic()
		response, attempts = self._with_retries(
			lambda: self.client.chat.completions.create(**request, timeout=seconds), seconds
		)
		reply = self._reply(response, tools, attempts)
		reply.latency_ms = round((time.monotonic() - started) * 1000, 1)
		return reply

	def embed(self, texts: list[str], *, timeout: float | None = None) -> list[list[float]]:
		"""Embedding vectors for `texts`, in order (use with the embedding model's settings)."""
		seconds = timeout or self.settings.timeout
		response, attempts = self._with_retries(
			lambda: self.client.embeddings.create(model=self.settings.model, input=texts, timeout=seconds),
			seconds,
		)
		try:
			return [list(item.embedding) for item in sorted(response.data, key=lambda item: item.index)]
		except (AttributeError, TypeError):
			raise self._failure(
				_Fault("bad_response", False, detail="it has no embedding data"), attempts, seconds
			) from None

	def _reply(self, response: Any, tools: list[dict], attempts: int) -> ModelReply:
		try:
			choice = response.choices[0]
			message = choice.message
			text = THINK_BLOCK.sub("", message.content or "")
			calls = [
				ToolCall.from_wire(c.id, c.function.name, c.function.arguments)
				for c in message.tool_calls or []
			]
			usage = _usage(response.usage)
			model = response.model or self.settings.model
			finish = choice.finish_reason
		except (AttributeError, IndexError, TypeError, ValueError):
			fault = _Fault("bad_response", False, detail="it has no choices[0].message")
			raise self._failure(fault, attempts, self.settings.timeout) from None
		if not calls and text:
			offered = {t.get("function", {}).get("name", "") for t in tools}
			text, calls = parse_text_tool_calls(text, names=offered)
			if calls:
				finish = "tool_calls"
		return ModelReply(text.strip(), calls, usage, model, finish, attempts=attempts)

	def _with_retries(self, call: Callable[[], Any], timeout: float) -> tuple[Any, int]:
		tries = self.settings.max_retries + 1
		for attempt in range(1, tries + 1):
			try:
				return call(), attempt
			except Exception as exc:  # noqa: BLE001 - every fault becomes a ProviderError below
				fault = self._classify(exc)
			delay = self._delay(fault, attempt)
			if not fault.retry or attempt == tries or delay is None:
				raise self._failure(fault, attempt, timeout) from None
			log.warning(
				"model provider %s: %s, retry %d of %d in %.2f s",
				self.settings.base_url,
				fault.kind,
				attempt,
				tries - 1,
				delay,
			)
			self.sleep(delay)
		raise AssertionError("unreachable")

	def _classify(self, exc: Exception) -> _Fault:
		if isinstance(exc, openai.APITimeoutError):
			return _Fault("timeout", True)
		if isinstance(exc, openai.APIConnectionError):
			return _Fault("connection", True, detail=str(exc.__cause__ or exc))
		if isinstance(exc, openai.APIStatusError):
			status, detail = exc.status_code, _detail(exc)
			if status == 429:
				return _Fault("rate_limit", True, status, detail, _retry_after(exc.response.headers))
			if status >= 500 or status in (408, 409):
				return _Fault("server", True, status, detail, _retry_after(exc.response.headers))
			kind = {401: "auth", 403: "auth", 404: "not_found"}.get(status, "rejected")
			return _Fault(kind, False, status, detail)
		if isinstance(exc, openai.APIResponseValidationError):
			return _Fault("bad_response", False, detail=exc.message[:200])
		if isinstance(exc, ValueError):  # the body claimed to be JSON but was not
			return _Fault("bad_response", False, detail="the body is not valid JSON")
		raise exc

	def _delay(self, fault: _Fault, attempt: int) -> float | None:
		if fault.retry_after is not None:
			return fault.retry_after if fault.retry_after <= MAX_RETRY_AFTER_S else None
		base = min(MAX_BACKOFF_S, 0.5 * 2 ** (attempt - 1))
		return base * (0.5 + self.rng() / 2)

	def _failure(self, fault: _Fault, attempts: int, timeout: float) -> ProviderFailure:
		url = self.settings.base_url
		tries = f"{attempts} {'try' if attempts == 1 else 'tries'}"
		detail = f": {fault.detail}" if fault.detail else ""
		messages = {
			"timeout": f"The model provider at {url} timed out after {timeout:g} s ({tries}). Check that the server is running or raise the timeout in Agent Settings.",
			"connection": f"Could not connect to the model provider at {url} ({tries}){detail}. Check that the server is running and that the base URL in Agent Settings is right.",
			"rate_limit": f"The model provider at {url} is limiting requests (HTTP 429, {tries}){detail}. Wait a moment and try again, or check the plan's rate limits.",
			"server": f"The model provider at {url} failed with HTTP {fault.status} ({tries}){detail}. Check the server's logs, then try again.",
			"auth": f"The model provider at {url} refused the API key (HTTP {fault.status}). Check the API key in Agent Settings.",
			"not_found": f"The model provider at {url} does not know the model {self.settings.model!r} (HTTP 404){detail}. Check the model name and base URL in Agent Settings.",
			"rejected": f"The model provider at {url} rejected the request (HTTP {fault.status}){detail}.",
			"bad_response": f"The model provider at {url} sent a reply that is not an OpenAI-compatible response ({fault.detail}). Check that the base URL points to an OpenAI-compatible API (it usually ends in /v1).",
		}
		return ProviderFailure(
			self._redact(messages[fault.kind]), kind=fault.kind, attempts=attempts, status=fault.status
		)

	def _redact(self, text: str) -> str:
		key = self.settings.api_key
		return text.replace(key, "***") if key else text


def _usage(raw: Any) -> Usage:
	if raw is None:
		return Usage()
	details = getattr(raw, "prompt_tokens_details", None)
	cached = getattr(details, "cached_tokens", None) if details is not None else None
	if cached is None:
		# DeepSeek-style servers report cache hits under their own name.
		cached = (getattr(raw, "model_extra", None) or {}).get("prompt_cache_hit_tokens")
	return Usage(int(raw.prompt_tokens or 0), int(cached or 0), int(raw.completion_tokens or 0))


def _detail(exc: openai.APIStatusError) -> str:
	body = exc.body
	if isinstance(body, dict):
		body = body.get("error", body)
		if isinstance(body, dict):
			body = body.get("message") or body
	text = str(body if body is not None else exc.message)
	return text if len(text) <= 200 else text[:197] + "..."


def _retry_after(headers: Any) -> float | None:
	"""Seconds the server asked us to wait: `retry-after-ms`, `Retry-After` seconds or an HTTP date."""
	try:
		if headers.get("retry-after-ms"):
			return max(0.0, float(headers["retry-after-ms"]) / 1000)
		value = headers.get("retry-after")
		if not value:
			return None
		try:
			return max(0.0, float(value))
		except ValueError:
			when = email.utils.parsedate_to_datetime(value)
			return max(0.0, when.timestamp() - time.time())
	except (TypeError, ValueError):
		return None


def _new_id() -> str:
	return f"call_{uuid.uuid4().hex[:12]}"


def _parse_arguments(raw: Any) -> tuple[dict | None, str, str | None]:
	"""(arguments, raw text, error): never raises, so a malformed call goes back to the model as an error."""
	if isinstance(raw, dict):
		try:
			return raw, json.dumps(raw, ensure_ascii=False), None
		except (RecursionError, ValueError, TypeError):
			return None, "", "the arguments could not be read as JSON (nested too deeply or not JSON values)"
	text = raw if isinstance(raw, str) else ("" if raw is None else json.dumps(raw))
	if not text.strip():
		return {}, text, None
	try:
		value = json.loads(text)
		if isinstance(value, str) and value.strip().startswith("{"):
			value = json.loads(value)  # some servers encode the arguments twice
	except ValueError as exc:
		return None, text, f"{getattr(exc, 'msg', exc)} at position {getattr(exc, 'pos', '?')}"
	except RecursionError:
		return None, text, "the JSON is nested too deeply"
	if not isinstance(value, dict):
		return None, text, f"a JSON {type(value).__name__} was sent where an object was expected"
	return value, text, None


# Hermes/Qwen print <tool_call>{...}</tool_call>; a stop token may cut the closing tag.
TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
FENCED = re.compile(r"```(?:json)?[ \t]*\n?\s*(\{.*?\})\s*```", re.DOTALL)
CALL_KEYS = {"name", "arguments", "parameters", "type"}
NAME_IN_TEXT = re.compile(r'"name"\s*:\s*"([^"]+)"')


def parse_text_tool_calls(text: str, names: Iterable[str] | None = None) -> tuple[str, list[ToolCall]]:
	"""Tool calls printed as text instead of structured calls: (the text without them, the calls).

	`<tool_call>` blocks always count; a fenced JSON block or a whole message that is exactly
	a call object (Llama's `{"name", "parameters"}`) counts only when, given `names` (the wire
	names offered), its name is among them, so an example in prose is not mistaken for a call.
	"""
	offered = {to_wire_name(from_wire_name(n)) for n in names} if names is not None else None
	calls: list[ToolCall] = []

	def tagged(match: re.Match) -> str:
		calls.append(_tagged_call(match.group(1)))
		return ""

	def fenced(match: re.Match) -> str:
		call = _object_call(_loads(match.group(1)), offered)
		if call is None:
			return match.group(0)
		calls.append(call)
		return ""

	rest = TAGGED.sub(tagged, text)
	rest = FENCED.sub(fenced, rest)
	if not calls:
		whole = rest.strip().removeprefix("<|python_tag|>").removeprefix("[TOOL_CALLS]").strip()
		if whole[:1] in ("{", "["):
			value = _loads(whole)
			found = [_object_call(v, offered) for v in (value if isinstance(value, list) else [value])]
			if found and all(found):
				return "", found
	return rest.strip(), calls


def _loads(text: str) -> Any:
	try:
		return json.loads(text)
	except ValueError:
		return None


def _object_call(value: Any, offered: set[str] | None) -> ToolCall | None:
	"""A ToolCall when `value` is exactly a call object (name + arguments/parameters), else None."""
	if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not set(value) <= CALL_KEYS:
		return None
	if "arguments" not in value and "parameters" not in value:
		return None
	if offered is not None and to_wire_name(from_wire_name(value["name"])) not in offered:
		return None
	return ToolCall.from_wire(None, value["name"], value.get("arguments", value.get("parameters")))


def _tagged_call(body: str) -> ToolCall:
	value = _loads(body)
	if isinstance(value, dict) and isinstance(value.get("function"), dict):
		value = value["function"]
	if isinstance(value, dict) and isinstance(value.get("name"), str):
		return ToolCall.from_wire(None, value["name"], value.get("arguments", value.get("parameters")))
	found = NAME_IN_TEXT.search(body)
	return ToolCall(
		_new_id(),
		from_wire_name(found.group(1)) if found else "",
		None,
		body,
		"the <tool_call> block is not a JSON object with a name and arguments",
	)
