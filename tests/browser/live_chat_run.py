"""Live chat run (not collected by pytest, not run by CI): every response type on a real desk, at desktop and
phone width, in English and German, answered by the stub model following a fixed script.

Needs a served site on 127.0.0.1 with noviz_agent installed (assets built) and the stub provider:

    python -m noviz_agent.testing.stub_provider --port 8765 --script tests/browser/live_chat_script.json &
    python tests/browser/live_chat_run.py --url http://127.0.0.1:8000

It points Agent Settings at the stub (as Administrator, through the REST API), makes two desk users
(English and German), asks for a table, a trend (cards and chart), a Pareto chart and a new customer,
edits the proposal in place and confirms it, opens a record from the table (it must open inside the
desk, without reloading the page: /app/... on Frappe 15, /desk/... on 16), then removes the customers
and conversations it made (the two users stay, for the next run). Every table, card and chart answer
must say whose figures it shows (company or companies, currency where money is shown).
Screenshots land in test-artifacts/live/; the script prints what it checked as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

OUT = ROOT / "test-artifacts" / "live"
FAILURE: dict = {}  # the page of the run in progress, to show what it looked like when a step failed
PASSWORD = "Noviz-Live-2026"
USERS = {"en": "noviz.live.en@noviz.test", "de": "noviz.live.de@noviz.test"}
ROLES = ["Sales Manager", "Sales User", "Accounts User"]
QUESTIONS = [
	("table", "show unpaid sales invoices", ".nz-agent .nz-table a"),
	("cards", "monthly sales trend", ".nz-agent .nz-chart[data-rendered='1']"),
	("chart", "top customers as a pareto chart", ".nz-agent .nz-chart[data-rendered='1']"),
	("proposal", "create a customer named Noviz Live Customer", ".nz-agent .nz-proposal .nz-confirm"),
]


def admin(request, url, password):
	login = request.post(f"{url}/api/method/login", data={"usr": "Administrator", "pwd": password})
	assert login.ok, login.text()


def prepare(request, url: str, stub: str) -> None:
	values = {
		"base_url": stub,
		"model": "stub-model",
		"enable_writes": 1,
		"rate_limit_per_hour": 500,
		"cache_seconds": 0,
	}
	saved = request.put(
		f"{url}/api/resource/Agent Settings/Agent Settings",
		data=json.dumps(values),
		headers={"Content-Type": "application/json"},
	)
	assert saved.ok, saved.text()
	for lang, email in USERS.items():
		if request.get(f"{url}/api/resource/User/{email}").ok:
			continue
		made = request.post(
			f"{url}/api/resource/User",
			data=json.dumps(
				{
					"email": email,
					"first_name": "Live " + lang.upper(),
					"language": lang,
					"new_password": PASSWORD,
					"send_welcome_email": 0,
					"roles": [{"role": r} for r in ROLES],
				}
			),
			headers={"Content-Type": "application/json"},
		)
		assert made.ok, made.text()


def clean(request, url: str, admin_password: str) -> list[str]:
	"""Remove what the run made: the customers (as Administrator) and each user's own conversations."""
	removed = []
	# Every customer the runs made ("Noviz Live Customer Ltd - 2" when a width's run made one already).
	made = request.get(
		f"{url}/api/resource/Customer",
		params={"filters": json.dumps([["name", "like", "Noviz Live %"]]), "limit_page_length": 0},
	)
	for name in [row["name"] for row in made.json().get("data") or []]:
		if request.delete(f"{url}/api/resource/Customer/{name}").ok:
			removed.append(name)
	for email in USERS.values():
		request.post(f"{url}/api/method/login", data={"usr": email, "pwd": PASSWORD})
		mine = (
			request.get(f"{url}/api/method/noviz_agent.api.search_conversations").json().get("message") or []
		)
		for conv in mine:
			if request.post(
				f"{url}/api/method/noviz_agent.api.delete_conversation", data={"name": conv["name"]}
			).ok:
				removed.append(conv["name"])
	admin(request, url, admin_password)
	return removed


