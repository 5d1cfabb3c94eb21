"""An OpenAI-compatible HTTP stub on 127.0.0.1: scripted faults for tests, simple rules for demos.

    with StubProvider() as stub:
        stub.push(status=429, retry_after=0)            # one rate-limited answer
        stub.push(delay=2, text="late")                 # slower than the client's timeout
        stub.push(tool_calls=[{"name": "sales_order.list", "arguments": "{bad"}])
        provider = OpenAICompatibleProvider(ProviderSettings(stub.base_url, model="stub-model"))

Every chat request is first checked as OpenAI checks it (`engine.schema_rules`, `message_rules`):
tool schemas, the 128-tool cap, the order of tool messages and a structured-output
`response_format` (its schema under strict mode). A request OpenAI would refuse
gets HTTP 400 in OpenAI's error shape and takes nothing from the queue, so every test that
talks to the stub is also a conformance test (`profile="azure"` or `"gemini"` for those rules).

A request with `"stream": true` gets the same reply as Server-Sent Events in OpenAI's chunk
format (`stub_stream`), sent with chunked transfer after any `delay`; scripted errors and `raw`
replies go out as they are. `streams=False` refuses streaming with HTTP 400 instead, as a
server that cannot stream would, to test a client's fallback.

Each chat request takes the next scripted response; with the queue empty, `rules` answers
(a list tool for questions about records, `<entity>.create` for "create a customer named X",
a short text after a tool result). Tool names go out in wire form ("." → "__").

    python -m noviz_agent.testing.stub_provider --port 8765 [--script responses.json] [--no-stream]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sys
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from noviz_agent.engine.message_rules import check_messages
from noviz_agent.engine.schema_rules import PROFILES, Problem, check_response_format, check_tools
from noviz_agent.testing.stub_stream import DONE, event, stream_chunks

__all__ = ["StubProvider", "hashed_embedding", "rule_reply"]

DEFAULT_MODEL = "stub-model"
CREATE = re.compile(
	r"\b(?:create|add|make)\s+(?:(?:a|an|new)\s+)*([a-z][a-z ]*?)\s+(?:named|called)\s+[\"']?(.+?)[\"']?\s*[.!?]?\s*$",
	re.IGNORECASE,
)
RECENT_WORDS = ("recent", "latest", "last", "newest")
RECORD_WORDS = ("invoice", "order", "customer", "supplier", "item", "list", "show", "recent")


class StubProvider:
	"""A local OpenAI-compatible server whose answers are scripted per request."""

	def __init__(
		self,
		script: list[dict] | None = None,
		*,
		host: str = "127.0.0.1",
		port: int = 0,
		rules: bool = True,
		embedding_dims: int = 64,
		verbose: bool = False,
		profile: str = "openai",
		latency: tuple[float, float] = (0.0, 0.0),
		streams: bool = True,
	):
		if profile not in PROFILES:
			raise ValueError(f"StubProvider: unknown profile {profile!r}; use one of {', '.join(PROFILES)}")
		self.profile = profile
		self.refused: list[dict] = []
		self.host, self.port = host, port
		# Seconds each rule answer waits, drawn evenly from (low, high): a model's think time.
		self.latency = latency
		self.rules = rules
		self.streams = streams  # False: `stream: true` gets HTTP 400, as from a server that cannot stream
		self.embedding_dims = embedding_dims
		self.verbose = verbose
		self.requests: list[dict] = []
		self._queue: deque[dict] = deque()
		self._lock = threading.Lock()
		self._stopping = threading.Event()
		self._server: ThreadingHTTPServer | None = None
		self._thread: threading.Thread | None = None
		self._ids = 0
		self._last_prompt = ""
		for response in script or []:
			self.push(response)

	# -- scripting ---------------------------------------------------------------------------

	def push(self, response: dict | None = None, /, **fields: Any) -> StubProvider:
		"""Queue a chat response: text, tool_calls, status (+retry_after, error), delay, usage, raw, times."""
		item = {**(response or {}), **fields}
		unknown = set(item) - {
			"text", "tool_calls", "status", "retry_after", "error", "delay", "usage", "raw",
			"content_type", "times", "finish_reason",
		}  # fmt: skip
		if unknown:
			raise ValueError(f"StubProvider.push: unknown field(s) {sorted(unknown)}")
		with self._lock:
			self._queue.extend(dict(item, times=1) for _ in range(int(item.get("times", 1))))
		return self

	@property
	def pending(self) -> int:
		with self._lock:
			return len(self._queue)

	@property
	def chat_requests(self) -> list[dict]:
		"""Bodies of the chat completion requests received, in order."""
		return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

	# -- lifecycle ---------------------------------------------------------------------------

	@property
	def base_url(self) -> str:
		if self._server is None:
			raise RuntimeError("StubProvider is not running; use it as a context manager or call start()")
		return f"http://{self.host}:{self._server.server_address[1]}/v1"

	def start(self) -> StubProvider:
		self._stopping.clear()
		self._server = ThreadingHTTPServer((self.host, self.port), _Handler)
		self._server.daemon_threads = True
		self._server.block_on_close = False
		self._server.stub = self  # type: ignore[attr-defined]
		self._thread = threading.Thread(
			target=self._server.serve_forever, args=(0.05,), name="stub-provider", daemon=True
		)
		self._thread.start()
		return self

	def stop(self) -> None:
		self._stopping.set()  # wakes handlers sleeping on a `delay`
		if self._server is not None:
			self._server.shutdown()
			self._server.server_close()
			self._server = None

	def __enter__(self) -> StubProvider:
		return self.start()

	def __exit__(self, *exc) -> None:
		self.stop()

	# -- answering ---------------------------------------------------------------------------

	def _record(self, method: str, path: str, headers: dict, body: Any) -> None:
		shown = {k.lower(): v for k, v in headers.items()}
		if "authorization" in shown:
			shown["authorization"] = "<redacted>"
		with self._lock:
			self.requests.append({"method": method, "path": path, "headers": shown, "body": body})

	def problems(self, body: dict) -> list[Problem]:
		"""Why the provider would refuse this chat request (empty when it would accept it)."""
		problems = check_messages(body.get("messages"))
		if "tools" in body:
			problems += check_tools(
				body["tools"], self.profile, parallel_tool_calls=body.get("parallel_tool_calls")
			)
		if "response_format" in body:
			problems += check_response_format(body["response_format"], self.profile, body.get("messages"))
		return problems

	def _next_chat(self, body: dict) -> dict:
		with self._lock:
			if self._queue:
				return self._queue.popleft()
		if self.rules:
			low, high = self.latency
			reply = rule_reply(body)
			return {**reply, "delay": random.uniform(low, high)} if high > 0 else reply
		return {"status": 500, "error": "stub provider: no scripted response left"}

	def _completion(self, body: dict, scripted: dict) -> dict:
		with self._lock:
			self._ids += 1
			n = self._ids
			prompt = json.dumps(body.get("messages", []), sort_keys=True)
			shared = len(_common_prefix(prompt, self._last_prompt))
			self._last_prompt = prompt
		calls = [
			{
				"id": f"call_stub_{n}_{i}",
				"type": "function",
				"function": {
					"name": str(c.get("name", "")).replace(".", "__"),
					"arguments": c["arguments"]
					if isinstance(c.get("arguments"), str)
					else json.dumps(c.get("arguments", {})),
				},
			}
			for i, c in enumerate(scripted.get("tool_calls") or [])
		]
		text = scripted.get("text")
		usage = scripted.get("usage") or {}
		prompt_tokens = int(usage.get("prompt_tokens", len(prompt) // 4 + 1))
		completion_tokens = int(usage.get("completion_tokens", len(text or "") // 4 + 8 * len(calls) + 1))
		content = text if text is not None else (None if calls else "")
		message: dict[str, Any] = {"role": "assistant", "content": content}
		if calls:
			message["tool_calls"] = calls
		return {
			"id": f"chatcmpl-stub-{n}",
			"object": "chat.completion",
			"created": int(time.time()),
			"model": body.get("model") or DEFAULT_MODEL,
			"choices": [
				{
					"index": 0,
					"message": message,
					"finish_reason": scripted.get("finish_reason") or ("tool_calls" if calls else "stop"),
				}
			],
			"usage": {
				"prompt_tokens": prompt_tokens,
				"completion_tokens": completion_tokens,
				"total_tokens": prompt_tokens + completion_tokens,
				"prompt_tokens_details": {
					"cached_tokens": int(usage.get("cached_tokens", min(shared // 4, prompt_tokens)))
				},
			},
		}


class _Handler(BaseHTTPRequestHandler):
	protocol_version = "HTTP/1.1"
	# Headers and body go out in two writes: with Nagle's algorithm the body of every reply on a
	# kept-alive connection waited for the client's delayed ACK (~40 ms added to each model call).
	disable_nagle_algorithm = True
	server_version = "NovizStub/1.0"

	@property
	def stub(self) -> StubProvider:
		return self.server.stub  # type: ignore[attr-defined]

	def log_message(self, format: str, *args: Any) -> None:
		if self.stub.verbose:
			sys.stderr.write(f"stub: {self.address_string()} {format % args}\n")

	def do_GET(self) -> None:
		self.stub._record("GET", self.path, dict(self.headers), None)
		if self.path.rstrip("/").endswith("/models"):
			self._json(
				200,
				{
					"object": "list",
					"data": [{"id": DEFAULT_MODEL, "object": "model", "owned_by": "noviz-stub"}],
				},
			)
		else:
			self._json(404, {"error": {"message": f"no route for GET {self.path}", "type": "not_found"}})

	def do_POST(self) -> None:
		raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
		try:
			body = json.loads(raw or "{}")
		except ValueError:
			body = None
		self.stub._record("POST", self.path, dict(self.headers), body if body is not None else raw)
		if not isinstance(body, dict):
			return self._json(
				400,
				{
					"error": {
						"message": "the request body is not a JSON object",
						"type": "invalid_request_error",
					}
				},
			)
		path = self.path.rstrip("/")
		if path.endswith("/chat/completions"):
			return self._chat(body)
		if path.endswith("/embeddings"):
			texts = body.get("input")
			texts = [texts] if isinstance(texts, str) else [str(t) for t in texts or []]
			dims = int(body.get("dimensions") or self.stub.embedding_dims)
			data = [
				{"object": "embedding", "index": i, "embedding": hashed_embedding(t, dims)}
				for i, t in enumerate(texts)
			]
			tokens = sum(len(t) // 4 + 1 for t in texts)
			return self._json(
				200,
				{
					"object": "list",
					"data": data,
					"model": body.get("model") or DEFAULT_MODEL,
					"usage": {"prompt_tokens": tokens, "total_tokens": tokens},
				},
			)
		self._json(404, {"error": {"message": f"no route for POST {self.path}", "type": "not_found"}})

	def _chat(self, body: dict) -> None:
		if body.get("stream") and not self.stub.streams:
			return self._json(
				400,
				{
					"error": {
						"message": "the stub does not stream; send stream=false",
						"type": "invalid_request_error",
					}
				},
			)
		problems = self.stub.problems(body)
		if problems:
			with self.stub._lock:
				self.stub.refused.append({"body": body, "problems": problems})
			return self._json(400, {"error": openai_error(problems[0])})
		scripted = self.stub._next_chat(body)
		if scripted.get("delay"):
			self.stub._stopping.wait(float(scripted["delay"]))
		status = int(scripted.get("status") or 200)
		if "raw" in scripted:
			return self._send(
				status, str(scripted["raw"]).encode(), scripted.get("content_type", "application/json")
			)
		if status >= 400:
			headers = (
				{"Retry-After": str(scripted["retry_after"])}
				if scripted.get("retry_after") is not None
				else {}
			)
			error = {
				"message": scripted.get("error") or f"stub error {status}",
				"type": "stub_error",
				"code": status,
			}
			return self._json(status, {"error": error}, headers)
		completion = self.stub._completion(body, scripted)
		if body.get("stream"):
			options = body.get("stream_options")
			include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
			return self._stream(stream_chunks(completion, include_usage=include_usage))
		self._json(200, completion)

	def _stream(self, chunks: list[dict]) -> None:
		"""Send chunks as Server-Sent Events in chunked transfer, so a kept-alive client sees the end."""
		try:
			self.send_response(200)
			self.send_header("Content-Type", "text/event-stream; charset=utf-8")
			self.send_header("Cache-Control", "no-cache")
			self.send_header("Transfer-Encoding", "chunked")
			self.end_headers()
			for chunk in chunks:
				data = event(chunk)
				self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
			# [DONE] and the end of the chunked body in one write: the body ends with its last event.
			self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(DONE), DONE))
		except (BrokenPipeError, ConnectionResetError):
			self.close_connection = True  # the client stopped reading mid-stream

	def _json(self, status: int, payload: dict, headers: dict | None = None) -> None:
		self._send(status, json.dumps(payload).encode(), "application/json", headers)

	def _send(self, status: int, data: bytes, content_type: str, headers: dict | None = None) -> None:
		try:
			self.send_response(status)
			self.send_header("Content-Type", content_type)
			self.send_header("Content-Length", str(len(data)))
			for name, value in (headers or {}).items():
				self.send_header(name, value)
			self.end_headers()
			self.wfile.write(data)
		except (BrokenPipeError, ConnectionResetError):
			pass  # the client gave up (its timeout was shorter than our delay): that was the point


# OpenAI's error codes for the rules (None where it sends none).
ERROR_CODES = {
	"tool-count": "array_above_max_length",
	"function-name": "invalid_value",
	"description-length": "string_above_max_length",
	"tools-array": "invalid_type",
	"tool-type": "invalid_value",
}


def openai_error(problem: Problem) -> dict:
	"""The body of OpenAI's HTTP 400 for one broken rule."""
	if problem.rule.startswith(("tool-message", "tool-calls", "message")):
		code = None
	else:
		code = ERROR_CODES.get(problem.rule, "invalid_function_parameters")
	return {"message": problem.message, "type": "invalid_request_error", "param": problem.where, "code": code}


