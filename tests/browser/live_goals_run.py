"""Live goals page run (not collected by pytest, not run by CI): a standing goal's page on a real desk.

Needs a served, seeded site on 127.0.0.1 with noviz_agent installed (assets built), and the bench's
command line to run the goal's job once (as the scheduler's worker would):

    python tests/browser/live_goals_run.py --url http://127.0.0.1:8000 --site noviz.localhost \
        --bench "/path/to/bench/env/bin/bench"        # or any command that takes `--site S execute ...`

It starts the stub model itself (on 127.0.0.1, one scripted reply: a task prepared for the person),
points Agent Settings at it (as Administrator, through the REST API), makes a desk user with the
roles the goal reads and writes with, and, as that person, saves an Agent Goal watching customers
more than 30 days overdue that may prepare proposals. It runs the goal's job once through
`bench execute noviz_agent.edge.frappe_goals.run_goal`, then opens /app/noviz-goals in headless
Chromium at desktop and phone width and checks what the page shows: the goal with its schedule
and last run, the digest naming its company, and the prepared task waiting under "Waiting for
you" with nothing written yet. Confirming it there must create the task as the person and empty
the inbox. It removes the task and the goal afterwards (the goal's runs stay, as they do for any
goal). Screenshots land in test-artifacts/live/; the script prints what it checked as JSON and
exits non-zero on any problem or page error.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

OUT = ROOT / "test-artifacts" / "live"
PASSWORD = "Noviz-Live-2026"
USER = "noviz.live.goals@noviz.test"
# Accounts User reads the receivables the goal watches; Projects User may create the task it prepares.
ROLES = ["Accounts User", "Sales User", "Projects User"]
SUBJECT = "Noviz live goal: follow up the overdue customers"
REQUEST = "Tell me each Monday which customers are more than 30 days overdue"


def _json(request, method: str, url: str, **kwargs):
	reply = getattr(request, method)(url, **kwargs)
	assert reply.ok, f"{method.upper()} {url}: {reply.status} {reply.text()[:300]}"
	return reply.json()


def login(request, url: str, user: str, password: str) -> None:
	reply = request.post(f"{url}/api/method/login", data={"usr": user, "pwd": password})
	assert reply.ok, f"login as {user}: {reply.status} {reply.text()[:200]}"


def prepare(request, url: str, stub_url: str) -> None:
	"""Agent Settings pointed at the stub; the person, with the roles the goal needs."""
	_json(
		request,
		"put",
		f"{url}/api/resource/Agent Settings/Agent Settings",
		data=json.dumps(
			{"base_url": stub_url, "model": "stub-model", "enable_writes": 1, "cache_seconds": 0}
		),
		headers={"Content-Type": "application/json"},
	)
	if request.get(f"{url}/api/resource/User/{USER}").ok:
		return
	_json(
		request,
		"post",
		f"{url}/api/resource/User",
		data=json.dumps(
			{
				"email": USER,
				"first_name": "Live Goals",
				"new_password": PASSWORD,
				"send_welcome_email": 0,
				"roles": [{"role": r} for r in ROLES],
			}
		),
		headers={"Content-Type": "application/json"},
	)


def make_goal(request, url: str) -> str:
	"""The goal as its person saves it in the desk form."""
	doc = _json(
		request,
		"post",
		f"{url}/api/resource/Agent Goal",
		data=json.dumps(
			{
				"goal": REQUEST,
				"watches": [{"kind": "overdue_customers", "days": 30}],
				"every": "week",
				"weekday": "monday",
				"hour": 8,
				"may_do": "Prepare proposals",
				"notify_desk": 1,
			}
		),
		headers={"Content-Type": "application/json"},
	)["data"]
	assert doc["person"] == USER, f"the goal works for {doc['person']!r}, not its maker"
	return doc["name"]


def run_goal(bench: str, site: str, name: str) -> dict:
	"""The scheduler's job body, once, through the bench's own command line."""
	command = [
		*shlex.split(bench),
		"--site",
		site,
		"execute",
		"noviz_agent.edge.frappe_goals.run_goal",
		"--kwargs",
		json.dumps({"goal": name}),
	]
	done = subprocess.run(command, capture_output=True, text=True, timeout=600)
	assert done.returncode == 0, f"{' '.join(command)}: {done.stderr[-800:]}"
	last = [line for line in done.stdout.splitlines() if line.strip()][-1]
	return json.loads(last)


def look(browser, url: str, width: int, height: int, errors: list, confirm: bool) -> dict:
	context = browser.new_context(viewport={"width": width, "height": height})
	page = context.new_page()
	page.on("pageerror", lambda exc: errors.append(str(exc)))
	page.goto(f"{url}/login")
	page.fill("#login_email", USER)
	page.fill("#login_password", PASSWORD)
	page.click(".btn-login")
	page.wait_for_url(lambda u: "/app" in u or "/desk" in u, timeout=60_000)
	page.goto(f"{url}/app/noviz-goals")
	page.wait_for_selector(".nz-goals .nz-goal", timeout=60_000)
	page.wait_for_timeout(500)
	tag = f"goals-{'phone' if width <= 420 else 'desktop'}"
	page.screenshot(path=str(OUT / f"{tag}.png"), full_page=True)
	card = page.query_selector(".nz-goals .nz-goal")
	inbox = page.query_selector(".nz-goals .nz-goals-inbox")
	seen = {
		"card": card.inner_text()[:600],
		"inbox": inbox.inner_text()[:600],
		"scope": (
			card.query_selector(".nz-scope").inner_text() if card.query_selector(".nz-scope") else None
		),
		"waiting": len(inbox.query_selector_all(".nz-proposal .nz-confirm")),
	}
	if confirm and seen["waiting"]:
		inbox.query_selector(".nz-proposal .nz-confirm").click()
		page.wait_for_selector(".nz-goals-inbox .nz-proposal.nz-confirmed", timeout=60_000)
		page.screenshot(path=str(OUT / f"{tag}-confirmed.png"), full_page=True)
		page.click("button:has-text('Refresh')")  # the page's own secondary action reads the goals again
		page.wait_for_timeout(1500)
		seen["inbox_after_confirm"] = page.query_selector(".nz-goals .nz-goals-inbox").inner_text()[:300]
	context.close()
	return seen


def problems_of(seen: dict, name: str, company: str) -> list[str]:
	out = []
	if "every Monday at 08:00" not in seen["card"]:
		out.append(f"the goal's card does not show its schedule: {seen['card'][:200]!r}")
	if "Last run" not in seen["card"]:
		out.append("the goal's card does not show its last run")
	# The digest is text: each finding names its company, currency and date (a table or chart in it
	# would carry the scope caption as in the chat).
	if company not in seen["card"] or "USD" not in seen["card"]:
		out.append(f"the digest does not name its company {company!r} and currency: {seen['card'][:300]!r}")
	if re.search(r"\d\d:\d\d:\d\d\.\d", seen["card"]):
		out.append("the card shows a raw stored timestamp")
	if "{" in seen["inbox"]:
		out.append(f"the waiting proposal shows raw data: {seen['inbox'][:300]!r}")
	if seen["waiting"] != 1:
		out.append(f"{seen['waiting']} proposals wait in the inbox, not the one prepared")
	if SUBJECT not in seen["inbox"]:
		out.append(f"the waiting proposal does not show the task's subject: {seen['inbox'][:200]!r}")
	return out


def main(argv=None) -> int:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--url", default="http://127.0.0.1:8000")
	parser.add_argument("--site", required=True)
	parser.add_argument("--bench", default="bench", help="the bench's command line (split like a shell)")
	parser.add_argument("--admin-password", default="admin")
	args = parser.parse_args(argv)

	from playwright.sync_api import sync_playwright

	from noviz_agent.testing.stub_provider import StubProvider

	OUT.mkdir(parents=True, exist_ok=True)
	step = {
		"text": "These customers are more than 30 days overdue; a follow-up task is ready for you.",
		"tool_calls": [{"name": "task__create", "arguments": {"values": {"subject": SUBJECT}}}],
	}
	report: dict = {"problems": []}
	errors: list[str] = []
	with StubProvider([step]) as stub, sync_playwright() as playwright:
		browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
		setup = browser.new_context()
		request = setup.request
		login(request, args.url, "Administrator", args.admin_password)
		prepare(request, args.url, stub.base_url)
		login(request, args.url, USER, PASSWORD)
		name = make_goal(request, args.url)
		goal = None
		try:
			report["run"] = run_goal(args.bench, args.site, name)
			report["model_requests"] = len(stub.chat_requests)
			goal = _json(request, "get", f"{args.url}/api/resource/Agent Goal/{name}")["data"]
			login(request, args.url, "Administrator", args.admin_password)
			tasks = _json(
				request,
				"get",
				f"{args.url}/api/resource/Task",
				params={"filters": json.dumps([["subject", "=", SUBJECT]]), "limit_page_length": 0},
			)["data"]
			report["task_before_confirm"] = len(tasks)
			if tasks:
				report["problems"].append("the prepared task was written before the person confirmed it")
			report["phone"] = look(browser, args.url, 390, 844, errors, confirm=False)
			report["desktop"] = look(browser, args.url, 1366, 900, errors, confirm=True)
			for key in ("phone", "desktop"):
				report["problems"] += [f"{key}: {p}" for p in problems_of(report[key], name, goal["company"])]
			made = _json(
				request,
				"get",
				f"{args.url}/api/resource/Task",
				params={
					"filters": json.dumps([["subject", "=", SUBJECT]]),
					"fields": json.dumps(["name", "owner"]),
					"limit_page_length": 0,
				},
			)["data"]
			report["task_after_confirm"] = made
			if [t["owner"] for t in made] != [USER]:
				report["problems"].append(f"confirming did not create one task as the person: {made}")
			if "Nothing is waiting for you" not in report["desktop"].get("inbox_after_confirm", ""):
				report["problems"].append("the inbox still shows the confirmed proposal")
		finally:
			login(request, args.url, "Administrator", args.admin_password)
			for task in (
				request.get(
					f"{args.url}/api/resource/Task",
					params={"filters": json.dumps([["subject", "=", SUBJECT]]), "limit_page_length": 0},
				)
				.json()
				.get("data")
				or []
			):
				request.delete(f"{args.url}/api/resource/Task/{task['name']}")
			login(request, args.url, USER, PASSWORD)
			request.delete(f"{args.url}/api/resource/Agent Goal/{name}")
		browser.close()
	report["page_errors"] = errors
	print(json.dumps(report, indent=2, ensure_ascii=False))
	return 0 if not errors and not report["problems"] else 1


if __name__ == "__main__":
	raise SystemExit(main())
