"""The OpenAI-compatible chat client: one request, bounded retries, the reply as a ModelReply.

Base URL, model and key are settings, never code, so the same path serves OpenAI, Azure
OpenAI, Gemini's OpenAI-compatible endpoint or a local server (vLLM, Ollama, llama.cpp).
Tools go out in the form the server takes (strict, or Gemini's schema subset); calls come
back as structured `tool_calls`, and printed ones are read only as `tool_call_format` says.
Faults end in `ProviderFailure` with a message that says what to check; the API key never
appears in a repr or a message.
"""

from __future__ import annotations

import functools
import random
import re
import ssl
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from noviz_agent.engine.errors import ProviderError
from noviz_agent.engine.provider.interface import ModelReply, ToolCall, Usage
from noviz_agent.engine.provider.retry import Fault, GaveUp, RetryPolicy
from noviz_agent.engine.provider.schemas import dialect_for, for_provider
from noviz_agent.engine.provider.settings import ProviderSettings
from noviz_agent.engine.provider.text_calls import clean_name, parse_text_tool_calls

if TYPE_CHECKING:  # the SDK is imported where a client is made (half a second to import)
	import openai

__all__ = ["PLACEHOLDER_KEY", "OpenAICompatibleProvider", "ProviderFailure", "shared_client"]

# Local servers ignore the key, but the SDK refuses an empty one and would otherwise fall back
# to OPENAI_API_KEY from the environment, sending a real key to whatever server is configured.
PLACEHOLDER_KEY = "no-key"
THINK_BLOCK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


class ProviderFailure(ProviderError):
	"""A `ProviderError` with what failed: `kind`, HTTP `status` when there was one, and `attempts`."""

	def __init__(self, message: str, *, kind: str, attempts: int, status: int | None = None):
		super().__init__(message)
		self.kind = kind
		self.attempts = attempts
		self.status = status


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
	"""The TLS context every provider client uses: the system's CA certificates (and SSL_CERT_FILE /
	SSL_CERT_DIR where set), read once per process instead of once per client (tens of ms)."""
	return ssl.create_default_context()


@functools.lru_cache(maxsize=16)
def shared_client(base_url: str, api_key: str, timeout: float, headers: tuple = ()) -> openai.OpenAI:
	"""One HTTP client per process for each server, key, timeout and headers, reused by every turn.

	A kept client keeps its connections open, and all share one TLS context. It holds no person's
	data: the key is part of what selects it, so a key is only ever sent with the settings it came
	with. Thread-safe (httpx).
	"""
	import openai  # here, not at the top: importing the SDK takes half a second, and a web
	# request that only queues a turn (api.send) never talks to the model

	return openai.OpenAI(
		base_url=base_url,
		api_key=api_key,
		timeout=timeout,
		max_retries=0,
		default_headers=dict(headers) or None,
		http_client=openai.DefaultHttpxClient(verify=tls_context()),
	)


