"""`knowledge.search`: passages from the process documents, with their sources for citation.

The knowledge base comes from `session.knowledge`: a `knowledge.search.KnowledgeBase`
(or anything with its `search`), or a zero-argument callable returning one, so the store is
opened only when the tool is actually called. Passages restricted to roles are filtered by
the knowledge base with the person's roles; this module never widens them.

The site's ERPNext release comes from `session.erpnext_version` (16, "16.7.3"; None when the
session does not know it). A passage that describes another release, or has parts marked for
one, carries a `version_note` and has it in front of its content, and its source says
"ERPNext 16 only" where the whole passage is for another release, so the citation the person
reads says it too.
"""

from __future__ import annotations

from knowledge.errors import KnowledgeError
from knowledge.versions import site_major
from noviz_agent.connectors.model import MODULES as BUSINESS_MODULES
from noviz_agent.engine.errors import ToolError
from noviz_agent.engine.tools import Tool

MAX_PASSAGES = 8
# Enough of a passage to answer from; whole sections rarely exceed this.
MAX_CONTENT_CHARS = 1800

RULES = (
	"knowledge.search explains what records mean and how processes run (document statuses, approvals, "
	"returns, valuation, closing). Cite each passage you rely on with its source in square brackets, "
	"e.g. [Approval workflows > Self approval]. Passages are general explanations: the organisation's "
	"live data and its actual approval workflow come from the other tools (workflow.describe), and they win "
	"when the two differ. A passage's 'version_note' says when it, or a part of it marked (v15) or (v16), "
	"describes another ERPNext release than this site's: say so when you use it."
)

# Shipped documents also have a "core" module for processes that span modules.
MODULES = ["core", *BUSINESS_MODULES]


def knowledge_base(session):
	"""The session's knowledge base, opened on first use; a ToolError when the site has none."""
	base = session.knowledge
	if callable(base) and not hasattr(base, "search"):
		try:
			base = base()
		except KnowledgeError as exc:
			raise ToolError(f"The knowledge base is unavailable: {exc}") from None
		session.knowledge = base
	if base is None:
		raise ToolError(
			"No knowledge base is set up on this site, so process documents cannot be searched. Answer from "
			"the records the other tools return, and say that the process documents are not available."
		)
	return base


def search(args: dict, session) -> dict:
	query = (args.get("query") or "").strip()
	if not query:
		raise ToolError(
			"The query is empty: pass the question in a few words, e.g. 'why can't I edit a submitted invoice'."
		)
	module = args.get("module") or None
	limit = int(args.get("limit") or 5)
	base = knowledge_base(session)
	site = site_major(getattr(session, "erpnext_version", None))
	# The site's release is passed only when known, so a knowledge base that predates it still answers.
	release = {"site_version": site} if site is not None else {}
	try:
		passages = base.search(
			query, k=min(max(limit, 1), MAX_PASSAGES), module=module, roles=session.person.roles, **release
		)
	except KnowledgeError as exc:
		raise ToolError(f"Knowledge search failed: {exc}") from None
	found = []
	for p in passages:
		text = p.text
		found.append(
			{
				"source": p.citation,
				"title": p.title,
				"section": p.section,
				"module": p.module,
				"slug": p.slug,
				"releases": [f"ERPNext {n}" for n in p.releases],
				"version_note": p.version_note,
				"content": text if len(text) <= MAX_CONTENT_CHARS else text[:MAX_CONTENT_CHARS] + " …",
			}
		)
	note = (
		"Cite the 'source' of each passage you use in square brackets."
		if found
		else "No process document matched. Try other words, drop the module filter, or answer from live data."
	)
	result = {"query": query, "module": module, "passages": found, "note": note}
	if site is not None:
		result["site_release"] = f"ERPNext {site}"
	return result


def tools() -> list[Tool]:
	return [
		Tool(
			name="knowledge.search",
			description=(
				"Search the process documents (how ERPNext processes work and what statuses mean: order to cash, "
				"procure to pay, stock valuation, returns, payments, period closing, budgets, leave, expense "
				"claims, projects, manufacturing, assets, quality, support, docstatus, cancellation, approval "
				"workflows, permissions). Returns up to 8 passages, each with a 'source' to cite. It explains "
				"rules; it holds no records, totals or this site's live workflow (use workflow.describe for that)."
			),
			module="knowledge",
			parameters={
				"type": "object",
				"properties": {
					"query": {
						"type": "string",
						"description": "The question in a few words, e.g. 'purchase order pending approval'.",
					},
					"module": {
						"enum": MODULES,
						"description": "Only documents of this business module; leave out when unsure.",
					},
					"limit": {"type": "integer", "minimum": 1, "maximum": MAX_PASSAGES, "default": 5},
				},
				"required": ["query"],
				"additionalProperties": False,
			},
			handler=search,
			prompt_rules=RULES,
			tags=("knowledge", "documentation", "process", "explain"),
		)
	]
