"""Stages 2 and 3: router, spine, cap; only from what the person is allowed."""

from __future__ import annotations

import logging

from noviz_agent.engine.routing import spine_names
from noviz_agent.engine.selection import make_model_picker, plan_for_everyone, plan_many, select
from noviz_agent.engine.session import Limits
from noviz_agent.tools import build_registry
from tests.selection.fake_tools import fake_registry, make_session

REGISTRY = fake_registry()
SPINE = [n for n in spine_names() if n in REGISTRY]


def session(**kw):
	return make_session(REGISTRY, **kw)


def test_the_spine_is_offered_for_any_question():
	for question in ("hello", "what is the weather", "unpaid invoices of Acme"):
		selection = select(session(), question)
		assert list(selection.tools[: len(SPINE)]) == SPINE
		assert selection.spine == tuple(SPINE)


def test_a_denied_spine_tool_is_not_offered():
	allowed = set(REGISTRY.names()) - {"knowledge.search"}
	selection = select(session(allowed=allowed), "how do we handle returns?")
	assert "knowledge.search" not in selection.tools
	assert "tools.search" in selection.tools


def test_only_allowed_tools_are_offered():
	allowed = {n for n in REGISTRY.names() if not n.startswith("sales_invoice.")}
	selection = select(session(allowed=allowed), "unpaid invoices of customer Acme")
	assert not [n for n in selection.tools if n.startswith("sales_invoice.")]
	assert "customer.list" in selection.tools


def test_a_module_without_usable_tools_loads_no_section():
	allowed = {n for n in REGISTRY.names() if not n.startswith(("employee.", "leave_application."))}
	selection = select(session(allowed=allowed), "leave applications of my team")
	assert "hr" not in selection.modules
	assert "hr" in select(session(), "leave applications of my team").modules


def test_write_tools_come_only_when_asked_for():
	reading = select(session(), "show the sales orders of Acme")
	assert "sales_order.list" in reading.tools
	assert "sales_order.create" not in reading.tools
	writing = select(session(), "create a sales order for Acme")
	assert "sales_order.create" in writing.tools
	assert "sales_order.cancel" not in writing.tools


def test_the_cap_keeps_the_spine_and_the_strongest_and_logs_the_cut(caplog):
	question = "compare sales orders, invoices, deliveries and payments of customer Acme by month"
	full = select(session(), question, cap=100)
	assert len(full.tools) > 12
	with caplog.at_level(logging.INFO, logger="noviz_agent.engine.selection"):
		capped = select(session(), question, cap=12)
	assert len(capped.tools) == 12
	assert list(capped.tools[: len(SPINE)]) == SPINE
	assert set(capped.tools) | set(capped.cut) == set(full.tools)
	assert not set(capped.tools) & set(capped.cut)
	# named entities outrank whole-module fill
	assert "customer.list" in capped.tools and "sales_order.list" in capped.tools
	assert any("cut" in r.message and capped.cut[0] in r.message for r in caplog.records)


def test_a_cap_below_the_spine_cuts_the_spine_from_its_end():
	selection = select(session(), "sales orders", cap=3)
	assert selection.tools == tuple(SPINE[:3])
	assert selection.cut[: len(SPINE) - 3] == tuple(SPINE[3:])


def test_the_default_cap_comes_from_the_limits_and_is_well_under_128():
	assert Limits().max_tools <= 64
	selection = select(make_session(REGISTRY, max_tools=9), "sales orders, invoices and deliveries of Acme")
	assert len(selection.tools) == 9


def test_offered_tools_keep_a_stable_order():
	a = select(session(), "sales orders and invoices of Acme")
	b = select(session(), "invoices and sales orders of Acme")
	assert a.tools == b.tools
	names = REGISTRY.names()
	rest = [n for n in a.tools if n not in SPINE]
	assert rest == sorted(rest, key=names.index)


def test_selection_records_offered_tools_and_keeps_earlier_finds():
	s = session()
	s.offered.add("bom.list")
	selection = select(s, "sales orders of Acme")
	assert "bom.list" in selection.tools
	assert selection.reasons["bom.list"].startswith("found by tools.search")
	assert set(selection.tools) <= s.offered


def test_a_model_picker_adds_modules_and_a_failing_one_is_ignored():
	def picker(question, modules):
		assert "manufacturing" in modules
		return ["manufacturing", "not_a_module"]

	selection = select(session(), "what should we look at this week?", model_picker=picker)
	assert "manufacturing" in selection.modules
	assert "work_order.list" in selection.tools

	def broken(question, modules):
		raise TimeoutError("provider slow")

	plain = select(session(), "sales orders of Acme")
	assert select(session(), "sales orders of Acme", model_picker=broken).tools == plain.tools


def test_make_model_picker_asks_once_and_reads_a_json_list():
	sent = []

	def complete(messages):
		sent.append(messages)
		return 'Sure: ["stock", "buying"]'

	picker = make_model_picker(complete)
	assert picker("reorder widgets", ["selling", "stock", "buying"]) == ["stock", "buying"]
	assert len(sent) == 1
	assert "selling, stock, buying" in sent[0][0]["content"]
	assert sent[0][1] == {"role": "user", "content": "reorder widgets"}
	assert make_model_picker(lambda m: "no idea")("x", ["stock"]) == []


def test_plan_for_everyone_draws_from_the_full_registry():
	registry = build_registry()
	plan = plan_for_everyone(registry, "open sales orders of customer Acme")
	assert set(plan) == {"modules", "tools"}
	names = set(registry.names())
	assert set(plan["tools"]) <= names
	if "sales_order.list" in names:
		assert "sales_order.list" in plan["tools"]
		assert "selling" in plan["modules"]
	assert plan_many(registry, ["open sales orders of customer Acme", "", "stock of item X"])[0] == plan
	assert len(plan_many(registry, ["a", " ", "b"])) == 2


def test_max_tools_over_the_provider_cap_still_offers_at_most_128():
	from noviz_agent.engine.schema_rules import MAX_TOOLS
	from noviz_agent.engine.session import Person, Session

	registry = build_registry()
	everything = frozenset(registry.names())
	session = Session(Person("boss"), None, registry, everything, limits=Limits(max_tools=400))
	session.offered.update(everything)  # as if tools.search had found every tool earlier in the turn
	selection = select(session, "sales orders of Acme")
	assert len(everything) > MAX_TOOLS
	assert len(selection.tools) == MAX_TOOLS and len(selection.cut) == len(everything) - MAX_TOOLS
