"""Two people on one in-memory system of record, each reached through the MCP channel as themselves.

Ann (Sales User) reads the North territory's sales orders and may create customers; Bob (Purchase
User) reads the South territory's sales orders and purchase orders and may create nothing. Both
share one proposal store and signing key, as every worker of a site shares Redis and the site key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from noviz_agent.channels.mcp import Caller
from noviz_agent.engine.session import MemoryStore, Session
from noviz_agent.engine.turn import cancel_proposal, confirm_proposal
from noviz_agent.tools import registry
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

ORDERS = [
	{
		"name": f"SO-{i:03d}",
		"customer": f"Customer {i}",
		"customer_name": f"Customer {i}",
		"territory": "North" if i % 2 else "South",
		"company": "Acme Europe",
		"date": f"2026-01-{i:02d}",
		"status": "To Deliver and Bill",
		"total": float(i * 100),
		"docstatus": 1,
		"modified": f"2026-02-{i:02d}",
	}
	for i in range(1, 13)
]
CUSTOMERS = [
	{"name": "Acme", "customer_name": "Acme Ltd", "customer_group": "Commercial", "territory": "North"},
	{"name": "Globex", "customer_name": "Globex Corp", "customer_group": "Commercial", "territory": "South"},
]
COMPANIES = [{"name": "Acme Europe", "currency": "EUR", "default_currency": "EUR"}]
PURCHASE_ORDERS = [
	{
		"name": "PO-001",
		"supplier": "Wood Co",
		"date": "2026-01-03",
		"total": 50.0,
		"docstatus": 1,
		"territory": "South",
	}
]

PEOPLE = {
	"ann@example.com": {
		"roles": {"Sales User"},
		"permissions": {"sales_order": {"read"}, "customer": {"read", "create"}, "company": {"read"}},
		"restrictions": {"territory": {"North"}},
		"token": "Bearer ann-secret-token",
	},
	"bob@example.com": {
		"roles": {"Purchase User"},
		"permissions": {"sales_order": {"read"}, "purchase_order": {"read"}, "company": {"read"}},
		"restrictions": {"territory": {"South"}},
		"token": "Bearer bob-secret-token",
	},
}


@dataclass
class World:
	"""The shared state of one site: data per person, proposals, and what the channel recorded."""

	connectors: dict[str, MemoryConnector] = field(default_factory=dict)
	proposals: MemoryStore = field(default_factory=MemoryStore)
	results: MemoryStore = field(default_factory=MemoryStore)
	secret: bytes = b"k" * 32
	recorded: list[dict] = field(default_factory=list)
	refuse_with: str | None = None

	def connector(self, user: str) -> MemoryConnector:
		if user not in self.connectors:
			person = PEOPLE[user]
			self.connectors[user] = MemoryConnector(
				user,
				{
					"sales_order": ORDERS,
					"customer": CUSTOMERS,
					"purchase_order": PURCHASE_ORDERS,
					"company": COMPANIES,
				},
				person["permissions"],
				roles=person["roles"],
				restrictions=person["restrictions"],
			)
		return self.connectors[user]

	def session(self, user: str, conversation: str | None) -> Session:
		session = make_session(self.connector(user), registry=registry())
		session.secret, session.proposals, session.results = self.secret, self.proposals, self.results
		session.conversation = conversation
		return session

	def caller(self, user: str, conversation: str | None = "conv-1", client: str = "", **extra) -> Caller:
		def remember(call: dict) -> None:
			self.recorded.append({"user": user, "conversation": conversation, **call})

		def settle(settler):
			def run(session, token):
				outcome = settler(session, token)
				remember({"question": "Confirm", "response": outcome.response, "log": outcome.log})
				return outcome

			return run

		return Caller(
			session=lambda: self.session(user, conversation),
			record=remember,
			person=user,
			admit=lambda: self.refuse_with,
			base_url="https://erp.example.com",
			conversation=conversation,
			client=client,
			confirm=settle(confirm_proposal),
			cancel=settle(cancel_proposal),
			**extra,
		)

	def user_for(self, authorization: str | None) -> str | None:
		return next((u for u, p in PEOPLE.items() if authorization and p["token"] == authorization), None)
