"""One person's connectors to several systems behind the one connector contract.

The site's own connector serves ERPNext's entities (`customer`); each other system's
connector serves its namespaced ones (`helpdesk.ticket`). Nothing is joined here: a call goes
to exactly one system, as the person in that system.
"""

from __future__ import annotations

from noviz_agent.engine.errors import NotFound


class CompositeConnector:
	def __init__(self, home, others: dict[str, object] | None = None):
		self.home = home
		self.others = dict(others or {})
		self.user = home.user

	def _for(self, entity: str):
		system, dot, _rest = entity.partition(".")
		if not dot:
			return self.home
		connector = self.others.get(system)
		if connector is None:
			raise NotFound(
				f"'{entity}' lives in {system}, and you have not connected your {system} account. "
				f"Connect it in Agent System Connection to use it here."
			)
		return connector

	def systems(self) -> list[str]:
		return sorted(self.others)

	def secrets(self) -> tuple[str, ...]:
		"""The person's credentials for every connected system (for the scrubber, never for output)."""
		found: list[str] = []
		for connector in self.others.values():
			found += list(getattr(connector, "secrets", tuple)())
		return tuple(found)

	def entities(self) -> list[str]:
		found = list(self.home.entities())
		for connector in self.others.values():
			found += connector.entities()
		return found

	def permissions(self, entity: str) -> set[str]:
		try:
			return self._for(entity).permissions(entity)
		except NotFound:
			return set()

	def __getattr__(self, name: str):
		# Entity-first calls (list, get, count, aggregate, create, update, submit, cancel, meta,
		# workflow, apply_workflow) go to the entity's system; the rest are the site's own.
		method = getattr(self.home, name)

		def dispatch(entity=None, *args, **kwargs):
			if isinstance(entity, str) and "." in entity:
				return getattr(self._for(entity), name)(entity, *args, **kwargs)
			return method(*args, **kwargs) if entity is None else method(entity, *args, **kwargs)

		return dispatch if callable(method) else method
