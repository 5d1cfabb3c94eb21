"""The MCP channel driven by the official MCP Python SDK's own client, as two people of different roles.

The client is the SDK's (`ClientSession`, over its in-memory transport and over Streamable HTTP to a
real server on 127.0.0.1); nothing here speaks the protocol by hand except where a test checks what
the server answers to a request without credentials.
"""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import anyio
import httpx
import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.memory import create_connected_server_and_client_session

from noviz_agent.channels import mcp_http
from noviz_agent.channels.mcp import SPINE, build_server
from noviz_agent.engine.session import MemoryStore
from noviz_agent.engine.turn import confirm_proposal
from tests.channels.world import PEOPLE, World

ANN, BOB = "ann@example.com", "bob@example.com"
CLIENT = types.Implementation(name="sdk-test-client", version="1.2")
NEW_CUSTOMER = {"values": {"customer_name": "Initech", "customer_group": "Commercial"}}


def _run(go):
	"""`anyio.run(go)` in a thread of its own: a session-wide event loop elsewhere in the suite (the
	browser tests' Playwright keeps one running in the main thread) must not stop these tests."""
	outcome: dict = {}

	def target():
		try:
			outcome["value"] = anyio.run(go)
		except BaseException as exc:  # handed to the test's own thread below
			outcome["error"] = exc

	thread = threading.Thread(target=target)
	thread.start()
	thread.join()
	if "error" in outcome:
		raise outcome["error"]
	return outcome["value"]


def _in_memory(world: World, user: str, **kw):
	return create_connected_server_and_client_session(
		build_server(world.caller(user)), client_info=CLIENT, **kw
	)


def _call(world, user, name, arguments, **kw):
	async def go():
		async with _in_memory(world, user, **kw) as client:
			return await client.call_tool(name, arguments)

	return _run(go)


def _initech(world) -> bool:
	"""Whether the new customer exists in the system of record (as Ann sees it)."""
	return any(
		r["customer_name"] == "Initech"
		for r in world.connector(ANN).list("customer", fields=["customer_name"], limit=100)
	)


def _names(world, user) -> dict[str, types.Tool]:
	async def go():
		async with _in_memory(world, user) as client:
			return (await client.list_tools()).tools

	return {tool.name: tool for tool in _run(go)}


# --- what each person's assistant sees -------------------------------------------------


def test_each_person_is_offered_a_small_spine_of_only_the_tools_they_may_use():
	world = World()
	ann, bob = _names(world, ANN), _names(world, BOB)
	# Not one definition per registry tool: the spine, three record tools and tools__call.
	assert len(ann) <= len(SPINE) + 4 and len(world.session(ANN, None).registry) > 400
	assert {"records__list", "records__get", "analytics__aggregate", "tools__search", "tools__call"} <= set(
		ann
	)
	assert ann["records__list"].inputSchema["properties"]["entity"]["enum"] == [
		"company",
		"customer",
		"sales_order",
	]
	assert bob["records__list"].inputSchema["properties"]["entity"]["enum"] == [
		"company",
		"purchase_order",
		"sales_order",
	]
	assert ann["records__list"].annotations.readOnlyHint and not ann["tools__call"].annotations.readOnlyHint


def test_a_spine_tool_keeps_the_registrys_strict_schema():
	world = World()
	registry = world.session(ANN, None).registry
	tools = _names(world, ANN)
	for name in SPINE:
		assert tools[name.replace(".", "__")].inputSchema == registry[name].parameters


# --- reads, as each person -----------------------------------------------------------------


def _rows(result: types.CallToolResult) -> list[str]:
	return sorted(row["name"] for row in result.structuredContent["rows"])


def test_a_read_returns_exactly_what_the_person_can_read_themselves():
	world = World()
	args = {"entity": "sales_order", "fields": ["customer", "territory", "total"]}
	ann, bob = _call(world, ANN, "records__list", args), _call(world, BOB, "records__list", args)
	# The oracle: the same person's own connector, asked directly.
	assert _rows(ann) == sorted(r["name"] for r in world.connector(ANN).list("sales_order", limit=100))
	assert _rows(bob) == sorted(r["name"] for r in world.connector(BOB).list("sales_order", limit=100))
	assert _rows(ann) and _rows(bob) and not set(_rows(ann)) & set(_rows(bob))
	text = ann.content[0].text
	assert "| ID | Customer | Territory | Grand Total |" in text
	assert "[SO-001](https://erp.example.com/app/sales-order/SO-001)" in text and "SO-002" not in text


