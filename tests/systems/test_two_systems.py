"""Two systems in one turn: each call as the person in its own system, joined only by explicit links."""

from __future__ import annotations

import pytest

from noviz_agent.connectors.composite import CompositeConnector
from noviz_agent.engine.gateway import call_tool
from noviz_agent.engine.policy import allowed_tools
from noviz_agent.engine.turn import run_turn
from noviz_agent.testing.model import ScriptedModel, call
from noviz_agent.tools import build_registry
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector
from tests.systems.fake_frappe import FakeFrappe
from tests.systems.test_rest_connector import TOKENS, can_read, connect

INVOICES = [
	{
		"name": "SINV-1",
		"customer": "Acme Corp",
		"status": "Overdue",
		"outstanding_amount": 120.0,
		"docstatus": 1,
		"company": "NT",
	},
	{
		"name": "SINV-2",
		"customer": "Acme Corp",
		"status": "Paid",
		"outstanding_amount": 0.0,
		"docstatus": 1,
		"company": "NT",
	},
]


@pytest.fixture
def helpdesk():
	data = {
		"HD Ticket": [
			{
				"name": 1,
				"subject": "Broken chair",
				"status": "Open",
				"customer": "Acme",
				"agent_group": "Billing",
				"modified": "2026-11-01",
			},
			{
				"name": 2,
				"subject": "Late delivery",
				"status": "Open",
				"customer": "Acme",
				"agent_group": "Product",
				"modified": "2026-11-02",
			},
			{
				"name": 3,
				"subject": "Invoice copy",
				"status": "Closed",
				"customer": "Globex",
				"agent_group": "Billing",
				"modified": "2026-11-03",
			},
		],
		"HD Customer": [
			{"name": "Acme", "customer_name": "Acme", "domain": "acme.test"},
			{"name": "Globex", "customer_name": "Globex", "domain": "globex.test"},
		],
		"HD Agent": [],
	}
	with FakeFrappe(TOKENS, data, can_read) as server:
		yield server


def _erp(user="sam@erp.test"):
	return MemoryConnector(
		user,
		{
			"customer": [
				{
					"name": "Acme Corp",
					"customer_name": "Acme Corp",
					"email": "buyer@acme.test",
					"customer_group": "Commercial",
				}
			],
			"sales_invoice": [dict(i) for i in INVOICES],
		},
		{"customer": {"read"}, "sales_invoice": {"read"}},
		roles={"Accounts User"},
	)


def test_a_person_without_a_connection_has_no_tools_of_that_system():
	registry = build_registry()
	conn = CompositeConnector(_erp())
	perms = {e: conn.permissions(e) for e in list(conn.entities()) + ["helpdesk.ticket", "helpdesk.customer"]}
	allowed = allowed_tools(registry, perms, {"Accounts User"})
	assert "sales_invoice.list" in allowed
	assert not [n for n in allowed if n.startswith(("helpdesk.", "link.helpdesk"))]
	with pytest.raises(Exception, match="Connect it in Agent System Connection"):
		conn.list("helpdesk.ticket")


def test_one_turn_reads_tickets_in_helpdesk_and_invoices_in_erpnext_joined_by_an_explicit_link(helpdesk):
	conn = CompositeConnector(_erp(), {"helpdesk": connect(helpdesk, "ann")})
	session = make_session(conn, registry=build_registry())
	session.offered = set(session.allowed)
	assert {"helpdesk.ticket.list", "link.helpdesk_customer"} <= session.allowed
	model = ScriptedModel(
		[
			call("link.helpdesk_customer", {"customer": "Acme Corp"}),
			call(
				"helpdesk.ticket.list",
				{
					"filters": [
						{"field": "customer", "op": "=", "value": "Acme"},
						{"field": "status", "op": "=", "value": "Open"},
					]
				},
			),
			call(
				"sales_invoice.list",
				{
					"filters": [
						{"field": "customer", "op": "=", "value": "Acme Corp"},
						{"field": "status", "op": "=", "value": "Overdue"},
					]
				},
			),
			"Acme Corp (ERPNext) has 1 overdue invoice; as Acme in Helpdesk it has 2 open tickets.",
		]
	)
	outcome = run_turn(session, model, "open tickets and unpaid invoices of Acme Corp")
	results = {c["name"]: c for c in outcome.log["tools_called"]}
	assert all(c["status"] == "ok" for c in results.values()), outcome.log["tools_called"]
	link = call_tool(session, "link.helpdesk_customer", {"customer": "Acme Corp"}).data
	assert (
		link["helpdesk_matches"][0]["name"] == "Acme"
		and link["helpdesk_matches"][0]["key"] == "e-mail domain"
	)
	assert link["erpnext"]["system"] == "ERPNext"
	tickets = call_tool(
		session,
		"helpdesk.ticket.list",
		{
			"filters": [
				{"field": "customer", "op": "=", "value": "Acme"},
				{"field": "status", "op": "=", "value": "Open"},
			]
		},
	)
	assert sorted(r["name"] for r in tickets.data["rows"]) == [1, 2]
	# Every Helpdesk call carried the person's own Helpdesk credentials.
	assert {r["authorization"] for r in helpdesk.requests} == {"token ann-key:ann-secret-0001"}


def test_a_person_with_another_helpdesk_role_sees_fewer_tickets(helpdesk):
	ann = make_session(
		CompositeConnector(_erp(), {"helpdesk": connect(helpdesk, "ann")}), registry=build_registry()
	)
	bob = make_session(
		CompositeConnector(_erp(), {"helpdesk": connect(helpdesk, "bob")}), registry=build_registry()
	)
	args = {"filters": [{"field": "customer", "op": "=", "value": "Acme"}]}
	assert call_tool(ann, "helpdesk.ticket.count", args).data["count"] == 2
	assert call_tool(bob, "helpdesk.ticket.count", args).data["count"] == 1


def test_no_match_is_invented_for_an_unknown_customer(helpdesk):
	erp = _erp()
	erp.data["customer"].append({"name": "Initech", "customer_name": "Initech", "email": "ap@initech.test"})
	session = make_session(
		CompositeConnector(erp, {"helpdesk": connect(helpdesk, "ann")}), registry=build_registry()
	)
	result = call_tool(session, "link.helpdesk_customer", {"customer": "Initech"})
	assert result.status == "ok" and result.data["helpdesk_matches"] == []
