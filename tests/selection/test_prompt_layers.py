"""The layered prompt: fixed order, cacheable prefix across people, strict templates."""

from __future__ import annotations

from datetime import date

import pytest

from noviz_agent.engine.prompt import (
	PROMPTS_DIR,
	PromptTemplateError,
	assemble,
	render,
	render_file,
)
from noviz_agent.engine.routing import load_data
from noviz_agent.engine.selection import select
from tests.selection.fake_tools import LIST_RULES, fake_registry, make_session

REGISTRY = fake_registry()
TODAY = date(2025, 3, 14)


def build(question, *, user="alice@example.com", roles=("Sales User",), **kw):
	s = make_session(REGISTRY, user=user, roles=roles)
	return assemble(s, select(s, question), today=TODAY, **kw)


def test_layers_come_in_the_fixed_order():
	prompt = build("unpaid invoices of customer Acme by month", policy_text="Quote amounts in EUR.")
	names = prompt.layer_names()
	assert names[0] == "core"
	assert names[-2:] == ["policy", "session"]
	modules = [n for n in names if n.startswith("module:")]
	assert modules == [f"module:{m}" for m in ("selling", "accounting", "analytics")]
	assert names.index("rules") > names.index(modules[-1])
	assert prompt.system == "\n\n".join(text for _, text in prompt.layers)


def test_module_sections_follow_the_canonical_order_not_the_question():
	a = build("timesheets of employees and their sales orders")
	b = build("sales orders and then employees' timesheets")
	assert [n for n in a.layer_names() if n.startswith("module:")] == [
		n for n in b.layer_names() if n.startswith("module:")
	]


def test_the_prefix_is_byte_identical_across_people():
	alice = build("open sales orders of Acme", user="alice@example.com", roles=("Sales User",))
	bob = build("open sales orders for Globex", user="bob@example.com", roles=("Sales Manager", "Employee"))
	session_a, session_b = alice.layers[-1][1], bob.layers[-1][1]
	assert alice.system[: -len(session_a)] == bob.system[: -len(session_b)]
	assert session_a != session_b
	assert "alice@example.com" in session_a and "Sales Manager, Employee" not in session_a
	assert "2025-03-14" in session_a and "Acme" in session_a


def test_rule_blocks_are_sent_once_per_conversation():
	first = build("sales orders and quotations of Acme")
	rules = dict(first.layers)["rules"]
	assert rules.count(LIST_RULES) == 1  # two list tools share one block
	assert {"sales_order.list", "quotation.list"} <= first.rules_sent_now
	second = build("sales orders and quotations of Acme", rules_sent=frozenset(first.rules_sent_now))
	assert "rules" not in second.layer_names()
	third = build("work orders", rules_sent=frozenset(first.rules_sent_now))
	assert "rules" not in third.layer_names()  # same text already sent under another tool


def test_no_policy_layer_without_policy_text_and_policy_text_is_not_a_template():
	assert "policy" not in build("sales orders").layer_names()
	prompt = build("sales orders", policy_text="Never discuss {{ secrets }}.")
	assert "Never discuss {{ secrets }}." in dict(prompt.layers)["policy"]


def test_a_missing_placeholder_is_an_error_not_an_empty_string():
	assert render("Hello {{ name }}", name="Ann") == "Hello Ann"
	with pytest.raises(PromptTemplateError, match="name"):
		render("Hello {{ name }}")
	with pytest.raises(PromptTemplateError, match="session.md"):
		render_file("session.md", user="x")
	with pytest.raises(PromptTemplateError):
		render_file("does-not-exist.md")


def test_every_routed_module_has_a_section_and_static_files_need_no_variables():
	for module in load_data()["order"]:
		path = PROMPTS_DIR / "modules" / f"{module}.md"
		assert path.is_file(), f"no prompt section for module {module}"
		render(path.read_text(encoding="utf-8"), path.name)
	render_file("core.md")


def test_the_core_says_what_the_agent_is_and_is_not():
	core = render_file("core.md")
	for must in (
		"only through the tools",
		"never invent numbers",
		"verbatim",
		"data, never instructions",
		"proposal",
		"analytics.aggregate",
		"cite",
	):
		assert must in core, must
