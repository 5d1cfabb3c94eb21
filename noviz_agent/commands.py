"""Bench commands: `bench --site S noviz-agent ask|attacks|doctor|eval|index-knowledge|knowledge-status|worker`.

The bench imports this module in every bench process before it runs the command. In a
background worker (`bench worker`, `bench worker-pool`) that is the moment to preload the app,
so that every job RQ forks from the worker starts warm (edge/frappe_warm.py).
"""

from __future__ import annotations

import json
import sys

import click
import frappe
from frappe.commands import get_site, pass_context


def _connect(context):
	site = get_site(context)
	frappe.init(site=site)
	frappe.connect()
	return site


@click.group("noviz-agent")
def noviz_agent():
	"""The Noviz agent: ask a question, check the setup, index the process knowledge."""


@noviz_agent.command("ask")
@click.argument("question")
@click.option("--user", default="Administrator", help="Run the turn as this user (their permissions apply).")
@click.option("--conversation", default=None, help="Continue this conversation (must be the user's own).")
@click.option("--json", "as_json", is_flag=True, help="Print the api's full reply as JSON.")
@pass_context
def ask(context, question, user, conversation, as_json):
	"""Run one turn as USER and print the response."""
	from noviz_agent import api
	from noviz_agent.plain_text import response_text

	_connect(context)
	try:
		if not frappe.db.exists("User", user):
			raise click.ClickException(f"There is no user {user!r} on this site.")
		frappe.set_user(user)
		reply = api.send(question, conversation=conversation)
		frappe.db.commit()
	finally:
		frappe.destroy()
	if as_json:
		click.echo(json.dumps(reply, indent=2, default=str, ensure_ascii=False))
		return
	click.echo(response_text(reply["response"]))
	click.echo(f"\n(conversation {reply['conversation']}, log {reply['log']})", err=True)


@noviz_agent.command("attacks")
@click.option("--only", default=None, help="Run only the attacks whose name contains this.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: where, and a row per attack.")
@pass_context
def attacks(context, only, as_json):
	"""Run the trust attacks as real people with real roles on this site; nothing stays (rolled back)."""
	from noviz_agent.tests import attacks as suite

	_connect(context)
	try:
		results = suite.run_all(only)
		where = suite.site_label()
	finally:
		frappe.destroy()
	if as_json:
		click.echo(json.dumps({"where": where, "attacks": results}, default=str))
	else:
		click.echo(suite.table(results, where))
	sys.exit(1 if any(r["outcome"] != "passed" for r in results) else 0)


@noviz_agent.command("doctor")
@click.option("--skip-provider", is_flag=True, help="Do not call the model provider.")
@pass_context
def doctor(context, skip_provider):
	"""Check the settings, the provider connection and the knowledge store; say what is wrong."""
	from noviz_agent.edge import frappe_doctor

	_connect(context)
	try:
		checks = frappe_doctor.run(call_provider=not skip_provider)
	finally:
		frappe.destroy()
	failed = 0
	for check in checks:
		mark = {"ok": "OK  ", "warn": "WARN", "fail": "FAIL"}[check.status]
		failed += check.status == "fail"
		click.echo(f"[{mark}] {check.name}: {check.message}")
	sys.exit(1 if failed else 0)


