"""Other systems on a site: the person's own connections become connectors next to the site's own."""

from __future__ import annotations

import frappe

from noviz_agent.connectors.composite import CompositeConnector
from noviz_agent.connectors.rest import RestConnector
from noviz_agent.connectors.systems import KNOWN, system_model

SYSTEM = "Agent System"
CONNECTION = "Agent System Connection"
SYSTEMS_CACHED = "systems_enabled"  # whether any system is enabled (frappe_allowance.cached)


def connections(user: str) -> list[dict]:
	"""The person's own connections to enabled systems (read as them: they are their records)."""
	# Most sites connect no other system: whether any is enabled is kept in Redis (dropped when a
	# system changes) instead of a permission-checked list per turn.
	from noviz_agent.edge.frappe_allowance import cached

	def any_enabled() -> bool:
		return frappe.db.table_exists(CONNECTION) and bool(frappe.db.exists(SYSTEM, {"enabled": 1}))

	if not cached(SYSTEMS_CACHED, any_enabled):
		return []
	rows = frappe.get_list(CONNECTION, filters={"person": user}, fields=["name", "system", "api_key"])
	out = []
	for row in rows:
		system = frappe.get_cached_doc(SYSTEM, row.system) if frappe.db.exists(SYSTEM, row.system) else None
		if system is None or not system.enabled or system.system not in KNOWN:
			continue
		secret = frappe.get_doc(CONNECTION, row.name).get_password("api_secret", raise_exception=False)
		out.append(
			{
				"system": system.system,
				"title": system.title,
				"base_url": system.base_url,
				"timeout": system.timeout or 15,
				"api_key": row.api_key,
				"api_secret": secret or "",
			}
		)
	return out


def connector_for(user: str, home) -> CompositeConnector | object:
	"""The site's connector, with a connector per system the person connected (else just the site's)."""
	others = {
		c["system"]: RestConnector(
			c["title"],
			c["base_url"],
			c["api_key"],
			c["api_secret"],
			system_model(c["system"]),
			user=user,
			timeout=float(c["timeout"]),
		)
		for c in connections(user)
	}
	return CompositeConnector(home, others) if others else home


def check_connections(user: str) -> list[tuple[str, str, str]]:
	"""For the doctor: (system, status, message) for each of the person's connections."""
	results = []
	for c in connections(user):
		conn = RestConnector(
			c["title"],
			c["base_url"],
			c["api_key"],
			c["api_secret"],
			system_model(c["system"]),
			timeout=10,
			retries=1,
		)
		try:
			info = conn.check()
		except Exception as exc:
			results.append((c["title"], "fail", str(exc)))
			continue
		results.append(
			(
				c["title"],
				"ok",
				f"reachable as {info['user']}; Frappe {info.get('frappe') or 'version unknown'}",
			)
		)
	return results
