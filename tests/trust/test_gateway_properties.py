"""Property tests over the gateway: no sequence of calls writes without the person's valid, unused token."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noviz_agent.engine import gateway
from noviz_agent.engine.session import Limits, MemoryStore, Person, Session
from noviz_agent.engine.tools import Registry, Tool

pytestmark = pytest.mark.attack("writes")

USERS = ("ann@example.com", "bob@example.com")
TTL = 60


class Clock:
	def __init__(self):
		self.now = 1_000_000.0

	def __call__(self) -> float:
		return self.now


def _world():
	ledger: list[tuple[str, dict]] = []

	def create(args, session):
		ledger.append((session.user, dict(args["values"])))
		return {"name": f"X-{len(ledger)}"}

	schema = {
		"type": "object",
		"properties": {"values": {"type": "object"}},
		"required": ["values"],
		"additionalProperties": False,
	}
	registry = Registry([Tool("thing.create", "Create a thing.", "selling", schema, create, writes=True)])
	clock = Clock()
	store = MemoryStore(clock=clock)
	secret = b"k" * 32

	def session(user):
		return Session(
			person=Person(user),
			connector=None,
			registry=registry,
			allowed=frozenset({"thing.create"}),
			limits=Limits(proposal_ttl_seconds=TTL),
			secret=secret,
			proposals=store,
			clock=clock,
		)

	return ledger, clock, store, session


values = st.dictionaries(
	st.sampled_from(["a", "b", "c"]), st.integers(-5, 5) | st.text(max_size=5), max_size=3
)
# One step of what a model, a browser or an attacker can do.
step = st.one_of(
	st.tuples(st.just("propose"), st.sampled_from(USERS), values),
	st.tuples(st.just("confirm"), st.sampled_from(USERS), st.integers(0, 5)),
	st.tuples(st.just("tamper"), st.sampled_from(USERS), st.integers(0, 5)),
	st.tuples(st.just("swap_args"), values, st.integers(0, 5)),
	st.tuples(st.just("cancel"), st.sampled_from(USERS), st.integers(0, 5)),
	st.tuples(st.just("wait"), st.integers(0, 2 * TTL), st.just(0)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, max_size=25))
def test_no_sequence_writes_without_a_valid_unused_token_of_the_same_person(steps):
	ledger, clock, store, session = _world()
	issued: list[dict] = []  # token, user, values, expires, used
	expected: list[tuple[str, dict]] = []
	for kind, a, b in steps:
		if kind == "propose":
			result = gateway.call_tool(session(a), "thing.create", {"values": b})
			assert result.status == "proposal" and not ledger[len(expected) :]
			issued.append(
				{
					"token": result.proposal["token"],
					"user": a,
					"values": b,
					"stored": {"values": b},
					"expires": result.proposal["expires"],
					"used": False,
				}
			)
		elif not issued or kind == "wait":
			clock.now += a if kind == "wait" else 0
			continue
		else:
			item = issued[b % len(issued)]
			if kind == "confirm":
				intact = item["stored"] == {"values": item["values"]}
				valid = item["user"] == a and not item["used"] and intact and item["expires"] >= clock.now
				result = gateway.confirm(session(a), item["token"])
				if valid:
					assert result.ok
					item["used"] = True
					expected.append((a, item["values"]))
				else:
					assert result.status == "refused"
					if item["user"] == a and intact:
						item["used"] = True  # an expired or spent token is gone for good
			elif kind == "tamper":
				nonce, signature = item["token"].split(".")
				forged = (
					f"{nonce}.{signature[::-1]}" if signature != signature[::-1] else f"{nonce}.x{signature}"
				)
				assert gateway.confirm(session(a), forged).status == "refused"
			elif kind == "swap_args":
				nonce = item["token"].split(".")[0]
				record = store.get(nonce)
				if record is not None:
					record["args"] = {"values": a}  # someone rewrites the stored arguments
					item["stored"] = {"values": a}  # valid again only if rewritten back to what was signed
			elif kind == "cancel":
				result = gateway.cancel(session(a), item["token"])
				if result.ok:
					assert item["user"] == a and item["stored"] == {"values": item["values"]}
					item["used"] = True
		# The ledger holds exactly the writes that a valid, unused token of the same person allowed.
		assert ledger == expected
