"""The REST connector against a fake Frappe Helpdesk over real HTTP: each call as the person there."""

from __future__ import annotations

import json
import time

import pytest

from noviz_agent.connectors.rest import RestConnector, Unreachable
from noviz_agent.connectors.systems import system_model
from noviz_agent.engine.errors import NotFound, PermissionDenied
from noviz_agent.engine.gateway import call_tool
from noviz_agent.engine.session import Person, Session
from noviz_agent.engine.tools import Registry
from noviz_agent.tools.entities import entity_tools
from tests.systems.fake_frappe import FakeFrappe

TOKENS = {"ann-key:ann-secret-0001": "ann@helpdesk.test", "bob-key:bob-secret-0002": "bob@helpdesk.test"}
TICKETS = [
	{
		"name": i,
		"subject": f"Problem {i}",
		"status": "Open" if i % 3 else "Resolved",
		"priority": "High" if i % 4 == 0 else "Medium",
		"agent_group": "Billing" if i % 2 == 0 else "Product",
		"customer": "Acme" if i < 8 else "Globex",
		"raised_by": "buyer@acme.test" if i < 8 else "it@globex.test",
		"opening_date": f"2026-11-{i:02d}",
		"modified": f"2026-11-{i:02d} 10:00:00",
	}
	for i in range(1, 13)
]
AGENTS = [{"name": "ann@helpdesk.test", "agent_name": "Ann", "user": "ann@helpdesk.test", "is_active": 1}]


def can_read(user: str, doctype: str, row) -> bool:
	if user == "ann@helpdesk.test":  # an Agent Manager sees everything
		return True
	if doctype == "HD Agent":
		return False
	return row is None or row.get("agent_group") == "Billing"  # an agent of the Billing team


@pytest.fixture
def site():
	data = {"HD Ticket": [dict(t) for t in TICKETS], "HD Agent": [dict(a) for a in AGENTS], "HD Customer": []}
	with FakeFrappe(TOKENS, data, can_read) as server:
		yield server


def lists(site) -> list[dict]:
	return [r for r in site.requests if r["path"].endswith("frappe.client.get_list")]


def connect(site, who="ann", **kw) -> RestConnector:
	key, secret = next(t for t in TOKENS if t.startswith(who)).split(":")
	kw.setdefault("backoff", 0.0)
	return RestConnector(
		"Helpdesk", site.base_url, key, secret, system_model("helpdesk"), user=f"{who}@erp.test", **kw
	)


def test_pages_read_every_visible_ticket_once(site):
	conn = connect(site)
	seen = []
	for offset in range(0, 20, 5):
		seen += [r["name"] for r in conn.list("helpdesk.ticket", limit=5, offset=offset)]
	assert sorted(seen) == list(range(1, 13)) and len(seen) == len(set(seen))


def test_another_person_sees_what_that_system_lets_them_see(site):
	ann, bob = connect(site, "ann"), connect(site, "bob")
	assert ann.count("helpdesk.ticket") == 12
	assert bob.count("helpdesk.ticket") == 6
	rows = bob.list("helpdesk.ticket", fields=["subject", "team"], limit=20)
	assert {r["team"] for r in rows} == {"Billing"}
	by_status = {
		r["status"]: r["n"]
		for r in ann.aggregate("helpdesk.ticket", metrics=[{"fn": "count", "as": "n"}], group_by=["status"])
	}
	assert by_status == {"Open": 8, "Resolved": 4}


def test_permission_refusals_come_back_in_the_systems_own_words(site):
	with pytest.raises(PermissionDenied, match=r"^No permission for HD Agent$"):
		connect(site, "bob").list("helpdesk.agent")
	with pytest.raises(PermissionDenied, match="No permission for HD Ticket 1"):
		connect(site, "bob").get("helpdesk.ticket", "1")
	with pytest.raises(NotFound, match="HD Ticket 99 not found"):
		connect(site).get("helpdesk.ticket", "99")


def known(site, **kw) -> RestConnector:
	"""A connector that has already asked the system its version (one answered count)."""
	conn = connect(site, **kw)
	conn.count("helpdesk.ticket")
	site.requests.clear()
	return conn


def test_rate_limits_and_server_errors_on_reads_are_retried(site):
	conn = known(site, retries=3)
	site.fault(429, retry_after="0")
	site.fault(502, times=2)
	assert conn.count("helpdesk.ticket") == 12
	assert len(lists(site)) == 4


def test_a_burst_longer_than_the_retries_is_a_clear_error(site):
	conn = known(site, retries=2)
	site.fault(503, times=10, message="maintenance")
	with pytest.raises(Unreachable, match="Helpdesk failed while counting Helpdesk Ticket: maintenance"):
		conn.count("helpdesk.ticket")
	assert len(lists(site)) == 3


