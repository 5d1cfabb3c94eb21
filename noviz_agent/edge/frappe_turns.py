"""Background turns on the site: queue a turn, run it in any worker, stop it, and recover a lost one.

The turn's state (engine/turn_state.py) lives in Redis under its turn id; the worker that runs
it keeps a heartbeat key alive while it works. Whoever reads the state of a turn that is neither
queued nor heartbeating (its worker was killed) queues it once more, or ends it with a clear
message after the last attempt; the turn's budget reservation is settled either way.
"""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager

import frappe
from frappe import _

from noviz_agent import validation
from noviz_agent.edge import frappe_governance, frappe_session, frappe_warm
from noviz_agent.edge.frappe_session import PROGRESS_EVENT
from noviz_agent.engine import turn_state
from noviz_agent.governance import budgets

JOB = "noviz_agent.tasks.run_turn"
QUEUES = ("default", "long")
STATE_TTL = 24 * 60 * 60
HEARTBEAT_EVERY = 5
HEARTBEAT_TTL = 20
# Seconds kept between the turn's own limit, the job's timeout and the worker's timeout.
MARGIN = 30
BUSY_MESSAGE = "Wait for the answer to your previous message in this conversation, or stop it first."


def _key(turn: str, part: str) -> str:
	return frappe.cache.make_key(f"noviz_agent:turn:{turn}:{part}")


# --- turn ids -------------------------------------------------------------------------

TURN_ID_CHARS = 24


def new_turn(user: str) -> str:
	"""A turn id made here for this person (never by the browser), stored with its owner only if
	no turn has it: nobody can take over an id someone else holds, nor guess one."""
	for _attempt in range(5):
		turn = frappe.generate_hash(length=TURN_ID_CHARS)
		if frappe.cache.set(_key(turn, "owner"), user, nx=True, ex=STATE_TTL):
			return turn
	frappe.throw(_("A new turn could not be started; send the message again."))


def use_turn(turn: str, user: str) -> bool:
	"""Whether `turn` was issued to this person and is used now for the first time (then it is
	marked used, atomically): a turn id answers one message, its owner's."""
	if _owner(turn) != user:
		return False
	return bool(frappe.cache.set(_key(turn, "used"), "1", nx=True, ex=STATE_TTL))


def _owner(turn: str) -> str | None:
	raw = frappe.cache.get(_key(turn, "owner"))
	return raw.decode() if isinstance(raw, bytes) else raw


def load(turn: str) -> dict | None:
	"""The turn's state with the progress its job reported so far (one round trip to Redis).

	A state whose person is not the one the id was issued to is no state of that turn: nothing
	stored under an id can make it someone else's.
	"""
	pipe = frappe.cache.pipeline(transaction=False)
	pipe.get(_key(turn, "state"))
	pipe.lrange(_key(turn, "events"), 0, -1)
	pipe.get(_key(turn, "text"))
	pipe.get(_key(turn, "owner"))
	raw, events, text, owner = pipe.execute()
	if raw is None:
		return None
	state = json.loads(raw)
	owner = owner.decode() if isinstance(owner, bytes) else owner
	if owner is None or state.get("user") != owner:
		return None
	for event in events or []:
		state = turn_state.with_event(state, json.loads(event))
	if text:
		state = turn_state.with_event(state, {"event": "text", "delta": text.decode()})
	return state


def _stored(state: dict) -> dict:
	stored = {k: v for k, v in state.items() if k != "text"}
	stored["events"] = [e for e in state.get("events") or [] if e.get("event") == "retry"]
	return stored


def save(state: dict) -> dict:
	"""Store the state; the progress of the running attempt stays in its own keys (see `progress`)."""
	frappe.cache.set(_key(state["turn"], "state"), json.dumps(_stored(state), default=str), ex=STATE_TTL)
	return state


def _forget_progress(turn: str) -> None:
	"""A retried attempt starts with no progress: the lost attempt's steps and text go."""
	frappe.cache.delete(_key(turn, "events"), _key(turn, "text"))


def owned(turn: str, user: str) -> dict:
	"""The turn's state for its owner; another person's turn id finds nothing, like a missing one."""
	state = load(turn) if turn else None
	if state is None or state.get("user") != user:
		frappe.throw(
			_("Turn {0} was not found; ask the question again.").format(turn), frappe.DoesNotExistError
		)
	return state


