"""Tools of other systems (Frappe Helpdesk): their entities' generated tools, and explicit link tools.

A link tool never joins records silently: it returns candidate matches between an ERPNext
record and the other system's records, each with the key it matched on and a confidence, and
every record labelled with the system it came from. The model then reads each system with its
own tools.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from noviz_agent.connectors.systems import KNOWN, system_model
from noviz_agent.engine.errors import NotFound, ToolError
from noviz_agent.engine.tools import Tool
from noviz_agent.tools.entities import entity_tools

FUZZY_FLOOR = 85


def _domain(value: str | None) -> str | None:
	value = (value or "").strip().lower()
	if "@" in value:
		value = value.split("@", 1)[1]
	value = re.sub(r"^https?://", "", value).split("/", 1)[0].removeprefix("www.")
	return value or None


def _normal(name: str) -> str:
	return " ".join(re.sub(r"[^\w\s]", " ", (name or "").lower()).split())


def link_customer(args: dict, session) -> dict:
	"""Candidate Helpdesk customers for one ERPNext customer, by e-mail domain or by name."""
	name = args["customer"]
	customer = session.connector.get("customer", name)
	domains = {d for d in (_domain(customer.get("email")), _domain(customer.get("website"))) if d}
	try:
		candidates = session.connector.list(
			"helpdesk.customer", fields=["customer_name", "domain"], limit=200
		)
	except NotFound as exc:
		raise ToolError(str(exc)) from None
	matches = []
	for row in candidates:
		if row.get("domain") and _domain(row["domain"]) in domains:
			matches.append(
				{"key": "e-mail domain", "value": _domain(row["domain"]), "confidence": 1.0, **row}
			)
			continue
		score = fuzz.token_sort_ratio(
			_normal(customer.get("customer_name") or name), _normal(row.get("customer_name"))
		)
		if score >= FUZZY_FLOOR:
			key = "exact name" if score == 100 else "similar name"
			matches.append(
				{"key": key, "value": row.get("customer_name"), "confidence": round(score / 100, 2), **row}
			)
	matches.sort(key=lambda m: -m["confidence"])
	return {
		"erpnext": {
			"system": "ERPNext",
			"entity": "customer",
			"name": customer.get("name"),
			"link": customer.get("_link"),
		},
		"helpdesk_matches": [{"system": "Helpdesk", "entity": "helpdesk.customer", **m} for m in matches[:5]],
		"note": "Matches are candidates with the key used and a confidence; read each system with its own tools "
		"(helpdesk.ticket.list with customer = the match's name) and say which system each figure comes from.",
	}


def tools() -> list[Tool]:
	found = [t for system in KNOWN for ent in system_model(system) for t in entity_tools(ent)]
	found.append(
		Tool(
			name="link.helpdesk_customer",
			description="Find the Helpdesk customer(s) that correspond to one ERPNext customer, by e-mail domain "
			"or by name, each with the key matched and a confidence. Use before reading a customer's tickets in "
			"Helpdesk; never assume a match that is not listed.",
			module="support",
			parameters={
				"type": "object",
				"properties": {"customer": {"type": "string", "description": "The ERPNext customer ID"}},
				"required": ["customer"],
				"additionalProperties": False,
			},
			handler=link_customer,
			# Tied to the Helpdesk entity it reads: offered only to people who can read it there.
			entity="helpdesk.customer",
			action="link",
			tags=("link", "helpdesk"),
		)
	)
	return found
