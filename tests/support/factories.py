"""Sessions for tests: the full registry, with what the connector permits allowed."""

from __future__ import annotations

from noviz_agent.engine.policy import allowed_tools
from noviz_agent.engine.session import Limits, Person, Session
from noviz_agent.engine.tools import Registry
from noviz_agent.tools import build_registry


def permitted_tools(registry: Registry, connector) -> frozenset[str]:
	"""Tool names this connector's person may use, by the product's own rule (no admin policy)."""
	permissions = {entity: set(connector.permissions(entity)) for entity in connector.entities()}
	return allowed_tools(registry, permissions, getattr(connector, "roles", ()))


def make_session(
	connector,
	tools: list[str] | None = None,
	roles: set[str] | frozenset[str] | None = None,
	registry: Registry | None = None,
	**limits,
) -> Session:
	"""A Session as `connector.user`; `tools` narrows what is allowed, `limits` overrides Limits fields."""
	registry = registry if registry is not None else build_registry()
	if roles is None:
		roles = getattr(connector, "roles", frozenset())
	allowed = frozenset(tools) if tools is not None else permitted_tools(registry, connector)
	person = Person(user=connector.user, roles=frozenset(roles), full_name=connector.user)
	return Session(
		person=person, connector=connector, registry=registry, allowed=allowed, limits=Limits(**limits)
	)