def test_a_record_the_person_may_not_read_is_an_error_result_not_data():
	world = World()
	refused = _call(world, ANN, "records__get", {"entity": "sales_order", "name": "SO-002"})
	assert refused.isError and "SO-002" in refused.content[0].text and refused.structuredContent is None
	hidden = _call(world, ANN, "records__list", {"entity": "purchase_order"})
	assert hidden.isError and "not available" in hidden.content[0].text


def test_a_tool_outside_the_persons_allowance_is_refused_through_tools_call():
	world = World()
	result = _call(world, BOB, "tools__call", {"name": "customer.create", "arguments": NEW_CUSTOMER})
	assert result.isError and "not available to bob@example.com" in result.content[0].text
	assert not any(call[0] == "create" for call in world.connector(BOB).calls)


def test_tools_search_gives_the_parameters_needed_to_call_what_it_found():
	world = World()
	found = _call(world, ANN, "tools__search", {"query": "new customer"}).structuredContent["found"]
	create = next(item for item in found if item["name"] == "customer.create")
	assert create["call"] == "tools__call" and create["parameters"]["required"] == ["values"]
	assert all(
		item["name"] != "customer.create"
		for item in _call(world, BOB, "tools__search", {"query": "new customer"}).structuredContent["found"]
	)


def test_a_figure_names_its_company_currency_and_period():
	world = World()
	revenue = {"entity": "sales_order", "metrics": [{"fn": "sum", "field": "total", "as": "revenue"}]}
	january = [{"field": "date", "op": "between", "value": ["2026-01-01", "2026-01-31"]}]
	result = _call(world, ANN, "analytics__aggregate", {**revenue, "filters": january})
	text = result.content[0].text
	assert "Company: Acme Europe · Currency: EUR · Period: 2026-01-01 to 2026-01-31" in text
	# Ann's own North orders only: 100 + 300 + ... + 1100.
	assert result.structuredContent["rows"] == [{"revenue": 3600.0}] and "3,600.00" in text
	assert "Period: all dates" in _call(world, ANN, "analytics__aggregate", revenue).content[0].text


# --- writes stay proposals --------------------------------------------------------------


def test_a_write_returns_the_proposal_and_writes_nothing_until_the_desk_confirms_it():
	world = World()
	result = _call(world, ANN, "tools__call", {"name": "customer__create", "arguments": NEW_CUSTOMER})
	assert not result.isError
	assert (
		result.structuredContent["status"] == "awaiting_confirmation"
		and not result.structuredContent["written"]
	)
	fields = {f["label"]: f["value"] for f in result.structuredContent["proposal"]["fields"]}
	assert fields == {"Customer Name": "Initech", "Customer Group": "Commercial"}
	assert "- Customer Name: Initech" in result.content[0].text
	assert "https://erp.example.com/app/noviz-agent?conversation=conv-1" in result.content[0].text
	assert not _initech(world)
	# The token never reaches the assistant; it stays with the recorded turn, where the desk shows it.
	token = world.recorded[-1]["response"]["proposal"]["token"]
	assert token not in json.dumps(result.structuredContent) and token not in result.content[0].text

	# Another person cannot carry it out, even with the token.
	stolen = confirm_proposal(world.session(BOB, "conv-1"), token)
	assert stolen.response["type"] == "refusal" and not _initech(world)
	done = confirm_proposal(world.session(ANN, "conv-1"), token)
	assert done.response["type"] == "cards" and _initech(world)
	assert confirm_proposal(world.session(ANN, "conv-1"), token).response["type"] == "refusal"  # once


def _answer(action: str, confirm: bool | None = None):
	async def answer(context, params: types.ElicitRequestParams):
		assert "Initech" in params.message and params.requestedSchema["required"] == ["confirm"]
		return types.ElicitResult(action=action, content=None if confirm is None else {"confirm": confirm})

	return answer


def _elicited(world, answer):
	async def go():
		caller = world.caller(ANN, elicitation=True)
		async with create_connected_server_and_client_session(
			build_server(caller), client_info=CLIENT, elicitation_callback=answer
		) as client:
			return await client.call_tool(
				"tools__call", {"name": "customer.create", "arguments": NEW_CUSTOMER}
			)

	return _run(go)


def test_confirming_in_the_client_carries_out_the_same_proposal_once():
	world = World()
	result = _elicited(world, _answer("accept", True))
	assert result.structuredContent["status"] == "confirmed" and result.structuredContent["written"]
	assert _initech(world)
	token = world.recorded[0]["response"]["proposal"]["token"]
	assert confirm_proposal(world.session(ANN, "conv-1"), token).response["type"] == "refusal"


