"""The trust suite as a table: attacks tried per category, passed and failed.

    .venv/bin/python benchmarks/trust.py [-q]

Each attack is one test case of the frappe-free trust suite (permission leaks on every read
path, unconfirmed or stale writes, injected instructions, faults from the provider and the
tools, hostile input, secrets in output), run through the real gateway, loop and turn with the
in-memory connector and the OpenAI-compatible stub on 127.0.0.1. Property tests count once
each but try hundreds of generated sequences. The site-side counterparts (real permissions as
different users) run with `bench --site S run-tests --app noviz_agent`. Exits non-zero when any
attack succeeds.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Which suite files attack what; a file may hold several kinds of attack, it is counted once.
CATEGORIES = {
	"permissions: every read path as 3 people": ["tests/trust/test_read_paths.py"],
	"writes: tokens, replay, stale documents": [
		"tests/trust/test_stale_proposals.py",
		"tests/trust/test_gateway_properties.py",
		"tests/engine/test_gateway.py",
		"tests/engine/test_turn_end_to_end.py",
	],
	"injected instructions and markup": [
		"tests/trust/test_injected_instructions.py",
		"tests/trust/test_untrusted_text.py",
		"tests/trust/test_chart_markup.py",
	],
	"faults: provider, tools, limits": ["tests/engine/test_llm_provider.py", "tests/engine/test_loop.py"],
	"bad input: person, model, browser": [
		"tests/trust/test_bad_input.py",
		"tests/edge/test_edge_validation.py",
	],
	"secrets: keys in output or other hosts": [
		"tests/trust/test_secrets_scan.py",
		"tests/trust/test_secrets_and_limits.py",
	],
}


class Tally:
	def __init__(self):
		self.by_file: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
		self.failures: list[str] = []

	def pytest_runtest_logreport(self, report):
		if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
			path = report.nodeid.split("::", 1)[0]
			self.by_file[path][report.outcome] += 1
			if report.outcome == "failed":
				self.failures.append(report.nodeid)


def main(argv: list[str]) -> int:
	files = [f for group in CATEGORIES.values() for f in group]
	tally = Tally()
	code = pytest.main(
		["-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *[str(ROOT / f) for f in files], *argv],
		plugins=[tally],
	)
	width = max(len(c) for c in CATEGORIES)
	print(f"\n{'category':<{width}}  tried  passed  failed  skipped")
	totals = [0, 0, 0, 0]
	for category, group in CATEGORIES.items():
		counts = defaultdict(int)
		for f in group:
			for outcome, n in tally.by_file.get(f, {}).items():
				counts[outcome] += n
		row = [sum(counts.values()), counts["passed"], counts["failed"], counts["skipped"]]
		totals = [a + b for a, b in zip(totals, row, strict=True)]
		print(f"{category:<{width}}  {row[0]:>5}  {row[1]:>6}  {row[2]:>6}  {row[3]:>7}")
	print(f"{'all':<{width}}  {totals[0]:>5}  {totals[1]:>6}  {totals[2]:>6}  {totals[3]:>7}")
	for nodeid in tally.failures:
		print(f"FAILED {nodeid}")
	return int(code != 0 or totals[2] > 0)


if __name__ == "__main__":
	sys.path.insert(0, str(ROOT))
	sys.exit(main(sys.argv[1:]))
