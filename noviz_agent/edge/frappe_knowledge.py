"""The knowledge base for this site: settings from Agent Settings, desk documents, the store in private files.

The knowledge package does the work (documents, chunks, embeddings, search); this module
only says where things are on a site and which desk records to include.
"""

from __future__ import annotations

from pathlib import Path

import frappe

from knowledge.documents import document_from_record
from knowledge.service import KnowledgeConfig, load_documents, open_knowledge
from noviz_agent.validation import embedding_endpoint, lines

DOCTYPE = "Agent Knowledge Document"


def data_dir() -> Path:
	"""Where the embedded PostgreSQL of this site lives (private files, so backups and site moves keep it)."""
	return Path(frappe.get_site_path("private", "noviz_agent", "knowledge")).resolve()


def config(values: dict) -> KnowledgeConfig:
	"""The knowledge configuration from Agent Settings values (with secrets) and site configuration."""
	folder = (values.get("knowledge_folder") or "").strip()
	url, key = embedding_endpoint(values)
	return KnowledgeConfig(
		dsn=frappe.conf.get("noviz_knowledge_dsn") or None,
		data_dir=data_dir(),
		docs_dirs=(Path(folder),) if folder else (),
		embedding_model=values.get("embedding_model") or None,
		embedding_base_url=url,
		embedding_api_key=key,
	)


def desk_documents() -> list:
	"""Enabled Agent Knowledge Documents as knowledge documents."""
	# Indexing is an administrator's job over every enabled document; who may see a passage is
	# decided at search time by the document's roles.
	rows = frappe.get_all(
		DOCTYPE,
		filters={"enabled": 1},
		fields=["name", "title", "slug", "module", "doctypes", "roles", "body"],
		order_by="name asc",
	)
	return [
		document_from_record(
			row.name,
			title=row.title,
			module=row.module,
			content=row.body or "",
			doctypes=lines(row.doctypes),
			roles=lines(row.roles),
			slug=row.slug or None,
		)
		for row in rows
	]


def index(values: dict, *, rebuild: bool = False, progress=None) -> dict:
	"""Index shipped, folder and desk documents; unchanged ones are skipped by checksum."""
	cfg = config(values)
	base = open_knowledge(cfg)
	report = base.index(load_documents(cfg, desk_documents()), rebuild=rebuild, progress=progress)
	return report.to_dict()


def status(values: dict) -> dict:
	return open_knowledge(config(values)).status()


def indexed(values: dict) -> bool:
	"""Whether an index was ever built for this site (so a turn does not start a database for nothing)."""
	return bool(frappe.conf.get("noviz_knowledge_dsn")) or (data_dir() / "pgdata" / "PG_VERSION").exists()


def opener(values: dict):
	"""Opens the site's knowledge base when knowledge.search first needs it; None when nothing was indexed."""
	if not indexed(values):
		return None
	cfg = config(values)
	return lambda: open_knowledge(cfg)


def retriever(values: dict):
	"""A turn's retriever: passages the person's roles may read; on any failure, no passages."""
	if not indexed(values):
		return None
	cfg = config(values)

	def retrieve(message: str, session) -> list[dict]:
		try:
			passages = open_knowledge(cfg).context(
				message, roles=session.person.roles, site_version=getattr(session, "erpnext_version", None)
			)
		except Exception:
			frappe.log_error(title="Noviz agent: knowledge search failed")
			return []
		return [passage.to_dict() for passage in passages]

	return retrieve