def run_user(browser, url: str, lang: str, width: int, height: int, errors: list) -> dict:
	context = browser.new_context(
		viewport={"width": width, "height": height}, locale="de-DE" if lang == "de" else "en-US"
	)
	page = context.new_page()
	page.on("pageerror", lambda exc: errors.append(str(exc)))
	page.goto(f"{url}/login")
	page.fill("#login_email", USERS[lang])
	page.fill("#login_password", PASSWORD)
	page.click(".btn-login")
	# The desk: /app on Frappe 15, /desk on 16.
	page.wait_for_url(lambda u: "/app" in u or "/desk" in u, timeout=60_000)
	page.goto(f"{url}/app/noviz-agent")
	page.wait_for_selector(".nz-mode-page .nz-input", timeout=60_000)
	tag = f"{lang}-{'phone' if width <= 420 else 'desktop'}"
	seen: dict = {"send_label": page.inner_text(".nz-mode-page .nz-send")}
	FAILURE.clear()
	FAILURE["page"] = page
	for kind, question, ready in QUESTIONS:
		page.fill(
			".nz-mode-page .nz-input",
			question if lang == "en" else question.replace("Noviz Live Customer", "Noviz Live Kunde"),
		)
		page.press(".nz-mode-page .nz-input", "Enter")
		page.wait_for_selector(
			f".nz-mode-page .nz-msg:nth-last-child(1){ready.removeprefix('.nz-agent')}", timeout=120_000
		)
		node = page.query_selector_all(".nz-mode-page .nz-agent")[-1]
		node.scroll_into_view_if_needed()
		page.wait_for_timeout(400)
		node.screenshot(path=str(OUT / f"{tag}-{kind}.png"))
		scope = node.query_selector(".nz-scope")
		seen.setdefault("scopes", {})[kind] = scope.inner_text() if scope else None
		if kind == "table":
			seen["table_headers"] = [th.inner_text() for th in node.query_selector_all(".nz-table th")]
			seen["first_currency_cell"] = node.query_selector(".nz-table td.nz-num").inner_text()
		if kind == "cards":
			seen["cards"] = [c.inner_text().replace("\n", " | ") for c in node.query_selector_all(".nz-card")]
			pdf = page.request.get(url + node.query_selector(".nz-pdf-link").get_attribute("href"))
			(OUT / f"{tag}-analysis.pdf").write_bytes(pdf.body())
			seen["pdf"] = {
				"status": pdf.status,
				"bytes": len(pdf.body()),
				"type": pdf.headers.get("content-type"),
			}
	proposal = page.query_selector_all(".nz-mode-page .nz-proposal")[-1]
	seen["proposal_labels"] = [th.inner_text() for th in proposal.query_selector_all(".nz-values th")]
	seen["effect"] = proposal.query_selector(".nz-proposal-effect").inner_text()
	proposal.query_selector(".nz-edit").click()
	new_name = "Noviz Live Customer Ltd" if lang == "en" else "Noviz Live Kunde GmbH"
	page.fill(".nz-mode-page .nz-edit-input[data-key='customer_name']", new_name)
	page.screenshot(path=str(OUT / f"{tag}-proposal-editing.png"))
	page.click(".nz-mode-page .nz-save")
	fresh = page.wait_for_selector(
		f".nz-mode-page .nz-proposal:has(.nz-values :text('{new_name}')) .nz-confirm", timeout=60_000
	)
	fresh.click()
	page.wait_for_selector(".nz-mode-page .nz-proposal.nz-confirmed", timeout=60_000)
	page.wait_for_timeout(800)
	page.query_selector_all(".nz-mode-page .nz-agent")[-1].screenshot(path=str(OUT / f"{tag}-confirmed.png"))
	seen["confirmed_text"] = page.query_selector_all(".nz-mode-page .nz-agent")[-1].inner_text()[:200]
	page.screenshot(path=str(OUT / f"{tag}-page.png"), full_page=False)
	seen["record_link"] = open_record(page, tag)
	context.close()
	FAILURE.clear()
	return seen