@pytest.mark.parametrize("action, confirm", [("decline", None), ("cancel", None), ("accept", False)])
def test_declining_in_the_client_writes_nothing_and_withdraws_the_proposal(action, confirm):
	world = World()
	result = _elicited(world, _answer(action, confirm))
	assert result.structuredContent["status"] == "not_written" and not _initech(world)
	token = world.recorded[0]["response"]["proposal"]["token"]
	assert confirm_proposal(world.session(ANN, "conv-1"), token).response["type"] == "refusal"


def test_a_client_that_cannot_be_asked_gets_the_desk_link_and_nothing_is_written():
	world = World()  # elicitation on in the channel, but this client declares no elicitation capability
	caller = world.caller(ANN, elicitation=True)

	async def go():
		async with create_connected_server_and_client_session(
			build_server(caller), client_info=CLIENT
		) as client:
			return await client.call_tool(
				"tools__call", {"name": "customer.create", "arguments": NEW_CUSTOMER}
			)

	result = _run(go)
	assert result.structuredContent["status"] == "awaiting_confirmation" and not _initech(world)


# --- the record of each call ---------------------------------------------------------------


def test_each_call_is_recorded_as_a_turn_with_the_channel_and_the_clients_name():
	world = World()
	_call(world, ANN, "records__list", {"entity": "sales_order"})
	_call(world, ANN, "records__get", {"entity": "sales_order", "name": "SO-002"})
	first, second = world.recorded
	assert first["log"]["channel"] == "mcp" and first["log"]["client"] == "sdk-test-client 1.2"
	assert first["question"].startswith("sales_order.list") and first["response"]["type"] == "table"
	assert [c["name"] for c in first["log"]["tools_called"]] == ["sales_order.list"]
	assert second["log"]["error"] and second["response"]["type"] == "refusal"
	assert first["entry"]["tool_calls"][0]["status"] == "ok"


def test_a_call_over_the_rate_limit_is_refused_before_it_runs():
	world = World(refuse_with="You have asked 600 questions in the last 60 minutes, the limit on this site.")
	result = _call(world, ANN, "records__list", {"entity": "sales_order"})
	assert result.isError and "600 questions" in result.content[0].text
	assert world.recorded == [] and ("list", "sales_order") not in world.connector(ANN).calls


# --- Streamable HTTP on 127.0.0.1 ---------------------------------------------------------


class _Threaded(ThreadingMixIn, WSGIServer):
	daemon_threads = True


class _Quiet(WSGIRequestHandler):
	def log_message(self, *args):
		pass


@pytest.fixture
def site():
	"""A real HTTP server on 127.0.0.1 answering the MCP endpoint through `mcp_http.serve`, as a site does."""
	world, sessions = World(), MemoryStore()
	state: dict = {}

	def app(environ, start_response):
		length = int(environ.get("CONTENT_LENGTH") or 0)
		headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
		if environ.get("CONTENT_TYPE"):
			headers["content-type"] = environ["CONTENT_TYPE"]
		request = mcp_http.HttpRequest(
			environ["REQUEST_METHOD"], headers, environ["wsgi.input"].read(length), environ["PATH_INFO"]
		)
		user = world.user_for(request.header("authorization"))
		response = mcp_http.serve(
			request,
			user=user,
			caller_for=lambda kept: world.caller(user, kept["conversation"], kept["client"]),
			sessions=sessions,
			resource_metadata_url=f"{state['url']}/.well-known/oauth-protected-resource",
		)
		start_response(f"{response.status} {HTTPStatus(response.status).phrase}", response.headers)
		return [response.body]

	server = make_server("127.0.0.1", 0, app, server_class=_Threaded, handler_class=_Quiet)
	state["url"] = f"http://127.0.0.1:{server.server_port}"
	thread = threading.Thread(target=server.serve_forever, daemon=True)
	thread.start()
	yield {"url": state["url"] + "/mcp", "world": world, "sessions": sessions}
	server.shutdown()


def _over_http(url: str, token: str | None, steps):
	async def go():
		headers = {"Authorization": token} if token else {}
		async with streamablehttp_client(url, headers=headers) as (read, write, session_id):
			async with ClientSession(read, write, client_info=CLIENT) as client:
				init = await client.initialize()
				return init, session_id(), await steps(client)

	return _run(go)


