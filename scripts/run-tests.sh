#!/usr/bin/env bash
# Runs the frappe-free test suite on a fresh machine: installs what it needs, then pytest.
# Usage: bash scripts/run-tests.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${NOVIZ_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
	echo "== creating $VENV"
	"$PYTHON" -m venv "$VENV"
fi
echo "== installing the app with its test extra"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e ".[test]"

# The chat's browser tests drive Debian's Chromium; install it when we may.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
	echo "== installing Chromium for the browser tests"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "!! Chromium could not be installed; the browser tests will be skipped"
fi

echo "== pytest"
exec "$VENV/bin/python" -m pytest "$@"
