"""The provider key never appears in anything a turn produces: response, log row, history, errors, logs."""

from __future__ import annotations

import json
import logging

import pytest

from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderSettings
from noviz_agent.engine.turn import run_turn
from noviz_agent.testing.stub_provider import StubProvider
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

pytestmark = pytest.mark.attack("secrets")

KEY = "sk-live-SECRET-7f3a9c21e4b8d6"


def _session():
	conn = MemoryConnector(
		"ann@example.com",
		{"customer": [{"name": "Acme", "customer_name": "Acme", "customer_group": "Commercial"}]},
		{"customer": {"read", "create"}},
		roles={"Sales User"},
	)
	return make_session(conn)


def _call(name, args):
	return {"tool_calls": [{"name": name, "arguments": args}]}


@pytest.mark.parametrize(
	"script",
	[
		[_call("customer__list", {}), {"text": "Acme is your only customer."}],
		[{"status": 401, "error": f"Incorrect API key provided: {KEY}"}],
		[{"status": 500, "error": f"upstream failed for key {KEY}", "times": 3}],
		[{"status": 429, "error": f"rate limit for {KEY}", "times": 3}],
		[_call("customer__create", {"values": {"customer_name": "Beta"}}), {"text": "Proposed."}],
	],
	ids=["answer", "auth-echo", "server-echo", "rate-limit-echo", "proposal"],
)
def test_no_turn_artefact_contains_the_provider_key(script, caplog):
	caplog.set_level(logging.DEBUG)
	with StubProvider(rules=False) as stub:
		for step in script:
			stub.push(**step)
		settings = ProviderSettings(base_url=stub.base_url, api_key=KEY, model="m", timeout=5, max_retries=2)
		provider = OpenAICompatibleProvider(settings, sleep=lambda s: None, rng=lambda: 1.0)
		outcome = run_turn(_session(), provider, "show customers")
		sent = json.dumps(stub.requests, default=str)
	produced = json.dumps([outcome.response, outcome.log, outcome.history_entry], default=str)
	assert KEY not in caplog.text
	assert KEY not in produced
	assert KEY not in sent  # request bodies: the Authorization header is the only place it travels
	assert all(r["headers"].get("authorization") in (None, "<redacted>") for r in stub.requests)


SYSTEM_SECRET = "ann-secret-0001"


def _helpdesk_turn(site, secret: str, scrub=None):
	"""A turn whose model reads Helpdesk tickets with the person's connection (secret as configured)."""
	from noviz_agent.connectors.composite import CompositeConnector
	from noviz_agent.connectors.rest import RestConnector
	from noviz_agent.connectors.systems import system_model
	from noviz_agent.testing.model import ScriptedModel, call

	helpdesk = RestConnector(
		"Helpdesk", site.base_url, "ann-key", secret, system_model("helpdesk"), user="ann@erp.test", backoff=0
	)
	conn = CompositeConnector(MemoryConnector("ann@example.com", {}, {}), {"helpdesk": helpdesk})
	session = make_session(conn, tools=["helpdesk.ticket.list"])
	session.offered = set(session.allowed)
	if scrub is not None:
		session.scrub = scrub
	model = ScriptedModel([call("helpdesk.ticket.list", {}), "Here are the tickets."])
	outcome = run_turn(session, model, "open tickets")
	return outcome, json.dumps(model.requests, default=str)


@pytest.mark.parametrize("stray", ["\n", "\r\n", " \t"], ids=["newline", "crlf", "trailing-blank"])
def test_a_system_secret_with_a_stray_character_never_reaches_the_model_the_log_or_the_browser(stray, caplog):
	from tests.systems.fake_frappe import FakeFrappe
	from tests.systems.test_rest_connector import TOKENS, can_read

	caplog.set_level(logging.DEBUG)
	with FakeFrappe(TOKENS, {"HD Ticket": [], "HD Customer": [], "HD Agent": []}, can_read) as site:
		outcome, sent_to_model = _helpdesk_turn(site, SYSTEM_SECRET + stray)
	produced = json.dumps([outcome.response, outcome.log, outcome.history_entry], default=str)
	call = outcome.log["tools_called"][0]
	assert call["status"] in ("error", "refused") and "Helpdesk" in call["error"]
	for text in (produced, sent_to_model, caplog.text):
		assert SYSTEM_SECRET not in text
		assert "ann-key:" not in text


@pytest.mark.attack(None)  # not an attack: the ordinary path
def test_the_scrubber_removes_every_configured_secret_in_every_shape_it_travels_in():
	from noviz_agent.engine.secrets import Scrubber

	scrub = Scrubber(["sk-live-SECRET-7f3a9c21e4b8d6", "hd-secret-\n-tail-value"])
	texts = [
		"Incorrect API key provided: sk-live-SECRET-7f3a9c21e4b8d6",
		"Invalid header value b'token hd-key:hd-secret-\\n-tail-value'",
		'{"Authorization": "token someone:else-entirely"}',
		"Authorization: Bearer abcdefghijklmnop",
		"requests failed for api_key=zzzzzzzz12",
	]
	cleaned = [scrub(t) for t in texts]
	joined = "\n".join(cleaned)
	for secret in (
		"sk-live-SECRET",
		"hd-secret-",
		"tail-value",
		"someone:else",
		"abcdefghijklmnop",
		"zzzzzzzz12",
	):
		assert secret not in joined, (secret, cleaned)
	assert scrub("Customer Acme has 3 open orders; token limit: 5000.") == (
		"Customer Acme has 3 open orders; token limit: 5000."
	)


def test_an_unexpected_tool_failure_quoting_a_key_reaches_no_one_with_it():
	from noviz_agent.engine.gateway import call_tool
	from noviz_agent.engine.secrets import Scrubber
	from noviz_agent.engine.tools import Registry, Tool

	def leaky(args, session):
		raise RuntimeError(f"upstream said: bad key {KEY}")

	tool = Tool("probe.leak", "A tool that fails quoting a key.", "test", {"type": "object"}, leaky)
	session = make_session(
		MemoryConnector("ann@example.com", {}, {}), registry=Registry([tool]), tools=["probe.leak"]
	)
	session.scrub = Scrubber([KEY])
	result = call_tool(session, "probe.leak", {})
	assert result.status == "error" and "RuntimeError" in result.error and KEY not in result.error