# --- the queue ------------------------------------------------------------------------


def queue_for(values: dict) -> tuple[str, int, float] | None:
	"""(queue, job timeout, turn seconds) for a background turn, or None when no worker serves a queue.

	The job's timeout stays MARGIN below the queue's worker timeout, and the turn's own limit
	MARGIN below the job's, so a turn always ends with its own message, never a killed job.
	"""
	from frappe.utils.background_jobs import get_queues_timeout

	from noviz_agent.edge.frappe_session import served_queues

	wanted = float(validation.limit(values, "max_seconds"))
	timeouts = get_queues_timeout()
	served = served_queues()
	if served is None:
		return None
	for queue in QUEUES:
		limit = int(timeouts.get(queue) or 300) - MARGIN
		if wanted + MARGIN > limit and queue != QUEUES[-1]:
			continue
		if queue not in served:
			continue
		job_timeout = int(min(wanted + MARGIN, limit))
		return queue, job_timeout, float(max(5, job_timeout - MARGIN))
	return None


def claim_conversation(conversation: str, turn: str) -> bool:
	"""One turn at a time per conversation: two would race on the same conversation record."""
	return bool(frappe.cache.set(_key(conversation, "busy"), turn, nx=True, ex=STATE_TTL))


# Delete the conversation's lock only if this turn holds it, in one step.
RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


def release_conversation(conversation: str, turn: str) -> None:
	frappe.cache.eval(RELEASE, 1, _key(conversation, "busy"), turn)


def busy(conversation: str) -> bool:
	"""Whether a turn of this conversation is still being answered (its lock outlives a killed worker
	only until the turn is recovered or ends)."""
	held = frappe.cache.get(_key(conversation, "busy"))
	if held is None:
		return False
	turn = held.decode() if isinstance(held, bytes) else held
	state = load(turn)
	if state is None or turn_state.is_final(checked(state)):
		frappe.cache.delete(_key(conversation, "busy"))
		return False
	return True


def start(state: dict, queue: str, job_timeout: int, turn_seconds: float) -> dict:
	"""Store the queued turn, only if no state is stored under its id yet, and queue its job."""
	state = {**state, "queue": queue, "job_timeout": job_timeout, "turn_seconds": turn_seconds}
	if _owner(state["turn"]) != state["user"] or not frappe.cache.set(
		_key(state["turn"], "state"), json.dumps(_stored(state), default=str), ex=STATE_TTL, nx=True
	):
		frappe.throw(_("This turn was already started; send the message again."), frappe.ValidationError)
	_enqueue(state)
	return state


def _enqueue(state: dict) -> None:
	frappe.enqueue(
		JOB,
		queue=state["queue"],
		timeout=state["job_timeout"],
		job_id=turn_state.job_id(state["turn"], state["attempt"]),
		deduplicate=True,
		turn=state["turn"],
		attempt=state["attempt"],
	)


def _job_pending(state: dict) -> bool:
	"""Whether the queue still holds this attempt's job, or a worker took it moments ago."""
	from frappe.utils.background_jobs import get_job

	job = get_job(turn_state.job_id(state["turn"], state["attempt"]))
	if job is None:
		return False
	status = job.get_status(refresh=False)
	if status in ("queued", "deferred", "scheduled"):
		return True
	if status == "started" and job.started_at is not None:
		started = job.started_at.timestamp() if hasattr(job.started_at, "timestamp") else 0
		return time.time() - started < HEARTBEAT_TTL
	return False


def _alive(turn: str) -> bool:
	return frappe.cache.get(_key(turn, "alive")) is not None


def checked(state: dict) -> dict:
	"""The state, with a lost turn queued once more or ended with a clear message."""
	if turn_state.is_final(state):
		return state
	if not turn_state.is_lost(state, alive=_alive(state["turn"]), job_pending=_job_pending(state)):
		return state
	# Several readers may notice at once: only one recovers.
	if not frappe.cache.set(_key(state["turn"], "recover"), "1", nx=True, ex=HEARTBEAT_TTL):
		return state
	# Read again: the turn may have ended (or moved on) since it was read above.
	fresh = load(state["turn"])
	if fresh is None or turn_state.is_final(fresh) or fresh.get("attempt") != state.get("attempt"):
		return fresh or state
	if not turn_state.is_lost(fresh, alive=_alive(fresh["turn"]), job_pending=_job_pending(fresh)):
		return fresh
	state = fresh
	_settle_lost(state)
	action, state = turn_state.recovered({**state, "reservation": None}, time.time())
	_forget_progress(state["turn"])
	save(state)
	if action == "retry":
		_enqueue(state)
	else:
		release_conversation(state["conversation"], state["turn"])
		publish(state["user"], state["turn"], {"event": "error", "message": state["message_for_person"]})
	return state