def test_a_write_is_not_repeated_after_a_server_error_but_is_after_a_refusal_to_start(site):
	conn = connect(site, retries=3)
	site.fault(500)
	with pytest.raises(Unreachable):
		conn.update("helpdesk.ticket", "2", {"status": "Replied"})
	puts = [r for r in site.requests if r["method"] == "PUT"]
	assert len(puts) == 1
	site.fault(429, retry_after="0")
	updated = conn.update("helpdesk.ticket", "2", {"status": "Replied"})
	assert updated["status"] == "Replied"


def test_a_slow_system_times_out_with_a_message(site):
	site.fault(0, delay=1.5, times=5)
	started = time.monotonic()
	with pytest.raises(Unreachable, match="did not answer within 0.3 s"):
		connect(site, timeout=0.3, retries=1).count("helpdesk.ticket")
	assert time.monotonic() - started < 5


def test_wrong_credentials_say_how_to_reconnect_and_never_show_the_secret(site):
	conn = RestConnector(
		"Helpdesk", site.base_url, "ann-key", "wrong-secret-zz", system_model("helpdesk"), backoff=0
	)
	with pytest.raises(PermissionDenied) as info:
		conn.count("helpdesk.ticket")
	text = str(info.value)
	assert "did not accept your credentials" in text and "Agent System Connection" in text
	assert "wrong-secret-zz" not in text and "wrong-secret-zz" not in repr(conn)


def test_the_systems_tools_run_through_the_gateway_as_the_person_there(site):
	model = system_model("helpdesk")
	registry = Registry([t for ent in model for t in entity_tools(ent)])
	assert "helpdesk.ticket.list" in registry.names() and "helpdesk.ticket.create" not in registry.names()
	conn = connect(site, "bob")
	session = Session(Person("bob@erp.test"), conn, registry, frozenset(registry.names()))
	result = call_tool(session, "helpdesk.ticket.list", {})
	assert result.status == "ok" and {r["name"] for r in result.data["rows"]} <= {2, 4, 6, 8, 10, 12}
	refused = call_tool(session, "helpdesk.agent.list", {})
	assert refused.status == "refused" and refused.error == "No permission for HD Agent"
	proposal = call_tool(session, "helpdesk.ticket.update", {"name": "2", "values": {"status": "Closed"}})
	assert proposal.status == "proposal"
	assert all(r["method"] != "PUT" for r in site.requests)  # nothing written before the person confirms
	assert all(json.dumps(r["body"]).find("secret") < 0 for r in site.requests)


def test_namespaced_keys_never_collide_with_erpnext():
	model = system_model("helpdesk")
	assert {e.key for e in model} == {"helpdesk.ticket", "helpdesk.customer", "helpdesk.agent"}
	assert model.entity("helpdesk.customer").doctype == "HD Customer"


def test_links_of_another_system_point_at_that_system_not_this_site(site):
	# A relative /app/hd-ticket/4 would open this ERPNext site, where there is no such record.
	model = system_model("helpdesk")
	registry = Registry([t for ent in model for t in entity_tools(ent)])
	conn = connect(site, "ann")
	session = Session(Person("ann@erp.test"), conn, registry, frozenset(registry.names()))
	rows = call_tool(
		session, "helpdesk.ticket.list", {"filters": [{"field": "customer", "op": "=", "value": "Acme"}]}
	).data["rows"]
	assert rows and {r["_link"] for r in rows} == {f"{site.base_url}/app/hd-ticket/{r['name']}" for r in rows}
	assert conn.get("helpdesk.ticket", "4")["_link"] == f"{site.base_url}/app/hd-ticket/4"


@pytest.mark.parametrize("version", ["15.101.1", "16.10.7"])
def test_counts_and_totals_in_the_syntax_the_other_release_takes(version):
	"""Frappe 16 refuses aggregates written as SQL text; the connector asks the version and adapts."""
	data = {"HD Ticket": [dict(t) for t in TICKETS], "HD Agent": [], "HD Customer": []}
	with FakeFrappe(TOKENS, data, can_read, frappe_version=version) as other:
		conn = connect(other)
		assert conn.count("helpdesk.ticket") == 12
		assert conn.count("helpdesk.ticket", {"status": "Open"}) == 8
		rows = conn.aggregate(
			"helpdesk.ticket", metrics=[{"fn": "count", "as": "tickets"}], group_by=["status"]
		)
		assert {r["status"]: r["tickets"] for r in rows} == {"Open": 8, "Resolved": 4}
		fields = [f for r in lists(other) for f in r["body"].get("fields", [])]
		assert any(isinstance(f, dict) for f in fields) == version.startswith("16")
