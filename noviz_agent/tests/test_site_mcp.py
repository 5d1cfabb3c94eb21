"""Site tests of the MCP channel with the official MCP Python SDK's client, against the site's web server.

The client (`mcp.client.streamable_http` and `ClientSession`) talks HTTP to the bench's web server on
127.0.0.1, as Claude Desktop or the MCP Inspector would; each request there runs in another process,
signed in by frappe from an API key. What those requests must see (the two people, their keys, the
channel switched on) is committed here and removed afterwards, with every log row and conversation
the calls made; whatever this process writes itself is rolled back.

The web server's address: the environment's NOVIZ_TEST_WEB_URL or site config `noviz_test_web_url`
(default http://127.0.0.1:8000); the Host header names this site. With nothing listening there the tests are skipped; otherwise their
preconditions are asserted.
"""

from __future__ import annotations

import json
import os
import re
import unittest
from urllib.parse import parse_qs, urlparse

import anyio
import frappe
import httpx
from frappe.utils.password import remove_encrypted_password, update_password
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.types import Implementation

from noviz_agent import api, validation
from noviz_agent.edge import frappe_session
from noviz_agent.edge.frappe_versions import DESK_PREFIX
from noviz_agent.tests.utils import ACCOUNTS, ADMIN, SALES, PeopleTestCase, ensure_user, listening

CLIENT = Implementation(name="noviz-site-test", version="1.0")
# A web worker's first call imports the SDK and builds the tool registry: seconds on a busy machine.
TIMEOUT = 120
ENDPOINT = "/api/method/noviz_agent.api.mcp"
SETTINGS_CHANGED = ("enable_mcp", "mcp_roles", "enable_writes", "mcp_calls_per_hour")
DESK_PASSWORD = "Mcp-Desk-Check-2026!"


def _settings(**values) -> None:
	"""Agent Settings changed and committed, with the cached copies of the settings dropped after the
	commit (the web server's workers read them from the cache)."""
	settings = frappe.get_single("Agent Settings")
	settings.update(values)
	settings.save(ignore_permissions=True)
	# The web server's requests run in other processes: they see only what is committed.
	frappe.db.commit()
	for single in ("Agent Settings", "OAuth Settings"):
		frappe.clear_document_cache(single, single)


OAUTH_METADATA = ("show_protected_resource_metadata", "show_auth_server_metadata")


def _publish_oauth_metadata(values: dict | None = None) -> dict | None:
	"""Where frappe publishes the OAuth metadata itself (its OAuth Settings), switch that on (or back);
	the values it had. Elsewhere the app's own page renderer publishes them."""
	if not frappe.db.exists("DocType", "OAuth Settings"):
		return None
	before = {field: frappe.db.get_single_value("OAuth Settings", field) for field in OAUTH_METADATA}
	for field in OAUTH_METADATA:
		frappe.db.set_single_value("OAuth Settings", field, 1 if values is None else values.get(field) or 0)
	frappe.clear_document_cache("OAuth Settings", "OAuth Settings")
	return before


def _keys(user: str) -> str:
	"""A fresh API key and secret for the person (committed: the web server must see them)."""
	doc = frappe.get_doc("User", user)
	doc.api_key = frappe.generate_hash(length=15)
	secret = frappe.generate_hash(length=15)
	doc.api_secret = secret
	doc.save(ignore_permissions=True)
	return f"token {doc.api_key}:{secret}"


