"""The MCP channel: the agent's tools for any assistant that speaks the Model Context Protocol.

An assistant (Claude Desktop, Cursor, ChatGPT, an IDE) sees a small fixed set of tools, not every
tool of the registry: generic record tools that name their entity, the registry's spine (aggregates,
analyses, reports, knowledge, schema, workflow, tool search) and `tools__call` for any other tool the
person may use, found through `tools__search` with its strict schema. Every call goes through
`gateway.call_tool` with the person's own Session, so a Sales User's assistant reaches exactly what
that Sales User may reach in the chat. Results come back as structured content plus a readable text
form (tables as Markdown, figures with their company, currency and period, links to the desk); a
write comes back as the proposal, with a link to confirm it in the desk, or a confirmation asked in
the client (elicitation) where the transport can wait for the person. Each call is recorded as a turn
of the client's conversation, through the `Caller` the edge builds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import mcp.types as types
from mcp.server.lowlevel import Server

from noviz_agent import __version__
from noviz_agent.connectors.base import filters_schema
from noviz_agent.connectors.model import desk_path
from noviz_agent.engine import gateway, history, loop, responses
from noviz_agent.engine.gateway import ToolResult, canonical_args
from noviz_agent.engine.session import Session
from noviz_agent.engine.tools import from_wire_name

SERVER_NAME = "noviz-agent"
CHANNEL = "mcp"
MAX_QUESTION_CHARS = 1000
MARKDOWN_ROWS = 50

# The registry's own tools every assistant is offered (where the person may use them), in this order.
SPINE = (
	"analytics.aggregate",
	"analytics.catalog",
	"analytics.build",
	"report.find",
	"report.run",
	"knowledge.search",
	"schema.describe",
	"workflow.describe",
	"tools.search",
)
CALL_TOOL = "tools__call"

INSTRUCTIONS = """\
You work in this organisation's ERPNext as {person}, with exactly their permissions.
Find records with records__search, records__list and records__get; totals with analytics__aggregate;
standard analyses with analytics__catalog then analytics__build; reports with report__find then
report__run; how processes work with knowledge__search. For anything else, tools__search finds the
tools {person} may use, with their parameters; run one with tools__call. Tool descriptions write
names with dots (analytics.aggregate): call them with double underscores (analytics__aggregate).
Every figure belongs to one company, currency and period: say them with the figure.
A change is never made by a tool call: it comes back as a proposal that {person} confirms in the
desk (the link is in the result). Tell them what it will do and never say it is done before they
confirm it."""

CONFIRM_SCHEMA = {
	"type": "object",
	"properties": {
		"confirm": {
			"type": "boolean",
			"title": "Make this change",
			"description": "Yes to carry out the change exactly as shown; no to withdraw it.",
		}
	},
	"required": ["confirm"],
}


@dataclass
class Caller:
	"""One person behind an MCP connection and the site's own code for them, as the edge builds it.

	`session` builds the person's Session (allowance, policy, row bounds and the proposal store are
	in it); `record` stores one call as a turn (question, response, log, history entry); `admit`
	says why a call may not run now (rate limit, budget), or None. `confirm` and `cancel` are the
	desk's own confirm path, used only when the client is asked to confirm (`elicitation`).
	"""

	session: Callable[[], Session]
	record: Callable[[dict], None]
	person: str = "the signed-in person"
	admit: Callable[[], str | None] = lambda: None
	base_url: str = ""
	conversation: str | None = None
	client: str = ""
	elicitation: bool = False
	confirm: Callable[[Session, str], Any] | None = None
	cancel: Callable[[Session, str], Any] | None = None

	def url(self, path: str) -> str:
		return f"{self.base_url.rstrip('/')}{path}" if path.startswith("/") else path

	def desk_link(self) -> str | None:
		"""Where the person sees this client's calls and confirms its proposals."""
		if not self.conversation:
			return None
		return self.url(desk_path(f"noviz-agent?conversation={quote(self.conversation)}"))


# --- which tools an assistant sees ------------------------------------------------------


@dataclass(frozen=True)
class Forward:
	"""An MCP tool that names an entity and runs that entity's own tool, `<entity>.<action>`."""

	name: str
	action: str
	description: str
	properties: Callable[[], dict]
	required: tuple[str, ...]
	arguments: Callable[[dict, Any], dict]


