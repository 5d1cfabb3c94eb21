"""The MCP server over Streamable HTTP, one request at a time, inside any WSGI worker.

Each POST is handled on its own: a fresh SDK transport (`StreamableHTTPServerTransport`, JSON
responses) and a fresh server bound to the person are driven with `anyio.run` for that one request,
so any web worker can answer any request and nothing stays in a process between them. The session
the protocol asks for is a record in an expiring store (Redis on a site): the person it belongs to,
the client's name and capabilities from `initialize`, and the desk conversation its calls are
recorded in. A request with no person signed in gets the SDK's own 401 answer, whose
`WWW-Authenticate` header points clients to the protected-resource metadata (OAuth discovery).

The channel cannot ask the person to confirm inside the client here: the question would have to
wait, in a web worker, for a reply that reaches some other worker. Proposals carry a desk link.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import anyio
import mcp.types as types
from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport

from noviz_agent.channels.mcp import Caller, build_server

SESSION_SECONDS = 7 * 24 * 60 * 60
# A session record is written again (its expiry moved on) at most this often.
REFRESH_SECONDS = 60 * 60
MAX_BODY_BYTES = 1_000_000


@dataclass(frozen=True)
class HttpRequest:
	"""The parts of an HTTP request the transport reads."""

	method: str
	headers: Mapping[str, str]
	body: bytes = b""
	path: str = "/"

	def header(self, name: str) -> str | None:
		name = name.lower()
		return next((v for k, v in self.headers.items() if k.lower() == name), None)


@dataclass
class HttpResponse:
	status: int
	headers: list[tuple[str, str]] = field(default_factory=list)
	body: bytes = b""

	def header(self, name: str) -> str | None:
		return next((v for k, v in self.headers if k.lower() == name.lower()), None)


def error(status: int, message: str, code: int = types.INVALID_REQUEST, headers=()) -> HttpResponse:
	"""A JSON-RPC error the way the SDK's transport writes its own (no request id to answer)."""
	body = types.JSONRPCError(
		jsonrpc="2.0", id="server-error", error=types.ErrorData(code=code, message=message)
	).model_dump_json(by_alias=True, exclude_none=True)
	return HttpResponse(status, [("Content-Type", "application/json"), *headers], body.encode())


# --- ASGI for one request --------------------------------------------------------------


def _scope(request: HttpRequest) -> dict:
	return {
		"type": "http",
		"asgi": {"version": "3.0"},
		"http_version": "1.1",
		"method": request.method.upper(),
		"scheme": "http",
		"path": request.path,
		"raw_path": request.path.encode(),
		"query_string": b"",
		"headers": [
			(k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in request.headers.items()
		],
	}


async def _asgi(app, request: HttpRequest, scope_extra: dict | None = None) -> HttpResponse:
	"""Call an ASGI app with this request; the response it sends, gathered."""
	response = HttpResponse(500)
	delivered = False

	async def receive() -> dict:
		nonlocal delivered
		if delivered:
			await anyio.sleep_forever()
		delivered = True
		return {"type": "http.request", "body": request.body, "more_body": False}

	async def send(message: dict) -> None:
		if message["type"] == "http.response.start":
			response.status = message["status"]
			response.headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message["headers"]]
		elif message["type"] == "http.response.body":
			response.body += message.get("body", b"")

	await app({**_scope(request), **(scope_extra or {})}, receive, send)
	return response


async def _served(caller: Caller, session_id: str | None, request: HttpRequest) -> HttpResponse:
	server = build_server(caller)
	transport = StreamableHTTPServerTransport(mcp_session_id=session_id, is_json_response_enabled=True)
	async with anyio.create_task_group() as tasks:

		async def run_server(*, task_status=anyio.TASK_STATUS_IGNORED):
			async with transport.connect() as (read, write):
				task_status.started()
				await server.run(read, write, server.create_initialization_options(), stateless=True)

		await tasks.start(run_server)
		response = await _asgi(transport.handle_request, request)
		# One request, one answer: the server and its streams end with it.
		tasks.cancel_scope.cancel()
	return response


