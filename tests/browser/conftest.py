"""Fixtures for the chat's browser tests: a static server on 127.0.0.1 and Debian's headless Chromium."""

from __future__ import annotations

import functools
import os
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM = os.environ.get("NOVIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--no-first-run",
]


def plotly_js() -> Path:
	"""Plotly's browser bundle as shipped inside the plotly Python package (a project dependency)."""
	import plotly

	return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


class _Handler(SimpleHTTPRequestHandler):
	def log_message(self, *args):
		pass

	def _script(self, data: bytes):
		self.send_response(200)
		self.send_header("Content-Type", "application/javascript; charset=utf-8")
		self.send_header("Content-Length", str(len(data)))
		self.end_headers()
		self.wfile.write(data)

	def do_GET(self):
		path = self.path.split("?")[0]
		if path == "/plotly.min.js":
			return self._script(plotly_js().read_bytes())
		if path == "/fixtures.js":
			return self._script(_fixtures_script().encode())
		if path.startswith("/translations/") and path.endswith(".js"):
			return self._script(translations_script(path.rsplit("/", 1)[1][:-3]).encode())
		super().do_GET()


@functools.cache
def _fixtures_script() -> str:
	from tests.browser import fixtures

	return fixtures.as_script()


def translations(lang: str) -> dict[str, str]:
	"""The app's shipped translations of one language, read from its gettext catalogue (source, translation)."""
	from babel.messages.pofile import read_po

	with (ROOT / "noviz_agent" / "locale" / f"{lang}.po").open("rb") as handle:
		return {m.id: m.string for m in read_po(handle) if m.id and m.string}


def translations_script(lang: str) -> str:
	import json

	return "window.TRANSLATIONS = " + json.dumps(translations(lang), ensure_ascii=False) + ";\n"


@pytest.fixture(scope="session")
def static_url():
	server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(ROOT)))
	thread = threading.Thread(target=server.serve_forever, daemon=True)
	thread.start()
	yield f"http://127.0.0.1:{server.server_address[1]}/tests/browser/static/index.html"
	server.shutdown()


@pytest.fixture(scope="session")
def browser():
	if not Path(CHROMIUM).exists():
		pytest.skip(
			f"{CHROMIUM} is absent: install Debian's chromium (apt-get install -y chromium) to run browser tests"
		)
	sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
	with sync_api.sync_playwright() as playwright:
		browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
		yield browser
		browser.close()


@pytest.fixture
def page(browser, static_url):
	# A browser in another time zone than the sites the tests play (times must follow the site).
	context = browser.new_context(viewport={"width": 1366, "height": 800}, timezone_id="Asia/Tokyo")
	page = context.new_page()
	errors: list[str] = []
	page.on("pageerror", lambda exc: errors.append(str(exc)))
	page.goto(static_url)
	page.wait_for_function("window.chat !== undefined")
	page.errors = errors
	yield page
	context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
	ARTIFACTS.mkdir(parents=True, exist_ok=True)
	return ARTIFACTS