def _search_arguments(args: dict, ent) -> dict:
	field = ent.title_field if ent is not None and ent.title_field else "name"
	return {"filters": [{"field": field, "op": "like", "value": f"%{args['text']}%"}]}


FORWARDS = (
	Forward(
		"records__search",
		"list",
		"Find records of one entity by words in their title (customer name, item name, ...) or ID. "
		"Returns a page of rows with desk links. For other conditions use records__list.",
		lambda: {"text": {"type": "string", "minLength": 1, "description": "Words of the title or ID"}},
		("text",),
		_search_arguments,
	),
	Forward(
		"records__list",
		"list",
		"List records of one entity with chosen fields, filters and order; returns one page with the "
		"total count. Field names per entity: schema__describe. Not for totals: use analytics__aggregate.",
		lambda: {
			"fields": {"type": "array", "items": {"type": "string"}, "description": "Columns to return"},
			"filters": filters_schema(),
			"order_by": {"type": "string", "description": "e.g. 'date desc'"},
			"page": {"type": "integer", "minimum": 1, "default": 1},
		},
		(),
		lambda args, ent: args,
	),
	Forward(
		"records__get",
		"get",
		"One record of an entity by its ID, with all mapped fields and child tables.",
		lambda: {"name": {"type": "string", "minLength": 1, "description": "The record's ID"}},
		("name",),
		lambda args, ent: args,
	),
)
_FORWARDS = {f.name: f for f in FORWARDS}


def _entities_for(session: Session, action: str) -> list[str]:
	return sorted(k for k in session.registry.vocabulary.entities if session.may_use(f"{k}.{action}"))


def _annotations(writes: bool) -> types.ToolAnnotations:
	# A write only ever prepares a proposal: nothing changes until the person confirms it.
	return types.ToolAnnotations(
		readOnlyHint=not writes, destructiveHint=False, idempotentHint=not writes, openWorldHint=False
	)


def catalogue(session: Session) -> list[types.Tool]:
	"""The tools this person's assistant is offered: only those the gateway would let them run."""
	listed = []
	for forward in FORWARDS:
		entities = _entities_for(session, forward.action)
		if not entities:
			continue
		properties = {
			"entity": {"type": "string", "enum": entities, "description": "The entity, e.g. sales_invoice"},
			**forward.properties(),
		}
		schema = {
			"type": "object",
			"properties": properties,
			"required": ["entity", *forward.required],
			"additionalProperties": False,
		}
		listed.append(
			types.Tool(
				name=forward.name,
				description=forward.description,
				inputSchema=schema,
				annotations=_annotations(False),
			)
		)
	for name in SPINE:
		if not session.may_use(name):
			continue
		tool = session.registry[name]
		description = tool.description
		if name == "tools.search":
			description += "\nEach tool found comes with its parameters; run it with tools__call."
		listed.append(
			types.Tool(
				name=tool.wire_name,
				description=description,
				inputSchema=tool.parameters,
				annotations=_annotations(tool.writes),
			)
		)
	if session.allowed:
		listed.append(
			types.Tool(
				name=CALL_TOOL,
				description="Run any tool you may use that tools__search found, with arguments that fit the "
				"parameters it gave. A tool that changes data returns a proposal the person must confirm in "
				"the desk; nothing is written by this call.",
				inputSchema={
					"type": "object",
					"properties": {
						"name": {
							"type": "string",
							"minLength": 1,
							"description": "The tool's name, e.g. sales_order.create",
						},
						"arguments": {"type": "object", "description": "The tool's arguments"},
					},
					"required": ["name", "arguments"],
					"additionalProperties": False,
				},
				annotations=_annotations(True),
			)
		)
	return listed


def resolve(session: Session, name: str, arguments: Any) -> tuple[str, Any] | str:
	"""The registry tool an MCP call runs and its arguments; a message when the call names none."""
	arguments = arguments if arguments is not None else {}
	if name == CALL_TOOL:
		if not isinstance(arguments, dict) or not isinstance(arguments.get("name"), str):
			return "tools__call needs the tool's name (from tools__search) and its arguments."
		return from_wire_name(arguments["name"]), arguments.get("arguments", {})
	forward = _FORWARDS.get(name)
	if forward is None:
		return from_wire_name(name), arguments
	entity = arguments.get("entity") if isinstance(arguments, dict) else None
	if not isinstance(entity, str) or not entity:
		return f"{name} needs the entity, e.g. sales_invoice; schema__describe lists the fields of each."
	rest = {k: v for k, v in arguments.items() if k != "entity"}
	ent = session.registry.vocabulary.entities.get(entity)
	try:
		return f"{entity}.{forward.action}", forward.arguments(rest, ent)
	except KeyError as missing:
		return f"{name} needs {missing}."