def test_over_http_each_person_initializes_lists_and_reads_their_own_records(site):
	async def steps(client):
		tools = (await client.list_tools()).tools
		listed = await client.call_tool("records__list", {"entity": "sales_order"})
		return tools, listed

	results = {}
	for user in (ANN, BOB):
		init, session_id, (tools, listed) = _over_http(site["url"], PEOPLE[user]["token"], steps)
		assert init.serverInfo.name == "noviz-agent" and user in init.instructions
		# The session lasted the connection: the client ended it (DELETE) when it closed.
		assert session_id and site["sessions"].get(session_id) is None
		assert "records__list" in {t.name for t in tools}
		results[user] = _rows(listed)
	world = site["world"]
	assert results[ANN] == sorted(r["name"] for r in world.connector(ANN).list("sales_order", limit=100))
	assert results[BOB] == sorted(r["name"] for r in world.connector(BOB).list("sales_order", limit=100))
	assert not set(results[ANN]) & set(results[BOB])
	calls = [r for r in world.recorded if r["log"]["client"] == "sdk-test-client 1.2"]
	assert {r["user"] for r in calls} == {ANN, BOB}


def test_over_http_a_write_is_a_proposal_in_the_sessions_conversation(site):
	async def steps(client):
		return await client.call_tool("tools__call", {"name": "customer.create", "arguments": NEW_CUSTOMER})

	_init, session_id, result = _over_http(site["url"], PEOPLE[ANN]["token"], steps)
	world = site["world"]
	assert result.structuredContent["status"] == "awaiting_confirmation" and not _initech(world)
	turn = world.recorded[-1]
	assert result.structuredContent["confirm_in_desk"].endswith(f"?conversation={turn['conversation']}")
	done = confirm_proposal(world.session(ANN, turn["conversation"]), turn["response"]["proposal"]["token"])
	assert done.response["type"] == "cards" and _initech(world)


def test_an_unauthenticated_request_gets_the_protocols_401_pointing_to_the_resource_metadata(site):
	body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
	for token in (None, "Bearer someone-elses-guess"):
		headers = {
			"Accept": "application/json, text/event-stream",
			**({"Authorization": token} if token else {}),
		}
		response = httpx.post(site["url"], json=body, headers=headers)
		assert response.status_code == 401
		assert response.json()["error"] == "invalid_token"
		challenge = response.headers["www-authenticate"]
		assert challenge.startswith("Bearer ") and 'resource_metadata="http://127.0.0.1:' in challenge
	assert site["world"].recorded == []

	async def no_credentials():
		async with streamablehttp_client(site["url"]) as (read, write, _):
			async with ClientSession(read, write) as client:
				await client.initialize()

	with pytest.raises(Exception) as refused:
		_run(no_credentials)
	assert "401" in repr(refused.value) or "401" in str(getattr(refused.value, "exceptions", ""))


def test_a_session_id_is_not_usable_by_another_person(site):
	async def steps(client):
		return None

	_init, ann_session, _ = _over_http(site["url"], PEOPLE[ANN]["token"], steps)
	body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
	headers = {
		"Accept": "application/json, text/event-stream",
		"Authorization": PEOPLE[BOB]["token"],
		"Mcp-Session-Id": ann_session,
		"Mcp-Protocol-Version": types.LATEST_PROTOCOL_VERSION,
	}
	response = httpx.post(site["url"], json=body, headers=headers)
	assert response.status_code == 404 and "initialize again" in response.json()["error"]["message"]


def test_the_server_keeps_no_stream_open_and_a_session_can_be_ended(site):
	async def steps(client):
		return None

	_init, session_id, _ = _over_http(site["url"], PEOPLE[ANN]["token"], steps)
	# The client ended its session when it closed (DELETE); the record is gone.
	assert site["sessions"].get(session_id) is None
	get = httpx.get(
		site["url"], headers={"Authorization": PEOPLE[ANN]["token"], "Accept": "text/event-stream"}
	)
	assert get.status_code == 405


def test_a_signed_in_person_the_channel_is_closed_to_gets_a_clear_403():
	request = mcp_http.HttpRequest("POST", {"content-type": "application/json"}, b"{}")
	response = mcp_http.serve(
		request,
		user=ANN,
		caller_for=lambda kept: None,
		sessions=MemoryStore(),
		resource_metadata_url="https://erp.example.com/.well-known/oauth-protected-resource",
		refusal="The MCP channel is switched off on this site.",
	)
	assert response.status == 403 and json.loads(response.body)["error"]["message"].endswith(
		"switched off on this site."
	)
