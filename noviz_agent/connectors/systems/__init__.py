"""Canonical models of other systems the agent can reach over REST, one folder per system.

Their entities are namespaced by the system (`helpdesk.ticket`), so names never collide with
ERPNext's (`customer` stays ERPNext's customer; `helpdesk.customer` is Helpdesk's).
"""

from __future__ import annotations

import functools
from pathlib import Path

from noviz_agent.connectors.model import Model, load_dir

SYSTEMS_DIR = Path(__file__).parent
KNOWN = ("helpdesk",)


@functools.cache
def system_model(system: str) -> Model:
	"""The canonical model of one system, its entity keys prefixed with the system's name."""
	if system not in KNOWN:
		raise ValueError(f"Unknown system {system!r}; known: {', '.join(KNOWN)}")
	return load_dir(SYSTEMS_DIR / system, namespace=system)
