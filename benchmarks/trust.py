"""The trust suite as tables: attacks tried per category, passed and failed, and where they ran.

    .venv/bin/python benchmarks/trust.py [-q]
    .venv/bin/python benchmarks/trust.py --site SITE --bench BENCH_DIR [--bench-command "..."]

In memory (always): every test marked `@pytest.mark.attack(category)` - permission leaks on
every read path, unconfirmed, replayed or stale writes, injected instructions in any wording,
hostile input, secrets in output or sent to other hosts, budgets - run through the real gateway,
loop and turn with the in-memory connector and the OpenAI-compatible stub on 127.0.0.1. Tests
that try the ordinary path (the pattern's unit tests, retries, loops) are not attacks and are
not counted. Property tests count once each but try hundreds of generated sequences.

On a site (`--site`): `bench --site SITE noviz-agent attacks --json`, run in BENCH_DIR (or the
command given), tries the permission, write, injection, audit, secret and budget attacks of
noviz_agent/tests/attacks.py as real people with real roles and User Permissions on a live
ERPNext, everything rolled back. Exits non-zero when any attack succeeds anywhere.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


class Tally:
	"""Counts the attacks (tests with a category) by category and outcome."""

	def __init__(self):
		self.category: dict[str, str] = {}
		self.counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
		self.failures: list[str] = []

	@pytest.hookimpl(trylast=True)
	def pytest_collection_modifyitems(self, items):
		for item in items:
			marker = item.get_closest_marker("attack")
			category = marker.args[0] if marker and marker.args else None
			if category:
				self.category[item.nodeid] = category
		items[:] = [item for item in items if item.nodeid in self.category]

	def pytest_runtest_logreport(self, report):
		category = self.category.get(report.nodeid)
		if category and (report.when == "call" or (report.when == "setup" and report.outcome != "passed")):
			self.counts[category][report.outcome] += 1
			if report.outcome == "failed":
				self.failures.append(report.nodeid)


def attack_files() -> list[Path]:
	"""The test files that hold attacks (a quick scan, so the run collects only those)."""
	return sorted(
		p for p in (ROOT / "tests").rglob("test_*.py") if "mark.attack(" in p.read_text(encoding="utf-8")
	)


def print_table(where: str, rows: dict[str, list[int]], failures: list[str]) -> int:
	width = max([len(c) for c in rows] + [8])
	print(f"\nattacks {where}")
	print(f"{'category':<{width}}  tried  passed  failed")
	total = [0, 0, 0]
	for category, (tried, passed, failed) in sorted(rows.items()):
		total = [total[0] + tried, total[1] + passed, total[2] + failed]
		print(f"{category:<{width}}  {tried:>5}  {passed:>6}  {failed:>6}")
	print(f"{'all':<{width}}  {total[0]:>5}  {total[1]:>6}  {total[2]:>6}")
	for failure in failures:
		print(f"FAILED {failure}")
	return total[2]


def in_memory(extra: list[str]) -> int:
	tally = Tally()
	code = pytest.main(
		["-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *map(str, attack_files()), *extra],
		plugins=[tally],
	)
	rows = {
		category: [sum(c.values()), c["passed"], c["failed"] + c.get("error", 0)]
		for category, c in tally.counts.items()
	}
	failed = print_table(
		"in memory (frappe-free: the in-memory connector, the stub provider on 127.0.0.1)",
		rows,
		tally.failures,
	)
	return int(code != 0 or failed > 0)


def on_site(site: str, bench: str | None, command: str | None) -> int:
	base = shlex.split(command) if command else ["bench"]
	argv = [*base, "--site", site, "noviz-agent", "attacks", "--json"]
	done = subprocess.run(argv, cwd=bench or None, capture_output=True, text=True)
	line = next((ln for ln in reversed(done.stdout.splitlines()) if ln.startswith("{")), None)
	if line is None:
		print(
			f"\nThe site run printed no result (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
		)
		return 1
	report = json.loads(line)
	rows: dict[str, list[int]] = {}
	for row in report["attacks"]:
		counts = rows.setdefault(row["category"], [0, 0, 0])
		counts[0] += 1
		counts[1] += row["outcome"] == "passed"
		counts[2] += row["outcome"] != "passed"
	failures = [
		f"{r['attack']} ({r['outcome']}): {r['message']}"
		for r in report["attacks"]
		if r["outcome"] != "passed"
	]
	return int(print_table(f"on {report['where']}", rows, failures) > 0)


def main(argv: list[str]) -> int:
	parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
	parser.add_argument("--site", help="also run the attacks on this live site")
	parser.add_argument("--bench", help="the bench directory to run `bench` in")
	parser.add_argument(
		"--bench-command", help='the command that stands for `bench` (e.g. "./env/bin/bench")'
	)
	parser.add_argument("--site-only", action="store_true", help="skip the in-memory run")
	args, extra = parser.parse_known_args(argv)
	code = 0 if args.site_only else in_memory(extra)
	if args.site:
		code |= on_site(args.site, args.bench, args.bench_command)
	return code


if __name__ == "__main__":
	sys.path.insert(0, str(ROOT))
	sys.exit(main(sys.argv[1:]))
