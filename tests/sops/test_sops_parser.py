"""Procedure text: structure, navigation, and validation messages with line numbers."""

from __future__ import annotations

import pytest

from noviz_agent.sops.parser import ProcedureError, after, branch, parse, problems

CANCEL = """Ask the customer for the sales order number.
Look up the sales order.
If any of the order has been delivered:
	Tell the customer how returns work.
	End.
Otherwise:
	Cancel the sales order.
Tell the customer we are done.
"""


def test_indented_steps_belong_to_their_condition_and_otherwise():
	procedure = parse(CANCEL, "Cancel")
	assert [line.number for line in procedure.body] == [1, 2, 3, 6, 8]
	condition = procedure.lines[3]
	assert condition.kind == "if" and condition.condition == "any of the order has been delivered"
	assert [c.number for c in condition.children] == [4, 5]
	assert procedure.lines[6].kind == "else" and [c.number for c in procedure.lines[6].children] == [7]


def test_navigation_skips_the_other_branch_and_rejoins_after_the_block():
	procedure = parse(CANCEL)
	lines = procedure.lines
	assert branch(lines[3], True, procedure).number == 4
	assert branch(lines[3], False, procedure).number == 7
	# After the 'If' block's last step the 'Otherwise' block is skipped.
	assert after(lines[4], procedure).number == 5
	assert after(lines[5], procedure).number == 8
	assert after(lines[7], procedure).number == 8
	assert after(lines[8], procedure) is None


def test_a_false_condition_without_otherwise_continues_after_its_block():
	procedure = parse("If the order is paid:\n    Tell them it is paid.\nEnd.\n")
	assert branch(procedure.lines[1], False, procedure).number == 3


def test_numbering_bullets_blank_lines_and_comments_are_ignored():
	procedure = parse("# how we cancel\n1. Look up the sales order.\n\n- Cancel the sales order.\n")
	assert [line.text for line in procedure.steps()] == [
		"Look up the sales order.",
		"Cancel the sales order.",
	]
	assert [line.number for line in procedure.steps()] == [2, 4]


def test_a_pinned_action_is_read_from_square_brackets():
	procedure = parse("Look up the order it came from. [purchase_order.get]\n")
	line = procedure.lines[1]
	assert line.pin == "purchase_order.get" and line.text == "Look up the order it came from."


@pytest.mark.parametrize(
	"text, line, fragment",
	[
		("Look up the order.\n  Cancel the order.\n", 2, "indented under a step that is not a condition"),
		("If it is paid:\n    Tell them.\n      End.\n", 3, "not a whole number of levels"),
		("If it is paid:\n\tTell them.\n\t    End.\n", 3, "mixes tabs and spaces"),
		("If it is paid:\n    Tell them.\n  End.\n", 3, "not a whole number of levels"),
		("Look up the order.\nOtherwise:\n    End.\n", 2, "'Otherwise:' must follow"),
		("Look up the order.\nIf it is paid:\nEnd.\n", 2, "has no indented steps"),
		("Look up the order:\n", 1, "is not a condition"),
		("\n\n", 1, "no steps"),
	],
)
def test_malformed_procedures_name_the_line_and_the_fix(text, line, fragment):
	found = problems(text)
	assert any(p.line == line and fragment in p.message for p in found), found
	with pytest.raises(ProcedureError) as raised:
		parse(text)
	assert f"Line {line}:" in str(raised.value)


def test_every_problem_is_reported_at_once_in_line_order():
	found = problems("Look up the order:\nIf it is paid:\nOtherwise:\n    End.\n  Tell them.\n")
	assert [p.line for p in found] == sorted(p.line for p in found)
	assert {1, 2, 5} <= {p.line for p in found}


def test_the_numbered_text_shows_line_numbers_and_depth():
	numbered = parse(CANCEL).numbered()
	assert "  4      Tell the customer how returns work." in numbered.splitlines()
