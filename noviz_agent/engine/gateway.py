"""The gateway: the one place a tool runs.

Every call passes here. Unknown, ungranted and malformed calls come back as errors the
model can act on; a write never runs on the model's say-so: it becomes a proposal whose
token the person must send back, once, before it expires.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import jsonschema

from noviz_agent.engine import provenance
from noviz_agent.engine.errors import NotFound, PermissionDenied, ProviderError, ToolError, ValidationFailed
from noviz_agent.engine.session import Session


@dataclass
class ToolResult:
	"""What one call produced: data for the model, or an error, or a proposal awaiting the person."""

	name: str
	args: dict
	status: str  # "ok" | "error" | "refused" | "proposal"
	data: Any = None
	error: str | None = None
	proposal: dict | None = None
	ms: float = 0.0
	meta: dict = field(default_factory=dict)

	@property
	def ok(self) -> bool:
		return self.status == "ok"

	def for_model(self) -> str:
		"""The text the model reads back as the tool's answer."""
		if self.status == "ok":
			payload: Any = self.data
			if isinstance(payload, dict) and payload.get("chart"):
				# The chart is drawn for the person from the result; the model needs only to know that.
				payload = {**payload, "chart": "drawn for the person from this result"}
		elif self.status == "proposal":
			payload = {
				"status": "awaiting_confirmation",
				"message": "Nothing was written. The person sees this proposal with Confirm and Cancel; "
				"tell them what it will do and stop.",
				"proposal": {k: v for k, v in (self.proposal or {}).items() if k != "token"},
			}
		elif self.status == "refused":
			payload = {"status": "refused", "message": self.error}
		else:
			payload = {"status": "error", "message": self.error}
		return json.dumps(payload, default=str, ensure_ascii=False)

	def to_dict(self) -> dict:
		return asdict(self)


def canonical_args(args: dict) -> str:
	return json.dumps(args, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)


def args_hash(args: dict) -> str:
	return hashlib.sha256(canonical_args(args).encode()).hexdigest()


def _sign(secret: bytes, *parts: str) -> str:
	digest = hmac.new(secret, "\x1f".join(parts).encode(), hashlib.sha256).digest()
	return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _elapsed_ms(started: float) -> float:
	return round((time.perf_counter() - started) * 1000, 2)


# Arguments a model can send: far more than any real call needs, far less than hurts the worker.
MAX_ARGUMENT_BYTES = 64_000
MAX_ARGUMENT_DEPTH = 24


def _shape_problem(args: dict) -> str | None:
	"""Why arguments are too deep or too large to look at, found without recursion."""
	stack, size = [(args, 1)], 0
	while stack:
		value, depth = stack.pop()
		if depth > MAX_ARGUMENT_DEPTH:
			return f"they are nested more than {MAX_ARGUMENT_DEPTH} levels deep"
		if isinstance(value, dict):
			size += sum(len(str(k)) for k in value)
			stack.extend((v, depth + 1) for v in value.values())
		elif isinstance(value, list | tuple):
			stack.extend((v, depth + 1) for v in value)
		else:
			size += len(str(value))
		if size > MAX_ARGUMENT_BYTES:
			return f"they are too large (over {MAX_ARGUMENT_BYTES:,} characters)"
	return None


def check_call(session: Session, name: str, args: Any) -> str | None:
	"""Why this call may not run, in words the model can act on; None when it may."""
	tool = session.registry.get(name)
	if tool is None:
		return (
			f"There is no tool named '{name}'. Use tools.search with a few words about what you need "
			"to find the right tool, and call only tools you were offered."
		)
	if not session.may_use(name):
		return (
			f"The tool '{name}' is not available to {session.user}. Their roles or the administrator's "
			"policy do not allow it; say so plainly, and do not try to reach the same data another way."
		)
	if not isinstance(args, dict):
		return f"Arguments for '{name}' must be a JSON object, not {type(args).__name__}."
	shape = _shape_problem(args)
	if shape:
		return f"The arguments for '{name}' cannot be used: {shape}. Send only the fields the tool needs."
	validator = jsonschema.Draft202012Validator(tool.parameters)
	errors = sorted(validator.iter_errors(args), key=lambda e: list(e.path))
	if errors:
		problems = "; ".join(_describe(e) for e in errors[:5])
		return f"The arguments for '{name}' do not fit its parameters: {problems}. Fix them and call again."
	return None