def _settle_lost(state: dict) -> None:
	"""A killed attempt spent an unknown part of its reservation: it is settled at the full reservation."""
	held = state.get("reservation")
	if not held:
		return
	reservation = budgets.Reservation(
		held["month"],
		budgets.Spend(**held["amount"]),
		[budgets.Cap(**cap) for cap in held.get("caps") or []],
	)
	budgets.settle(frappe_governance.RedisUsage(), reservation, reservation.amount)
	frappe_governance.record_spend(reservation, reservation.amount)


def request_stop(state: dict) -> dict:
	"""Ask the turn to stop; a turn not yet started ends now, a running one before its next step."""
	frappe.cache.set(_key(state["turn"], "stop"), "1", ex=STATE_TTL)
	if state.get("status") == turn_state.QUEUED:
		state = save(turn_state.stopped_before_start(state, time.time()))
		release_conversation(state["conversation"], state["turn"])
		publish(state["user"], state["turn"], {"event": "answer", **_answer_event(state)})
	return state


class StopFlag:
	"""Whether the person asked the running turn to stop, read with the turn's other Redis calls.

	Each progress message the job sends reads the flag in the same round trip (see `progress`),
	and a reading younger than FRESH_SECONDS answers the next question. The engine asks right
	after each step's "thinking" notice and after the step's tools: its checks cost no round trip
	of their own, and a stop pressed at any time before a step's notice is seen before that step
	calls the model.
	"""

	FRESH_SECONDS = 0.25

	def __init__(self, turn: str, clock=time.monotonic):
		self.key, self.clock = _key(turn, "stop"), clock
		self.seen_at: float | None = None
		self.stopped = False

	def saw(self, value) -> bool:
		self.stopped = self.stopped or value is not None
		self.seen_at = self.clock()
		return self.stopped

	def __call__(self) -> bool:
		if self.stopped:
			return True
		if self.seen_at is not None and self.clock() - self.seen_at < self.FRESH_SECONDS:
			return False
		return self.saw(frappe.cache.get(self.key))


class TimedProvider:
	"""The model provider with the time spent in it summed, so the engine's own time can be told apart,
	and the tokens of every call of the turn (the module picker's too), so the budget is settled to all."""

	def __init__(self, provider):
		self.provider, self.ms, self.calls = provider, 0.0, 0
		self.prompt_tokens = self.cached_tokens = self.completion_tokens = 0

	def complete(self, messages: list[dict], tools: list[dict], *, timeout: float | None = None):
		began = time.perf_counter()
		try:
			reply = self.provider.complete(messages, tools, timeout=timeout)
			usage = getattr(reply, "usage", None)
			if usage is not None:
				self.prompt_tokens += int(usage.prompt_tokens or 0)
				self.cached_tokens += int(usage.cached_tokens or 0)
				self.completion_tokens += int(usage.completion_tokens or 0)
			return reply
		finally:
			self.ms += (time.perf_counter() - began) * 1000
			self.calls += 1

	def __getattr__(self, name):
		return getattr(self.provider, name)


# --- running --------------------------------------------------------------------------


def publish(user: str, turn: str, event: dict) -> None:
	frappe.publish_realtime(PROGRESS_EVENT, {**event, "turn": turn}, user=user)