class OpenAICompatibleProvider:
	"""Chat completions over the `openai` SDK, with our own retry policy (the SDK's retries are off)."""

	def __init__(
		self,
		settings: ProviderSettings,
		*,
		sleep: Callable[[float], None] = time.sleep,
		rng: Callable[[], float] = random.random,
		client: Any = None,
	):
		self.settings = settings
		self.dialect = dialect_for(settings.base_url)
		self.retry = RetryPolicy(settings.max_retries, sleep=sleep, rng=rng, where=settings.base_url)
		self.client = client or shared_client(
			settings.base_url,
			settings.api_key or PLACEHOLDER_KEY,
			settings.timeout,
			tuple(sorted(dict(settings.extra_headers).items())),
		)

	def __repr__(self) -> str:
		return f"OpenAICompatibleProvider(base_url={self.settings.base_url!r}, model={self.settings.model!r})"

	def request(self, messages: list[dict], tools: list[dict]) -> dict[str, Any]:
		"""The chat completion request body (without the timeout) for these messages and tools."""
		s = self.settings
		request: dict[str, Any] = {"model": s.model, "messages": messages}
		if tools:
			sent = for_provider(tools, strict=s.strict_tools, dialect=self.dialect)
			request["tools"] = sent
			if self.dialect == "azure" and any(t["function"].get("strict") for t in sent):
				# Azure refuses strict tools with parallel calls; OpenAI's reasoning models refuse
				# the parameter itself, so it is sent only where it is required.
				request["parallel_tool_calls"] = False
		if s.temperature is not None:
			request["temperature"] = s.temperature
		if s.max_tokens is not None:
			request["max_tokens"] = s.max_tokens
		if s.extra_body:
			request["extra_body"] = s.extra_body
		return request

	def complete(
		self, messages: list[dict], tools: list[dict], *, timeout: float | None = None
	) -> ModelReply:
		request = self.request(messages, tools)
		seconds = timeout or self.settings.timeout
		started = time.monotonic()
		try:
			response, attempts = self.retry.run(lambda: self._create(request, seconds))
		except GaveUp as exc:
			raise self._failure(exc.fault, exc.attempts, seconds) from None
		reply = self._reply(response, tools, attempts)
		reply.latency_ms = round((time.monotonic() - started) * 1000, 1)
		return reply

	def _create(self, request: dict[str, Any], seconds: float) -> Any:
		"""POST the request body as it is. The SDK's `create` first walks the whole body against its
		typed parameters (every message and tool schema, ~5 ms a call) to rename aliased keys that
		chat requests do not have; the JSON sent is the same. A client without `post` (a test
		double) gets `create`. With `"stream": true` in the request the answer is the SDK's stream
		of chunks, as `create(stream=True)` gives it."""
		import openai
		from openai.types.chat import ChatCompletion, ChatCompletionChunk

		post = getattr(self.client, "post", None)
		if post is None or not isinstance(self.client, openai.OpenAI):
			return self.client.chat.completions.create(**request, timeout=seconds)
		body = {k: v for k, v in request.items() if k != "extra_body"}
		options: dict[str, Any] = {"timeout": seconds}
		if request.get("extra_body"):
			options["extra_json"] = request["extra_body"]
		if request.get("stream"):
			return post(
				"/chat/completions",
				cast_to=ChatCompletion,
				body=body,
				options=options,
				stream=True,
				stream_cls=openai.Stream[ChatCompletionChunk],
			)
		return post("/chat/completions", cast_to=ChatCompletion, body=body, options=options)

	def _reply(self, response: Any, tools: list[dict], attempts: int) -> ModelReply:
		try:
			choice = response.choices[0]
			message = choice.message
			text = THINK_BLOCK.sub("", message.content or "")
			calls = [
				_native_call(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []
			]
			usage = _usage(response.usage)
			model = response.model or self.settings.model
			finish = choice.finish_reason
		except (AttributeError, IndexError, TypeError, ValueError):
			fault = Fault("bad_response", False, detail="it has no choices[0].message")
			raise self._failure(fault, attempts, self.settings.timeout) from None
		fmt = self.settings.tool_call_format
		if not calls and text and fmt != "native":
			offered = {t.get("function", {}).get("name", "") for t in tools}
			text, calls = parse_text_tool_calls(text, names=offered, lead_in=fmt == "text")
			if calls:
				finish = "tool_calls"
		return ModelReply(text.strip(), calls, usage, model, finish, attempts=attempts)

	def _failure(self, fault: Fault, attempts: int, timeout: float) -> ProviderFailure:
		url = self.settings.base_url
		tries = f"{attempts} {'try' if attempts == 1 else 'tries'}"
		detail = f": {fault.detail}" if fault.detail else ""
		messages = {
			"timeout": f"The model provider at {url} timed out after {timeout:g} s ({tries}). Check that the server is running or raise the timeout in Agent Settings.",
			"connection": f"Could not connect to the model provider at {url} ({tries}){detail}. Check that the server is running and that the base URL in Agent Settings is right.",
			"rate_limit": f"The model provider at {url} is limiting requests (HTTP 429, {tries}){detail}. Wait a moment and try again, or check the plan's rate limits.",
			"server": f"The model provider at {url} failed with HTTP {fault.status} ({tries}){detail}. Check the server's logs, then try again.",
			"stream": f"The model provider at {url} reported an error in the middle of its reply{detail}. Try again; if it keeps happening, check the server's logs.",
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


def _native_call(call_id: str | None, name: str, arguments: Any) -> ToolCall:
	call = ToolCall.from_wire(call_id, name or "", arguments)
	call.name = clean_name(name or "")  # some servers echo OpenAI's internal "functions." prefix
	return call


def field(item: Any, name: str) -> Any:
	"""A field of a reply part: a dict read from the wire, or an object the SDK built."""
	return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _usage(raw: Any) -> Usage:
	if raw is None:
		return Usage()
	details = field(raw, "prompt_tokens_details")
	cached = field(details, "cached_tokens") if details is not None else None
	if cached is None:
		# DeepSeek-style servers report cache hits under their own name.
		extra = raw if isinstance(raw, dict) else (getattr(raw, "model_extra", None) or {})
		cached = extra.get("prompt_cache_hit_tokens")
	return Usage(
		int(field(raw, "prompt_tokens") or 0), int(cached or 0), int(field(raw, "completion_tokens") or 0)
	)
