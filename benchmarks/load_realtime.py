"""Waiting for a turn's end in benchmarks/load.py: realtime events over socket.io, and safety reads.

A person's socket.io connection to Frappe's realtime server (the chat's channel) delivers the
turn events into a mailbox; `wait_for_end` takes the turn's final event from it and meanwhile
reads the turn's state now and then, so that a lost event never hangs the load test. Needs the
socket.io client (benchmark only: `pip install "python-socketio[client]"`) unless --poll.
"""

from __future__ import annotations

import re
import threading
import time
from urllib.parse import urlsplit

# The turn's realtime event (noviz_agent.edge.frappe_session.PROGRESS_EVENT) and its final kinds.
PROGRESS_EVENT = "noviz_agent_progress"
FINAL_EVENTS = {"answer", "error"}
FINAL = {"done", "error", "cancelled"}


# --- waiting for a turn's end -------------------------------------------------------------


class Mailbox:
	"""A person's final turn events, kept by turn id until the waiter takes them.

	The job can publish the end before `send`'s reply has reached the client, so an event is kept
	even when nobody waits for its turn yet.
	"""

	def __init__(self):
		self._final: dict[str, dict] = {}
		self._changed = threading.Condition()
		self.events = 0

	def deliver(self, event) -> None:
		if not isinstance(event, dict):
			return
		with self._changed:
			self.events += 1
			if event.get("event") in FINAL_EVENTS and event.get("turn"):
				self._final[event["turn"]] = event
				self._changed.notify_all()

	def take(self, turn: str, timeout: float) -> dict | None:
		with self._changed:
			self._changed.wait_for(lambda: turn in self._final, timeout=max(0.0, timeout))
			return self._final.pop(turn, None)


def event_state(event: dict) -> dict:
	"""A final realtime event read as a turn state (an `error` event of a lost turn has no status)."""
	status = event.get("status") or ("error" if event.get("event") == "error" else None)
	return {**event, "status": status}


def wait_for_end(turn: str, mailbox: Mailbox, poll, *, until: float, every: float, clock=time.monotonic):
	"""Wait for the turn's final event; meanwhile read its state with `poll()` every `every` seconds.

	The read also recovers a turn whose worker died (turn_status queues it again), and a last read
	at `until` catches an event that never came. Returns (state, how, reads): how is "realtime",
	"poll" or "unfinished"; with an empty mailbox and a short `every` it is plain polling.
	"""
	state, reads = {}, 0
	while True:
		event = mailbox.take(turn, min(every, until - clock()))
		if event is not None:
			return event_state(event), "realtime", reads
		state = poll() or state
		reads += 1
		if state.get("status") in FINAL:
			return state, "poll", reads
		if clock() >= until:
			return state, "unfinished", reads


# --- realtime -----------------------------------------------------------------------------


def origin(url: str) -> str:
	parts = urlsplit(url)
	return f"{parts.scheme}://{parts.netloc}"


def site_name(url: str, sign_in) -> str:
	"""The site's name (the realtime namespace): the URL's host name, or the desk's boot data.

	The desk is read in a session of its own: loading it gives the session a CSRF token, after
	which that session's REST writes (Agent Settings) would need the token too.
	"""
	host = urlsplit(url).hostname or ""
	if host not in ("127.0.0.1", "localhost") and not host.replace(".", "").isdigit():
		return host
	desk = sign_in()
	page = desk.get(f"{url}/app", timeout=60).text
	desk.get(f"{url}/api/method/logout", timeout=30)
	found = re.search(r'"sitename":\s*"([^"]+)"', page)
	if not found:
		raise RuntimeError(f"could not read the site's name from {url}/app: pass --site")
	return found.group(1)


class Realtime:
	"""One person's socket.io connection to Frappe's realtime server, delivering into a mailbox."""

	def __init__(self, realtime_url: str, web_url: str, site: str, sid: str, mailbox: Mailbox):
		import socketio  # benchmark only: pip install "python-socketio[client]"

		self.namespace = f"/{site}"
		self.refused = None
		# websocket only (no long-polling requests); Origin is the web URL: the server checks its
		# host name against the Host's and signs the socket in with a call back to it.
		self.client = socketio.Client(reconnection=False, websocket_extra_options={"origin": origin(web_url)})
		self.client.on(PROGRESS_EVENT, mailbox.deliver, namespace=self.namespace)
		self.client.on("connect_error", self._refused, namespace=self.namespace)
		self.url, self.sid = realtime_url, sid

	def _refused(self, data=None):
		self.refused = (data or {}).get("message") if isinstance(data, dict) else data

	def connect(self, timeout: float = 20) -> None:
		try:
			self.client.connect(
				self.url,
				headers={"Cookie": f"sid={self.sid}"},
				namespaces=[self.namespace],
				transports=["websocket"],
				wait_timeout=timeout,
			)
		except Exception as exc:
			said = f" (server: {self.refused})" if self.refused and self.refused != str(exc) else ""
			raise RuntimeError(f"{exc}{said}") from None

	def close(self) -> None:
		try:
			self.client.disconnect()
		except Exception:
			pass


def realtime_help(realtime_url: str, site: str, reason: str) -> str:
	return (
		f"no realtime connection to {realtime_url} namespace /{site}: {reason}\n"
		"Start Frappe's realtime server (`bench socketio`, port socketio_port of common_site_config.json; "
		"--realtime-url if elsewhere, with the same host name as --url), or run with --poll "
		"to read turn_status every 500 ms instead."
	)
