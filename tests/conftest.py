"""Suite-wide guards: no test reaches anything but this machine."""

from __future__ import annotations

import ipaddress
import socket
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
	sys.path.insert(0, str(ROOT))

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_local(address) -> bool:
	if isinstance(address, (str, bytes)):
		return True  # unix sockets
	host = address[0]
	if host in ("localhost", ""):
		return True
	try:
		return ipaddress.ip_address(host).is_loopback
	except ValueError:
		return False


def _guarded(real):
	def connect(self, address):
		if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address):
			raise RuntimeError(f"Tests may only connect to loopback addresses, not {address!r}")
		return real(self, address)

	return connect


def pytest_configure(config):
	config.addinivalue_line(
		"markers",
		"attack(category): a trust attack counted by benchmarks/trust.py under the category "
		"(None: a test in an attack file that tries the ordinary path, not counted)",
	)


@pytest.fixture(autouse=True, scope="session")
def _no_network():
	"""Like ALLOW_MODEL_REQUESTS = False: a test that tries to reach a real provider fails loudly."""
	socket.socket.connect = _guarded(_real_connect)
	socket.socket.connect_ex = _guarded(_real_connect_ex)
	yield
	socket.socket.connect = _real_connect
	socket.socket.connect_ex = _real_connect_ex
