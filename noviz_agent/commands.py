"""Bench commands: `bench --site S noviz-agent ask|doctor|index-knowledge|knowledge-status`."""

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


@noviz_agent.command("doctor")
@click.option("--skip-provider", is_flag=True, help="Do not call the model provider.")
@pass_context
def doctor(context, skip_provider):
	"""Check the settings, the provider connection and the knowledge store; say what is wrong."""
	from noviz_agent.connectors import frappe_doctor

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


@noviz_agent.command("index-knowledge")
@click.option("--rebuild", is_flag=True, help="Re-chunk and re-embed every document.")
@pass_context
def index_knowledge(context, rebuild):
	"""Index the shipped, folder and desk process documents (unchanged ones are skipped)."""
	from noviz_agent.connectors import frappe_knowledge, frappe_session

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
	from noviz_agent.connectors import frappe_knowledge, frappe_session

	_connect(context)
	try:
		values = frappe_session.load_settings(with_secrets=True)
		status = frappe_knowledge.status(values)
	finally:
		frappe.destroy()
	for key, value in status.items():
		click.echo(f"{key}: {value}")


commands = [noviz_agent]