# --- one call --------------------------------------------------------------------------


class CallRefused(Exception):
	"""A call that returns an error to the client (the SDK marks the result isError)."""


def run(caller: Caller, session: Session, name: str, arguments: Any) -> tuple[ToolResult, str]:
	"""Run one MCP call through the gateway as the person: (the result, the registry tool it ran)."""
	found = resolve(session, name, arguments)
	if isinstance(found, str):
		return ToolResult(name, {}, "error", error=found), name
	tool_name, args = found
	result = gateway.call_tool(session, tool_name, args)
	if tool_name == "tools.search" and result.ok:
		result.data = _with_parameters(session, result.data)
	return result, tool_name


def _with_parameters(session: Session, data: dict) -> dict:
	"""tools.search's answer with each found tool's parameters, since an assistant cannot see them otherwise."""
	found = []
	for item in data.get("found") or []:
		tool = session.registry[item["name"]]
		found.append({**item, "call": CALL_TOOL, "parameters": tool.parameters})
	note = (
		f'Run a found tool with {CALL_TOOL}: {{"name": "<name>", "arguments": {{...}}}}, the arguments '
		"fitting its parameters."
	)
	return {**data, "found": found, "note": note if found else data.get("note")}


def record(caller: Caller, session: Session, result: ToolResult, question: str, started: float) -> dict:
	"""Store the call as a turn of the client's conversation, as the chat stores a turn; the response."""
	entities = session.registry.vocabulary.entities
	if result.status == "error":
		response = responses.error_response(result.error or "The call failed.")
	else:
		response = responses.build("", [result], question=question, entities=entities)
	calls = loop.tool_calls_for_log([result])
	tool = session.registry.get(result.name)
	log = {
		"user": session.user,
		"request": question,
		"modules": [tool.module] if tool else [],
		"tools_offered": [],
		"tools_called": calls,
		"guards": [],
		"response_type": response["type"],
		"latency_ms": round((time.perf_counter() - started) * 1000, 1),
		"steps": 1,
		# The client's model does the reasoning: this site spends no tokens on the call.
		"prompt_tokens": 0,
		"cached_tokens": 0,
		"completion_tokens": 0,
		"model": "",
		"error": result.error if result.status in ("error", "refused") else None,
		"channel": CHANNEL,
		"client": caller.client,
	}
	entry = {"question": question, "answer": history.answer_text(response), "response": response}
	entry["tool_calls"] = calls
	caller.record({"question": question, "response": response, "log": log, "entry": entry})
	return response


def question_of(tool_name: str, args: Any) -> str:
	"""How the call reads in the person's conversation: the tool and its arguments."""
	shown = canonical_args(args) if isinstance(args, dict) else ""
	text = f"{tool_name} {shown}".strip()
	return text if len(text) <= MAX_QUESTION_CHARS else text[: MAX_QUESTION_CHARS - 1] + "…"


# --- results as an assistant reads them -------------------------------------------------


def _cell(value: Any) -> str:
	if value is None:
		return ""
	if isinstance(value, float):
		value = f"{value:,.2f}"
	return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(table: dict, caller: Caller) -> str:
	"""A table block as Markdown; the record's ID links to it in the desk."""
	columns = [c for c in table["columns"] if not c["key"].startswith("_")]
	lines = [
		"| " + " | ".join(_cell(c["label"]) for c in columns) + " |",
		"|" + "|".join(" --- " for _ in columns) + "|",
	]
	for row in table["rows"][:MARKDOWN_ROWS]:
		cells = []
		for column in columns:
			text = _cell(row.get(column["key"]))
			if column["key"] == "name" and row.get("_link") and text:
				text = f"[{text}]({caller.url(row['_link'])})"
			cells.append(text)
		lines.append("| " + " | ".join(cells) + " |")
	page = table.get("page") or {}
	shown = min(len(table["rows"]), MARKDOWN_ROWS)
	if page.get("total") is not None:
		lines.append(f"\n{shown} of {page['total']} rows shown (page {page.get('number', 1)}).")
	return "\n".join(lines)