def open_record(page, tag: str) -> dict:
	"""Click the first record link of the table answer: the form must open inside the desk (the page
	is not reloaded: a marker set on the window survives) at the desk's own path."""
	table = [
		n for n in page.query_selector_all(".nz-mode-page .nz-agent") if n.query_selector(".nz-table a")
	][0]
	link = table.query_selector(".nz-table a")
	href = link.get_attribute("href")
	page.evaluate("window.__noviz_live_marker = 1")
	link.click()
	page.wait_for_url(lambda u: "/sales-invoice/" in u or "/customer/" in u, timeout=60_000)
	# The desk's router shows the form: its route is ["Form", doctype, name].
	page.wait_for_function(
		"() => window.frappe && frappe.get_route && frappe.get_route()[0] === 'Form' && cur_frm && cur_frm.doc",
		timeout=60_000,
	)
	page.screenshot(path=str(OUT / f"{tag}-record.png"))
	kept = page.evaluate("window.__noviz_live_marker === 1")
	return {"href": href, "opened": page.url, "in_desk_without_reload": bool(kept)}


def problems_of(seen: dict) -> list[str]:
	"""What a run shows that it must not: figures without their scope, a record link that reloads."""
	out = []
	for kind, text in (seen.get("scopes") or {}).items():
		if kind == "proposal":
			continue
		if not text:
			out.append(f"the {kind} answer does not say whose figures it shows")
		elif kind in ("cards", "chart") and not any(c in text for c in ("USD", "EUR", "INR")):
			out.append(f"the {kind} answer names no currency: {text!r}")
	link = seen.get("record_link") or {}
	if not link.get("in_desk_without_reload"):
		out.append(f"the record link reloaded the page or left the desk: {link}")
	return out


def main(argv=None) -> int:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--url", default="http://127.0.0.1:8000")
	parser.add_argument("--admin-password", default="admin")
	parser.add_argument("--stub", default="http://127.0.0.1:8765/v1")
	args = parser.parse_args(argv)

	from playwright.sync_api import sync_playwright

	OUT.mkdir(parents=True, exist_ok=True)
	report: dict = {}
	errors: list[str] = []
	with sync_playwright() as playwright:
		browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
		setup = browser.new_context()
		admin(setup.request, args.url, args.admin_password)
		prepare(setup.request, args.url, args.stub)
		try:
			for lang, width, height in (("en", 1366, 900), ("en", 390, 844), ("de", 1366, 900)):
				key = f"{lang}-{width}"
				try:
					report[key] = run_user(browser, args.url, lang, width, height, errors)
					found = problems_of(report[key])
					if found:
						report[key]["failed"] = "; ".join(found)
				except Exception as exc:  # one failed run still leaves the others and the clean-up
					report[key] = {"failed": f"{type(exc).__name__}: {exc}"[:500]}
					failed_page = FAILURE.pop("page", None)
					if failed_page is not None:
						failed_page.screenshot(path=str(OUT / f"{key}-failure.png"), full_page=True)
						report[key]["last_message"] = failed_page.evaluate(
							"(() => { const m = document.querySelectorAll('.nz-mode-page .nz-msg'); "
							"return m.length ? m[m.length - 1].innerText.slice(0, 400) : document.body.innerText.slice(0, 400); })()"
						)
		finally:
			report["removed"] = clean(setup.request, args.url, args.admin_password)
		browser.close()
	report["page_errors"] = errors
	print(json.dumps(report, indent=2, ensure_ascii=False))
	return 0 if not errors and all("failed" not in v for v in report.values() if isinstance(v, dict)) else 1


if __name__ == "__main__":
	raise SystemExit(main())
