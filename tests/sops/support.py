"""Shared fixtures for procedure tests: a small system of record, a knowledge base, flaky calls."""

from __future__ import annotations

from knowledge.search import Passage
from noviz_agent.engine.errors import ToolError
from noviz_agent.sops.controllers import BaselineController, ModelController
from noviz_agent.sops.examples import example_specs
from noviz_agent.sops.memory import InMemoryRunStore
from noviz_agent.sops.service import ProcedureDesk
from noviz_agent.testing.sop_policy import SopPolicyModel
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

ORDERS = [
	{
		"name": "SAL-ORD-2026-00001",
		"customer": "Acme Ltd",
		"status": "To Deliver and Bill",
		"delivery_status": "Not Delivered",
		"per_delivered": 0,
		"total": 1200.0,
		"docstatus": 1,
	},
	{
		"name": "SAL-ORD-2026-00002",
		"customer": "Birch Co",
		"status": "To Bill",
		"delivery_status": "Fully Delivered",
		"per_delivered": 100,
		"total": 800.0,
		"docstatus": 1,
	},
]
EMPLOYEES = [
	{"name": "HR-EMP-00001", "employee_name": "Ada Lane", "status": "Active"},
	{"name": "HR-EMP-00002", "employee_name": "Ben Roe", "status": "Left"},
]
PASSAGE = Passage(
	"Returns",
	"Customer returns",
	"returns",
	"selling",
	1.0,
	"Delivered goods come back through a Sales Return.",
)


class StaticKnowledge:
	"""A knowledge base that answers every query with one passage and records the queries."""

	def __init__(self):
		self.queries: list[str] = []

	def search(self, query, *, k=5, module=None, roles=()):
		self.queries.append(query)
		return [PASSAGE]


class FlakyConnector(MemoryConnector):
	"""A memory connector whose named calls fail `times` times first, as an API outage would."""

	def __init__(self, *args, failures: dict[tuple[str, str], int] | None = None, **kwargs):
		super().__init__(*args, **kwargs)
		self.failures = dict(failures or {})

	def _maybe_fail(self, method: str, entity: str) -> None:
		left = self.failures.get((method, entity), 0)
		if left:
			self.failures[(method, entity)] = left - 1
			raise ToolError(f"The server did not answer in time ({method} {entity}); try again.")

	def get(self, entity: str, name: str) -> dict:
		self._maybe_fail("get", entity)
		return super().get(entity, name)

	def cancel(self, entity: str, name: str) -> dict:
		self._maybe_fail("cancel", entity)
		return super().cancel(entity, name)


def connector(failures=None, perms=None) -> FlakyConnector:
	return FlakyConnector(
		"ann@example.com",
		data={"sales_order": ORDERS, "employee": EMPLOYEES},
		permissions=perms
		or {
			"sales_order": {"read", "cancel", "submit"},
			"employee": {"read"},
			"leave_application": {"read", "create"},
		},
		failures=failures,
	)


def session(conn=None):
	s = make_session(conn or connector())
	s.knowledge = StaticKnowledge()
	return s


def desk(store=None, controller="baseline", conversation="CONV-1") -> ProcedureDesk:
	policy = SopPolicyModel()
	make = (
		(lambda p: BaselineController()) if controller == "baseline" else (lambda p: ModelController(policy))
	)
	return ProcedureDesk(example_specs(), store or InMemoryRunStore(), conversation, controller_for=make)


def say(d: ProcedureDesk, s, message: str):
	"""One turn of the person through the desk, stored afterwards as the edge does."""
	handled = d(s, None, message)
	d.save()
	return handled