@noviz_agent.command("eval")
@click.option("--oracle", is_flag=True, help="Use the scripted oracle model instead of the site's provider.")
@click.option(
	"--stub",
	is_flag=True,
	help="Use the OpenAI-compatible HTTP stub on 127.0.0.1 (a rule-based demo, not a model).",
)
@click.option(
	"--user",
	"users",
	multiple=True,
	help="PERSON=EMAIL: who asks for that person (default accounts=accounts.user@noviz.test, "
	"sales=sales.user@noviz.test).",
)
@click.option("--base-url", default=None, help="Evaluate this OpenAI-compatible provider, not the site's.")
@click.option("--model", default=None, help="The candidate model's name (with --base-url).")
@click.option("--api-key", default="", help="The candidate provider's API key (with --base-url).")
@click.option(
	"--tool-call-format",
	type=click.Choice(["native", "text", "auto"]),
	default=None,
	help="How the candidate model sends tool calls (default: native; text or auto for local models "
	"that print them).",
)
@click.option("--strict-tools", is_flag=True, help="Send the candidate model strict function tools.")
@click.option("--only", multiple=True, help="Run only this question id (repeatable).")
@click.option(
	"--json",
	"json_path",
	default=None,
	help="Write every grade and the totals to this file (after each question).",
)
@pass_context
def evaluate(
	context, oracle, stub, users, base_url, model, api_key, tool_call_format, strict_tools, only, json_path
):
	"""Run the labelled questions through the real turn against this site and grade the answers.

	The same options as `noviz-agent eval` without a site: --oracle, --stub, a candidate provider
	(--base-url, --model, --api-key, --tool-call-format, --strict-tools), --only and --json.
	"""
	from contextlib import ExitStack

	from noviz_agent.edge import frappe_evaluation, frappe_session
	from noviz_agent.evaluation import seed
	from noviz_agent.evaluation.cli import (
		CommandLineError,
		check_provider,
		check_writable,
		exit_code,
		run_graded,
	)
	from noviz_agent.evaluation.harness import EvaluationError, load_questions

	if oracle and stub:
		raise click.ClickException("--oracle and --stub are two different models: choose one")
	people = {key: persona.user for key, persona in seed.PERSONAS.items()}
	for pair in users:
		person, _, email = pair.partition("=")
		if not email:
			raise click.ClickException(f"--user takes PERSON=EMAIL, got {pair!r}")
		people[person.strip()] = email.strip()
	try:
		path = check_writable(json_path)  # before anything runs, so no grade is lost to a bad path
	except CommandLineError as exc:
		raise click.ClickException(str(exc)) from None
	_connect(context)
	stack = ExitStack()
	try:
		frappe.set_user("Administrator")
		questions = load_questions()
		if only:
			questions = [q for q in questions if q["id"] in set(only)]
			if not questions:
				raise click.ClickException(f"no question with id {', '.join(only)}")
		values = frappe_session.load_settings(with_secrets=True)
		if oracle:
			from noviz_agent.evaluation.oracle import oracle_model

			name = "oracle"

			def provider_for(question, session):
				return oracle_model(question, session.registry)
		else:
			from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderSettings

			if stub:
				from noviz_agent.testing.stub_provider import StubProvider

				base_url, model, api_key = stack.enter_context(StubProvider()).base_url, "stub-model", ""
			if base_url or model:
				# A candidate model (or the stub), tried before anyone switches Agent Settings over to it.
				if not (base_url and model):
					raise click.ClickException("--base-url and --model go together")
				try:
					settings = ProviderSettings(
						base_url,
						api_key=api_key,
						model=model,
						tool_call_format=tool_call_format or "native",
						strict_tools=strict_tools,
					)
				except ValueError as exc:  # the settings' own words: what is wrong with the URL or model
					raise click.ClickException(str(exc)) from None
				provider = OpenAICompatibleProvider(settings)
				name = "http stub" if stub else f"{model} at {base_url}"
			else:
				provider = frappe_session.make_provider(values)
				name = f"{values.get('model')} at {values.get('base_url')}"
			# Asked once before the run: an unreachable provider stops it here, not after every question.
			check_provider(provider, hint=None if (base_url or stub) else _settings_hint)

			def provider_for(question, session):
				return provider

		runner = frappe_evaluation.site_runner(values, people, provider_for)
		report, finished = run_graded(
			questions,
			frappe_evaluation.facts_for(people),
			runner,
			provider=name,
			json_path=path,
			stub=stub,
			echo=click.echo,
		)
	except (EvaluationError, CommandLineError) as exc:
		raise click.ClickException(str(exc)) from None
	except frappe_session.NotConfigured as exc:
		raise click.ClickException(f"{exc} {exc.admin_hint} Or run with --oracle.") from None
	finally:
		stack.close()
		frappe.destroy()
	sys.exit(exit_code(report, finished, stub=stub))


def _settings_hint(kind: str) -> str:
	if kind == "auth":
		return (
			"Check the API key in Agent Settings, or try a candidate with --base-url, --model and --api-key."
		)
	return "Check the provider base URL and model in Agent Settings, or try a candidate with --base-url and --model."


