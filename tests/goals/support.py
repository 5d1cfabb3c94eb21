"""A goal's owner on the simulated company: their session on a given day, with the stores kept across runs."""

from __future__ import annotations

import datetime as dt

from noviz_agent.engine.session import MemoryStore, Person, Session
from noviz_agent.goals.spec import GoalSpec
from noviz_agent.testing.goal_world import COMPANY, World
from noviz_agent.testing.memory_connector import MemoryConnector
from noviz_agent.tools import registry
from tests.support.factories import permitted_tools

OWNER = "owner@goals.test"
ROLES = frozenset({"Accounts User", "Stock User", "Projects User"})
WRITES = {"material_request": {"read", "create"}, "task": {"read", "create"}}


class Clock:
	def __init__(self, now: float = 0.0):
		self.now = now

	def __call__(self) -> float:
		return self.now


class Owner:
	"""The goal's owner across days: one proposal store, one signing secret, one clock."""

	def __init__(self, world: World, permissions: dict | None = None):
		self.world = world
		self.clock = Clock()
		self.proposals = MemoryStore(self.clock)
		self.permissions = permissions
		self.connector = None

	def session(self, day: dt.date, hour: int = 8, **changes) -> Session:
		data = self.world.snapshot(day)
		if self.connector is not None:
			# What was written by confirmed proposals stays written.
			data.update({k: self.connector.data.get(k, []) for k in WRITES})
		permissions = self.permissions or {**{k: {"read"} for k in data}, **WRITES}
		self.connector = MemoryConnector(OWNER, data=data, permissions=permissions, roles=ROLES)
		self.clock.now = dt.datetime.combine(day, dt.time(hour)).timestamp()
		tools = registry()
		return Session(
			person=Person(OWNER, ROLES, "Olivia Owner", COMPANY),
			connector=self.connector,
			registry=tools,
			allowed=changes.pop("allowed", None) or permitted_tools(tools, self.connector),
			secret=b"test-secret",
			proposals=self.proposals,
			clock=self.clock,
			**changes,
		)


def goal(**values) -> GoalSpec:
	raw = {
		"owner": OWNER,
		"name": "G-1",
		"goal": "Tell me each Monday which items will run out within two weeks",
		"watches": [{"kind": "stock_cover", "params": {"days": 14}}],
		"schedule": {"every": "week", "weekday": "monday"},
		"company": COMPANY,
		"may_do": "propose",
	}
	raw.update(values)
	return GoalSpec.from_dict(raw)