DATE_FIELDS = ("date", "posting_date", "transaction_date")


def period_of(data: dict, args: dict) -> tuple[str | None, str | None]:
	"""The dates a figure covers: as the result states them, else as the call asked for them."""
	period = data.get("period")
	if isinstance(period, dict):
		return period.get("start") or period.get("from"), period.get("end") or period.get("to")
	params = args.get("params") if isinstance(args.get("params"), dict) else {}
	start, end = params.get("start"), params.get("end")
	for condition in args.get("filters") or []:
		if not isinstance(condition, dict) or condition.get("field") not in DATE_FIELDS:
			continue
		value, op = condition.get("value"), condition.get("op")
		if op == "between" and isinstance(value, list) and len(value) == 2:
			start, end = value
		elif op in (">=", ">"):
			start = value
		elif op in ("<=", "<"):
			end = value
	return start, end


def scope_line(data: dict, args: dict) -> str:
	"""Whose books and which dates a figure covers: company, currency, period."""
	parts = []
	if data.get("company"):
		parts.append(f"Company: {data['company']}")
	if data.get("currency"):
		parts.append(f"Currency: {data['currency']}")
	start, end = period_of(data, args)
	if start or end:
		parts.append(f"Period: {start or 'the first record'} to {end or 'today'}")
	elif data.get("company") and data.get("currency"):
		parts.append("Period: all dates")
	return " · ".join(parts)


def _card_text(card: dict) -> str:
	value = card.get("value")
	shown = f"{value:,.2f}" if isinstance(value, float) else str(value)
	if card.get("currency"):
		shown = f"{shown} {card['currency']}"
	elif card.get("fieldtype") == "Percent":
		shown = f"{shown}%"
	if card.get("change") is not None:
		unit = " points" if card.get("change_kind") == "points" else "%"
		shown += f" ({card['change']:+,.1f}{unit} vs {card.get('compared_with') or 'the prior period'})"
	return f"- {card['title']}: {shown}"


def proposal_text(block: dict, caller: Caller) -> str:
	"""A proposal as the person should read it: what it does, each field (before -> after), where to confirm."""
	lines = [f"**{block['title']}** — nothing has been written.", block.get("effect") or ""]
	for item in block.get("fields") or []:
		if item.get("changed"):
			lines.append(
				f"- {item['label']}: {_cell(item.get('before')) or '(empty)'} -> {_cell(item['value'])}"
			)
		else:
			lines.append(f"- {item['label']}: {_cell(item['value'])}")
	for table in (block.get("tables") or {}).values():
		lines.append(f"\n{table.get('label') or 'Rows'}:")
		lines.append(markdown_table({"columns": table["columns"], "rows": table["rows"]}, caller))
	if block.get("missing"):
		lines.append("Still empty and required: " + ", ".join(block["missing"]) + ".")
	link = caller.desk_link()
	if link:
		lines.append(f"\nConfirm or cancel it in the desk: {link}")
	return "\n".join(line for line in lines if line is not None)


def _links(caller: Caller, data: dict) -> list[types.ResourceLink]:
	"""Charts and PDFs stay in the desk: links to them (the person's own desk sign-in opens them)."""
	links = []
	result_id = data.get("result_id") if isinstance(data, dict) else None
	if isinstance(data, dict) and data.get("chart") and caller.desk_link():
		links.append(
			types.ResourceLink(
				type="resource_link", name="chart", title="The chart, in the desk", uri=caller.desk_link()
			)
		)
	if result_id and isinstance(data, dict) and data.get("kpis"):
		pdf = caller.url(f"/api/method/noviz_agent.api.dashboard_pdf?result_id={quote(str(result_id))}")
		links.append(
			types.ResourceLink(
				type="resource_link",
				name="pdf",
				title="The analysis as a PDF",
				uri=pdf,
				mimeType="application/pdf",
			)
		)
	return links


