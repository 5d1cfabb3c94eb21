"""Load test: N concurrent people through the real turn API of a served site, with a stub model.

Each person signs in as their own desk user, sends questions through `noviz_agent.api.send`
and reads the answer from `noviz_agent.api.turn_status` (what the chat does after a reload;
realtime pushes the same events when socketio runs). The model is the OpenAI-compatible stub
(`noviz_agent.testing.stub_provider`) on 127.0.0.1, started here with a think time per answer,
so the figures show what the agent adds on top of the model.

    python benchmarks/load.py --url http://127.0.0.1:8000 --admin-password admin \\
        [--people 50] [--turns 3] [--max-seconds 300] [--latency-ms 300-900] \\
        [--kill-worker-at 20] [--configure]

Bounded: at most people x turns turns, and it stops by itself after --max-seconds.

Prints: turns per second; p50/p95/p99 time to answer (send to final state, seen by the client);
engine overhead per turn (the turn job's wall time minus the time spent waiting for the model,
measured in the job) and the CPU time of the job's process during the turn (time.process_time);
the worker mode the turns ran in (fork / no-fork); queue wait; database queries per turn (inside the job); peak resident
memory per web and background worker process (sampled from /proc, this machine only);
errors and lost turns. `--kill-worker-at S` kills one busy background worker (and its job
process) S seconds in, to show that its turns are retried or end with a clear message.

Workers: run several plain `bench worker` processes (the app preloads itself in each before
RQ forks a job: "turns run by a preloaded worker" says whether it did) or `bench noviz-agent
worker [--no-fork]` (then pass `--worker-match "noviz-agent worker"`), and gunicorn with several workers.

Setup it does (as Administrator, over the REST API): creates the desk users
`noviz.load.NN@example.com` (Sales User, Accounts User) if missing; with `--configure`, points
Agent Settings at the stub for the run and puts the previous values back afterwards.
Needs `requests` (benchmark only: `pip install requests`). Run it on the machine that serves
the site, as a user that may read /proc of the workers (and signal them, for --kill-worker-at).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests

# The questions each person asks in turn; benchmarks/turn_profile.py profiles the same ones.
QUESTIONS = tuple(
	json.loads((Path(__file__).parent / "data" / "load_questions.json").read_text(encoding="utf-8"))
)
ROLES = ("Sales User", "Accounts User")
PASSWORD = "Noviz-Load-2026!"
FINAL = {"done", "error", "cancelled"}
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


def processes(match: str) -> list[int]:
	found = []
	for entry in Path("/proc").iterdir():
		if not entry.name.isdigit():
			continue
		try:
			argv = (entry / "cmdline").read_bytes().split(b"\0")
		except OSError:
			continue
		cmd = b" ".join(argv).decode(errors="replace")
		# Python processes only: not the sudo or shell that started them, not this script.
		if (
			match in cmd
			and b"python" in argv[0] + (argv[1] if len(argv) > 1 else b"")
			and "load.py" not in cmd
		):
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
	def __init__(self, url: str, user: str, turns: int, deadline: float, results: list, lock):
		super().__init__(daemon=True)
		self.url, self.user, self.turns, self.deadline = url, user, turns, deadline
		self.results, self.lock = results, lock

	def record(self, item: dict):
		with self.lock:
			self.results.append(item)

	def run(self):
		try:
			http = login(self.url, self.user, PASSWORD)
		except Exception as exc:
			self.record({"error": f"login: {exc}"})
			return
		conversation = None
		for n in range(self.turns):
			if time.time() > self.deadline:
				return
			question = f"{QUESTIONS[(hash(self.user) + n) % len(QUESTIONS)]} ({self.user} #{n})"
			item = self.turn(http, question, conversation)
			self.record(item)
			conversation = item.get("conversation") or conversation

	def turn(self, http: requests.Session, question: str, conversation: str | None) -> dict:
		began = time.perf_counter()
		data = {"message": question}
		if conversation:
			data["conversation"] = conversation
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
			return {**out, "error": f"answer type {kind}"} if kind in ("error", None) else out
		turn, state = message["turn"], {}
		while time.time() < self.deadline + 60:
			time.sleep(0.5)
			try:
				got = http.get(
					f"{self.url}/api/method/noviz_agent.api.turn_status", params={"turn": turn}, timeout=30
				)
				state = got.json().get("message") or {}
			except Exception:
				continue
			if state.get("status") in FINAL:
				break
		answer_ms = (time.perf_counter() - began) * 1000
		out = {
			"turn": turn,
			"send_ms": sent_ms,
			"answer_ms": answer_ms,
			"status": state.get("status"),
			"attempt": state.get("attempt"),
			"conversation": state.get("conversation"),
			"figures": state.get("figures") or {},
		}
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
	parser.add_argument("--web-match", default="gunicorn")
	parser.add_argument("--worker-match", default="bench_helper frappe worker")
	args = parser.parse_args(argv)
	if not args.url.startswith(("http://127.0.0.1", "http://localhost")):
		parser.error("the load test runs against a site on 127.0.0.1 only")

	stub = subprocess.Popen(
		[sys.executable, "-m", "noviz_agent.testing.stub_provider", "--port", str(args.stub_port), "--quiet"]
		+ ["--latency-ms", args.latency_ms],
		cwd=Path(__file__).resolve().parents[1],
		stdout=subprocess.DEVNULL,
	)
	admin = login(args.url, args.admin_user, args.admin_password)
	before = {k: v for k, v in settings(admin, args.url).items() if k in SETTINGS}
	stub_url = f"http://127.0.0.1:{args.stub_port}/v1"
	try:
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
		return run(args, users)
	finally:
		if args.configure:
			put_settings(admin, args.url, before)
		stub.terminate()
		stub.wait(10)


def run(args, users: list[str]) -> int:
	results: list[dict] = []
	lock = threading.Lock()
	workers, web = processes(args.worker_match), processes(args.web_match)
	print(f"background workers found: {len(workers)} ('{args.worker_match}'); web processes: {len(web)}")
	print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
	sampler = MemorySampler(args.web_match, args.worker_match)
	sampler.start()
	began = time.time()
	deadline = began + args.max_seconds
	people = [Person(args.url, user, args.turns, deadline, results, lock) for user in users]
	for person in people:
		person.start()
	killed = None
	if args.kill_worker_at:
		time.sleep(args.kill_worker_at)
		killed = kill_busy_worker(args.worker_match)
	for person in people:
		person.join(max(1, deadline + 90 - time.time()))
	elapsed = time.time() - began
	sampler.stop.set()
	print(f"load average at the end: {Path('/proc/loadavg').read_text().split()[:3]}")
	report(args, results, elapsed, sampler.peaks, killed)
	return 0 if not any(r.get("error") for r in results) else 1


def report(args, results: list[dict], elapsed: float, peaks: dict, killed: str | None) -> None:
	turns = [r for r in results if "answer_ms" in r]
	answered = [r for r in turns if not r.get("error")]
	errors = [r for r in results if r.get("error")]
	figures = [r["figures"] for r in answered if r.get("figures")]
	print(f"people {args.people}, turns per person {args.turns}, stub think time {args.latency_ms} ms")
	print(
		f"turns finished {len(answered)} of {len(results)} in {elapsed:.1f} s: {len(answered) / elapsed:.2f} turns/s"
	)
	print(line("time to answer (client)", [r["answer_ms"] for r in answered]))
	print(line("send reply (client)", [r["send_ms"] for r in answered if "send_ms" in r]))
	print(line("engine overhead per turn (job)", [f["engine_ms"] for f in figures if "engine_ms" in f]))
	print(line("CPU time per turn (job process)", [f["cpu_ms"] for f in figures if "cpu_ms" in f]))
	print(line("model time per turn (stub)", [f["model_ms"] for f in figures if "model_ms" in f]))
	print(
		line(
			"queue wait + polling (client)",
			[r["answer_ms"] - r["figures"].get("total_ms", 0) for r in answered if r.get("figures")],
		)
	)
	print(
		line(
			"database queries per turn (job)",
			[float(f["queries"]) for f in figures if "queries" in f],
			unit="q",
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
	retried = [r for r in turns if (r.get("attempt") or 1) > 1]
	if killed:
		print(f"worker kill: {killed}")
	# Without a kill every retry is a turn taken for lost while it was not.
	print(f"turns retried {len(retried)}, of them answered {sum(1 for r in retried if not r.get('error'))}")
	print(f"errors {len(errors)}")
	for item in errors[:10]:
		print(f"  - {item['error'][:200]}")
	print(json.dumps({"turns_per_second": round(len(answered) / elapsed, 3), "errors": len(errors)}))


if __name__ == "__main__":
	raise SystemExit(main())
