"""How the load test waits for a turn's end (benchmarks/load_realtime.py): the realtime event when it
comes, a slow safety read meanwhile, never a hang. Without a site or a socket: the mailbox and the
waiting loop are plain Python."""

from __future__ import annotations

import importlib.util
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("load_realtime", ROOT / "benchmarks" / "load_realtime.py")
load_realtime = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(load_realtime)
Mailbox, wait_for_end = load_realtime.Mailbox, load_realtime.wait_for_end


class Clock:
	def __init__(self):
		self.now = 0.0

	def __call__(self):
		return self.now


def test_an_event_published_before_anyone_waits_is_kept_for_its_turn():
	box = Mailbox()
	box.deliver({"event": "answer", "turn": "t1", "status": "done", "response": {"type": "text"}})
	box.deliver({"event": "tool", "turn": "t1"})  # progress: counted, not kept
	box.deliver("not an event")
	state, how, reads = wait_for_end("t1", box, lambda: {"status": "running"}, until=10, every=5)
	assert (how, reads, state["status"]) == ("realtime", 0, "done")
	assert box.events == 2


def test_an_event_arriving_while_waiting_ends_the_wait_at_once():
	box = Mailbox()
	timer = threading.Timer(0.05, box.deliver, [{"event": "answer", "turn": "t2", "status": "done"}])
	timer.start()
	until = time.monotonic() + 60  # an absolute time on the monotonic clock
	state, how, _reads = wait_for_end("t2", box, lambda: {"status": "running"}, until=until, every=30)
	assert (how, state["status"]) == ("realtime", "done")


def test_a_lost_event_is_caught_by_the_safety_read():
	clock, answers = Clock(), iter([{"status": "running"}, {"status": "done", "response": {}}])

	def poll():
		clock.now += 5
		return next(answers)

	state, how, reads = wait_for_end("t3", Mailbox(), poll, until=100, every=0.01, clock=clock)
	assert (how, reads, state["status"]) == ("poll", 2, "done")


def test_a_turn_that_never_ends_stops_at_the_time_bound():
	clock = Clock()

	def poll():
		clock.now += 5
		return {"status": "running"}

	state, how, reads = wait_for_end("t4", Mailbox(), poll, until=12, every=0.01, clock=clock)
	assert (how, state["status"]) == ("unfinished", "running") and reads == 3


def test_an_error_event_of_a_lost_turn_reads_as_an_error():
	box = Mailbox()
	box.deliver({"event": "error", "turn": "t5", "message": "stopped twice"})
	state, how, _ = wait_for_end("t5", box, lambda: {}, until=1, every=1)
	assert (how, state["status"], state["message"]) == ("realtime", "error", "stopped twice")