def render(caller: Caller, session: Session, result: ToolResult, response: dict) -> tuple[list, dict]:
	"""(content blocks, structured content) for a call that ran or became a proposal."""
	if result.status == "proposal":
		block = {k: v for k, v in responses.proposal_block(result).items() if k != "token"}
		structured = {"status": "awaiting_confirmation", "written": False, "proposal": block}
		if caller.desk_link():
			structured["confirm_in_desk"] = caller.desk_link()
		return [types.TextContent(type="text", text=proposal_text(block, caller))], structured
	payload = json.loads(result.for_model())
	structured = payload if isinstance(payload, dict) else {"result": payload}
	data = result.data if isinstance(result.data, dict) else {}
	parts = []
	if response.get("table") or response.get("cards"):
		title = (response.get("table") or {}).get("title")
		parts.extend(p for p in (f"**{title}**" if title else "", scope_line(data, result.args)) if p)
		if response.get("cards"):
			parts.append("\n".join(_card_text(card) for card in response["cards"]))
		parts.extend(f"- {observation}" for observation in data.get("observations") or [])
		if response.get("table"):
			parts.append(markdown_table(response["table"], caller))
		if data.get("note"):
			parts.append(str(data["note"]))
	else:
		parts.append(json.dumps(payload, ensure_ascii=False, indent=1, default=str))
	links = _links(caller, data)
	parts.extend(f"{link.title}: {link.uri}" for link in links)
	return [types.TextContent(type="text", text="\n\n".join(parts)), *links], structured


# --- the server ------------------------------------------------------------------------


def _client_name(caller: Caller, server: Server) -> str:
	"""The client's name and version: as the edge kept it, else as this connection's initialize gave it."""
	if caller.client:
		return caller.client
	try:
		params = server.request_context.session.client_params
	except LookupError:
		return ""
	info = params.clientInfo if params else None
	return f"{info.name} {info.version}".strip() if info else ""


def _may_elicit(caller: Caller, server: Server) -> bool:
	if not (caller.elicitation and caller.confirm and caller.cancel):
		return False
	wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
	return server.request_context.session.check_client_capability(wanted)


async def _ask_the_person(caller: Caller, server: Server, session: Session, result: ToolResult, text: str):
	"""Confirm a proposal in the client: the same single-use token, carried out by the desk's path."""
	context = server.request_context
	answer = await context.session.elicit(
		message=text, requestedSchema=CONFIRM_SCHEMA, related_request_id=context.request_id
	)
	token = result.proposal["token"]
	confirmed = answer.action == "accept" and (answer.content or {}).get("confirm") is True
	outcome = caller.confirm(session, token) if confirmed else caller.cancel(session, token)
	settled = outcome.results[0] if outcome.results else None
	status = "confirmed" if confirmed and settled is not None and settled.ok else "not_written"
	data = settled.data if settled is not None and isinstance(settled.data, dict) else {}
	structured = {"status": status, "written": status == "confirmed", "result": data}
	message = outcome.response.get("text") or (outcome.response.get("refusal") or {}).get("message") or ""
	message = message or (outcome.response.get("error") or {}).get("message") or ""
	if data.get("_link"):
		message += f"\n{caller.url(data['_link'])}"
	return [types.TextContent(type="text", text=message.strip())], structured


def build_server(caller: Caller) -> Server:
	"""An MCP server (the SDK's own) whose every call runs as `caller`'s person through the gateway."""
	server: Server = Server(SERVER_NAME, version=__version__)
	built: list[Session] = []

	def session() -> Session:
		if not built:
			built.append(caller.session())
		return built[0]

	server.instructions = INSTRUCTIONS.format(person=caller.person)

	@server.list_tools()
	async def list_tools() -> list[types.Tool]:
		return catalogue(session())

	# The gateway validates every call against the tool's own schema: the SDK's check would refuse
	# some before they are recorded, with less to go on.
	@server.call_tool(validate_input=False)
	async def call_tool(name: str, arguments: dict):
		refused = caller.admit()
		if refused:
			raise CallRefused(refused)
		started = time.perf_counter()
		person = session()
		if not caller.client:
			caller.client = _client_name(caller, server)
		result, tool_name = run(caller, person, name, arguments)
		response = record(caller, person, result, question_of(tool_name, result.args), started)
		if result.status in ("error", "refused"):
			raise CallRefused(result.error or "The call was refused.")
		content, structured = render(caller, person, result, response)
		if result.status == "proposal" and _may_elicit(caller, server):
			return await _ask_the_person(caller, server, person, result, content[0].text)
		return content, structured

	return server
