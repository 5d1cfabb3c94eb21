"""Load test: N concurrent people through the real turn API of a served site, with a stub model.

Each person signs in as their own desk user and opens the chat (all of them before the clock
starts: a login is not a turn); their first questions then come spread over --ramp-seconds (default 5; 0: all in
the same instant), and each person asks the next as soon as an answer arrives. Each question
goes through `noviz_agent.api.send`, and the person waits for the turn's final realtime event (`noviz_agent_progress` with `answer` or `error`)
on a socket.io connection of their own, as the chat does; `noviz_agent.api.turn_status` (what the
chat reads after a reload) is read as the chat's slow safety poll (every --safety-poll-seconds,
15 s as in the chat while realtime is connected, and once at the time bound) so that a lost event
never hangs the run. The job's figures of each turn are read from turn_status after the run, so
that reading them does not load the site during it.
`--poll` reads turn_status every 500 ms instead, for a site without Frappe's realtime server.
The model is the OpenAI-compatible stub (`noviz_agent.testing.stub_provider`) on 127.0.0.1,
started here with a think time per answer, so the figures show what the agent adds on top of the model.

    python benchmarks/load.py --url http://127.0.0.1:8000 --admin-password admin \\
        [--people 50] [--turns 3] [--max-seconds 300] [--latency-ms 300-900] \\
        [--kill-worker-at 20] [--configure] [--realtime-url http://127.0.0.1:9000] [--site NAME] [--poll]

Bounded: at most people x turns turns, and it stops by itself after --max-seconds.

Realtime: Frappe's socketio server (`bench socketio`, port `socketio_port` of
common_site_config.json) must run; the namespace is the site's name (--site, else the URL's host
name, else read once from the desk's boot data), the person's `sid` cookie signs the connection in,
and the Origin is --url, whose host name must be that of --realtime-url (the server checks it).

Prints: turns per second; p50/p95/p99 time to answer (send to final state, seen by the client);
how many answers came by realtime and how many by the safety poll; engine overhead per turn (the
turn job's wall time minus the time spent waiting for the model, measured in the job), split into
its three parts (before the loop, the loop less the model, writing the turn and its log), and the
CPU time of the job's process during the turn (time.process_time);
the worker mode the turns ran in (fork / no-fork); queue wait; database queries per turn (inside the job);
web requests per turn sent by the client; peak resident memory per web and background worker
process (sampled from /proc, this machine only); the CPU time of this client process (what the
harness itself costs), of the stub, and of the web workers and the realtime server during the run;
errors and lost turns. `--kill-worker-at S` kills one busy background
worker (and its job process) S seconds in, to show that its turns are retried or end with a clear message.
The client and its stub run at a lower CPU priority than the site (`--harness-niceness`, 10): on a
real site neither the people's browsers nor the model provider share its CPUs.

Workers: run several plain `bench worker` processes (the app preloads itself in each before
RQ forks a job: "turns run by a preloaded worker" says whether it did) or `bench noviz-agent
worker [--no-fork]` (then pass `--worker-match "noviz-agent worker"`), and gunicorn with several workers.

Setup it does (as Administrator, over the REST API): creates the desk users
`noviz.load.NN@example.com` (Sales User, Accounts User) if missing; with `--configure`, points
Agent Settings at the stub for the run and puts the previous values back afterwards.
Needs `requests` and, unless --poll, the socket.io client (benchmark only, not app dependencies:
`pip install requests "python-socketio[client]"`). Run it on the machine that serves
the site, as a user that may read /proc of the workers (and signal them, for --kill-worker-at).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import requests
from load_realtime import FINAL, Mailbox, Realtime, realtime_help, site_name, wait_for_end

# The questions each person asks in turn; benchmarks/turn_profile.py profiles the same ones.
QUESTIONS = tuple(
	json.loads((Path(__file__).parent / "data" / "load_questions.json").read_text(encoding="utf-8"))
)
ROLES = ("Sales User", "Accounts User")
PASSWORD = "Noviz-Load-2026!"
POLL_EVERY = 0.5
SETTINGS = ("base_url", "model", "rate_limit_per_hour", "use_knowledge", "tokens_per_minute")


def percentile(values: list[float], share: float) -> float:
	if not values:
		return float("nan")
	ordered = sorted(values)
	index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
	return ordered[index]


def line(name: str, values: list[float], unit: str = "ms") -> str:
	if not values:
		return f"{name:<34} no data"
	return (
		f"{name:<34} p50 {percentile(values, 0.5):8.1f} {unit}   p95 {percentile(values, 0.95):8.1f} {unit}"
		f"   p99 {percentile(values, 0.99):8.1f} {unit}   mean {statistics.fmean(values):8.1f} {unit}"
	)


# --- the site ---------------------------------------------------------------------------


def login(url: str, user: str, password: str) -> requests.Session:
	http = requests.Session()
	reply = http.post(f"{url}/api/method/login", data={"usr": user, "pwd": password}, timeout=30)
	reply.raise_for_status()
	return http


def ensure_users(admin: requests.Session, url: str, count: int) -> list[str]:
	users = []
	for n in range(1, count + 1):
		email = f"noviz.load.{n:02d}@example.com"
		users.append(email)
		if admin.get(f"{url}/api/resource/User/{email}", timeout=30).status_code == 200:
			continue
		doc = {
			"email": email,
			"first_name": f"Load {n:02d}",
			"send_welcome_email": 0,
			"new_password": PASSWORD,
			"roles": [{"role": role} for role in ROLES],
		}
		admin.post(f"{url}/api/resource/User", json=doc, timeout=60).raise_for_status()
	return users


def settings(admin: requests.Session, url: str) -> dict:
	reply = admin.get(f"{url}/api/resource/Agent Settings/Agent Settings", timeout=30)
	reply.raise_for_status()
	return reply.json()["data"]


def put_settings(admin: requests.Session, url: str, values: dict) -> None:
	admin.put(f"{url}/api/resource/Agent Settings/Agent Settings", json=values, timeout=30).raise_for_status()


# --- processes --------------------------------------------------------------------------


def processes(match: str, program: bytes = b"python") -> list[int]:
	found = []
	for entry in Path("/proc").iterdir():
		if not entry.name.isdigit():
			continue
		try:
			argv = (entry / "cmdline").read_bytes().split(b"\0")
		except OSError:
			continue
		cmd = b" ".join(argv).decode(errors="replace")
		# Python (or `program`) processes only: not the sudo or shell that started them, not this script.
		if match in cmd and program in argv[0] + (argv[1] if len(argv) > 1 else b"") and "load.py" not in cmd:
			found.append(int(entry.name))
	return found


def children(pid: int) -> list[int]:
	try:
		text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
	except OSError:
		return []
	return [int(p) for p in text.split()]


def rss_mb(pid: int) -> float:
	try:
		for row in Path(f"/proc/{pid}/status").read_text().splitlines():
			if row.startswith("VmRSS:"):
				return int(row.split()[1]) / 1024
	except OSError:
		pass
	return 0.0


class MemorySampler(threading.Thread):
	"""Peak resident memory of each web worker and each background worker (with its job process)."""

	def __init__(self, web_match: str, worker_match: str):
		super().__init__(daemon=True)
		self.web_match, self.worker_match = web_match, worker_match
		self.peaks: dict[str, float] = {"web": 0.0, "worker": 0.0, "job": 0.0}
		self.stop = threading.Event()

	def run(self):
		while not self.stop.wait(0.5):
			for pid in processes(self.web_match):
				self.peaks["web"] = max(self.peaks["web"], rss_mb(pid))
			for pid in processes(self.worker_match):
				self.peaks["worker"] = max(self.peaks["worker"], rss_mb(pid))
				for child in children(pid):
					self.peaks["job"] = max(self.peaks["job"], rss_mb(child))


def threads(pid: int) -> int:
	try:
		return len(list(Path(f"/proc/{pid}/task").iterdir()))
	except OSError:
		return 0


def kill_busy_worker(worker_match: str) -> str:
	"""SIGKILL one background worker that is running a job, and its job process.

	A forking worker is busy while it has a job process; a no-fork worker (`--no-fork`) runs the
	turn itself and is busy while the turn's heartbeat thread runs beside its main thread.
	"""
	for pid in processes(worker_match):
		busy = children(pid)
		if busy:
			for victim in [*busy, pid]:
				try:
					os.kill(victim, signal.SIGKILL)
				except OSError:
					pass
			return f"killed worker {pid} and its job process {busy}"
	for pid in processes(worker_match):
		if threads(pid) > 1:
			try:
				os.kill(pid, signal.SIGKILL)
			except OSError:
				continue
			return f"killed no-fork worker {pid} in the middle of a turn"
	return "no busy worker found to kill"


# --- people -----------------------------------------------------------------------------


class Person(threading.Thread):
	def __init__(self, args, user: str, deadline: float, results: list, lock):
		super().__init__(daemon=True)
		self.args, self.url, self.user, self.turns, self.deadline = args, args.url, user, args.turns, deadline
		self.results, self.lock = results, lock
		self.mailbox, self.realtime, self.requests = Mailbox(), None, 0
		self.http, self.unread = None, []  # turns answered by event, whose stored figures are read after
		# Everyone signs in (and connects to realtime) first; the turns start together on `go`.
		self.signed_in, self.go = threading.Event(), None
		self.start_after = 0.0  # seconds after `go` of this person's first question (the ramp)

	def record(self, item: dict):
		with self.lock:
			self.results.append(item)

	def run(self):
		try:
			http = self.http = login(self.url, self.user, PASSWORD)
		except Exception as exc:
			self.record({"error": f"login: {exc}"})
			self.signed_in.set()
			return
		if not self.args.poll:
			self.realtime = Realtime(
				self.args.realtime_url, self.url, self.args.site, http.cookies.get("sid"), self.mailbox
			)
			try:
				self.realtime.connect()
			except Exception as exc:
				# Its turns still end, by the safety poll; the run reports the failed connection.
				self.record({"error": f"realtime connection of {self.user}: {exc}", "connection": True})
				self.realtime = None
		try:
			# The person opens the chat, which lists their conversations (on the full page), before asking.
			self.requests += 1
			http.get(
				f"{self.url}/api/method/noviz_agent.api.search_conversations", timeout=30
			).raise_for_status()
		except Exception as exc:
			self.record({"error": f"opening the chat: {exc}", "connection": True})
		self.signed_in.set()
		if self.go is not None:
			self.go.wait()
		if self.start_after:
			time.sleep(self.start_after)
		try:
			conversation = None
			for n in range(self.turns):
				if time.time() > self.deadline:
					return
				question = f"{QUESTIONS[(hash(self.user) + n) % len(QUESTIONS)]} ({self.user} #{n})"
				item = self.turn(http, question, conversation)
				item["index"] = n
				self.record(item)
				conversation = item.get("conversation") or conversation
		finally:
			if self.realtime:
				self.realtime.close()

	def read_figures(self) -> None:
		"""After the run: the stored state of each turn answered by event (figures, attempt)."""
		for out in self.unread:
			stored = self.status(self.http, out["turn"]) or {}
			if stored.get("status") in FINAL:
				out.update(
					status=stored["status"],
					attempt=stored.get("attempt"),
					figures=stored.get("figures") or {},
				)

	def status(self, http: requests.Session, turn: str) -> dict | None:
		self.requests += 1
		try:
			got = http.get(
				f"{self.url}/api/method/noviz_agent.api.turn_status", params={"turn": turn}, timeout=30
			)
			return got.json().get("message") or {}
		except Exception:
			return None

	def turn(self, http: requests.Session, question: str, conversation: str | None) -> dict:
		began, requests_before, sent_at = time.perf_counter(), self.requests, time.time()
		data = {"message": question}
		if conversation:
			data["conversation"] = conversation
		self.requests += 1
		try:
			reply = http.post(f"{self.url}/api/method/noviz_agent.api.send", data=data, timeout=130)
			body = reply.json()
		except Exception as exc:
			return {"error": f"send: {exc}"}
		if reply.status_code != 200:
			return {"error": f"send HTTP {reply.status_code}: {str(body)[:200]}"}
		message = body["message"]
		sent_ms = (time.perf_counter() - began) * 1000
		if message.get("status") != "queued":
			kind = (message.get("response") or {}).get("type")
			out = {"inline": True, "answer_ms": sent_ms, "conversation": message.get("conversation")}
			out["requests"] = self.requests - requests_before
			return {**out, "error": f"answer type {kind}"} if kind in ("error", None) else out
		turn = message["turn"]
		every = POLL_EVERY if self.args.poll or not self.realtime else self.args.safety_poll_seconds
		until = time.monotonic() + (self.deadline + 60 - time.time())
		state, how, _ = wait_for_end(
			turn, self.mailbox, lambda: self.status(http, turn), until=until, every=every
		)
		answer_ms = (time.perf_counter() - began) * 1000
		out = {
			"turn": turn,
			"user": self.user,
			"sent_at": sent_at,
			"send_ms": sent_ms,
			"answer_ms": answer_ms,
			"status": state.get("status"),
			"attempt": state.get("attempt"),
			"conversation": state.get("conversation"),
			"figures": state.get("figures") or {},
			"via": how,
			"requests": self.requests - requests_before,
		}
		if how == "realtime":
			# The event carries the answer; the job's figures and attempt are read after the run.
			self.unread.append(out)
		if state.get("status") not in FINAL:
			out["error"] = f"unfinished at the run's time bound (still {state.get('status') or 'unknown'})"
		elif state.get("status") == "error":
			response = state.get("response") or {}
			out["error"] = state.get("message") or (response.get("error") or {}).get("message") or "error"
		return out


# --- main -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--url", default="http://127.0.0.1:8000")
	parser.add_argument("--admin-user", default="Administrator")
	parser.add_argument("--admin-password", required=True)
	parser.add_argument("--people", type=int, default=50)
	parser.add_argument("--turns", type=int, default=3, help="turns per person")
	parser.add_argument("--max-seconds", type=float, default=300)
	parser.add_argument("--stub-port", type=int, default=8766)
	parser.add_argument("--latency-ms", default="300-900", help="the stub's think time per model call")
	parser.add_argument(
		"--configure", action="store_true", help="point Agent Settings at the stub for the run"
	)
	parser.add_argument("--kill-worker-at", type=float, default=0, help="seconds in; 0 = no kill")
	parser.add_argument(
		"--ramp-seconds",
		type=float,
		default=5.0,
		help="the people's first questions are spread evenly over this many seconds (0: all at once)",
	)
	parser.add_argument("--web-match", default="gunicorn")
	parser.add_argument("--worker-match", default="bench_helper frappe worker")
	parser.add_argument("--realtime-url", default="http://127.0.0.1:9000", help="Frappe's socketio server")
	parser.add_argument("--site", help="the site's name (realtime namespace); default: from the site")
	parser.add_argument(
		"--safety-poll-seconds",
		type=float,
		default=15,
		help="turn_status read while waiting for the event (the chat's interval while realtime is connected)",
	)
	parser.add_argument("--poll", action="store_true", help="read turn_status every 500 ms, no realtime")
	parser.add_argument(
		"--turns-out",
		help="also write every turn's client and job figures to this file, one JSON object per line"
		" (`sent_s`: seconds after the turns started)",
	)
	parser.add_argument("--realtime-match", default="socketio.js", help="the realtime server's node process")
	parser.add_argument(
		"--harness-niceness",
		type=int,
		default=10,
		help="how much lower the CPU priority of this client and its stub is than the site's processes"
		" (on a real site neither the people's browsers nor the model share its CPUs; 0: the same)",
	)
	args = parser.parse_args(argv)
	if not args.url.startswith(("http://127.0.0.1", "http://localhost")):
		parser.error("the load test runs against a site on 127.0.0.1 only")
	if not args.poll and urlsplit(args.realtime_url).hostname != urlsplit(args.url).hostname:
		parser.error(
			"--realtime-url and --url need the same host name: the realtime server refuses a socket "
			"whose Origin (--url) is another host than its Host"
		)

	if args.harness_niceness > 0:
		os.nice(args.harness_niceness)  # the stub, started below, inherits it
	stub = subprocess.Popen(
		[sys.executable, "-m", "noviz_agent.testing.stub_provider", "--port", str(args.stub_port), "--quiet"]
		+ ["--latency-ms", args.latency_ms],
		cwd=Path(__file__).resolve().parents[1],
		stdout=subprocess.DEVNULL,
	)
	try:
		return drive(args, stub.pid)
	finally:
		# Also when signing in or putting the settings back fails: no stub is left on the port.
		stub.terminate()
		stub.wait(10)


def drive(args, stub_pid: int) -> int:
	"""Sign in, check realtime, point Agent Settings at the stub, run the people, put the settings back."""
	admin = login(args.url, args.admin_user, args.admin_password)
	before = {k: v for k, v in settings(admin, args.url).items() if k in SETTINGS}
	stub_url = f"http://127.0.0.1:{args.stub_port}/v1"
	try:
		if not args.poll:
			args.site = args.site or site_name(
				args.url, lambda: login(args.url, args.admin_user, args.admin_password)
			)
			probe = Realtime(args.realtime_url, args.url, args.site, admin.cookies.get("sid"), Mailbox())
			try:
				probe.connect()
			except Exception as exc:
				print(realtime_help(args.realtime_url, args.site, str(exc)))
				return 2
			probe.close()
		if args.configure:
			put_settings(
				admin,
				args.url,
				{
					"base_url": stub_url,
					"model": "stub-model",
					"rate_limit_per_hour": max(1000, args.turns * 10),
					"use_knowledge": 0,
					"tokens_per_minute": 0,
				},
			)
		elif before.get("base_url") != stub_url:
			print(f"Agent Settings base_url is {before.get('base_url')!r}, not {stub_url}: use --configure")
			return 2
		users = ensure_users(admin, args.url, args.people)
		return run(args, users, stub_pid)
	finally:
		if args.configure:
			put_settings(admin, args.url, before)


def cpu_seconds(pid: int) -> float:
	"""User + system CPU time of a process so far, from /proc (0 when it is gone)."""
	try:
		fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
		return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
	except (OSError, IndexError, ValueError):
		return 0.0


def run(args, users: list[str], stub_pid: int) -> int:
	results: list[dict] = []
	lock = threading.Lock()
	workers, web = processes(args.worker_match), processes(args.web_match)
	print(f"background workers found: {len(workers)} ('{args.worker_match}'); web processes: {len(web)}")
	print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
	sampler = MemorySampler(args.web_match, args.worker_match)
	if args.poll:
		print(f"answers: reading turn_status every {POLL_EVERY} s (--poll)")
	else:
		print(
			f"answers: realtime ({args.realtime_url}, namespace /{args.site}); "
			f"safety poll every {args.safety_poll_seconds:g} s and once at the time bound"
		)
	sampler.start()
	# Sign everyone in and connect them to realtime first (a login's password check is costly and
	# is not part of a turn), then start every person's turns at the same moment.
	go, signing = threading.Event(), time.time()
	people = [Person(args, user, signing + args.max_seconds, results, lock) for user in users]
	for person in people:
		person.go = go
		person.start()
	for person in people:
		person.signed_in.wait(max(1, signing + 120 - time.time()))
	print(f"signed in and connected {len(people)} people in {time.time() - signing:.1f} s; turns start now")
	usage, stub_cpu = resource.getrusage(resource.RUSAGE_SELF), cpu_seconds(stub_pid)
	served = {"web": processes(args.web_match), "realtime": processes(args.realtime_match, b"node")}
	served_cpu = {pid: cpu_seconds(pid) for pids in served.values() for pid in pids}
	began = time.time()
	deadline = began + args.max_seconds
	for n, person in enumerate(people):
		person.deadline = deadline
		person.start_after = args.ramp_seconds * n / max(1, len(people))
	go.set()
	killed = None
	if args.kill_worker_at:
		time.sleep(args.kill_worker_at)
		killed = kill_busy_worker(args.worker_match)
	for person in people:
		person.join(max(1, deadline + 90 - time.time()))
	elapsed = time.time() - began
	sampler.stop.set()
	after = resource.getrusage(resource.RUSAGE_SELF)
	harness = {
		"user": after.ru_utime - usage.ru_utime,
		"system": after.ru_stime - usage.ru_stime,
		"stub": cpu_seconds(stub_pid) - stub_cpu,
		# CPU of the web and realtime processes seen at the start (a web worker restarted meanwhile is missed)
		**{kind: sum(cpu_seconds(pid) - served_cpu[pid] for pid in pids) for kind, pids in served.items()},
		"events": sum(person.mailbox.events for person in people),
		"sockets": sum(1 for person in people if person.realtime is not None),
	}
	print(f"load average at the end: {Path('/proc/loadavg').read_text().split()[:3]}")
	for person in people:  # after the clock and the CPU figures: the stored figures of each turn
		person.read_figures()
	if args.turns_out:
		with open(args.turns_out, "w", encoding="utf-8") as out:
			for item in results:
				sent = {"sent_s": round(item["sent_at"] - began, 3)} if "sent_at" in item else {}
				out.write(json.dumps({**item, **sent}) + "\n")
	report(args, results, elapsed, sampler.peaks, killed, harness)
	return 0 if not any(r.get("error") for r in results) else 1


def report(args, results: list[dict], elapsed: float, peaks: dict, killed: str | None, harness: dict) -> None:
	turns = [r for r in results if "answer_ms" in r]
	answered = [r for r in turns if not r.get("error")]
	errors = [r for r in results if r.get("error")]
	figures = [r["figures"] for r in answered if r.get("figures")]
	print(
		f"people {args.people}, turns per person {args.turns}, stub think time {args.latency_ms} ms,"
		f" first questions spread over {args.ramp_seconds:g} s"
	)
	tried = [r for r in results if not r.get("connection")]
	print(
		f"turns finished {len(answered)} of {len(tried)} in {elapsed:.1f} s: {len(answered) / elapsed:.2f} turns/s"
	)
	print(line("time to answer (client)", [r["answer_ms"] for r in answered]))
	print(line("send reply (client)", [r["send_ms"] for r in answered if "send_ms" in r]))
	ways = {way: sum(1 for r in turns if r.get("via") == way) for way in ("realtime", "poll", "unfinished")}
	if args.poll:
		print(f"answers by polling turn_status {ways['poll']}, unfinished {ways['unfinished']}")
	else:
		print(
			f"answers by realtime {ways['realtime']}, by the safety poll {ways['poll']}, unfinished "
			f"{ways['unfinished']}; sockets {harness['sockets']} of {args.people}, events received {harness['events']}"
		)
	asked = [float(r["requests"]) for r in turns if "requests" in r]
	print(line("web requests per turn (client)", asked, unit="r"))
	print(
		f"web requests by the client: {sum(asked):.0f} for {len(turns)} turns ({sum(asked) / elapsed:.1f}/s)"
	)
	print(line("engine overhead per turn (job)", [f["engine_ms"] for f in figures if "engine_ms" in f]))
	# A person's first turn starts a conversation; later ones read it back and add to it.
	timed = [r for r in answered if "engine_ms" in (r.get("figures") or {})]
	for label, first in (("  first turn of each person", True), ("  later turns", False)):
		print(line(label, [r["figures"]["engine_ms"] for r in timed if (r.get("index") == 0) == first]))
	# A worker process's first turn is its coldest (the site's first connection, first reads).
	cold = [r["figures"]["engine_ms"] for r in timed if r["figures"].get("process_turn") == 0]
	if cold:
		print(line("  first turn of each worker", cold))
	for key, label in (
		("prepare_ms", "  prepare (session, budget)"),
		("loop_ms", "  loop less the model (tools)"),
		("record_ms", "  record (turn and log)"),
	):
		parts = [f[key] for f in figures if f.get(key) is not None]
		if parts:
			print(line(label, parts))
	print(line("CPU time per turn (job process)", [f["cpu_ms"] for f in figures if "cpu_ms" in f]))
	print(line("model time per turn (stub)", [f["model_ms"] for f in figures if "model_ms" in f]))
	print(
		line(
			"queue wait + delivery (client)",
			[r["answer_ms"] - r["figures"].get("total_ms", 0) for r in answered if r.get("figures")],
		)
	)
	modes = sorted({f.get("worker_mode", "fork (not recorded)") for f in figures})
	print(f"worker mode of the turns: {', '.join(modes) or 'unknown'}")
	warm = [f for f in figures if "preloaded" in f]
	if warm:
		print(f"turns run by a preloaded worker: {sum(1 for f in warm if f['preloaded'])} of {len(warm)}")
	print(
		line(
			"model calls per turn", [float(f["model_calls"]) for f in figures if "model_calls" in f], unit="c"
		)
	)
	print(
		f"peak memory: web worker {peaks['web']:.0f} MB, background worker {peaks['worker']:.0f} MB, job process {peaks['job']:.0f} MB"
	)
	cpu = harness["user"] + harness["system"]
	print(
		f"load test client CPU: {cpu:.1f} s ({harness['user']:.1f} user + {harness['system']:.1f} system) "
		f"in {elapsed:.1f} s = {100 * cpu / elapsed:.0f}% of one core; stub model {harness['stub']:.1f} s"
	)
	print(
		f"served CPU in the run: web (gunicorn) {harness['web']:.1f} s = {100 * harness['web'] / elapsed:.0f}% "
		f"of one core; realtime server {harness['realtime']:.1f} s"
	)
	retried = [r for r in turns if (r.get("attempt") or 1) > 1]
	if killed:
		print(f"worker kill: {killed}")
	# Without a kill every retry is a turn taken for lost while it was not.
	print(f"turns retried {len(retried)}, of them answered {sum(1 for r in retried if not r.get('error'))}")
	print(f"errors {len(errors)}")
	for item in errors[:10]:
		print(f"  - {item['error'][:200]}")
	summary = {"turns_per_second": round(len(answered) / elapsed, 3), "errors": len(errors)}
	summary.update(by_realtime=ways["realtime"], by_poll=ways["poll"], client_cpu_s=round(cpu, 1))
	print(json.dumps(summary))


if __name__ == "__main__":
	raise SystemExit(main())
