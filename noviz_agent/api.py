"""The turn API: whitelisted endpoints the desk chat calls, each running as the signed-in person.

A thin edge: check the input and the person, build the session, call the engine once,
record what happened (conversation turn + interaction log) and return the response.
"""

from __future__ import annotations

import json
import time
import traceback

import frappe
from frappe import _

from noviz_agent import records, validation
from noviz_agent.edge import frappe_governance, frappe_session, frappe_sops, frappe_turns
from noviz_agent.engine import gateway, responses, turn_state
from noviz_agent.engine.llm import OpenAICompatibleProvider
from noviz_agent.engine.selection import make_model_picker
from noviz_agent.engine.streaming import StreamingProvider
from noviz_agent.engine.turn import cancel_proposal, confirm_proposal, run_turn
from noviz_agent.governance import budgets
from noviz_agent.governance.rate_gate import GatedProvider

CONVERSATION = "Agent Conversation"
LOG = "Agent Interaction Log"
RATE_WINDOW_SECONDS = 60 * 60
STREAM_EVERY_SECONDS = 0.1


# --- checks ---------------------------------------------------------------------------


def _person() -> str:
	"""The signed-in desk user; guests and website users cannot talk to the agent."""
	user = frappe.session.user
	if user == "Guest" or frappe.get_cached_value("User", user, "user_type") != "System User":
		frappe.throw(_("Sign in to the desk to use the agent."), frappe.PermissionError)
	return user


def can_use_agent() -> bool:
	"""add_to_apps_screen permission: the agent is shown to desk users, as the chat is."""
	user = frappe.session.user
	return user != "Guest" and frappe.get_cached_value("User", user, "user_type") == "System User"


def _checked(check, *args):
	try:
		return check(*args)
	except validation.InputError as exc:
		frappe.throw(str(exc), frappe.ValidationError, title=_("Check your input"))


def _own_conversation(name: str, user: str):
	"""The person's own conversation; someone else's is refused even for a System Manager."""
	try:
		doc = frappe.get_doc(CONVERSATION, name)
	except frappe.DoesNotExistError:
		frappe.clear_last_message()
		frappe.throw(_("Conversation {0} does not exist.").format(name), frappe.DoesNotExistError)
	if doc.person != user:
		frappe.throw(_("Conversation {0} belongs to someone else.").format(name), frappe.PermissionError)
	return doc