def _describe(error: jsonschema.ValidationError) -> str:
	where = ".".join(str(p) for p in error.absolute_path)
	return f"{where}: {error.message}" if where else error.message


def nulls_as_absent(args: Any, schema: dict) -> Any:
	"""Arguments without the nulls that stand for "not given" (strict mode sends every property).

	A null is dropped where the schema does not itself accept null; objects and arrays of
	objects are cleaned all the way down, so an update's unchanged fields stay unchanged.
	"""
	if isinstance(args, dict) and isinstance(schema.get("properties"), dict):
		out = {}
		for key, value in args.items():
			sub = schema["properties"].get(key, {})
			if value is None and not _accepts_null(sub):
				continue
			out[key] = nulls_as_absent(value, sub)
		return out
	if isinstance(args, list) and isinstance(schema.get("items"), dict):
		return [nulls_as_absent(item, schema["items"]) for item in args]
	return args


def _accepts_null(schema: dict) -> bool:
	kind = schema.get("type")
	return (
		kind == "null"
		or (isinstance(kind, list) and "null" in kind)
		or None in (schema.get("enum") or ())
		or any(_accepts_null(sub) for sub in schema.get("anyOf") or () if isinstance(sub, dict))
	)


def call_tool(session: Session, name: str, args: Any) -> ToolResult:
	"""Run one tool call as the session's person; writes come back as proposals."""
	started = time.perf_counter()
	args = args if args is not None else {}
	tool = session.registry.get(name)
	if tool is not None:
		args = nulls_as_absent(args, tool.parameters)
	problem = check_call(session, name, args)
	if problem:
		kept = args if isinstance(args, dict) and _shape_problem(args) is None else {}
		return _finished(session, None, ToolResult(name, kept, "error", error=problem))
	tool = session.registry[name]
	if tool.writes:
		return _finished(session, tool, _propose(session, tool, args, started))
	return _finished(session, tool, _run(session, tool, args, started))


def _finished(session: Session, tool, result: ToolResult) -> ToolResult:
	"""Every result on its way out: secrets scrubbed from its error, its untrusted text noted, and a
	proposal made after untrusted text warned about it (engine/provenance.py)."""
	result.error = session.scrub(result.error)
	if tool is None:
		return result
	if result.status == "proposal" and result.proposal is not None:
		own = result.proposal.get("warning")
		warned = provenance.warning(session.untrusted, own if isinstance(own, dict) else None)
		if warned is not None and warned is not own:
			result.proposal["warning"] = warned
			if session.untrusted:
				result.meta["guard"] = provenance.GUARD
	else:
		provenance.note_result(
			session.untrusted, tool, result.args, result.status, result.data, result.error, result.meta
		)
	return result


def _failure(tool, args: dict, exc: ToolError, status: str, started: float) -> ToolResult:
	"""A tool's named failure as a result; the system whose words it carries is kept as its origin."""
	meta = {"origin": exc.origin} if getattr(exc, "origin", None) else {}
	return ToolResult(tool.name, args, status, error=str(exc), ms=_elapsed_ms(started), meta=meta)


def _run(session: Session, tool, args: dict, started: float) -> ToolResult:
	try:
		data = tool.handler(args, session)
	except PermissionDenied as exc:
		return _failure(tool, args, exc, "refused", started)
	except (NotFound, ValidationFailed, ToolError) as exc:
		return _failure(tool, args, exc, "error", started)
	except ProviderError as exc:  # a model a tool calls (the vision model) said no: its words say why
		return ToolResult(tool.name, args, "error", error=str(exc), ms=_elapsed_ms(started))
	except Exception as exc:  # a tool bug must not end the turn; the model is told and the log keeps it
		return ToolResult(
			tool.name,
			args,
			"error",
			error=f"The tool '{tool.name}' failed unexpectedly ({type(exc).__name__}: {exc}). "
			"Try a different approach or tell the person it could not be done.",
			ms=_elapsed_ms(started),
			meta={"exception": type(exc).__name__},
		)
	return ToolResult(tool.name, args, "ok", data=data, ms=_elapsed_ms(started))


