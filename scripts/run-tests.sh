#!/usr/bin/env bash
# Runs the frappe-free test suite on a fresh machine: installs what it needs, then pytest.
# Usage: bash scripts/run-tests.sh [pytest args...]
#   NOVIZ_VENV   the virtual environment to use (default .venv; created when missing)
#   PYTHON       the Python that creates it (default python3)
#   NOVIZ_NO_APT=1  never install a system package (the browser tests are then skipped without Chromium)
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${NOVIZ_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"
CHROMIUM="${NOVIZ_CHROMIUM:-/usr/bin/chromium}"
started=$(date +%s)

step() { echo "== [$(( $(date +%s) - started ))s] $*"; }

if [ ! -x "$VENV/bin/python" ]; then
	step "creating the virtual environment $VENV"
	"$PYTHON" -m venv "$VENV"
fi
# pip prints a line per package it collects and installs, so a first install (a few minutes) shows
# where it is; the lines for what is already there are left out. A failing pip stops the script.
pip_install() {
	"$VENV/bin/python" -m pip install --progress-bar off "$@" | { grep -v '^Requirement already satisfied' || true; }
}
step "upgrading pip in $VENV"
pip_install --upgrade pip
step "installing the app with its test and pdf extras into $VENV"
pip_install -e ".[test,pdf]"

# The chat's browser tests drive Debian's Chromium. As root on Debian it is installed, after saying so.
if [ ! -x "$CHROMIUM" ]; then
	if [ "${NOVIZ_NO_APT:-0}" != "1" ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
		step "installing the system package chromium with apt-get (running as root) for the browser tests; NOVIZ_NO_APT=1 skips this"
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium) \
			|| echo "!! Chromium could not be installed; the browser tests will be skipped"
	else
		step "no Chromium at $CHROMIUM: the browser tests will be skipped (as root on Debian this script installs it)"
	fi
fi

step "pytest"
exec "$VENV/bin/python" -m pytest "$@"