def _over_rate_limit(user: str, values: dict, channel: str = "") -> str | None:
	"""A fixed hourly window per person in Redis; the message when this question is one too many.

	An assistant's tool calls (channel "mcp") are counted in a window of their own, against their own
	limit: one question to an assistant is often several calls."""
	field, what = (
		("mcp_calls_per_hour", "made {allowed} tool calls")
		if channel
		else ("rate_limit_per_hour", "asked {allowed} questions")
	)
	allowed = validation.limit(values, field)
	window = int(time.time() // RATE_WINDOW_SECONDS)
	key = frappe.cache.make_key(f"noviz_agent:rate:{channel + ':' if channel else ''}{user}:{window}")
	count = frappe.cache.incr(key)
	if count == 1:
		frappe.cache.expire(key, RATE_WINDOW_SECONDS + 60)
	retry_in = RATE_WINDOW_SECONDS - int(time.time() % RATE_WINDOW_SECONDS)
	return validation.rate_window(count, allowed, RATE_WINDOW_SECONDS, retry_in, what)


def _issued_turn(turn: str | None, user: str) -> str:
	"""The turn id for this message: one `new_turn` issued to this person and not used yet, or a
	new one. An id from anywhere else (another person's, a guessed one) is refused."""
	if not turn:
		return frappe_turns.new_turn(user)
	turn = _checked(validation.check_turn_id, turn)
	if not frappe_turns.use_turn(turn, user):
		frappe.throw(
			_("This turn id was not issued to you, or was used already; send the message again."),
			frappe.PermissionError,
		)
	return turn


# --- recording ------------------------------------------------------------------------


def _record(
	user,
	conversation,
	question,
	outcome_response,
	outcome_log,
	entry,
	rules_sent,
	values,
	new_name=None,
	title=None,
):
	"""Write the turn and its log; if the conversation cannot be written, the log still is.

	One insert each: the log names the conversation it belongs to from the start (a new one's
	name is chosen beforehand), and the links, made here in this transaction, are not read back.
	"""
	conversation_name = conversation.name if conversation else new_name
	log = frappe.get_doc(
		{
			"doctype": LOG,
			**records.log_values(
				outcome_log,
				request=question,
				person=user,
				conversation=conversation_name,
				rates=records.Rates.from_settings(values),
			),
		}
	)
	# The person is the signed-in user and the conversation is written just below.
	log.flags.ignore_links = True
	# The agent's own audit record: people may read theirs but never create or edit log rows.
	log.insert(ignore_permissions=True)
	try:
		savepoint = "noviz_agent_turn"
		frappe.db.savepoint(savepoint)
		if conversation is None:
			conversation = frappe.get_doc(
				{
					"doctype": CONVERSATION,
					"title": title or records.conversation_title(question),
					"person": user,
					"rules_sent": "[]",
				}
			)
		conversation.append("turns", records.turn_values(question, outcome_response, entry, log.name))
		conversation.turn_count = len(conversation.turns)
		conversation.last_activity = frappe.utils.now_datetime()
		if rules_sent is not None:
			conversation.rules_sent = json.dumps(sorted(rules_sent))
		# The agent's own record of the person's conversation (checked as theirs above); people
		# read it but cannot write turns into it directly, so no one can forge an answer.
		# A conversation made from a dict has no name yet but is not marked local: test the name.
		# Its turn links the log inserted above and its person is the signed-in user.
		conversation.flags.ignore_links = True
		if not conversation.name:
			conversation.insert(ignore_permissions=True, set_name=new_name)
		else:
			# Only the new turn and the three fields that changed are written (a save would write
			# every earlier turn again): the turn is inserted as its own child document, with its
			# hooks, and the conversation's fields are set.
			turn_row = conversation.turns[-1]
			frappe.get_doc(
				{
					**turn_row.as_dict(no_default_fields=True),
					"doctype": turn_row.doctype,
					"parent": conversation.name,
					"parenttype": CONVERSATION,
					"parentfield": "turns",
					"idx": turn_row.idx,
				}
			).insert(ignore_permissions=True)
			changed = {f: conversation.get(f) for f in ("turn_count", "last_activity", "rules_sent")}
			frappe.db.set_value(CONVERSATION, conversation.name, changed)
		if log.conversation != conversation.name:
			log.db_set("conversation", conversation.name, update_modified=False)
	except Exception:
		frappe.db.rollback(save_point=savepoint)
		scrub = frappe_session.scrubber(values, user)
		log.db_set(
			{
				"error": scrub(
					(log.error or "") + "\nCould not store the turn: " + traceback.format_exc(limit=3)
				),
				"failed": 1,
				# A new conversation that could not be written is no conversation of this log.
				"conversation": log.conversation
				if log.conversation and frappe.db.exists(CONVERSATION, log.conversation)
				else None,
			}
		)
		conversation = None
	return conversation, log


def _reply(response: dict, conversation, log, turn: str | None) -> dict:
	return {
		"response": response,
		"conversation": conversation.name if conversation else None,
		"log": log.name if log else None,
		"turn": turn,
	}


# --- endpoints ------------------------------------------------------------------------


@frappe.whitelist(methods=["POST"])
def send(
	message: str, conversation: str | None = None, turn: str | None = None, background: int | None = None
) -> dict:
	"""Answer one message in a conversation (a new one when none is given).

	A turn that calls the model runs on a background queue when a worker serves it: the reply
	comes at once with `status: "queued"` and the turn id; progress and the answer follow over
	realtime (`noviz_agent_progress`) and from `turn_status`. Cached answers and refusals come
	at once; with no worker (or `background=0`), the turn runs inside this request. Site tests
	run turns inline unless they ask for `background=1`.
	"""
	user = _person()
	values = frappe_session.load_settings(with_secrets=True)
	max_chars = validation.limit(values, "max_message_chars")
	question = _checked(validation.check_message, message, max_chars)
	# Whose conversation first; only then whether it is busy (nobody probes another's conversation).
	doc = _own_conversation(conversation, user) if conversation else None
	if doc is not None and frappe_turns.busy(doc.name):
		frappe.throw(_(frappe_turns.BUSY_MESSAGE), frappe.ValidationError, title=_("Still answering"))
	turn = _issued_turn(turn, user)

	limited = _over_rate_limit(user, values)
	if limited:
		# Not logged: a flood of refused requests would bury the real turns.
		return _reply(records.error_response(limited, kind="refusal"), doc, None, turn)

	cache = frappe_governance.response_cache(values, user)
	first = doc is None
	hit = cache.lookup(user, question, first_in_conversation=first) if cache else None
	if hit is not None:
		response = {**hit.response, "cached": {"kind": hit.kind, "question": hit.question}}
		log = {
			**records.failure_log(None, response_type=response.get("type") or "text"),
			"cache_hit": hit.kind,
		}
		doc, log_doc = _record(user, doc, question, response, log, None, None, values)
		return _reply(response, doc, log_doc, turn)

	# A new conversation's name is chosen now, so proposals of this turn are bound to it.
	conversation_name = doc.name if doc else frappe.generate_hash(length=10)
	if background is None:
		background = 0 if frappe.flags.in_test else 1
	queue = frappe_turns.queue_for(values) if int(background) else None
	if queue is None:
		reply, _figures = _answer(user, values, question, doc, turn, conversation_name)
		return reply
	if not frappe_turns.claim_conversation(conversation_name, turn):
		frappe.throw(_(frappe_turns.BUSY_MESSAGE), frappe.ValidationError, title=_("Still answering"))
	state = turn_state.new(
		turn, user, question, conversation_name, new_conversation=doc is None, now=time.time()
	)
	frappe_turns.start(state, *queue)
	return {
		"response": None,
		"conversation": conversation_name,
		"log": None,
		"turn": turn,
		"status": "queued",
	}


def answer_queued(state: dict, *, progress, cancelled, on_reserved) -> tuple[dict, dict]:
	"""The background job's turn: the same path as an inline turn, as the person, with the job's limits."""
	user = state["user"]
	values = frappe_session.load_settings(with_secrets=True)
	doc = None if state["new_conversation"] else _own_conversation(state["conversation"], user)
	retried = int(state.get("attempt") or 1) > 1
	if doc is None and retried and frappe.db.exists(CONVERSATION, state["conversation"]):
		# A retried attempt whose first try already stored the conversation (a first attempt's
		# conversation is new: its name was chosen when the turn was queued).
		doc = _own_conversation(state["conversation"], user)
	return _answer(
		user,
		values,
		state["message"],
		doc,
		state["turn"],
		state["conversation"],
		turn_seconds=state.get("turn_seconds"),
		progress=progress,
		cancelled=cancelled,
		on_reserved=on_reserved,
	)


def _answer(
	user,
	values,
	question,
	doc,
	turn,
	conversation_name,
	*,
	turn_seconds=None,
	progress=None,
	cancelled=None,
	on_reserved=None,
) -> tuple[dict, dict]:
	"""Run one model turn and record it: budget reserved first and always settled; (reply, figures)."""
	started = time.perf_counter()
	cache = frappe_governance.response_cache(values, user)
	first = doc is None
	rules_sent = frozenset(records.loads(doc.rules_sent, []) or []) if doc else frozenset()
	held = None
	model = frappe_turns.TimedProvider(None)
	stopped = False
	procedures = None
	prepared = None
	try:
		session = frappe_session.build_session(
			values,
			turn=turn,
			conversation=conversation_name,
			turn_seconds=turn_seconds,
			progress_sender=progress,
			cancelled=cancelled,
		)
		caps, worst = frappe_governance.turn_budget(
			user, session.person.roles, values, session.limits.max_tokens, records.Rates.from_settings(values)
		)
		held = budgets.reserve(frappe_governance.RedisUsage(), caps, worst, frappe.utils.getdate())
		if on_reserved is not None:
			on_reserved(held)
		model = frappe_turns.TimedProvider(_streaming(frappe_session.make_provider(values), progress))
		provider = GatedProvider(model, frappe_governance.rate_gate(values))
		history = records.history_from_rows([row.as_dict() for row in doc.turns]) if doc else []
		procedures = frappe_sops.desk_for(doc, provider)
		prepared = time.perf_counter()
		outcome = run_turn(
			session,
			provider,
			question,
			history_turns=history,
			policy_text=values.get("policy_text") or "",
			rules_sent=rules_sent,
			today=frappe.utils.getdate(),
			retriever=_retriever(values),
			max_chars=max_chars_of(values),
			model_picker=_model_picker(values, provider, session.person.roles),
			procedures=procedures,
		)
		response, log, entry, rules_sent = (
			outcome.response,
			outcome.log,
			outcome.history_entry,
			outcome.rules_sent,
		)
		stopped = (log.get("error") or "").startswith("TurnCancelled")
	except budgets.BudgetExceeded as exc:
		response = records.error_response(str(exc), kind="refusal")
		log, entry = records.failure_log(f"budget: {exc}", response_type="refusal"), None
	except frappe_session.NotConfigured as exc:
		hint = exc.admin_hint if "System Manager" in frappe.get_roles(user) else None
		response = records.error_response(str(exc), hint)
		log, entry = records.failure_log(f"not configured: {exc.admin_hint}"), None
	except Exception as exc:
		# A bug or an outage must still leave a logged, readable turn, never a half-written one.
		response = records.error_response(
			_(
				"Something went wrong while answering. Try again; if it keeps happening, tell your administrator."
			),
			None,
		)
		latency = int((time.perf_counter() - started) * 1000)
		scrub = frappe_session.scrubber(values, user)
		log = records.failure_log(
			scrub(f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"), latency_ms=latency
		)
		entry = None
	if held is not None:
		# Every model call of the turn counts, the module picker's and a procedure's included.
		spent = model.prompt_tokens + model.completion_tokens
		if spent > int(log.get("prompt_tokens") or 0) + int(log.get("completion_tokens") or 0):
			log.update(
				prompt_tokens=model.prompt_tokens,
				cached_tokens=model.cached_tokens,
				completion_tokens=model.completion_tokens,
			)
		_settle_budget(held, log, values)
	answered = time.perf_counter()
	doc, log_doc = _record(
		user, doc, question, response, log, entry, rules_sent, values, new_name=conversation_name
	)
	recorded = time.perf_counter()
	# A procedure's step depends on its run: it is never answered from the cache.
	if cache is not None and entry is not None and not stopped and not frappe_sops.handled(procedures):
		wrote = any(_writes(c.get("name")) for c in log.get("tools_called") or [])
		cache.remember(user, question, response, first_in_conversation=first, wrote=wrote)
	frappe_sops.remember(procedures, doc)
	total_ms = (time.perf_counter() - started) * 1000
	figures = {
		"total_ms": round(total_ms, 1),
		"model_ms": round(model.ms, 1),
		"model_calls": model.calls,
		"engine_ms": round(total_ms - model.ms, 1),
		# Where the engine's own time went: before the loop (session, budget, history), the loop
		# without the model (tools, guards, the response), and writing the turn and its log.
		"prepare_ms": round((prepared - started) * 1000, 1) if prepared else None,
		"loop_ms": round((answered - prepared) * 1000 - model.ms, 1) if prepared else None,
		"record_ms": round((recorded - answered) * 1000, 1),
	}
	reply = _reply(response, doc, log_doc, turn)
	if stopped:
		reply["cancelled"] = True
	return reply, figures


def _streaming(provider, progress):
	"""In a background turn, the model's text streams to the chat (site config `noviz_agent_stream: 0` stops it)."""
	if progress is None or not isinstance(provider, OpenAICompatibleProvider):
		return provider
	if not int(frappe.conf.get("noviz_agent_stream", 1) or 0):
		return provider
	# A piece at most every 0.1 s: each is a realtime message and a Redis write, and a provider
	# sends a token at a time.
	return StreamingProvider(
		provider, lambda piece: progress({"event": "text", "delta": piece}), min_seconds=STREAM_EVERY_SECONDS
	)


def max_chars_of(values: dict) -> int:
	return validation.limit(values, "max_message_chars")


def _writes(name: str | None) -> bool:
	"""Whether a called tool writes, as the registry declares it (not guessed from its name)."""
	tool = frappe_session.registry().get(name or "")
	return bool(tool and tool.writes)


def _settle_budget(held, log: dict, values: dict) -> None:
	"""Replace the turn's reservation with what it really spent, and record that spend."""
	rates = records.Rates.from_settings(values)
	tokens = int(log.get("prompt_tokens") or 0) + int(log.get("completion_tokens") or 0)
	cost = records.estimate_cost(
		log.get("prompt_tokens") or 0, log.get("cached_tokens") or 0, log.get("completion_tokens") or 0, rates
	)
	actual = budgets.Spend(tokens, cost)
	crossed = budgets.settle(frappe_governance.RedisUsage(), held, actual)
	frappe_governance.record_spend(held, actual)
	frappe_governance.notify_crossed(crossed)


def _model_picker(values: dict, provider, roles):
	"""One cheap model call that picks modules, for the roles the administrator named; else None."""
	named = set(validation.lines(values.get("model_selection_roles")))
	if not named & set(roles):
		return None
	return make_model_picker(lambda messages: provider.complete(messages, [], timeout=15).text)


def _retriever(values: dict):
	"""Knowledge passages for the prompt when the knowledge store is available; never fails a turn."""
	if not values.get("use_knowledge"):
		return None
	from noviz_agent.edge.frappe_knowledge import retriever

	return retriever(values)


def _settle(token: str, conversation: str | None, *, confirm: bool) -> dict:
	user = _person()
	token = _checked(validation.check_token, token)
	doc = _own_conversation(conversation, user) if conversation else None
	values = frappe_session.load_settings()
	session = frappe_session.build_session(values, progress=False, conversation=doc.name if doc else None)
	outcome = confirm_proposal(session, token) if confirm else cancel_proposal(session, token)
	outcome = frappe_sops.after_settle(doc, session, token, confirm, outcome, values)
	if doc is not None:
		state = records.settled_state(confirm, outcome.response)
		for row in doc.turns:
			response = records.loads(row.response, {})
			if records.settle_proposal(response, token, state):
				row.response = json.dumps(response, default=str, ensure_ascii=False)
				# Written now: recording the turn below adds its own row and rewrites no earlier one.
				frappe.db.set_value(row.doctype, row.name, "response", row.response)
				break
	question = _("Confirm") if confirm else _("Cancel")
	doc, log = _record(
		user, doc, question, outcome.response, outcome.log, outcome.history_entry, None, values
	)
	return _reply(outcome.response, doc, log, None)


@frappe.whitelist(methods=["POST"])
def confirm(token: str, conversation: str | None = None) -> dict:
	"""Carry out the change behind a proposal the person confirmed."""
	return _settle(token, conversation, confirm=True)


@frappe.whitelist(methods=["POST"])
def cancel(token: str, conversation: str | None = None) -> dict:
	"""Withdraw a proposal; its token can never be used afterwards."""
	return _settle(token, conversation, confirm=False)


@frappe.whitelist(allow_guest=True, methods=["GET", "POST", "DELETE"])
def mcp(**_request):
	"""The MCP server (Streamable HTTP) for assistants signed in as the person: OAuth bearer or API key.

	The channel reads the JSON-RPC body itself (frappe's form arguments are ignored); a request with
	no credentials is answered with the protocol's 401, which points the client to the OAuth metadata.
	"""
	from noviz_agent.edge import frappe_mcp

	return frappe_mcp.handle(
		record=_record_mcp_call, admit=lambda values: _over_rate_limit(frappe.session.user, values, "mcp")
	)


def _record_mcp_call(values: dict, conversation: str, call: dict) -> None:
	"""One assistant call as a turn of its client's conversation, written exactly as a chat turn is."""
	user = frappe.session.user
	doc = _own_conversation(conversation, user) if frappe.db.exists(CONVERSATION, conversation) else None
	_record(
		user,
		doc,
		call["question"],
		call["response"],
		call["log"],
		call["entry"],
		None,
		values,
		new_name=conversation,
		# A new conversation is named after its client, not after its first call's arguments.
		title=call.get("title"),
	)


@frappe.whitelist(methods=["GET"])
def mcp_clients() -> list[dict]:
	"""The assistants connected over MCP, for administrators: who, which client, when last, how many calls."""
	frappe.only_for("System Manager")
	from noviz_agent.edge import frappe_mcp

	return frappe_mcp.connected_clients()


@frappe.whitelist(methods=["POST"])
def new_turn() -> dict:
	"""A turn id for the person's next message, made here: the chat matches progress events to it
	before `send` returns, and only its owner can send with it, read it or stop it."""
	return {"turn": frappe_turns.new_turn(_person())}


@frappe.whitelist(methods=["GET"])
def goals() -> dict:
	"""The person's standing goals with their last findings, and the proposals waiting in their inbox."""
	from noviz_agent.edge import frappe_goals

	return frappe_goals.overview(_person())


@frappe.whitelist(methods=["POST"])
def goal_active(name: str, active: int | str = 0) -> dict:
	"""Pause a standing goal (its person or a System Manager) or switch it back on (its person only)."""
	from noviz_agent.edge import frappe_goals

	_person()
	return frappe_goals.set_active(name, str(active).lower() in ("1", "true", "yes"))


@frappe.whitelist(methods=["GET", "POST"])
def turn_status(turn: str) -> dict:
	"""A turn's state for its owner: status, progress so far, streamed text, and the answer when done.

	The chat calls it after a page reload (or when realtime is not connected). A turn whose
	worker died is queued once more here, or ends with a clear message.
	"""
	user = _person()
	turn = _checked(validation.check_turn_id, turn)
	state = frappe_turns.checked(frappe_turns.owned(turn, user))
	return turn_state.for_client(state)


@frappe.whitelist(methods=["POST"])
def stop_turn(turn: str) -> dict:
	"""Stop the person's own turn: a queued one ends now, a running one before its next step."""
	user = _person()
	turn = _checked(validation.check_turn_id, turn)
	state = frappe_turns.owned(turn, user)
	if not turn_state.is_final(state):
		state = frappe_turns.request_stop(state)
	return turn_state.for_client(state)


@frappe.whitelist(methods=["POST"])
def feedback(log: str, rating: str, comment: str | None = None) -> dict:
	"""Record the person's rating (up/down) and comment on one of their own turns."""
	user = _person()
	rating = _checked(validation.check_rating, rating)
	comment = _checked(validation.check_comment, comment)
	person = frappe.db.get_value(LOG, log, "person")
	if person is None:
		frappe.throw(_("Interaction log {0} does not exist.").format(log), frappe.DoesNotExistError)
	if person != user:
		frappe.throw(_("You can only rate your own answers."), frappe.PermissionError)
	frappe.db.set_value(
		LOG,
		log,
		{"rating": rating, "feedback_comment": comment, "feedback_at": frappe.utils.now_datetime()},
		update_modified=False,
	)
	return {"log": log, "rating": rating}


@frappe.whitelist(methods=["GET", "POST"])
def conversations(limit: int = 50, start: int = 0) -> list[dict]:
	"""The person's own conversations, most recent first."""
	user = _person()
	return frappe.get_list(
		CONVERSATION,
		filters={"person": user},
		fields=["name", "title", "last_activity", "turn_count"],
		order_by="last_activity desc",
		limit_start=max(0, int(start)),
		limit_page_length=min(max(1, int(limit)), 200),
	)


@frappe.whitelist(methods=["GET", "POST"])
def conversation(name: str) -> dict:
	"""One conversation with its turns: for its owner, or an Agent Auditor (whose read is recorded)."""
	user = _person()
	doc = frappe_governance.readable_conversation(name, user)
	return {
		"name": doc.name,
		"title": doc.title,
		"person": doc.person,
		"last_activity": str(doc.last_activity or ""),
		"turns": [records.turn_for_client(row.as_dict()) for row in doc.turns],
	}


@frappe.whitelist(methods=["GET"])
def audit_record(doctype: str, name: str) -> dict:
	"""An interaction log or procedure run with its content (the question, errors, tool calls, the
	run's memory): for its person, or an Agent Auditor whose read is recorded in Agent Audit Read."""
	user = _person()
	doc = frappe_governance.audited_record(doctype, name, user)
	if doc.doctype == LOG:
		return {
			"name": doc.name,
			"person": doc.person,
			"conversation": doc.conversation,
			"creation": str(doc.creation),
			"response_type": doc.response_type,
			"request": doc.request,
			"error": doc.error,
			"feedback_comment": doc.feedback_comment,
			"tool_calls": [
				{"tool": row.tool, "status": row.status, "ms": row.ms, "error": row.error}
				for row in doc.tool_calls
			],
		}
	return {
		"name": doc.name,
		"person": doc.person,
		"conversation": doc.conversation,
		"sop": doc.sop,
		"status": doc.status,
		"state": records.loads(doc.state, {}),
	}


@frappe.whitelist(methods=["GET", "POST"])
def page(result_id: str, number: int) -> dict:
	"""Another page of a table kept server-side; it is fetched again as this person, through the gateway."""
	_person()
	result_id, number = _checked(validation.check_page, result_id, number)
	values = frappe_session.load_settings()
	session = frappe_session.build_session(values, progress=False)
	record = session.results.get(result_id)
	if isinstance(record, dict) and record.get("user") not in (None, session.user):
		record = None
	call = records.page_call(record, result_id, number)
	table = None
	if call is not None:
		result = gateway.call_tool(session, *call)
		if result.status != "ok":
			frappe.throw(result.error or _("That page could not be fetched."), frappe.ValidationError)
		table = responses.table_from(result.data)
	elif record is not None:
		table = records.page_of_result(record, number, validation.limit(values, "page_size"))
	if table is None:
		frappe.throw(
			_("This table is no longer available; ask the question again."), frappe.DoesNotExistError
		)
	return {"table": table}


@frappe.whitelist(methods=["GET"])
def dashboard_pdf(result_id: str) -> None:
	"""A dashboard or analysis the person built, as a PDF download; someone else's result id finds nothing."""
	from noviz_agent.engine.errors import ToolError
	from noviz_agent.tools import analytics

	_person()
	result_id = (result_id or "").strip()
	if not result_id or len(result_id) > 64:
		frappe.throw(_("Give the result id of a dashboard or analysis."), frappe.ValidationError)
	session = frappe_session.build_session(frappe_session.load_settings(), progress=False)
	try:
		# Results live in the person's own store and carry their user: another's id is simply not there.
		content = analytics.dashboard_pdf(session, result_id, _report_meta(session.user))
	except ToolError as exc:
		frappe.throw(str(exc), frappe.DoesNotExistError, title=_("No PDF for this result"))
	frappe.local.response.filename = f"{result_id}.pdf"
	frappe.local.response.filecontent = content
	frappe.local.response.type = "download"


@frappe.whitelist(methods=["GET"])
def client_settings() -> dict:
	"""What the chat needs to know before the first message (never any secret)."""
	_person()
	values = frappe_session.load_settings()
	return {
		"max_message_chars": validation.limit(values, "max_message_chars"),
		"configured": bool((values.get("base_url") or "").strip() and (values.get("model") or "").strip()),
		"writes_enabled": bool(values.get("enable_writes")),
	}


def boot_session(bootinfo) -> None:
	"""boot_session hook: the chat's limits, so it can check a message before sending it."""
	if frappe.session.user == "Guest":
		return
	try:
		values = frappe_session.load_settings()
	except Exception:
		# Before migrate creates Agent Settings, the desk must still boot.
		return
	bootinfo.noviz_agent = {"max_message_chars": validation.limit(values, "max_message_chars")}


@frappe.whitelist(methods=["POST"])
def upload_document(conversation: str | None = None, turn: str | None = None) -> dict:
	"""A document uploaded in the chat (multipart field `file`): stored privately, read, proposed as a draft.

	Large files are read on the long queue when a worker serves it; the answer then reaches the
	person over realtime (`noviz_agent_intake`), with page progress on the usual progress event.
	"""
	from noviz_agent.edge import frappe_files
	from noviz_agent.intake.files import IntakeError

	user = _person()
	doc = _own_conversation(conversation, user) if conversation else None
	upload = frappe.request.files.get("file") if frappe.request and frappe.request.files else None
	if upload is None:
		frappe.throw(_("Choose a file to upload."), frappe.ValidationError, title=_("Check your input"))
	values = frappe_session.load_settings()
	# An upload is a question like any other: it counts against the person's hourly rate.
	limited = _over_rate_limit(user, values)
	if limited:
		return _reply(records.error_response(limited, kind="refusal"), doc, None, None)
	turn = _issued_turn(turn, user)
	# Chosen now, so the draft's proposal is bound to this conversation wherever it is read.
	conversation_name = doc.name if doc else frappe.generate_hash(length=10)
	content = upload.stream.read()
	try:
		file = frappe_files.save_upload(content, upload.filename, doc.name if doc else None, values)
	except IntakeError as exc:
		frappe.throw(str(exc), frappe.ValidationError, title=_("This file cannot be read"))
	if frappe_files.runs_in_background(len(content)):
		frappe_files.enqueue_intake(
			user, file, conversation_name, turn, new_conversation=doc is None, filename=upload.filename
		)
		text = _("{0} is large; it is being read in the background. The draft appears here when it is ready.")
		queued = {**responses.empty_response(), "text": text.format(upload.filename)}
		return _reply(queued, doc, None, turn) | {"file": file, "queued": True}
	reply = answer_upload(user, values, file, upload.filename, doc, conversation_name, turn)
	return reply | {"file": file}


def answer_upload(user, values, file: str, filename: str, doc, conversation_name: str, turn: str) -> dict:
	"""Read an uploaded document into a proposal and record it as a turn of the conversation, with
	its log row: the same path inline and in the background job."""
	from noviz_agent.edge import frappe_files

	started = time.perf_counter()
	question = _("Document: {0}").format(filename)
	response, log, entry = frappe_files.run_intake(values, file, filename, conversation_name, turn)
	log["latency_ms"] = int((time.perf_counter() - started) * 1000)
	doc, log_doc = _record(
		user, doc, question, response, log, entry, None, values, new_name=conversation_name
	)
	if doc is not None:
		frappe_files.attach_to_conversation(file, doc.name)
	return _reply(response, doc, log_doc, turn)


# --- proposals edited in place, conversations, export -----------------------------------

PINNED_KEY = "noviz_agent_pinned_conversations"
EXPORT_MAX_ROWS = 10000
EXPORT_FORMATS = ("csv", "xlsx")
TITLE_MAX_CHARS = 140


def _json_arg(value, what: str):
	if isinstance(value, str):
		try:
			value = json.loads(value)
		except ValueError:
			frappe.throw(
				_("{0} must be JSON.").format(what), frappe.ValidationError, title=_("Check your input")
			)
	return value


def _stored_proposal(doc, token: str) -> tuple[object, dict] | tuple[None, None]:
	"""The turn row of a conversation holding the proposal with this token, and its stored response."""
	for row in doc.turns if doc else []:
		response = records.loads(row.response, {})
		proposal = (response or {}).get("proposal")
		if isinstance(proposal, dict) and proposal.get("token") == token:
			return row, response
	return None, None


@frappe.whitelist(methods=["POST"])
def edit_proposal(token: str, values, conversation: str | None = None) -> dict:
	"""Change the values of an open create/update proposal: checked again as a new proposal with a new
	token, after which the old token is withdrawn. When the new values are refused the old one stays."""
	user = _person()
	token = _checked(validation.check_token, token)
	edits = _json_arg(values, _("The new values"))
	if not isinstance(edits, dict) or not edits:
		frappe.throw(_("Give the fields to change, as an object of field: value."), frappe.ValidationError)
	doc = _own_conversation(conversation, user) if conversation else None
	session = frappe_session.build_session(
		frappe_session.load_settings(), progress=False, conversation=doc.name if doc else None
	)
	record = gateway.peek(session, token)
	if record is None:
		frappe.throw(
			_("This proposal is no longer open (confirmed, cancelled or expired). Ask for the change again."),
			frappe.ValidationError,
		)
	action = record["tool"].rpartition(".")[2]
	if action not in ("create", "update") or not isinstance(record["args"].get("values"), dict):
		frappe.throw(
			_("Only new records and changes can be edited; this proposal can be confirmed or cancelled.")
		)
	args = {**record["args"], "values": {**record["args"]["values"], **edits}}
	result = gateway.call_tool(session, record["tool"], args)
	if result.status != "proposal":
		frappe.throw(
			result.error or _("These values were refused."), frappe.ValidationError, title=_("Not changed")
		)
	gateway.cancel(session, token)
	proposal = responses.proposal_block(result)
	row, stored = _stored_proposal(doc, token)
	if row is not None:
		# The warning about instruction-like data read in that turn still applies to the edited values.
		if stored["proposal"].get("warning"):
			proposal["warning"] = stored["proposal"]["warning"]
		stored["proposal"] = proposal
		row.db_set("response", json.dumps(stored, default=str, ensure_ascii=False), update_modified=False)
	return {"proposal": proposal}


def _pinned(user: str) -> list[str]:
	return records.loads(frappe.defaults.get_user_default(PINNED_KEY, user) or "[]", []) or []


@frappe.whitelist(methods=["GET", "POST"])
def search_conversations(query: str = "", limit: int = 50) -> list[dict]:
	"""The person's own conversations whose title or questions contain the words; pinned ones first."""
	user = _person()
	query = (query or "").strip()[:200]
	or_filters = None
	if query:
		like = f"%{query}%"
		or_filters = [["title", "like", like], ["Agent Conversation Turn", "question", "like", like]]
	rows = frappe.get_list(
		CONVERSATION,
		filters={"person": user},
		or_filters=or_filters,
		fields=["name", "title", "last_activity", "turn_count"],
		order_by="last_activity desc",
		limit_page_length=min(max(1, int(limit)), 200),
		distinct=True,
	)
	pinned = _pinned(user)
	for row in rows:
		row["pinned"] = row["name"] in pinned
	return sorted(rows, key=lambda r: not r["pinned"])


@frappe.whitelist(methods=["POST"])
def rename_conversation(name: str, title: str) -> dict:
	"""Give one's own conversation a new title."""
	user = _person()
	title = " ".join(str(title or "").split())
	if not title or len(title) > TITLE_MAX_CHARS:
		frappe.throw(
			_("Give a title of 1 to {0} characters.").format(TITLE_MAX_CHARS),
			frappe.ValidationError,
			title=_("Check your input"),
		)
	doc = _own_conversation(name, user)
	doc.db_set("title", title, update_modified=False)
	return {"name": doc.name, "title": title}


@frappe.whitelist(methods=["POST"])
def pin_conversation(name: str, pinned: int | str = 1) -> dict:
	"""Pin one's own conversation to the top of the list (or unpin it)."""
	user = _person()
	doc = _own_conversation(name, user)
	want = str(pinned).lower() in ("1", "true", "yes")
	kept = [n for n in _pinned(user) if n != doc.name and frappe.db.exists(CONVERSATION, n)]
	if want:
		kept.insert(0, doc.name)
	frappe.defaults.set_user_default(PINNED_KEY, json.dumps(kept[:50]), user)
	return {"name": doc.name, "pinned": want}


@frappe.whitelist(methods=["POST"])
def delete_conversation(name: str) -> dict:
	"""Delete one's own conversation; its interaction logs (the audit trail) are kept, unlinked from it."""
	user = _person()
	doc = _own_conversation(name, user)
	log = frappe.qb.DocType(LOG)
	frappe.qb.update(log).set(log.conversation, None).where(log.conversation == doc.name).run()
	audit = frappe.qb.DocType("Agent Audit Read")
	frappe.qb.update(audit).set(audit.conversation, None).where(audit.conversation == doc.name).run()
	# Desk Users may delete the conversations they own (the DocType's if_owner permission).
	frappe.delete_doc(CONVERSATION, doc.name)
	pinned = [n for n in _pinned(user) if n != doc.name]
	frappe.defaults.set_user_default(PINNED_KEY, json.dumps(pinned), user)
	return {"name": doc.name, "deleted": True}


def _export_table(session, record, result_id: str) -> tuple[list[str], list[list]]:
	"""Every row of a kept result the person may read, fetched again as them (list results page by page)."""
	if record.get("kind") in ("analysis", "dashboard"):
		table = (record.get("result") or {}).get("table") or {}
		columns = [str(c) for c in table.get("columns") or []]
		return columns, [list(r) for r in table.get("rows") or []][:EXPORT_MAX_ROWS]
	rows, columns, number = [], None, 1
	while len(rows) < EXPORT_MAX_ROWS:
		call = records.page_call(record, result_id, number)
		if call is None:
			table = records.page_of_result(record, 1, EXPORT_MAX_ROWS)
		else:
			result = gateway.call_tool(session, *call)
			if result.status != "ok":
				frappe.throw(
					result.error or _("That result could not be read again."), frappe.ValidationError
				)
			table = responses.table_from(result.data)
		if not table or not table["rows"]:
			break
		columns = columns or table["columns"]
		rows.extend(table["rows"])
		if call is None or len(rows) >= int(table["page"].get("total") or 0):
			break
		number += 1
	columns = columns or []
	return [c["label"] for c in columns], [[r.get(c["key"]) for c in columns] for r in rows[:EXPORT_MAX_ROWS]]


@frappe.whitelist(methods=["GET"])
def export_result(result_id: str, file_format: str = "csv") -> None:
	"""A kept result as CSV or XLSX (frappe's own writer), for the person who built it only."""
	import csv
	import io

	from frappe.utils.xlsxutils import make_xlsx

	_person()
	file_format = (file_format or "csv").lower()
	if file_format not in EXPORT_FORMATS:
		frappe.throw(_("Choose csv or xlsx."), frappe.ValidationError, title=_("Check your input"))
	result_id = (result_id or "").strip()
	if not result_id or len(result_id) > 64:
		frappe.throw(_("Give the result id of a table or analysis."), frappe.ValidationError)
	session = frappe_session.build_session(frappe_session.load_settings(), progress=False)
	record = session.results.get(result_id)
	if not isinstance(record, dict) or record.get("user") != session.user:
		# Someone else's result id finds nothing, exactly like an expired one.
		frappe.throw(
			_("This result is no longer available; ask the question again."), frappe.DoesNotExistError
		)
	header, rows = _export_table(session, record, result_id)
	if not header:
		frappe.throw(_("This result has no table to export."), frappe.DoesNotExistError)
	data = [header, *rows]
	if file_format == "xlsx":
		content = make_xlsx(data, "Noviz export").getvalue()
	else:
		buffer = io.StringIO()
		csv.writer(buffer).writerows(data)
		content = buffer.getvalue().encode("utf-8-sig")
	frappe.local.response.filename = f"{result_id}.{file_format}"
	frappe.local.response.filecontent = content
	frappe.local.response.type = "download"


def _report_meta(user: str) -> dict:
	"""What the analysis PDF prints about the site: letter head, company, currency, who and when,
	and frappe's own number formatting (the same figures as the chat shows)."""
	company = frappe_session.default_company(user)
	currency = (
		frappe.get_cached_value("Company", company, "default_currency") if company else None
	) or frappe.defaults.get_global_default("currency")

	def site_format(value, unit=None, money=None):
		if value is None:
			return ""
		if isinstance(value, str):
			return value
		if unit == "currency":
			return frappe.utils.fmt_money(value, currency=money or currency)
		if unit == "%":
			return frappe.utils.fmt_money(value, precision=1) + "%"
		if unit in ("count", "people", "documents"):
			return frappe.utils.fmt_money(round(value), precision=0)
		precision = 0 if float(value).is_integer() else 2
		text = frappe.utils.fmt_money(value, precision=precision)
		return _("{0} days").format(text) if unit == "days" else text

	meta = {
		"company": company,
		"currency": currency,
		"generated_on": frappe.utils.format_datetime(frappe.utils.now_datetime()),
		"generated_by": frappe.utils.get_fullname(user),
		"format": site_format,
	}
	heads = frappe.get_list(
		"Letter Head", filters={"is_default": 1, "disabled": 0}, fields=["name", "image"], limit_page_length=1
	)
	if heads:
		meta["letter_head"] = heads[0].name
		meta["letter_head_image"] = _letter_head_image(heads[0].image)
	return meta


def _letter_head_image(file_url: str | None):
	"""The letter head's image as an array for the PDF, or None (then its name is printed)."""
	if not file_url:
		return None
	try:
		import io

		import numpy
		from PIL import Image

		content = frappe.get_doc("File", {"file_url": file_url}).get_content()
		with Image.open(io.BytesIO(content)) as image:
			return numpy.asarray(image.convert("RGBA"))
	except Exception:
		return None
