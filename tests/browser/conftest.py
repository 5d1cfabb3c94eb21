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

	def do_GET(self):
		if self.path.split("?")[0] == "/plotly.min.js":
			data = plotly_js().read_bytes()
			self.send_response(200)
			self.send_header("Content-Type", "application/javascript")
			self.send_header("Content-Length", str(len(data)))
			self.end_headers()
			self.wfile.write(data)
			return
		super().do_GET()


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
	context = browser.new_context(viewport={"width": 1366, "height": 800})
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