def rule_reply(body: dict) -> dict:
	"""The demo answer to a chat request: a list or create call when one fits, else a short text."""
	messages = body.get("messages") or []
	tools = {
		t["function"]["name"]: t["function"]
		for t in body.get("tools") or []
		if isinstance(t, dict) and "function" in t
	}
	last = messages[-1] if messages else {}
	if last.get("role") == "tool":
		return {"text": _summarise(_content(last.get("content")))}
	question = next((_content(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
	created = CREATE.search(question)
	if created:
		entity = "_".join(created.group(1).lower().split())
		if f"{entity}__create" in tools:
			values = {f"{entity}_name": created.group(2).strip()}
			return {"tool_calls": [{"name": f"{entity}__create", "arguments": {"values": values}}]}
	lower = question.lower()
	lists = [name for name in tools if name.endswith("__list")]
	mentioned = [n for n in lists if n.removesuffix("__list").replace("_", " ") in lower]
	chosen = max(mentioned, key=len) if mentioned else None
	if chosen is None and lists and any(word in lower for word in RECORD_WORDS):
		chosen = lists[0]
	if chosen:
		properties = (tools[chosen].get("parameters") or {}).get("properties") or {}
		args: dict[str, Any] = {"limit": 5} if "limit" in properties else {}
		columns = ((properties.get("fields") or {}).get("items") or {}).get("enum") or []
		if "order_by" in properties and "date" in columns and any(w in lower for w in RECENT_WORDS):
			args["order_by"] = "date desc"
		return {"tool_calls": [{"name": chosen, "arguments": args}]}
	return {
		"text": "I am the stub model for tests and demos. Ask me to list records "
		'("show my recent sales orders") or to create one ("create a customer named Ada").'
	}


def _summarise(content: str) -> str:
	try:
		data = json.loads(content)
	except ValueError:
		return "Here is what I found."
	if isinstance(data, dict):
		problem = data.get("error") or (data.get("status") in ("error", "refused") and data.get("message"))
		if problem:
			return f"The tool reported a problem: {problem}"
		if data.get("proposal") or data.get("status") in ("proposal", "awaiting_confirmation"):
			return "I have prepared this for you to review. Please confirm or cancel it."
		rows = next(
			(data[k] for k in ("rows", "data", "results", "records") if isinstance(data.get(k), list)), None
		)
		data = rows if rows is not None else data
	if isinstance(data, list):
		return f"I found {len(data)} record{'s' if len(data) != 1 else ''}. They are shown below."
	return "Here is what I found."


def _content(content: Any) -> str:
	if isinstance(content, list):  # content parts (text + images)
		return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
	return content or ""


def _common_prefix(a: str, b: str) -> str:
	n = 0
	for x, y in zip(a, b, strict=False):
		if x != y:
			break
		n += 1
	return a[:n]


def hashed_embedding(text: str, dims: int = 64) -> list[float]:
	"""A deterministic unit vector from the text's words: texts sharing words point the same way."""
	vector = [0.0] * dims
	for word in re.findall(r"\w+", text.lower()):
		digest = hashlib.sha256(word.encode()).digest()
		vector[int.from_bytes(digest[:4], "big") % dims] += 1.0 if digest[4] & 1 else -1.0
	norm = math.sqrt(sum(v * v for v in vector))
	if not norm:
		vector[0], norm = 1.0, 1.0  # a zero vector has no direction; cosine distance would be NaN
	return [round(v / norm, 6) for v in vector]


def main(argv: list[str] | None = None) -> None:
	parser = argparse.ArgumentParser(description="OpenAI-compatible stub model server for tests and demos.")
	parser.add_argument("--host", default="127.0.0.1")
	parser.add_argument("--port", type=int, default=8765)
	parser.add_argument("--script", help="JSON file: a list of responses (see StubProvider.push)")
	parser.add_argument("--no-rules", action="store_true", help="answer HTTP 500 once the script is used up")
	parser.add_argument("--quiet", action="store_true")
	parser.add_argument(
		"--no-stream",
		action="store_true",
		help="refuse stream=true with HTTP 400 (to try a client's fallback)",
	)
	parser.add_argument(
		"--profile", default="openai", choices=sorted(PROFILES), help="whose request rules to enforce"
	)
	parser.add_argument(
		"--latency-ms",
		default="0",
		help="think time of each rule answer in ms: one value or LOW-HIGH (drawn evenly), e.g. 300-900",
	)
	args = parser.parse_args(argv)
	low, _, high = args.latency_ms.partition("-")
	latency = (float(low) / 1000, float(high or low) / 1000)
	script = []
	if args.script:
		with open(args.script, encoding="utf-8") as f:
			script = json.load(f)
	stub = StubProvider(
		script,
		host=args.host,
		port=args.port,
		rules=not args.no_rules,
		verbose=not args.quiet,
		profile=args.profile,
		latency=latency,
		streams=not args.no_stream,
	)
	stub.start()
	print(
		f"Stub model provider at {stub.base_url} (model {DEFAULT_MODEL!r}, any API key). Ctrl-C to stop.",
		flush=True,
	)
	try:
		while True:
			time.sleep(3600)
	except KeyboardInterrupt:
		stub.stop()


if __name__ == "__main__":
	main()
