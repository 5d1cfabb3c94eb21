"""Live desk demo (not collected by pytest, not run by CI): the chat on a real bench, answered by the stub model.

Needs a served site on 127.0.0.1 with noviz_agent installed and the stub provider running:

    python -m noviz_agent.testing.stub_provider --port 8765 &
    (serve your development site on 127.0.0.1:8000)
    python tests/browser/live_desk_demo.py --url http://127.0.0.1:8000 --user sales.user@noviz.test

It points Agent Settings at the stub (as Administrator, through the REST API), signs in to the
desk as the given user through the login form, opens the drawer with the keyboard shortcut,
asks for records and for a new customer, and saves screenshots under test-artifacts/live/.
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


def point_settings_at_stub(request, url: str, admin_password: str, stub_url: str) -> None:
	login = request.post(f"{url}/api/method/login", data={"usr": "Administrator", "pwd": admin_password})
	assert login.ok, login.text()
	values = {"base_url": stub_url, "model": "stub-model", "enable_writes": 1, "rate_limit_per_hour": 500}
	saved = request.put(
		f"{url}/api/resource/Agent Settings/Agent Settings",
		data=json.dumps(values),
		headers={"Content-Type": "application/json"},
	)
	assert saved.ok, saved.text()
	request.post(f"{url}/api/method/logout")


def main(argv=None) -> int:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--url", default="http://127.0.0.1:8000")
	parser.add_argument("--user", default="sales.user@noviz.test")
	parser.add_argument("--password", default="Noviz-Test-2026")
	parser.add_argument("--admin-password", default="admin")
	parser.add_argument("--stub", default="http://127.0.0.1:8765/v1")
	args = parser.parse_args(argv)

	from playwright.sync_api import sync_playwright

	OUT.mkdir(parents=True, exist_ok=True)
	with sync_playwright() as playwright:
		browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
		context = browser.new_context(viewport={"width": 1366, "height": 800})
		point_settings_at_stub(context.request, args.url, args.admin_password, args.stub)
		page = context.new_page()
		errors: list[str] = []
		page.on("pageerror", lambda exc: errors.append(str(exc)))

		page.goto(f"{args.url}/login")
		page.fill("#login_email", args.user)
		page.fill("#login_password", args.password)
		page.click(".btn-login")
		page.wait_for_url("**/app**", timeout=60_000)
		page.wait_for_selector(".noviz-agent-launcher", timeout=60_000)
		page.screenshot(path=str(OUT / "01-desk-with-launcher.png"))

		page.keyboard.press("Control+Shift+K")
		page.wait_for_selector(".nz-drawer:not([hidden]) .nz-input", timeout=30_000)
		page.keyboard.type("show my recent sales orders")
		page.keyboard.press("Enter")
		page.wait_for_selector(".nz-drawer .nz-agent .nz-table a", timeout=60_000)
		page.screenshot(path=str(OUT / "02-table-answer.png"))
		first_link = page.query_selector(".nz-drawer .nz-table a").get_attribute("href")

		page.fill(".nz-drawer .nz-input", "create a customer named Noviz Demo Customer")
		page.keyboard.press("Enter")
		page.wait_for_selector(".nz-drawer .nz-proposal .nz-confirm", timeout=60_000)
		page.screenshot(path=str(OUT / "03-proposal-with-confirm.png"))

		page.click(".nz-drawer .nz-proposal .nz-confirm")
		page.wait_for_selector(
			".nz-drawer .nz-proposal.nz-confirmed, .nz-drawer .nz-proposal-status", timeout=60_000
		)
		page.wait_for_timeout(1500)
		page.screenshot(path=str(OUT / "04-after-confirm.png"))
		status = page.inner_text(".nz-drawer .nz-proposal-status")

		page.keyboard.press("Escape")
		page.wait_for_selector(".nz-drawer", state="hidden")

		page.goto(f"{args.url}/app/noviz-agent")
		page.wait_for_selector(".nz-mode-page .nz-conv", timeout=60_000)
		page.click(".nz-mode-page .nz-conv")
		page.wait_for_selector(".nz-mode-page .nz-agent", timeout=30_000)
		page.screenshot(path=str(OUT / "05-full-page.png"))

		print(
			json.dumps({"first_link": first_link, "proposal_status": status, "page_errors": errors}, indent=2)
		)
		browser.close()
	return 0 if not errors else 1


if __name__ == "__main__":
	raise SystemExit(main())
