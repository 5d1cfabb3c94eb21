"""Site test of two systems in one turn: ERPNext on this site, Frappe Helpdesk on another site.

It needs a Helpdesk site answering at the URL in this site's config key `noviz_test_helpdesk`:
{"url": ..., "customer": ERPNext customer ID, "domain": that customer's e-mail domain in Helpdesk,
"manager": {"user", "api_key", "api_secret"}, "agent": {...}} - the manager sees every team's
tickets, the agent only their team's. Without anything listening there (CI) the test is skipped;
when something listens, its preconditions are asserted. Every change on this site is rolled back.
"""

from __future__ import annotations

import json

import frappe
import requests

from noviz_agent.edge import frappe_doctor
from noviz_agent.testing import answer, call, calls
from noviz_agent.tests.test_agent_api import AgentTestCase
from noviz_agent.tests.utils import ACCOUNTS, SALES, ensure_user, listening

CONFIG_KEY = "noviz_test_helpdesk"
SECOND = "accounts.second@noviz.test"  # an Accounts User too: only their Helpdesk account differs


def where(field: str, op: str, value) -> list:
	"""One filter condition in the entity tools' format (the one line to change when the format does)."""
	return {"field": field, "op": op, "value": value}


def _tool_results(model) -> list[dict]:
	"""The tool answers the model read in its last request, in order."""
	return [json.loads(m["content"]) for m in model.requests[-1][0] if m.get("role") == "tool"]


# The question's words route to ERPNext's modules; the other system's tools are reached the way the
# prompt tells a model to reach any tool not offered up front: through tools.search.
UNLOCK = calls(
	[
		("tools.search", {"query": "link an ERPNext customer to its Helpdesk customer"}),
		("tools.search", {"query": "list Helpdesk tickets"}),
		("tools.search", {"query": "list sales invoices"}),
	]
)


