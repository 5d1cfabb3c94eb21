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
	# First: it tells the canonical model which ERPNext release this bench runs.
	"noviz_agent.edge.frappe_versions",
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
	"frappe.search",
	"frappe.database.query",
	"frappe.model.create_new",
	"frappe.desk.form.assign_to",
	"frappe.desk.form.linked_with",
	"frappe.desk.form.utils",
	"frappe.workflow.doctype.workflow_action.workflow_action",
	# Controllers of what a turn loads whole: the person (roles, social logins), System Settings,
	# a DocType's links.
	"frappe.core.doctype.has_role.has_role",
	"frappe.core.doctype.user_social_login.user_social_login",
	"frappe.core.doctype.system_settings.system_settings",
	"frappe.core.doctype.doctype_link.doctype_link",
	"noviz_agent.api",
	"noviz_agent.tasks",
	"noviz_agent.connectors.frappe_connector",
	"noviz_agent.edge.frappe_allowance",
	"noviz_agent.edge.frappe_knowledge",
	"noviz_agent.edge.frappe_systems",
	"noviz_agent.edge.frappe_files",
	"noviz_agent.engine.provider.openai_compatible",
)

# Set when the process is a background worker that preloads; run-time code never depends on it.
_done: dict = {}

FORK, NO_FORK = "fork", "no-fork"
# How this process runs jobs: set by the no-fork worker (edge/frappe_worker.py); figures only.
_mode: dict = {}


def mark_mode(mode: str) -> None:
	_mode["mode"] = mode


def worker_mode() -> str:
	"""'no-fork' in a worker that runs jobs in its own process, else 'fork' (RQ's default)."""
	return _mode.get("mode", FORK)


def count_turn() -> int:
	"""How many turns this process ran before this one (figures only: 0 is a process's first)."""
	count = _mode.get("turns", 0)
	_mode["turns"] = count + 1
	return count


def preloaded() -> bool:
	"""Whether this process (or the worker it was forked from) preloaded the app."""
	return bool(_done)


def preload() -> dict:
	"""Import the turn's modules and build the per-process caches once; {what: ms}. Safe to call again."""
	if _done:
		return dict(_done)
	figures: dict[str, float] = {}

	def timed(name, work):
		began = time.perf_counter()
		try:
			return work()
		except Exception as exc:
			# A step that cannot be done here is done by the first job that needs it, as without a preload.
			print(f"noviz-agent preload: {name} skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
			return None
		finally:
			figures[name] = round((time.perf_counter() - began) * 1000, 1)

	timed("imports", lambda: [importlib.import_module(m) for m in (*MODULES, *_controllers())])
	timed("hook modules", lambda: [_try_import(m) for m in _hook_modules()])
	timed("provider client", _provider_client)
	timed("sql parser", _sql_parser)

	from noviz_agent.connectors.dataset_map import load_sources
	from noviz_agent.connectors.model import load_model
	from noviz_agent.edge import frappe_session
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
	from noviz_agent.edge import frappe_sops
	from noviz_agent.engine.similarity import default_embedder

	if default_embedder() is not None:
		frappe_sops.matcher()


def _sql_parser() -> None:
	"""frappe checks the columns of every list query with sqlparse, whose lexer compiles its
	patterns on first use."""
	import sqlparse

	sqlparse.format("select `tabUser`.`name` -- a comment", strip_comments=True, keyword_case="lower")


def _try_import(name: str) -> None:
	try:
		importlib.import_module(name)
	except Exception:
		pass  # an app's handler that cannot be imported here is imported (or fails) in the job, as before


def _hook_modules() -> list[str]:
	"""Modules of the installed apps' hooks that a turn runs: the doc_events handlers for every
	DocType ("*") and for the agent's own DocTypes (its records are written), and the list filters
	(`filters_config`, read by every filtered list)."""
	import frappe

	try:
		apps = frappe.get_all_apps(with_internal_apps=False, sites_path=".")
	except Exception:
		return []
	modules = []
	for app in dict.fromkeys(["frappe", *apps]):
		try:
			hooks = importlib.import_module(f"{app}.hooks")
		except Exception:
			continue
		events = getattr(hooks, "doc_events", None) or {}
		filters = getattr(hooks, "filters_config", None) or ()
		for path in [filters] if isinstance(filters, str) else filters:
			modules.append(str(path).rpartition(".")[0])
		for doctype, handlers in events.items():
			if doctype != "*" and not str(doctype).startswith("Agent "):
				continue
			for paths in (handlers or {}).values():
				for path in [paths] if isinstance(paths, str) else paths:
					modules.append(str(path).rpartition(".")[0])
	return list(dict.fromkeys(m for m in modules if m))


# A chat completion with a tool call, and a streamed chunk: parsing them builds the client's
# response models (pydantic builds each model's schema on its first use).
_REPLY = {
	"id": "preload",
	"object": "chat.completion",
	"created": 0,
	"model": "preload",
	"choices": [
		{
			"index": 0,
			"finish_reason": "tool_calls",
			"message": {
				"role": "assistant",
				"content": None,
				"tool_calls": [
					{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
				],
			},
		}
	],
	"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}
_CHUNK = {
	"id": "preload",
	"object": "chat.completion.chunk",
	"created": 0,
	"model": "preload",
	"choices": [{"index": 0, "delta": {"role": "assistant", "content": "x"}, "finish_reason": None}],
}


def _provider_client() -> None:
	"""The OpenAI client imports its chat resources and builds its response models on first use,
	and the first client reads the CA certificates: all three now, with no request."""
	import openai
	from openai.types.chat import ChatCompletion, ChatCompletionChunk

	from noviz_agent.engine.provider.openai_compatible import tls_context

	# The TLS context with the CA certificates: every provider client of this process shares it.
	client = openai.OpenAI(
		base_url="http://127.0.0.1:9/v1",
		api_key="preload",
		max_retries=0,
		http_client=openai.DefaultHttpxClient(verify=tls_context()),
	)
	_ = client.chat.completions
	client.close()
	try:
		ChatCompletion.model_validate(_REPLY)
		ChatCompletionChunk.model_validate(_CHUNK)
	except Exception:
		pass  # another client version's shapes: its models are built on first use instead


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
