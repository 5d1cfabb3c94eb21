"""The gateway: every call passes here; writes only by a confirmed proposal."""

from __future__ import annotations

import pytest

from noviz_agent.engine import gateway
from noviz_agent.engine.errors import PermissionDenied, ToolError
from noviz_agent.engine.session import Limits, MemoryStore, Person, Session
from noviz_agent.engine.tools import Registry, Tool


class Clock:
	def __init__(self, now: float = 1_000_000.0):
		self.now = now

	def __call__(self) -> float:
		return self.now


def _tools(ledger: list):
	def read(args, session):
		return {"rows": [{"name": "A", "total": args.get("n", 1)}]}

	def denied(args, session):
		raise PermissionDenied("Not permitted: You do not have enough permissions to access this resource.")

	def broken(args, session):
		raise ZeroDivisionError("division by zero")

	def politely_broken(args, session):
		raise ToolError("No customer named 'Zed'. Use customer.list to find the exact name.")

	def create(args, session):
		ledger.append(dict(args))
		return {"name": f"CUST-{len(ledger)}", "doctype": "Customer"}

	number = {
		"type": "object",
		"properties": {"n": {"type": "integer", "minimum": 1}},
		"additionalProperties": False,
	}
	values = {
		"type": "object",
		"properties": {"values": {"type": "object"}},
		"required": ["values"],
		"additionalProperties": False,
	}
	return [
		Tool("thing.list", "List things.", "selling", number, read),
		Tool("thing.secret", "Denied thing.", "selling", number, denied),
		Tool("thing.broken", "Broken.", "selling", number, broken),
		Tool("thing.polite", "Explains.", "selling", number, politely_broken),
		Tool(
			"customer.create",
			"Create a customer.",
			"selling",
			values,
			create,
			writes=True,
			preview=lambda args, s: {"action": "create", "doctype": "Customer", "values": args["values"]},
		),
		Tool("thing.hidden", "Not granted.", "selling", number, read),
	]


@pytest.fixture
def world():
	ledger: list = []
	registry = Registry(_tools(ledger))
	clock = Clock()
	proposals = MemoryStore(clock=clock)
	secret = b"s" * 32
	allowed = frozenset(n for n in registry.names() if n != "thing.hidden")

	def session(user="ann@example.com", **kw):
		return Session(
			person=Person(user, frozenset({"Sales User"})),
			connector=None,
			registry=registry,
			allowed=allowed,
			limits=Limits(proposal_ttl_seconds=60),
			secret=secret,
			proposals=proposals,
			clock=clock,
			**kw,
		)

	return {"session": session, "ledger": ledger, "clock": clock}


def test_read_tool_runs_and_returns_data(world):
	result = gateway.call_tool(world["session"](), "thing.list", {"n": 3})
	assert result.status == "ok"
	assert result.data["rows"][0]["total"] == 3


def test_unknown_tool_is_an_error_pointing_to_tools_search(world):
	result = gateway.call_tool(world["session"](), "thing.nope", {})
	assert result.status == "error"
	assert "no tool named 'thing.nope'" in result.error and "tools.search" in result.error


@pytest.mark.attack("permissions")
def test_ungranted_tool_is_refused_even_though_registered(world):
	result = gateway.call_tool(world["session"](), "thing.hidden", {"n": 1})
	assert result.status == "error"
	assert "not available" in result.error


@pytest.mark.parametrize(
	"args, fragment",
	[({"n": "three"}, "'three' is not of type 'integer'"), ({"n": 0}, "minimum"), ({"x": 1}, "Additional")],
)
def test_arguments_failing_the_schema_are_described(world, args, fragment):
	result = gateway.call_tool(world["session"](), "thing.list", args)
	assert result.status == "error"
	assert fragment in result.error


def test_non_object_arguments_are_rejected(world):
	result = gateway.call_tool(world["session"](), "thing.list", ["n", 1])
	assert result.status == "error" and "JSON object" in result.error


def test_system_refusal_is_passed_on_verbatim(world):
	result = gateway.call_tool(world["session"](), "thing.secret", {})
	assert result.status == "refused"
	assert result.error == "Not permitted: You do not have enough permissions to access this resource."


def test_a_crashing_tool_becomes_a_message_not_a_crash(world):
	result = gateway.call_tool(world["session"](), "thing.broken", {})
	assert result.status == "error"
	assert "ZeroDivisionError" in result.error and result.meta["exception"] == "ZeroDivisionError"