class TestTwoSystems(AgentTestCase):
	def setUp(self):
		super().setUp()
		self.conf = frappe.conf.get(CONFIG_KEY) or {}
		url = self.conf.get("url") or "http://127.0.0.1:8001"
		if not listening(url):
			self.skipTest(
				f"no Helpdesk site answers at {url} (set {CONFIG_KEY} in the site config to run this)"
			)
		for key in ("customer", "domain", "manager", "agent"):
			self.assertIn(key, self.conf, f"precondition: site config {CONFIG_KEY} names the {key}")
		self.url = url
		for doctype in ("Agent System", "Agent System Connection"):
			self.assertTrue(
				frappe.db.exists("DocType", doctype), f"precondition: `bench migrate` made {doctype}"
			)
		ensure_user(SECOND, "Accounts User")
		system = frappe.get_doc(
			{
				"doctype": "Agent System",
				"system": "helpdesk",
				"title": "Helpdesk",
				"base_url": url,
				"enabled": 1,
			}
		)
		if frappe.db.exists("Agent System", "helpdesk"):
			system = frappe.get_doc("Agent System", "helpdesk")
			system.update({"base_url": url, "enabled": 1})
		system.save(ignore_permissions=True)
		self.connect(ACCOUNTS, self.conf["manager"])
		self.connect(SECOND, self.conf["agent"])
		# The explicit key the link tool matches on: the ERPNext customer's e-mail in Helpdesk's domain.
		self.customer = self.conf["customer"]
		frappe.db.set_value("Customer", self.customer, "email_id", f"accounts@{self.conf['domain']}")
		frappe.set_user("Administrator")

	def connect(self, person: str, account: dict):
		frappe.set_user(person)
		frappe.get_doc(
			{
				"doctype": "Agent System Connection",
				"system": "helpdesk",
				"api_key": account["api_key"],
				"api_secret": account["api_secret"],
			}
		).insert()
		frappe.set_user("Administrator")

	def helpdesk_own_list(self, account: dict, filters: dict) -> list[dict]:
		"""Helpdesk's own ticket list for the person (the API its agent UI uses, with its team rules)."""
		response = requests.post(
			f"{self.url}/api/method/helpdesk.api.doc.get_list_data",
			json={"doctype": "HD Ticket", "filters": filters, "page_length": 500},
			headers={"Authorization": f"token {account['api_key']}:{account['api_secret']}"},
			timeout=30,
		)
		response.raise_for_status()
		return response.json()["message"]["data"]

	def open_tickets_turn(self, person: str, first_steps: list) -> tuple[dict, list[dict]]:
		def read_both(messages, tools):
			linked = json.loads(messages[-1]["content"])
			match = linked["helpdesk_matches"][0]["name"]
			return calls(
				[
					(
						"helpdesk.ticket.list",
						{"filters": [where("customer", "=", match), where("status", "=", "Open")]},
					),
					(
						"sales_invoice.list",
						{
							"filters": [
								where("customer", "=", self.customer),
								where("docstatus", "=", 1),
								where("outstanding", ">", 0),
							],
							"fields": ["customer", "outstanding", "due_date"],
						},
					),
				]
			)

		steps = [
			UNLOCK,
			*first_steps,
			read_both,
			answer("Open tickets (Helpdesk) and unpaid invoices (ERPNext) above."),
		]
		reply = self.send_as(person, f"open tickets and unpaid invoices of {self.customer}", steps)
		log = frappe.get_doc("Agent Interaction Log", reply["log"])
		results = _tool_results(self.models[-1])[len(UNLOCK.tool_calls) :]
		called = [(c.tool, c.status, c.error) for c in log.tool_calls]
		self.assertEqual(len(results), 3, f"{reply['response']} {called} {results}")
		return reply, results

	def test_one_turn_reads_tickets_in_helpdesk_and_invoices_in_erpnext_each_as_the_person(self):
		link = call("link.helpdesk_customer", {"customer": self.customer})
		reply, (linked, tickets, invoices) = self.open_tickets_turn(ACCOUNTS, [link])
		log = frappe.get_doc("Agent Interaction Log", reply["log"])
		self.assertEqual(
			[(c.tool, c.status) for c in log.tool_calls][len(UNLOCK.tool_calls) :],
			[
				("link.helpdesk_customer", "ok"),
				("helpdesk.ticket.list", "ok"),
				("sales_invoice.list", "ok"),
			],
		)
		# The link names the key it matched on and which system each side lives in.
		match = linked["helpdesk_matches"][0]
		self.assertEqual(
			(match["system"], match["key"], match["confidence"]), ("Helpdesk", "e-mail domain", 1.0)
		)
		self.assertEqual(match["value"], self.conf["domain"])
		self.assertEqual((linked["erpnext"]["system"], linked["erpnext"]["name"]), ("ERPNext", self.customer))

		# Helpdesk's figure against Helpdesk's own list for the same person.
		own = self.helpdesk_own_list(self.conf["manager"], {"customer": match["name"], "status": "Open"})
		self.assertGreater(len(own), 0, "precondition: the Helpdesk customer has open tickets")
		self.assertEqual(tickets["total"], len(own))
		self.assertEqual(sorted(r["name"] for r in tickets["rows"]), sorted(r["name"] for r in own))
		self.assertEqual({r["status"] for r in tickets["rows"]}, {"Open"})

		# ERPNext's figure against ERPNext's own records, read as the same person.
		frappe.set_user(ACCOUNTS)
		unpaid = frappe.get_list(
			"Sales Invoice",
			filters={"customer": self.customer, "docstatus": 1, "outstanding_amount": (">", 0)},
			fields=["name", "outstanding_amount"],
			limit_page_length=0,
		)
		frappe.set_user("Administrator")
		self.assertGreater(len(unpaid), 0, "precondition: the ERPNext customer has unpaid invoices")
		self.assertEqual(invoices["total"], len(unpaid))
		if invoices["total"] <= invoices["page"]["size"]:
			self.assertAlmostEqual(
				sum(r["outstanding"] for r in invoices["rows"]),
				sum(r.outstanding_amount for r in unpaid),
				places=2,
			)
		print(
			f"\n[two systems] Helpdesk {match['name']!r} open tickets as {self.conf['manager']['user']}: "
			f"{tickets['total']} (Helpdesk's own list: {len(own)}); ERPNext {self.customer!r} unpaid invoices: "
			f"{invoices['total']}, outstanding {sum(r.outstanding_amount for r in unpaid):,.2f}"
		)

	def test_a_person_in_one_team_sees_fewer_tickets(self):
		link = call("link.helpdesk_customer", {"customer": self.customer})
		_reply, (linked, all_teams, _inv) = self.open_tickets_turn(ACCOUNTS, [link])
		link = call("link.helpdesk_customer", {"customer": self.customer})
		_reply, (linked_too, one_team, _inv) = self.open_tickets_turn(SECOND, [link])
		hd_customer = linked["helpdesk_matches"][0]["name"]
		self.assertEqual(linked_too["helpdesk_matches"][0]["name"], hd_customer)
		own = self.helpdesk_own_list(self.conf["agent"], {"customer": hd_customer, "status": "Open"})
		self.assertGreater(one_team["total"], 0, "precondition: the agent's team has open tickets")
		self.assertEqual(one_team["total"], len(own))
		self.assertLess(one_team["total"], all_teams["total"])
		self.assertTrue({r["name"] for r in one_team["rows"]} < {r["name"] for r in all_teams["rows"]})
		print(
			f"\n[two systems] open tickets of {hd_customer!r}: {all_teams['total']} as "
			f"{self.conf['manager']['user']}, {one_team['total']} as {self.conf['agent']['user']} "
			f"(Helpdesk's own list for the agent: {len(own)})"
		)

	def test_a_person_without_a_connection_gets_no_helpdesk_tools(self):
		reply = self.send_as(SALES, "open tickets", [answer("Connect your Helpdesk account first.")])
		offered = frappe.get_doc("Agent Interaction Log", reply["log"]).tools_offered or ""
		self.assertNotIn("helpdesk.", offered)
		connected = self.send_as(ACCOUNTS, "open tickets", [answer("ok")])
		self.assertIn(
			"helpdesk.ticket.list", frappe.get_doc("Agent Interaction Log", connected["log"]).tools_offered
		)

	def test_doctor_checks_the_persons_connection(self):
		frappe.set_user(ACCOUNTS)
		checks = frappe_doctor.check_systems()
		frappe.set_user("Administrator")
		self.assertEqual([(c.name, c.status) for c in checks], [("system Helpdesk", "ok")])
		self.assertIn(f"reachable as {self.conf['manager']['user']}", checks[0].message)
		self.assertRegex(checks[0].message, r"Frappe \d+\.\d+")
		self.assertNotIn(self.conf["manager"]["api_secret"], checks[0].message)
		print(
			f"\n[two systems] doctor as {ACCOUNTS}: [{checks[0].status}] {checks[0].name}: {checks[0].message}"
		)
