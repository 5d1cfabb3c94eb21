"""The provider key never appears in anything a turn produces: response, log row, history, errors, logs."""

from __future__ import annotations

import json
import logging

import pytest

from noviz_agent.engine.llm import ModelSettings, OpenAICompatibleProvider
from noviz_agent.engine.turn import run_turn
from noviz_agent.testing.stub_provider import StubProvider
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

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
		settings = ModelSettings(base_url=stub.base_url, api_key=KEY, model="m", timeout=5, max_retries=2)
		provider = OpenAICompatibleProvider(settings, sleep=lambda s: None, rng=lambda: 1.0)
		outcome = run_turn(_session(), provider, "show customers")
		sent = json.dumps(stub.requests, default=str)
	produced = json.dumps([outcome.response, outcome.log, outcome.history_entry], default=str)
	assert KEY not in caplog.text
	assert KEY not in produced
	assert KEY not in sent  # request bodies: the Authorization header is the only place it travels
	assert all(r["headers"].get("authorization") in (None, "<redacted>") for r in stub.requests)
