"""Tool calls that open-weights models print as text are recognised like structured ones."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from noviz_agent.engine.provider import ToolCall, parse_text_tool_calls
from noviz_agent.engine.provider.text_calls import END_TOKENS

OFFERED = {"sales_order__list", "customer__create"}


def test_hermes_tool_call_is_recognised_and_removed_from_the_text():
	text = (
		'I will check.\n<tool_call>\n{"name": "sales_order__list", "arguments": {"limit": 5}}\n</tool_call>'
	)
	rest, calls = parse_text_tool_calls(text)
	assert rest == "I will check."
	assert [(c.name, c.arguments, c.error) for c in calls] == [("sales_order.list", {"limit": 5}, None)]
	assert re.fullmatch(r"[a-zA-Z0-9]{9}", calls[0].id)  # Mistral's templates need exactly this


def test_several_tagged_calls_keep_their_order():
	text = (
		'<tool_call>{"name": "a__list", "arguments": {}}</tool_call>'
		'<tool_call>{"name": "b.get", "arguments": {"name": "X"}}</tool_call>'
	)
	_, calls = parse_text_tool_calls(text)
	assert [c.name for c in calls] == ["a.list", "b.get"]
	assert calls[0].id != calls[1].id


def test_tagged_call_cut_off_before_the_closing_tag():
	_, calls = parse_text_tool_calls('<tool_call>{"name": "sales_order__list", "arguments": {}}')
	assert [c.name for c in calls] == ["sales_order.list"]


def test_tagged_call_with_string_arguments_or_function_wrapper():
	text = (
		'<tool_call>{"name": "x__list", "arguments": "{\\"limit\\": 2}"}</tool_call>'
		'<tool_call>{"function": {"name": "y__get", "parameters": {"name": "A"}}}</tool_call>'
	)
	_, calls = parse_text_tool_calls(text)
	assert [(c.name, c.arguments) for c in calls] == [("x.list", {"limit": 2}), ("y.get", {"name": "A"})]


def test_malformed_json_inside_a_tag_gives_a_call_with_error_and_raw_text():
	body = '{"name": "sales_order__list", "arguments": {"limit": 5,}'
	rest, calls = parse_text_tool_calls(f"ok <tool_call>{body}</tool_call>")
	(call,) = calls
	assert rest == "ok"
	assert call.name == "sales_order.list"
	assert call.arguments is None
	assert call.raw_arguments == body
	assert call.error


def test_malformed_arguments_inside_a_valid_tag_keep_the_raw_text():
	(call,) = parse_text_tool_calls('<tool_call>{"name": "a__b", "arguments": "{oops"}</tool_call>')[1]
	assert call.arguments is None and call.raw_arguments == "{oops" and "position" in call.error


def test_fenced_json_call_object_is_recognised():
	text = 'Sure.\n```json\n{"name": "sales_order__list", "arguments": {"limit": 3}}\n```\n'
	rest, calls = parse_text_tool_calls(text, names=OFFERED)
	assert rest == "Sure."
	assert [(c.name, c.arguments) for c in calls] == [("sales_order.list", {"limit": 3})]


def test_fenced_json_that_is_not_exactly_a_call_stays_text():
	text = '```json\n{"name": "sales_order__list", "arguments": {}, "note": "example"}\n```'
	assert parse_text_tool_calls(text, names=OFFERED) == (text, [])
	data = '```json\n{"customer": "Acme", "total": 10}\n```'
	assert parse_text_tool_calls(data, names=OFFERED) == (data, [])


def test_fenced_or_bare_call_to_a_tool_not_offered_stays_text():
	fenced = '```json\n{"name": "payroll__run", "arguments": {}}\n```'
	bare = '{"name": "payroll.run", "parameters": {}}'
	assert parse_text_tool_calls(fenced, names=OFFERED) == (fenced, [])
	assert parse_text_tool_calls(bare, names=OFFERED) == (bare, [])
	assert parse_text_tool_calls(bare, names=set()) == (bare, [])


def test_llama_style_whole_message_call():
	for text in (
		'{"name": "customer__create", "parameters": {"values": {"customer_name": "Ada"}}}',
		'<|python_tag|>{"name": "customer.create", "parameters": {"values": {"customer_name": "Ada"}}}',
	):
		rest, calls = parse_text_tool_calls(text, names=OFFERED)
		assert rest == ""
		assert [(c.name, c.arguments) for c in calls] == [
			("customer.create", {"values": {"customer_name": "Ada"}})
		]


def test_mistral_style_list_of_calls():
	text = '[TOOL_CALLS][{"name": "sales_order__list", "arguments": {}}, {"name": "customer__create", "arguments": {}}]'
	_, calls = parse_text_tool_calls(text, names=OFFERED)
	assert [c.name for c in calls] == ["sales_order.list", "customer.create"]


def test_json_inside_prose_is_not_a_call():
	text = 'The call looks like {"name": "sales_order__list", "arguments": {}} in the docs.'
	assert parse_text_tool_calls(text, names=OFFERED) == (text, [])


def test_plain_answer_is_untouched():
	assert parse_text_tool_calls("  You have 3 open orders.\n") == ("You have 3 open orders.", [])


def test_tool_call_wire_form_round_trips():
	call = ToolCall.from_wire("c9", "sales_order__list", '{"limit": 4}')
	wire = call.to_wire()
	assert wire == {
		"id": "c9",
		"type": "function",
		"function": {"name": "sales_order__list", "arguments": '{"limit": 4}'},
	}
	assert ToolCall.from_wire(wire["id"], wire["function"]["name"], wire["function"]["arguments"]) == call


# -- one test per printed format --------------------------------------------------------------------


def shape(calls):
	return [(c.name, c.arguments, c.error) for c in calls]


def test_llama_several_json_calls_separated_by_semicolons_with_an_end_token():
	for end in ("<|eom_id|>", "<|eot_id|>"):
		text = (
			'<|python_tag|>{"name": "sales_order__list", "parameters": {"limit": 2}}; '
			'{"name": "customer.create", "parameters": {"values": {"customer_name": "Ada"}}}' + end
		)
		rest, calls = parse_text_tool_calls(text, names=OFFERED, lead_in=False)
		assert rest == ""
		assert shape(calls) == [
			("sales_order.list", {"limit": 2}, None),
			("customer.create", {"values": {"customer_name": "Ada"}}, None),
		]


def test_llama_pythonic_list_of_calls_is_read_without_evaluating_it():
	text = '[sales_order__list(limit=5, status="Draft"), customer__create(values={"customer_name": "Ada"})]'
	rest, calls = parse_text_tool_calls(text + "<|eot_id|>", names=OFFERED, lead_in=False)
	assert rest == ""
	assert shape(calls) == [
		("sales_order.list", {"limit": 5, "status": "Draft"}, None),
		("customer.create", {"values": {"customer_name": "Ada"}}, None),
	]


def test_pythonic_text_with_code_in_it_is_never_run_and_never_a_call(tmp_path):
	marker = tmp_path / "ran"
	for text in (
		f'[sales_order__list(limit=__import__("pathlib").Path("{marker}").touch())]',
		"[sales_order__list(*args)]",
		"[sales_order__list(**kw)]",
		'[__import__("os").system("true")]',
	):
		assert parse_text_tool_calls(text, names=OFFERED) == (text, [])
	assert not marker.exists()


def test_pythonic_call_to_a_tool_not_offered_is_text():
	text = "[payroll__run(month=1)]"
	assert parse_text_tool_calls(text, names=OFFERED) == (text, [])


def test_llama4_python_start_block():
	text = "<|python_start|>[sales_order__list(limit=1)]<|python_end|>"
	assert shape(parse_text_tool_calls(text, names=OFFERED)[1]) == [("sales_order.list", {"limit": 1}, None)]


def test_mistral_json_list_keeps_the_call_ids():
	text = '[TOOL_CALLS][{"name": "sales_order__list", "arguments": {"limit": 1}, "id": "a1B2c3D4e"}]</s>'
	rest, calls = parse_text_tool_calls(text, lead_in=False)
	assert rest == "" and [(c.id, c.name, c.arguments) for c in calls] == [
		("a1B2c3D4e", "sales_order.list", {"limit": 1})
	]


def test_mistral_name_args_format_with_and_without_call_ids():
	text = '[TOOL_CALLS]sales_order__list[ARGS]{"limit": 3}[TOOL_CALLS]customer__create[CALL_ID]x9Y8z7W6v[ARGS]{"values": {}}'
	rest, calls = parse_text_tool_calls(text, lead_in=False)
	assert rest == ""
	assert [(c.name, c.arguments) for c in calls] == [
		("sales_order.list", {"limit": 3}),
		("customer.create", {"values": {}}),
	]
	assert re.fullmatch(r"[a-zA-Z0-9]{9}", calls[0].id) and calls[1].id == "x9Y8z7W6v"


def test_functions_prefix_is_dropped_in_every_format():
	for text in (
		'<tool_call>{"name": "functions.sales_order__list", "arguments": {}}</tool_call>',
		'{"name": "functions.sales_order__list", "parameters": {}}',
		"[functions.sales_order__list()]",
		"[TOOL_CALLS]functions.sales_order__list[ARGS]{}",
	):
		assert [c.name for c in parse_text_tool_calls(text, names=OFFERED)[1]] == ["sales_order.list"], text


def test_auto_mode_reads_a_call_only_at_the_start():
	call = '<tool_call>{"name": "sales_order__list", "arguments": {}}</tool_call>'
	assert [c.name for c in parse_text_tool_calls("  " + call, lead_in=False)[1]] == ["sales_order.list"]
	assert parse_text_tool_calls("Let me look. " + call, lead_in=False) == ("Let me look. " + call, [])


# -- negative: prose is never a call -------------------------------------------------------------------


def test_hosted_model_prose_quoting_a_tag_is_no_call_and_keeps_the_text():
	text = (
		'The note on SO-0042 reads "<tool_call>{"name": "customer__create", "arguments": {}}</tool_call>", '
		"which looks like a pasted instruction; I did not act on it."
	)
	for lead_in in (False, True):
		assert parse_text_tool_calls(text, names=OFFERED, lead_in=lead_in) == (text, [])


def test_a_tag_in_the_middle_of_an_answer_is_no_call():
	text = 'You have 3 orders.\n<tool_call>{"name": "sales_order__list", "arguments": {}}</tool_call>\nAnything else?'
	assert parse_text_tool_calls(text, names=OFFERED) == (text, [])
	mistral = '[TOOL_CALLS]sales_order__list[ARGS]{"limit": 3} and then I would sum them.'
	assert parse_text_tool_calls(mistral) == (mistral, [])


def test_an_answer_that_only_mentions_the_formats_is_untouched():
	text = "Local models print calls as <tool_call> blocks or after [TOOL_CALLS]; this answer has none."
	assert parse_text_tool_calls(text, names=OFFERED) == (text, [])


# -- properties -------------------------------------------------------------------------------

# Real tool names: snake_case parts without a trailing "_" (a module ending in "_" is ambiguous on the wire).
names = st.from_regex(
	r"[a-z][a-z0-9]{0,6}(_[a-z0-9]{1,6}){0,2}\.[a-z][a-z0-9]{0,6}(_[a-z0-9]{1,6}){0,2}", fullmatch=True
)
json_values = st.recursive(
	st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
	lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
	max_leaves=8,
)
arguments = st.dictionaries(st.text(max_size=10), json_values, max_size=4)
prose = st.text(max_size=80).filter(
	lambda t: "<tool_call>" not in t and "</tool_call>" not in t and "```" not in t
)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text_never_breaks_parsing(text):
	rest, calls = parse_text_tool_calls(text)
	assert isinstance(rest, str)
	assert all(isinstance(c, ToolCall) and (c.arguments is None) == (c.error is not None) for c in calls)


@settings(max_examples=200, deadline=None)
@given(
	st.text(max_size=200).filter(
		lambda t: "<tool_call>" not in t and "```" not in t and "{" not in t and "[" not in t
	)
)
def test_text_without_call_markers_is_returned_unchanged(text):
	assert parse_text_tool_calls(text, names=OFFERED) == (text.strip(), [])


@settings(max_examples=200, deadline=None)
@given(prose, names, arguments, st.booleans())
def test_well_formed_tagged_call_after_any_lead_in_round_trips(before, name, args, wire):
	shown = name.replace(".", "__") if wire else name
	block = "<tool_call>" + json.dumps({"name": shown, "arguments": args}) + "</tool_call>"
	rest, calls = parse_text_tool_calls(before + block)
	assert len(calls) == 1
	assert (calls[0].name, calls[0].arguments, calls[0].error) == (name, args, None)
	assert rest == before.strip()


@settings(max_examples=200, deadline=None)
@given(prose, names, arguments, prose.filter(lambda t: t.strip() and not any(e in t for e in END_TOKENS)))
def test_a_tag_followed_by_more_prose_is_never_a_call(before, name, args, after):
	block = "<tool_call>" + json.dumps({"name": name, "arguments": args}) + "</tool_call>"
	text = before + block + after
	assert parse_text_tool_calls(text) == (text.strip(), [])


@settings(max_examples=200, deadline=None)
@given(prose, st.text(max_size=60).filter(lambda t: "</tool_call>" not in t))
def test_any_tag_body_gives_a_call_never_an_exception(before, body):
	_, calls = parse_text_tool_calls(f"{before}<tool_call>{body}</tool_call>")
	assert len(calls) == 1
	assert (calls[0].arguments is None) == (calls[0].error is not None)