class TestMcpOverHttp(PeopleTestCase):
	@classmethod
	def setUpClass(cls):
		super().setUpClass()
		configured = os.environ.get("NOVIZ_TEST_WEB_URL") or frappe.conf.get("noviz_test_web_url")
		cls.web = (configured or "http://127.0.0.1:8000").rstrip("/")
		if not listening(cls.web):
			raise unittest.SkipTest(
				f"no web server answers at {cls.web} (set noviz_test_web_url in the site config)"
			)
		frappe.set_user(ADMIN)
		ensure_user(SALES, "Sales User")
		ensure_user(ACCOUNTS, "Accounts User")
		cls.started = frappe.utils.now_datetime()
		settings = frappe.get_single("Agent Settings")
		cls.saved = {field: settings.get(field) for field in SETTINGS_CHANGED}
		# A site not migrated since the limit came has none: it is restored to the default the patch sets.
		cls.saved["mcp_calls_per_hour"] = validation.limit(cls.saved, "mcp_calls_per_hour")
		cls.auth = {SALES: _keys(SALES), ACCOUNTS: _keys(ACCOUNTS)}
		update_password(SALES, DESK_PASSWORD)  # to sign in to the desk with a cookie
		cls.oauth_saved = _publish_oauth_metadata()
		_settings(enable_mcp=1, mcp_roles="", enable_writes=1, mcp_calls_per_hour=10000)

	@classmethod
	def tearDownClass(cls):
		frappe.db.rollback()
		frappe.set_user(ADMIN)
		if getattr(cls, "auth", None):
			for user in cls.auth:
				doc = frappe.get_doc("User", user)
				doc.api_key = None
				doc.save(ignore_permissions=True)
				remove_encrypted_password("User", user, "api_secret")
			remove_encrypted_password("User", SALES, "password")
			# What the assistant calls wrote: their log rows and the conversations they were recorded in.
			made = {"person": ("in", list(cls.auth)), "channel": "mcp", "creation": (">=", cls.started)}
			logs = frappe.get_all("Agent Interaction Log", filters=made, fields=["name", "conversation"])
			for log in logs:
				frappe.delete_doc("Agent Interaction Log", log.name, ignore_permissions=True, force=True)
			for conversation in {log.conversation for log in logs if log.conversation}:
				frappe.delete_doc("Agent Conversation", conversation, ignore_permissions=True, force=True)
			_publish_oauth_metadata(cls.oauth_saved)
			_settings(**cls.saved)
		super().tearDownClass()

	def setUp(self):
		super().setUp()
		self.assertTrue(frappe.get_single("Agent Settings").enable_mcp, "precondition: the channel is on")
		self.company = frappe.defaults.get_user_default(
			"Company", SALES
		) or frappe.defaults.get_global_default("company")
		self.assertTrue(self.company, "precondition: the site has a default company")

	# --- the client ---------------------------------------------------------------------

	def headers(self, user: str | None) -> dict:
		host = {"Host": frappe.local.site}
		return {**host, "Authorization": self.auth[user]} if user else host

	def session(self, user: str, steps):
		"""initialize, then `steps(client)`, with the SDK's own client signed in as `user`."""

		async def run():
			async with streamablehttp_client(
				self.web + ENDPOINT, headers=self.headers(user), timeout=TIMEOUT
			) as (
				read,
				write,
				_,
			):
				async with ClientSession(read, write, client_info=CLIENT) as client:
					init = await client.initialize()
					return init, await steps(client)

		return anyio.run(run)

	def call(self, user: str, name: str, arguments: dict):
		async def steps(client):
			return await client.call_tool(name, arguments)

		return self.session(user, steps)[1]

	def fresh(self):
		"""See what the web server committed since this transaction began."""
		frappe.db.rollback()
		frappe.set_user(ADMIN)

	def desk_list(self, user: str, doctype: str, filters: dict) -> list[str]:
		"""What the desk's list shows this person: frappe.get_list as them."""
		frappe.set_user(user)
		try:
			return sorted(frappe.get_list(doctype, filters=filters, pluck="name", limit_page_length=0))
		finally:
			frappe.set_user(ADMIN)

	# --- tests --------------------------------------------------------------------------

	def test_initialize_and_list_tools_as_each_person_shows_only_what_they_may_use(self):
		async def steps(client):
			return {tool.name: tool for tool in (await client.list_tools()).tools}

		for user in (SALES, ACCOUNTS):
			init, tools = self.session(user, steps)
			self.assertEqual(init.serverInfo.name, "noviz-agent")
			self.assertLess(len(tools), 20, "the spine, not one definition per tool")
			frappe.set_user(user)
			session = frappe_session.build_session(frappe_session.load_settings(), progress=False)
			frappe.set_user(ADMIN)
			expected = sorted(k for k in session.registry.vocabulary.entities if session.may_use(f"{k}.list"))
			self.assertEqual(tools["records__list"].inputSchema["properties"]["entity"]["enum"], expected)
		sales_entities = self.session(SALES, steps)[1]["records__list"].inputSchema["properties"]["entity"][
			"enum"
		]
		self.assertIn("sales_order", sales_entities)
		self.assertNotIn("sales_invoice", sales_entities)

	def test_a_read_as_two_people_returns_what_the_desk_shows_each_of_them(self):
		where = [{"field": "company", "op": "=", "value": self.company}]
		for doctype, entity in (("Sales Order", "sales_order"), ("Sales Invoice", "sales_invoice")):
			for user in (SALES, ACCOUNTS):
				result = self.call(user, "records__list", {"entity": entity, "filters": where})
				try:
					shown = self.desk_list(user, doctype, {"company": self.company})
				except frappe.PermissionError:
					frappe.set_user(ADMIN)
					self.assertTrue(result.isError, f"{user} cannot read {doctype} in the desk, nor here")
					continue
				self.assertFalse(result.isError, result.content[0].text)
				data = result.structuredContent
				self.assertEqual(data["total"], len(shown), f"{user}: {doctype} count as the desk counts it")
				self.assertTrue(set(r["name"] for r in data["rows"]) <= set(shown))
		self.assertTrue(
			self.desk_list(ACCOUNTS, "Sales Invoice", {"company": self.company}), "precondition: invoices"
		)
		with self.assertRaises(frappe.PermissionError):
			self.desk_list(SALES, "Sales Invoice", {"company": self.company})

	def test_a_write_is_a_proposal_that_writes_nothing_until_the_desk_confirms_it(self):
		name = f"MCP Customer {frappe.generate_hash(length=6)}"
		arguments = {"name": "customer.create", "arguments": {"values": {"customer_name": name}}}
		result = self.call(SALES, "tools__call", arguments)
		self.assertFalse(result.isError, result.content[0].text)
		self.assertEqual(result.structuredContent["status"], "awaiting_confirmation")
		self.assertIn(f"Customer Name: {name}", result.content[0].text)
		self.fresh()
		self.assertFalse(frappe.db.exists("Customer", {"customer_name": name}), "nothing is written")

		link = result.structuredContent["confirm_in_desk"]
		conversation = parse_qs(urlparse(link).query)["conversation"][0]
		self.assertIn(f"{DESK_PREFIX}/noviz-agent?conversation=", link)
		# The desk shows the proposal in that conversation, token and all; the assistant never got the token.
		frappe.set_user(SALES)
		turns = api.conversation(conversation)["turns"]
		token = turns[-1]["response"]["proposal"]["token"]
		self.assertNotIn(token, json.dumps(result.structuredContent) + result.content[0].text)
		reply = api.confirm(token, conversation)
		self.assertEqual(reply["response"]["type"], "cards", reply["response"])
		self.assertTrue(frappe.db.exists("Customer", {"customer_name": name}))

	def test_each_call_is_logged_with_the_channel_and_the_clients_name(self):
		self.call(SALES, "records__list", {"entity": "sales_order"})
		self.fresh()
		logs = frappe.get_all(
			"Agent Interaction Log",
			filters={"person": SALES, "channel": "mcp", "creation": (">=", self.started)},
			fields=["client", "conversation", "response_type", "prompt_tokens"],
		)
		self.assertTrue(logs)
		self.assertEqual({log.client for log in logs}, {"noviz-site-test 1.0"})
		self.assertTrue(all(log.conversation for log in logs))
		title = frappe.db.get_value("Agent Conversation", logs[0].conversation, "title")
		self.assertEqual(title, "noviz-site-test 1.0 (assistant)")

	def test_an_unauthenticated_request_is_refused_with_the_protocols_401_and_where_to_sign_in(self):
		body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
		accept = {"Accept": "application/json, text/event-stream"}
		response = httpx.post(
			self.web + ENDPOINT, json=body, headers={**self.headers(None), **accept}, timeout=TIMEOUT
		)
		self.assertEqual(response.status_code, 401)
		self.assertEqual(response.json()["error"], "invalid_token")
		challenge = response.headers["www-authenticate"]
		self.assertIn('resource_metadata="', challenge)
		metadata_url = challenge.split('resource_metadata="', 1)[1].split('"', 1)[0]
		metadata = httpx.get(
			self.web + urlparse(metadata_url).path, headers=self.headers(None), timeout=TIMEOUT
		)
		self.assertEqual(metadata.status_code, 200, "the protected-resource metadata is published")
		server = metadata.json()["authorization_servers"][0]
		self.assertTrue(server.startswith("http"))
		oauth = httpx.get(
			self.web + "/.well-known/oauth-authorization-server", headers=self.headers(None), timeout=TIMEOUT
		)
		self.assertEqual(oauth.status_code, 200)
		self.assertIn("S256", oauth.json()["code_challenge_methods_supported"])
		self.assertTrue(oauth.json()["token_endpoint"].endswith("frappe.integrations.oauth2.get_token"))

	def test_a_desk_cookie_cannot_drive_the_assistant_channel(self):
		with httpx.Client(base_url=self.web, headers=self.headers(None), timeout=TIMEOUT) as desk:
			signed = desk.post("/api/method/login", data={"usr": SALES, "pwd": DESK_PASSWORD})
			self.assertEqual(signed.status_code, 200, "precondition: the person signs in to the desk")
			page = desk.get("/app", follow_redirects=True)
			csrf = re.search(r'frappe.csrf_token = "([^"]+)"', page.text)
			self.assertTrue(
				csrf, "precondition: the desk page gives its CSRF token, as a signed-in tab has it"
			)
			body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
			tab = {"Accept": "application/json, text/event-stream", "X-Frappe-CSRF-Token": csrf.group(1)}
			# The cookie alone; beside a bearer token of nobody; beside someone else's API key.
			for extra in (
				{},
				{"Authorization": "Bearer not-a-token-of-anyone"},
				{"Authorization": self.auth[ACCOUNTS]},
			):
				refused = desk.post(ENDPOINT, json=body, headers={**tab, **extra})
				self.assertEqual(refused.status_code, 401, extra)
				self.assertEqual(refused.json()["error"], "invalid_token")

	def test_a_person_whose_roles_may_not_connect_gets_nothing(self):
		_settings(mcp_roles="Sales User")
		try:
			body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
			accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
			refused = httpx.post(
				self.web + ENDPOINT, json=body, headers={**self.headers(ACCOUNTS), **accept}, timeout=TIMEOUT
			)
			self.assertEqual(refused.status_code, 403)
			self.assertIn("not enabled for your roles", refused.json()["error"]["message"])
			allowed = self.call(SALES, "records__list", {"entity": "sales_order"})
			self.assertFalse(allowed.isError)
		finally:
			_settings(mcp_roles="")


class TestUpgradeDefaults(PeopleTestCase):
	def test_a_limit_an_upgrade_adds_gets_its_default_so_the_settings_can_still_be_saved(self):
		from noviz_agent.patches.v1 import set_missing_limits

		self.assertTrue(
			frappe.get_meta("Agent Settings").has_field("mcp_calls_per_hour"), "precondition: migrated"
		)
		# As a site upgraded from before the field: no value (0 once frappe reads it as an Int).
		frappe.db.set_single_value("Agent Settings", "mcp_calls_per_hour", 0)
		frappe.clear_document_cache("Agent Settings", "Agent Settings")
		with self.assertRaises(frappe.ValidationError):
			frappe.get_single("Agent Settings").save(ignore_permissions=True)
		set_missing_limits.execute()
		self.assertEqual(frappe.db.get_single_value("Agent Settings", "mcp_calls_per_hour"), 600)
		frappe.get_single("Agent Settings").save(ignore_permissions=True)
