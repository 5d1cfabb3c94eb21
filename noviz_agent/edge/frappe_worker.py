"""A background worker that runs jobs in its own process (`bench noviz-agent worker --no-fork`).

RQ's default worker forks a work horse for every job: each job starts from the preloaded
worker (edge/frappe_warm.py) but loses what it built when it exits - frappe's per-process
caches, the parsed SQL patterns, the provider's HTTP client and its TLS context. RQ's
SimpleWorker runs the job in the worker process itself, so every turn after the first one is a
warm turn. Frappe's `execute_job` still does `frappe.init`, `frappe.connect`, `set_user` and
`frappe.destroy` around each job, so a job's site, database connection, person and request
caches (`frappe.local`) end with it; the app keeps only immutable per-process caches (registry,
prompts, embeddings, the HTTP client) between jobs.

Trade-offs (README, "Background workers for the agent"):
- a job that crashes the process (a segfault, the OOM killer, SIGKILL) takes the worker down
  with it; supervisor starts it again and the turn is recovered as after any killed worker
  (edge/frappe_turns.py: retried once, or ended with a clear message);
- memory is not reset between jobs. It is bounded: after `max_jobs` jobs, or as soon as the
  resident memory passes `max_memory_mb` after a job, the worker finishes and exits normally
  so that supervisor starts a fresh one;
- the job's timeout is RQ's own (SIGALRM in the worker process), as in a forking worker.
"""

from __future__ import annotations

import gc
import resource
import sys
from pathlib import Path

from rq.worker import SimpleWorker, StopRequested

DEFAULT_MAX_JOBS = 1000
DEFAULT_MAX_MEMORY_MB = 1024


def resident_mb() -> float:
	"""This process's resident memory now (Linux /proc), or its peak where /proc is missing."""
	try:
		for row in Path("/proc/self/status").read_text().splitlines():
			if row.startswith("VmRSS:"):
				return int(row.split()[1]) / 1024
	except OSError:
		pass
	return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class NoForkWorker(SimpleWorker):
	"""SimpleWorker that stops itself (to be restarted fresh) once its memory passes a bound."""

	max_memory_mb: float = DEFAULT_MAX_MEMORY_MB

	def execute_job(self, job, queue):
		super().execute_job(job, queue)
		if self.over_memory():
			# RQ's work loop ends on StopRequested (rq 1.15 and 2.x), as it does for a warm shutdown.
			raise StopRequested()

	def over_memory(self) -> bool:
		"""Whether the resident memory after a job has passed the bound (then the worker stops)."""
		used = resident_mb()
		if self.max_memory_mb and used > self.max_memory_mb:
			self.log.info(
				"Worker %s: %.0f MB resident after a job, above %.0f MB: stopping for a fresh start",
				self.key,
				used,
				self.max_memory_mb,
			)
			return True
		return False


def niceness(conf) -> int:
	"""How much lower than the web's this worker's CPU priority is: `noviz_agent_worker_niceness` in
	the site config, 0 by default. Frappe lowers every background worker by 10
	(`background_process_niceness`) because its jobs can wait; a turn cannot: the person is
	waiting for it as for a web request, and at +10 a busy web server or database takes almost
	all the CPU from it."""
	value = conf.get("noviz_agent_worker_niceness")
	return max(0, int(value)) if value not in (None, "") else 0


def raise_niceness(conf) -> None:
	import os

	step = niceness(conf)
	if step:
		os.nice(step)


# The agent's DocTypes a turn reads or writes; their meta and controllers are loaded per site.
TURN_DOCTYPES = (
	"Agent Settings",
	"Agent Conversation",
	"Agent Conversation Turn",
	"Agent Interaction Log",
	"Agent Tool Call",
	"Agent SOP",
	"Agent SOP Run",
)


def warm_sites() -> list[str]:
	"""Read, for each site of the bench with the agent, what a worker's first turn otherwise reads
	for the first time (frappe's per-process caches of the site, DocType controllers, the query
	builder, the provider's client for the site's settings), so that the first turn a worker runs
	is not slower than the next. Read only: nothing is written, and every site is closed after."""
	import frappe

	warmed = []
	for site in frappe.utils.get_sites():
		try:
			frappe.init(site=site)
			frappe.connect()
			if "noviz_agent" in frappe.get_installed_apps():
				_warm_site()
				warmed.append(site)
		except Exception as exc:  # a site that cannot be read now is read by its first turn instead
			print(f"noviz-agent worker: {site} not warmed ({type(exc).__name__}: {exc})", file=sys.stderr)
		finally:
			try:
				frappe.db and frappe.db.rollback()
			finally:
				frappe.destroy()
	return warmed


def _warm_site() -> None:
	import frappe
	from frappe.model.base_document import get_controller

	from noviz_agent.edge import frappe_session

	frappe.get_hooks()
	for doctype in TURN_DOCTYPES:
		frappe.get_meta(doctype)
		get_controller(doctype)
	frappe.get_list("Agent Conversation", fields=["name"], limit_page_length=1)
	_warm_entities()
	values = frappe_session.load_settings(with_secrets=True)
	if values.get("base_url") and values.get("model"):
		frappe_session.make_provider(values)


def _warm_entities() -> None:
	"""Whether each DocType the tools read is virtual: frappe asks it once per process (one query)
	on the first list of each otherwise."""
	from frappe.model.utils import is_virtual_doctype

	from noviz_agent.connectors.model import load_model
	from noviz_agent.edge.frappe_allowance import present_doctypes

	present = present_doctypes()
	for entity in load_model():
		if entity.doctype in present:
			is_virtual_doctype(entity.doctype)


def start(
	queue: str | None = None,
	quiet: bool = False,
	burst: bool = False,
	strategy=None,
	max_jobs: int | None = DEFAULT_MAX_JOBS,
	max_memory_mb: float = DEFAULT_MAX_MEMORY_MB,
) -> None:  # pragma: no cover - runs until stopped; the site test runs it with burst
	"""Frappe's `start_worker`, with the no-fork worker class and the two bounds."""
	import frappe
	from frappe.utils.background_jobs import get_queue_list, get_redis_conn
	from rq.worker import DequeueStrategy

	from noviz_agent.edge import frappe_warm

	frappe_warm.mark_mode(frappe_warm.NO_FORK)
	warm_sites()
	# What frappe's worker pool does before its workers start: what was built so far is never
	# collected again, so the collector does not walk it after every job.
	gc.collect()
	gc.freeze()
	with frappe.init_site():
		connection = get_redis_conn()
		names = [q.strip() for q in queue.split(",")] if queue else None
		queues = get_queue_list(names, build_queue_name=True)
	raise_niceness(frappe.get_conf())
	worker = NoForkWorker(queues, connection=connection)
	worker.max_memory_mb = float(max_memory_mb or 0)
	worker.work(
		logging_level="WARNING" if quiet else "INFO",
		burst=burst,
		date_format="%Y-%m-%d %H:%M:%S",
		log_format="%(asctime)s,%(msecs)03d %(message)s",
		dequeue_strategy=strategy or DequeueStrategy.DEFAULT,
		max_jobs=max_jobs or None,
	)
	sys.stdout.flush()
