"""Warm background workers: the app imported and its immutable caches built before a worker forks.

RQ runs every job in a work horse forked from the worker process. `bench worker` has imported
frappe but not this app, so without help every turn's job would import the app and build the
tool registry again (seconds under load). `preload()` does that once in the worker process;
each forked job then starts with it in memory, shared copy-on-write (frappe's worker freezes
the garbage collector after this, before the first fork).

Only what holds no site's and no person's data is built here: modules, the tool registry, the
canonical model and dataset maps, the router and the description embeddings of the registry,
the procedures' step matcher, prompt files. No database, no Redis, no site: it runs before any site is connected.

Two ways in (README, "Background workers"): `bench noviz-agent worker` preloads and then runs
frappe's own worker; and a plain `bench worker` / `bench worker-pool` preloads as well, because
the bench loads every app's commands module before it runs the command (see commands.py).
"""

from __future__ import annotations

import importlib
import sys
import time

# What a turn's job imports, so the forked job finds it loaded. frappe's own modules that a
# turn uses but a bare worker has not imported yet come first.
MODULES = (
	"frappe.model.db_query",
	"frappe.model.document",
	"frappe.utils.user",
	"frappe.utils.password",
	"frappe.realtime",
	"frappe.query_builder",
	"frappe.desk.reportview",
	"frappe.email.doctype.notification.notification",
	"frappe.database.mariadb.database",
	"frappe.utils.redis_wrapper",
	"frappe.desk.notifications",
	"frappe.desk.form.load",
	"frappe.utils.nestedset",
	"frappe.core.doctype.user.user",
	"frappe.utils.logger",
	"noviz_agent.api",
	"noviz_agent.tasks",
	"noviz_agent.connectors.frappe_connector",
	"noviz_agent.connectors.frappe_allowance",
	"noviz_agent.connectors.frappe_knowledge",
	"noviz_agent.connectors.frappe_systems",
	"noviz_agent.connectors.frappe_files",
	"noviz_agent.engine.provider.openai_compatible",
)

# Set when the process is a background worker that preloads; run-time code never depends on it.
_done: dict = {}


def preload() -> dict:
	"""Import the turn's modules and build the per-process caches once; {what: ms}. Safe to call again."""
	if _done:
		return dict(_done)
	figures: dict[str, float] = {}

	def timed(name, work):
		began = time.perf_counter()
		result = work()
		figures[name] = round((time.perf_counter() - began) * 1000, 1)
		return result

	timed("imports", lambda: [importlib.import_module(m) for m in (*MODULES, *_controllers())])
	timed("provider client", _provider_client)

	from noviz_agent.connectors import frappe_session
	from noviz_agent.connectors.dataset_map import load_sources
	from noviz_agent.connectors.model import load_model
	from noviz_agent.engine import prompt, routing, similarity

	registry = timed("registry", frappe_session.registry)
	timed("model", lambda: (load_model(), load_sources()))
	timed(
		"prompts",
		lambda: [
			prompt.read_prompt(str(p.relative_to(prompt.PROMPTS_DIR)))
			for p in sorted(prompt.PROMPTS_DIR.rglob("*.md"))
		],
	)
	timed("router", lambda: routing.router_for(registry))
	# The description embeddings (None when no local embedder is installed: keywords only then).
	timed("embeddings", lambda: similarity.similarity_for(registry))
	timed("procedure matcher", _procedure_matcher)
	_done.update(figures)
	return figures


def _controllers() -> list[str]:
	"""The app's DocType controller modules (a turn inserts and reads several of its DocTypes)."""
	from pathlib import Path

	import noviz_agent.noviz_agent.doctype as doctypes

	root = Path(doctypes.__file__).parent
	return [
		f"{doctypes.__name__}.{folder.name}.{folder.name}"
		for folder in sorted(root.iterdir())
		if (folder / f"{folder.name}.py").is_file()
	]


def _procedure_matcher() -> None:
	"""The procedures' step matcher over the full registry, when the built-in embedder needs no site."""
	from noviz_agent.connectors import frappe_sops
	from noviz_agent.engine.similarity import default_embedder

	if default_embedder() is not None:
		frappe_sops.matcher()


def _provider_client() -> None:
	"""The OpenAI client imports its chat resources on first use: import them now, with no request."""
	import openai

	client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="preload", max_retries=0)
	_ = client.chat.completions
	client.close()


def worker_command(argv: list[str] | None = None) -> str | None:
	"""'worker' or 'worker-pool' when this process is `bench [--site S] worker|worker-pool ...`, else None.

	The bench runs `python -m frappe.utils.bench_helper frappe [options] COMMAND ...`; the command
	is the first word after `frappe` that is neither an option nor an option's value.
	"""
	argv = sys.argv if argv is None else argv
	if not argv or not str(argv[0]).endswith(("bench_helper.py", "bench_helper")):
		return None
	words = list(argv[1:])
	if not words or words[0] != "frappe":
		return None
	words = words[1:]
	with_value = {"--site"}
	while words:
		word = words.pop(0)
		if word in with_value:
			if words:
				words.pop(0)
			continue
		if word.startswith("-"):
			continue
		return word if word in ("worker", "worker-pool") else None
	return None