def unauthorized(request: HttpRequest, resource_metadata_url: str) -> HttpResponse:
	"""The SDK's own answer to a request without a signed-in person (401 and where to sign in)."""
	gate = RequireAuthMiddleware(None, required_scopes=[], resource_metadata_url=resource_metadata_url)
	return anyio.run(_asgi, gate, request, {"user": None})


# --- sessions ---------------------------------------------------------------------------


def _message(body: bytes) -> dict | None:
	try:
		message = json.loads(body)
	except (TypeError, ValueError):
		return None  # the transport answers with the protocol's parse error
	return message if isinstance(message, dict) else None


def client_label(params: dict) -> str:
	info = params.get("clientInfo") if isinstance(params, dict) else None
	if not isinstance(info, dict):
		return ""
	return " ".join(str(info.get(k) or "").strip() for k in ("name", "version")).strip()[:140]


def new_session(message: dict, user: str, conversation: str) -> dict:
	"""What `initialize` leaves behind: whose session it is, which client, where its calls are recorded."""
	params = message.get("params") if isinstance(message.get("params"), dict) else {}
	capabilities = params.get("capabilities") if isinstance(params.get("capabilities"), dict) else {}
	return {
		"user": user,
		"client": client_label(params),
		"capabilities": sorted(capabilities),
		"protocol": str(params.get("protocolVersion") or ""),
		"conversation": conversation,
		"seen": int(time.time()),
	}


def serve(
	request: HttpRequest,
	*,
	user: str | None,
	caller_for: Callable[[dict], Caller],
	sessions: Any,
	resource_metadata_url: str,
	refusal: str | None = None,
	new_conversation: Callable[[], str] = lambda: secrets.token_hex(5),
) -> HttpResponse:
	"""Answer one HTTP request to the MCP endpoint as `user` (None: nobody is signed in).

	`caller_for(session_record)` builds the person's Caller (the record names the client and the
	conversation); `refusal` is why a signed-in person may
	not use the channel (switched off, or not for their roles). `sessions` is a store with put, get
	and take (MemoryStore in tests, Redis on a site).
	"""
	if user is None:
		return unauthorized(request, resource_metadata_url)
	if refusal:
		return error(HTTPStatus.FORBIDDEN, refusal)
	method = request.method.upper()
	session_id = request.header(MCP_SESSION_ID_HEADER)
	kept = sessions.get(session_id) if session_id else None
	if kept is not None and kept.get("user") != user:
		kept = None  # another person's session id is no session of this person's
	if method == "DELETE":
		if kept is None:
			return error(HTTPStatus.NOT_FOUND, "No such session.")
		sessions.take(session_id)
		return HttpResponse(HTTPStatus.OK)
	if method != "POST":
		# No stream is kept open for server messages: each answer comes with its request.
		return HttpResponse(HTTPStatus.METHOD_NOT_ALLOWED, [("Allow", "POST, DELETE")])
	if len(request.body) > MAX_BODY_BYTES:
		return error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "The request is too large.")
	message = _message(request.body)
	if message is not None and message.get("method") == "initialize":
		session_id = secrets.token_urlsafe(24)
		kept = new_session(message, user, new_conversation())
		sessions.put(session_id, kept, SESSION_SECONDS)
	elif session_id and kept is None:
		# The protocol's answer to an unknown or expired session: the client starts a new one.
		return error(HTTPStatus.NOT_FOUND, "This session has expired or is not yours; initialize again.")
	elif kept is not None and time.time() - kept.get("seen", 0) > REFRESH_SECONDS:
		kept = {**kept, "seen": int(time.time())}
		sessions.put(session_id, kept, SESSION_SECONDS)
	if kept is None:
		# A client that keeps no session: this call alone, recorded in a conversation of its own.
		kept = new_session({}, user, new_conversation())
	return anyio.run(_served, caller_for(kept), session_id, request)