def progress(turn: str, user: str, stop: StopFlag | None = None):
	"""The background turn's progress sender: to the person's browser, and kept for a reload.

	Steps go on a list and streamed text onto a string of the turn's own (one round trip, whatever
	the size of the state); `load` joins them to the state as `turn_state.with_event` would. The
	same round trip reads the turn's stop flag for `stop`.
	"""
	events, text = _key(turn, "events"), _key(turn, "text")

	def send(event: dict) -> None:
		pipe = frappe.cache.pipeline(transaction=False)
		if event.get("event") == "text":
			pipe.append(text, str(event.get("delta") or ""))
			pipe.expire(text, STATE_TTL)
		else:
			pipe.rpush(events, json.dumps({k: v for k, v in event.items() if k != "turn"}, default=str))
			pipe.ltrim(events, -turn_state.MAX_EVENTS, -1)
			pipe.expire(events, STATE_TTL)
		if stop is not None:
			pipe.get(stop.key)
		replies = pipe.execute()
		if stop is not None:
			stop.saw(replies[-1])
		publish(user, turn, event)

	return send


@contextmanager
def heartbeat(turn: str):
	"""Keep the turn's alive key fresh from a thread while the job runs; it expires if the worker dies."""
	key, done = _key(turn, "alive"), threading.Event()
	cache = frappe.cache
	cache.set(key, "1", ex=HEARTBEAT_TTL)

	def beat():
		while not done.wait(HEARTBEAT_EVERY):
			try:
				cache.set(key, "1", ex=HEARTBEAT_TTL)
			except Exception:
				return

	thread = threading.Thread(target=beat, name=f"noviz-turn-{turn}", daemon=True)
	thread.start()
	try:
		yield
	finally:
		done.set()
		cache.delete(key)


def remember_reservation(turn: str, held) -> None:
	"""Keep the attempt's budget reservation with the turn, so a lost attempt can still be settled
	(a reservation against no budget has nothing to settle and is not stored)."""
	import dataclasses

	if not held.caps:
		return
	state = load(turn)
	if state is not None:
		save({**state, "reservation": dataclasses.asdict(held)})


def _answer_event(state: dict) -> dict:
	return {
		"status": state["status"],
		"response": state.get("response"),
		"conversation": state.get("conversation"),
		"log": state.get("log"),
	}


def run(turn: str, attempt: int, answer) -> dict | None:
	"""The job's body: run the turn as its owner with `answer(state, **hooks)`, store and publish the end."""
	state = load(turn)
	if state is None or turn_state.is_final(state) or int(state.get("attempt") or 1) != int(attempt):
		return None  # stopped, finished, or superseded by a newer attempt
	user = state["user"]
	if frappe.session.user != user:
		frappe.set_user(user)
	stop = StopFlag(turn)
	if stop():
		state = save(turn_state.stopped_before_start(state, time.time()))
		release_conversation(state["conversation"], turn)
		publish(user, turn, {"event": "answer", **_answer_event(state)})
		return state
	save(turn_state.started(state, time.time()))
	# The heartbeat lasts until the final state is stored: a reader who saw the turn running
	# with no heartbeat in between would take it for lost and run it a second time.
	with heartbeat(turn):
		try:
			cpu_began = time.process_time()
			reply, figures = answer(
				state,
				progress=progress(turn, user, stop),
				cancelled=stop,
				on_reserved=lambda held: remember_reservation(turn, held),
			)
			frappe.db.commit()
			# CPU time of this process during the turn (the heartbeat thread's share is negligible).
			figures["cpu_ms"] = round((time.process_time() - cpu_began) * 1000, 1)
			figures["preloaded"] = frappe_warm.preloaded()
			figures["worker_mode"] = frappe_warm.worker_mode()
			figures["process_turn"] = frappe_warm.count_turn()
			state = turn_state.finished(load(turn) or state, reply, time.time(), figures=figures)
		except Exception:
			frappe.db.rollback()
			# The traceback may quote a request: it is scrubbed of every key before it is logged.
			scrub = frappe_session.scrubber(frappe_session.load_settings(), user)
			frappe.log_error(
				title="Noviz agent: a background turn failed", message=scrub(frappe.get_traceback())
			)
			state = turn_state.failed(
				load(turn) or state,
				_("The answer could not be finished; the error was logged for your administrator."),
				time.time(),
			)
		save(state)
	release_conversation(state["conversation"], turn)
	if state["status"] == turn_state.ERROR:
		response = state.get("response") or {}
		message = state.get("message_for_person") or (response.get("error") or {}).get("message") or ""
		publish(user, turn, {"event": "error", "message": message, **_answer_event(state)})
	else:
		publish(user, turn, {"event": "answer", **_answer_event(state)})
	return state