# --- proposals ----------------------------------------------------------------------


def _preview(session: Session, tool, args: dict, started: float) -> dict | ToolResult:
	"""What the person is asked to confirm, built as them; a refusal or error result when it cannot be."""
	if not session.writes_enabled:
		return ToolResult(
			tool.name,
			args,
			"refused",
			error="Changes through the agent are switched off on this site by the administrator "
			"(Agent Settings). The person can make this change in the desk themselves.",
		)
	try:
		preview = tool.preview(args, session) if tool.preview else {"tool": tool.name, "values": args}
		return _versioned(session, preview)
	except PermissionDenied as exc:
		return _failure(tool, args, exc, "refused", started)
	except ToolError as exc:
		return _failure(tool, args, exc, "error", started)
	except ProviderError as exc:  # the vision model reading a document for the preview said no
		return ToolResult(tool.name, args, "error", error=str(exc), ms=_elapsed_ms(started))


def _versioned(session: Session, preview: dict) -> dict:
	"""The preview with the version of the document it changes, read from the document itself
	(and what it was built from, when that is untrusted text, noted for the warning).

	Whatever the tool or its entity map put there, a proposal that names an existing record
	(`entity` and `name`) is signed for the version the connector reads now: the confirm compares
	it again, so a change made by someone else in between is never overwritten.
	"""
	read = preview.get("_read")
	if read:
		# What the preview itself was built from (an uploaded document): untrusted text of this turn.
		preview = {k: v for k, v in preview.items() if k != "_read"}
		for item in read:
			provenance.note(session.untrusted, item["source"], item.get("texts") or [item["source"]])
	entity, name = preview.get("entity"), preview.get("name")
	if not entity or not name:
		return preview  # a new record: nothing to be stale against
	version = session.connector.version(entity, name)
	if not version:
		raise ToolError(
			f"The current version of {preview.get('doctype') or entity} {name} could not be read, so no "
			"change to it can be proposed safely. Try again, or make the change in the desk."
		)
	return {**preview, "version": str(version)}


def _propose(session: Session, tool, args: dict, started: float, preview: dict | None = None) -> ToolResult:
	if preview is None:
		preview = _preview(session, tool, args, started)
		if isinstance(preview, ToolResult):
			return preview
	nonce = secrets.token_urlsafe(16)
	expires = int(session.clock() + session.limits.proposal_ttl_seconds)
	digest = args_hash(args)
	# The document's version as the person saw it: a confirm after someone else changed the
	# document is refused, so nobody submits or changes a document they have not seen.
	version = str(preview.get("version") or "")
	conversation = session.conversation or ""
	record = {
		"user": session.user,
		"tool": tool.name,
		"args": args,
		"args_hash": digest,
		"expires": expires,
		"version": version,
		"conversation": conversation,
		"preview": preview,
	}
	session.proposals.put(nonce, record, session.limits.proposal_ttl_seconds)
	signature = _sign(
		session.secret, nonce, session.user, tool.name, digest, str(expires), version, conversation
	)
	proposal = {"token": f"{nonce}.{signature}", "tool": tool.name, "expires": expires, **preview}
	return ToolResult(tool.name, args, "proposal", proposal=proposal, ms=_elapsed_ms(started))


class ProposalRefused(Exception):
	"""A confirmation token that cannot be honoured; the message says why."""