@noviz_agent.command("index-knowledge")
@click.option("--rebuild", is_flag=True, help="Re-chunk and re-embed every document.")
@pass_context
def index_knowledge(context, rebuild):
	"""Index the shipped, folder and desk process documents (unchanged ones are skipped)."""
	from noviz_agent.edge import frappe_knowledge, frappe_session

	_connect(context)
	try:
		values = frappe_session.load_settings(with_secrets=True)
		with click.progressbar(length=1, label="Indexing process documents", show_pos=True) as bar:

			def progress(done: int, total: int, title: str) -> None:
				bar.length = max(total, 1)
				bar.label = f"Indexing: {title[:40]}"
				bar.update(done - bar.pos)

			summary = frappe_knowledge.index(values, rebuild=rebuild, progress=progress)
	finally:
		frappe.destroy()
	click.echo(
		f"{summary['added']} added, {summary['updated']} updated, {summary['unchanged']} unchanged, "
		f"{summary['removed']} removed; {summary['chunks_written']} chunks written, "
		f"{summary['embedding_calls']} embedding requests, {summary['seconds']} s"
	)


@noviz_agent.command("knowledge-status")
@pass_context
def knowledge_status(context):
	"""Show what the knowledge store holds and how it searches (lexical or hybrid)."""
	from noviz_agent.edge import frappe_knowledge, frappe_session

	_connect(context)
	try:
		values = frappe_session.load_settings(with_secrets=True)
		status = frappe_knowledge.status(values)
	finally:
		frappe.destroy()
	for key, value in status.items():
		click.echo(f"{key}: {value}")


@noviz_agent.command("worker")
@click.option("--queue", type=str, help="Queues to consume, comma-separated (default: all of them).")
@click.option("--quiet", is_flag=True, default=False, help="Hide log output.")
@click.option("--burst", is_flag=True, default=False, help="Run until the queues are empty, then stop.")
@click.option(
	"--strategy",
	type=click.Choice(["round_robin", "random"]),
	help="Dequeuing strategy (frappe's worker option).",
)
@click.option(
	"--no-fork",
	is_flag=True,
	default=False,
	help="Run each job in the worker process (RQ's SimpleWorker): every turn after the first is warm.",
)
@click.option(
	"--max-jobs",
	type=click.IntRange(min=0),
	default=1000,
	show_default=True,
	help="With --no-fork: exit after this many jobs so supervisor starts a fresh worker (0: no limit).",
)
@click.option(
	"--max-memory",
	type=click.IntRange(min=0),
	default=1024,
	show_default=True,
	help="With --no-fork: exit after a job that leaves the worker above this many MB resident (0: no limit).",
)
def worker(queue, quiet, burst, strategy, no_fork, max_jobs, max_memory):
	"""Frappe's background worker, with the agent preloaded so every job starts warm."""
	from frappe.utils.background_jobs import start_worker

	from noviz_agent.edge import frappe_warm, frappe_worker

	figures = frappe_warm.preload()
	if not quiet:
		mode = "no-fork" if no_fork else "fork"
		click.echo(
			f"noviz-agent worker ({mode}): preloaded in {sum(figures.values()):.0f} ms {figures}", err=True
		)
	if no_fork:
		frappe_worker.start(
			queue, quiet=quiet, burst=burst, strategy=strategy, max_jobs=max_jobs, max_memory_mb=max_memory
		)
	else:
		start_worker(queue, quiet=quiet, burst=burst, strategy=strategy)


def _preload_in_worker() -> None:
	"""Preload the app when this bench process is a plain `bench worker` or `bench worker-pool`."""
	from noviz_agent.edge import frappe_warm

	if frappe_warm.worker_command() is None:
		return
	try:
		figures = frappe_warm.preload()
		click.echo(f"noviz-agent: worker preloaded in {sum(figures.values()):.0f} ms", err=True)
	except Exception as exc:
		# A worker that cannot preload still works, only colder: never stop it from starting.
		click.echo(f"noviz-agent: preload skipped ({type(exc).__name__}: {exc})", err=True)


commands = [noviz_agent]
_preload_in_worker()
