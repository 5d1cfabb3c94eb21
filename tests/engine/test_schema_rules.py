"""Each provider rule refuses its broken example; every tool of the full registry passes them all.

The rules are OpenAI's, Azure OpenAI's and Gemini's published function-calling rules
(`noviz_agent.engine.schema_rules`); the messages mirror what those APIs answer.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from noviz_agent import cli
from noviz_agent.engine.message_rules import check_messages
from noviz_agent.engine.provider.schemas import gemini_tool, strict_schema, strict_tool
from noviz_agent.engine.schema_rules import MAX_TOOLS, check_parameters, check_tools
from noviz_agent.tools import build_registry


def tool(parameters=None, name="sales_order__list", description="List sales orders.", strict=None) -> dict:
	fn = {"name": name, "description": description}
	if parameters is not None:
		fn["parameters"] = parameters
	if strict is not None:
		fn["strict"] = strict
	return {"type": "function", "function": fn}


def obj(properties: dict, **extra) -> dict:
	return {"type": "object", "properties": properties, **extra}


def closed(properties: dict) -> dict:
	return obj(properties, required=list(properties), additionalProperties=False)


def rules(tools, profile="openai", **kw) -> set[str]:
	return {p.rule for p in check_tools(tools, profile, **kw)}


GOOD = tool(obj({"limit": {"type": "integer"}, "ids": {"type": "array", "items": {"type": "string"}}}))


def test_a_well_formed_tool_breaks_no_rule_of_any_profile():
	for profile in ("openai", "azure", "gemini"):
		assert check_tools([GOOD], profile) == []


# -- OpenAI, every request ------------------------------------------------------------------------


def test_array_without_items_is_refused():
	(problem,) = check_tools([tool(obj({"ids": {"type": "array"}}))])
	assert problem.rule == "array-items"
	assert problem.message == (
		"Invalid schema for function 'sales_order__list': In context=('properties', 'ids'), array schema missing items."
	)


@pytest.mark.parametrize(
	"where",
	[
		# the shapes the registry used to send: prefixItems triples, an anyOf branch, a type list
		{"type": "array", "items": {"type": "array", "prefixItems": [{}, {}, {}]}},
		{"anyOf": [{"type": "array"}, {"type": "object"}]},
		{"type": ["array", "null"]},
		{"type": "object", "properties": {"deep": {"type": "array"}}},
	],
)
def test_nested_arrays_without_items_are_refused(where):
	assert rules([tool(obj({"filters": where}))]) == {"array-items"}


def test_parameters_must_be_an_object_schema():
	(problem,) = check_tools([tool({"type": "array", "items": {"type": "string"}})])
	assert problem.rule == "parameters-object" and "'type: \"object\"'" in problem.message
	assert rules([tool(parameters=None)]) == set()  # no parameters at all is allowed


def test_parameters_must_be_valid_json_schema():
	assert rules([tool(obj({"limit": {"type": "integer", "minimum": "one"}}))]) == {"valid-json-schema"}


@pytest.mark.parametrize("name", ["sales_order.list", "sales order list", "x" * 65, ""])
def test_function_name_must_fit_the_wire_pattern(name):
	assert rules([tool(obj({}), name=name)]) == {"function-name"}


def test_description_at_most_1024_characters():
	assert rules([tool(obj({}), description="d" * 1024)]) == set()
	assert rules([tool(obj({}), description="d" * 1025)]) == {"description-length"}


def test_at_most_128_tools_per_request():
	many = [tool(obj({}), name=f"t{i}") for i in range(MAX_TOOLS + 1)]
	assert rules(many[:MAX_TOOLS]) == set()
	(problem,) = check_tools(many)
	assert problem.rule == "tool-count" and "maximum length 128" in problem.message


def test_a_tool_must_be_a_function_entry():
	assert rules([{"type": "code_interpreter"}]) == {"tool-type"}
	assert rules({"tools": []}) == {"tools-array"}


# -- strict mode (OpenAI and Azure) ----------------------------------------------------------------


def test_strict_objects_must_be_closed():
	schema = obj({"a": {"type": "string"}}, required=["a"])
	assert rules([tool(schema, strict=True)]) == {"strict-additional-properties"}


def test_strict_objects_must_require_every_property():
	schema = obj(
		{"a": {"type": "string"}, "b": {"type": "string"}}, required=["a"], additionalProperties=False
	)
	(problem,) = check_tools([tool(schema, strict=True)])
	assert problem.rule == "strict-required" and "Missing 'b'" in problem.message


def test_strict_root_is_not_anyof():
	schema = {"type": "object", "anyOf": [closed({"a": {"type": "string"}})]}
	assert "strict-root-object" in rules([tool(schema, strict=True)])


@pytest.mark.parametrize(
	"keyword", [{"default": 1}, {"uniqueItems": True}, {"minLength": 1}, {"allOf": [{"type": "string"}]}]
)
def test_strict_takes_only_supported_keywords(keyword):
	schema = closed({"a": {"type": "string", **keyword}})
	assert rules([tool(schema, strict=True)]) == {"strict-keywords"}


def test_azure_strict_takes_no_type_specific_keywords_openai_does():
	schema = closed({"a": {"type": "string", "pattern": "^x"}, "n": {"type": "integer", "minimum": 1}})
	assert rules([tool(schema, strict=True)], "openai") == set()
	assert rules([tool(schema, strict=True)], "azure", parallel_tool_calls=False) == {"strict-keywords"}


def test_strict_size_limits_differ_between_openai_and_azure():
	schema = closed({f"p{i}": {"type": "string"} for i in range(101)})
	assert rules([tool(schema, strict=True)], "openai") == set()
	assert rules([tool(schema, strict=True)], "azure", parallel_tool_calls=False) == {"strict-limits"}
	deep = {"type": "string"}
	for level in range(6):
		deep = closed({f"l{level}": deep})
	assert rules([tool(deep, strict=True)], "openai") == set()
	assert rules([tool(deep, strict=True)], "azure", parallel_tool_calls=False) == {"strict-limits"}


def test_azure_strict_tools_need_parallel_calls_off():
	strict = tool(closed({"a": {"type": "string"}}), strict=True)
	assert rules([strict], "azure") == {"strict-parallel"}
	assert rules([strict], "azure", parallel_tool_calls=False) == set()


# -- Gemini's OpenAI-compatible endpoint (OpenAPI 3.0 subset) --------------------------------------


@pytest.mark.parametrize(
	("schema", "rule"),
	[
		(obj({"a": {"type": "string"}}, additionalProperties=False), "gemini-keywords"),
		(obj({"a": {"type": ["string", "null"]}}), "gemini-type"),
		(obj({"a": {"type": "integer", "enum": [0, 1]}}), "gemini-enum-strings"),
		(obj({"a": {"type": "string", "format": "date"}}), "gemini-format"),
		(obj({}), "gemini-empty-object"),
	],
)
def test_gemini_refuses_what_its_schema_subset_lacks(schema, rule):
	assert rules([tool(schema)], "gemini") == {rule}
	assert rules([tool(schema)], "openai") == set()


def test_gemini_function_names_start_with_a_letter_or_underscore():
	assert rules([tool(obj({"a": {"type": "string"}}), name="1st")], "gemini") == {"function-name"}
	assert rules([tool(obj({"a": {"type": "string"}}), name="1st")], "openai") == set()


# -- message order ------------------------------------------------------------------------------------

USER = {"role": "user", "content": "hi"}
ASKS = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}, {"id": "c2"}]}


def answer(call_id: str) -> dict:
	return {"role": "tool", "tool_call_id": call_id, "content": "{}"}


def test_every_call_answered_in_order_is_accepted():
	assert (
		check_messages([USER, ASKS, answer("c2"), answer("c1"), {"role": "assistant", "content": "ok"}]) == []
	)


def test_a_tool_message_must_answer_a_call_of_the_assistant_message_before_it():
	(problem,) = check_messages([USER, answer("c1")])
	assert problem.rule == "tool-message-order"
	problems = check_messages([USER, ASKS, answer("c1"), answer("c2"), USER, answer("c1")])
	assert [p.rule for p in problems] == ["tool-message-order"]


def test_an_assistant_message_with_tool_calls_is_followed_by_all_their_answers():
	(problem,) = check_messages([USER, ASKS, answer("c1"), USER])
	assert problem.rule == "tool-calls-answered" and "c2" in problem.message
	assert problem.where == "messages[1]"
	assert [p.rule for p in check_messages([USER, ASKS])] == ["tool-calls-answered"]


def test_messages_must_be_a_non_empty_list_of_known_roles():
	assert [p.rule for p in check_messages([])] == ["messages"]
	assert [p.rule for p in check_messages([{"role": "robot", "content": "x"}])] == ["message-role"]


# -- the full registry ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def registry_tools() -> list[dict]:
	registry = build_registry()
	out = io.StringIO()
	with contextlib.redirect_stdout(out):
		cli.main(["tools", "--json"])
	listed = [row["name"] for row in json.loads(out.getvalue())]
	assert listed == registry.names() and len(listed) > 400  # the console script's full registry
	return [t.schema() for t in registry]


@pytest.mark.parametrize("profile", ["openai", "azure"])
def test_every_tool_of_the_full_registry_passes_the_provider_rules(registry_tools, profile):
	problems = [p for t in registry_tools for p in check_tools([t], profile)]
	assert problems == []


@pytest.mark.parametrize("profile", ["openai", "azure"])
def test_every_tool_in_strict_form_passes_strict_rules_and_most_are_strict(registry_tools, profile):
	sent = [strict_tool(t, profile) for t in registry_tools]
	problems = [p for t in sent for p in check_tools([t], profile, parallel_tool_calls=False)]
	assert problems == []
	strict = [t for t in sent if t["function"]["strict"]]
	# Only tools taking a free-form object (analysis parameters, report filters) stay non-strict.
	assert len(strict) >= len(sent) - 10
	for t in sent:
		if not t["function"]["strict"]:
			assert t["function"]["parameters"] == next(
				r["function"]["parameters"]
				for r in registry_tools
				if r["function"]["name"] == t["function"]["name"]
			)


def test_every_tool_in_gemini_form_passes_gemini_rules(registry_tools):
	problems = [p for t in registry_tools for p in check_tools([gemini_tool(t)], "gemini")]
	assert problems == []


def test_the_gemini_form_of_the_registry_would_be_refused_unconverted(registry_tools):
	# The conversion is needed: the normal schemas use keywords Gemini does not take.
	assert {p.rule for t in registry_tools[:5] for p in check_tools([t], "gemini")} >= {"gemini-keywords"}


# -- the strict conversion ------------------------------------------------------------------------------


def test_strict_form_requires_everything_and_makes_optional_ones_nullable():
	schema = obj(
		{
			"name": {"type": "string", "minLength": 1},
			"limit": {"type": "integer", "default": 20},
			"kind": {"enum": ["a", "b"]},
			"rows": {
				"type": "array",
				"items": obj({"item": {"type": "string"}, "qty": {"type": "number"}}, required=["item"]),
			},
		},
		required=["name"],
	)
	strict = strict_schema(schema)
	assert check_parameters(strict, strict=True) == []
	props = strict["properties"]
	assert strict["required"] == ["name", "limit", "kind", "rows"] and strict["additionalProperties"] is False
	assert props["name"] == {"type": "string"}
	assert props["limit"] == {"type": ["integer", "null"]}
	assert props["kind"] == {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]}
	row = props["rows"]["items"]
	assert row["required"] == ["item", "qty"] and row["properties"]["qty"] == {"type": ["number", "null"]}
	assert schema["properties"]["name"] == {"type": "string", "minLength": 1}  # the original is untouched


def test_a_free_form_object_is_sent_non_strict():
	free = tool(obj({"params": {"type": "object"}}))
	assert strict_tool(free)["function"]["strict"] is False
	assert strict_tool(free)["function"]["parameters"] == free["function"]["parameters"]


def test_gemini_form_drops_what_gemini_lacks_and_keeps_the_meaning():
	schema = obj(
		{
			"flag": {"type": ["integer", "boolean"], "enum": [0, 1, True, False]},
			"day": {"type": ["string", "null"], "format": "date"},
			"ids": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
		},
		additionalProperties=False,
	)
	fn = gemini_tool(tool(schema))["function"]
	props = fn["parameters"]["properties"]
	assert props["flag"] == {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}
	assert props["day"] == {"type": "string", "nullable": True}
	assert props["ids"] == {"type": "array", "items": {"type": "string"}}
	assert "additionalProperties" not in fn["parameters"]
	assert "parameters" not in gemini_tool(tool(obj({})))["function"]  # an empty object is refused there


def test_check_as_sent_reports_what_the_chosen_provider_would_refuse():
	from noviz_agent.engine.provider.schemas import check_as_sent

	broken = tool(obj({"ids": {"type": "array"}}))
	_, problems = check_as_sent([GOOD, broken], strict=True, dialect="azure")
	assert [p.rule for p in problems] == ["array-items"]
	sent, problems = check_as_sent([GOOD], strict=True, dialect="openai")
	assert problems == [] and sent[0]["function"]["strict"] is True