def _open(session: Session, token: str, *, take: bool) -> dict:
	if not isinstance(token, str) or token.count(".") != 1:
		raise ProposalRefused(
			"This confirmation token is malformed. Ask the agent to prepare the change again."
		)
	nonce, signature = token.split(".")
	record = session.proposals.take(nonce) if take else session.proposals.get(nonce)
	if record is None:
		raise ProposalRefused(
			"This proposal is no longer open: it was already confirmed or cancelled, or it expired. "
			"Ask the agent to prepare the change again."
		)
	expected = _sign(
		session.secret,
		nonce,
		record["user"],
		record["tool"],
		record["args_hash"],
		str(record["expires"]),
		record.get("version", ""),
		record.get("conversation", ""),
	)
	if not hmac.compare_digest(signature, expected) or args_hash(record["args"]) != record["args_hash"]:
		if take:
			session.proposals.put(nonce, record, max(1, record["expires"] - session.clock()))
		raise ProposalRefused("This confirmation token does not match its proposal and was refused.")
	if record["user"] != session.user:
		if take:
			session.proposals.put(nonce, record, max(1, record["expires"] - session.clock()))
		raise ProposalRefused("This proposal was prepared for another person; only they can confirm it.")
	if record.get("conversation") and record["conversation"] != (session.conversation or ""):
		if take:
			session.proposals.put(nonce, record, max(1, record["expires"] - session.clock()))
		raise ProposalRefused(
			"This proposal belongs to another conversation; confirm it there, or ask again here."
		)
	if record["expires"] < session.clock():
		raise ProposalRefused("This proposal has expired. Ask the agent to prepare the change again.")
	return record


def confirm(session: Session, token: str) -> ToolResult:
	"""Execute the write behind a proposal token: same person, unexpired, untampered, once."""
	started = time.perf_counter()
	try:
		record = _open(session, token, take=True)
	except ProposalRefused as exc:
		return _finished(session, None, ToolResult("proposal.confirm", {}, "refused", error=str(exc)))
	name, args = record["tool"], record["args"]
	problem = check_call(session, name, args)
	if problem:
		return _finished(session, None, ToolResult(name, args, "refused", error=problem))
	if not session.writes_enabled:
		return ToolResult(
			name, args, "refused", error="Changes through the agent are switched off on this site."
		)
	tool = session.registry[name]
	if record.get("version"):
		stale = _stale(session, tool, record, started)
		if stale is not None:
			return _finished(session, tool, stale)
	# The write's own result is what the person confirmed: it brings no text of others.
	return _finished(session, None, _run(session, tool, args, started))


def _stale(session: Session, tool, record: dict, started: float) -> ToolResult | None:
	"""A fresh proposal when the document changed since the person saw it; None when it has not.

	The preview is built again as the person (so a permission lost since is noticed too) and its
	version compared with the one the token was signed for.
	"""
	args = record["args"]
	preview = _preview(session, tool, args, started)
	if isinstance(preview, ToolResult):
		return preview
	now = str(preview.get("version") or "")
	if now == record["version"]:
		return None  # unchanged: the original proposal is carried out
	fresh = _propose(session, tool, args, started, preview)
	what = (
		" ".join(str(p) for p in (record["preview"].get("doctype"), args.get("name")) if p) or "The document"
	)
	fresh.error = (
		f"{what} was changed since this proposal was shown, so nothing was done. Here is the proposal "
		"again with the document as it is now; confirm it if it is still what you want."
	)
	fresh.meta["stale"] = {"shown": record["version"], "now": now}
	return fresh


def cancel(session: Session, token: str) -> ToolResult:
	"""Withdraw a proposal so its token can never be used."""
	try:
		record = _open(session, token, take=True)
	except ProposalRefused as exc:
		return _finished(session, None, ToolResult("proposal.cancel", {}, "refused", error=str(exc)))
	return ToolResult(record["tool"], record["args"], "ok", data={"cancelled": True})


def peek(session: Session, token: str) -> dict | None:
	"""The proposal behind a token, for showing it again; None if it cannot be confirmed."""
	try:
		return _open(session, token, take=False)
	except ProposalRefused:
		return None