def test_tool_error_message_reaches_the_model(world):
	result = gateway.call_tool(world["session"](), "thing.polite", {})
	assert "customer.list" in result.for_model()


def test_write_becomes_a_proposal_and_nothing_is_written(world):
	result = gateway.call_tool(world["session"](), "customer.create", {"values": {"customer_name": "Zed"}})
	assert result.status == "proposal"
	assert world["ledger"] == []
	assert result.proposal["values"] == {"customer_name": "Zed"}
	assert result.proposal["token"]
	assert "token" not in result.for_model()


@pytest.mark.attack("writes")
def test_confirmed_write_runs_once_and_replay_is_refused(world):
	session = world["session"]()
	token = gateway.call_tool(session, "customer.create", {"values": {"customer_name": "Zed"}}).proposal[
		"token"
	]
	done = gateway.confirm(session, token)
	assert done.status == "ok" and done.data["name"] == "CUST-1"
	again = gateway.confirm(session, token)
	assert again.status == "refused" and "no longer open" in again.error
	assert world["ledger"] == [{"values": {"customer_name": "Zed"}}]


@pytest.mark.attack("writes")
def test_foreign_token_is_refused_and_stays_usable_by_its_owner(world):
	token = gateway.call_tool(
		world["session"](), "customer.create", {"values": {"customer_name": "Zed"}}
	).proposal["token"]
	stolen = gateway.confirm(world["session"]("bob@example.com"), token)
	assert stolen.status == "refused" and "another person" in stolen.error
	assert world["ledger"] == []
	assert gateway.confirm(world["session"](), token).status == "ok"


@pytest.mark.attack("writes")
def test_tampered_token_is_refused(world):
	session = world["session"]()
	token = gateway.call_tool(session, "customer.create", {"values": {"customer_name": "Zed"}}).proposal[
		"token"
	]
	nonce, signature = token.split(".")
	forged = f"{nonce}.{'A' * len(signature)}"
	assert gateway.confirm(session, forged).status == "refused"
	assert gateway.confirm(session, "garbage").status == "refused"
	assert world["ledger"] == []


@pytest.mark.attack("writes")
def test_tampered_stored_arguments_are_refused(world):
	session = world["session"]()
	token = gateway.call_tool(session, "customer.create", {"values": {"customer_name": "Zed"}}).proposal[
		"token"
	]
	record = session.proposals.get(token.split(".")[0])
	record["args"] = {"values": {"customer_name": "Mallory"}}
	assert gateway.confirm(session, token).status == "refused"
	assert world["ledger"] == []


@pytest.mark.attack("writes")
def test_expired_token_is_refused(world):
	session = world["session"]()
	token = gateway.call_tool(session, "customer.create", {"values": {"customer_name": "Zed"}}).proposal[
		"token"
	]
	world["clock"].now += 61
	result = gateway.confirm(session, token)
	assert result.status == "refused"
	assert world["ledger"] == []


@pytest.mark.attack("writes")
def test_cancelled_proposal_can_never_be_confirmed(world):
	session = world["session"]()
	token = gateway.call_tool(session, "customer.create", {"values": {"customer_name": "Zed"}}).proposal[
		"token"
	]
	assert gateway.cancel(session, token).status == "ok"
	assert gateway.confirm(session, token).status == "refused"
	assert world["ledger"] == []


@pytest.mark.attack("writes")
def test_writes_switched_off_refuse_before_proposing(world):
	session = world["session"](writes_enabled=False)
	result = gateway.call_tool(session, "customer.create", {"values": {"customer_name": "Zed"}})
	assert result.status == "refused" and "switched off" in result.error


@pytest.mark.attack("writes")
def test_token_for_a_tool_no_longer_granted_is_refused(world):
	session = world["session"]()
	token = gateway.call_tool(session, "customer.create", {"values": {"customer_name": "Zed"}}).proposal[
		"token"
	]
	session.allowed = frozenset({"thing.list"})
	assert gateway.confirm(session, token).status == "refused"
	assert world["ledger"] == []


def test_a_chart_is_kept_for_the_person_and_not_sent_to_the_model():
	figure = {"data": [{"type": "bar", "x": list(range(500)), "y": list(range(500))}], "layout": {}}
	result = gateway.ToolResult("analytics.build", {}, "ok", data={"kpis": [], "chart": figure})
	assert "drawn for the person" in result.for_model() and '"x"' not in result.for_model()
	assert result.data["chart"] is figure
