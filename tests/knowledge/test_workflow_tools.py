"""workflow.describe and workflow.apply with the in-memory connector: live states, actions as the person, proposals."""

from __future__ import annotations

import pytest

from noviz_agent.engine.gateway import call_tool, confirm
from noviz_agent.engine.tools import Registry
from noviz_agent.tools import workflow
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

PO_APPROVAL = {
	"name": "Purchase Order Approval",
	"state_field": "workflow_state",
	"states": [
		{"state": "Draft", "doc_status": "0"},
		{"state": "Pending Approval", "doc_status": "0", "allow_edit": "Purchase Manager"},
		{"state": "Approved", "doc_status": "1"},
		{"state": "Rejected", "doc_status": "0"},
	],
	"transitions": [
		{
			"state": "Draft",
			"action": "Submit for Approval",
			"next_state": "Pending Approval",
			"allowed": "Purchase User",
		},
		{
			"state": "Pending Approval",
			"action": "Approve",
			"next_state": "Approved",
			"allowed": "Purchase Manager",
			"condition": "doc.grand_total > 10000",
			"allow_self_approval": 0,
		},
		{
			"state": "Pending Approval",
			"action": "Reject",
			"next_state": "Rejected",
			"allowed": "Purchase Manager",
		},
	],
}

ORDERS = [
	{"name": "PO-0001", "supplier": "Acme", "docstatus": 0, "workflow_state": "Pending Approval"},
	{"name": "PO-0002", "supplier": "Acme", "docstatus": 0, "workflow_state": "Draft"},
]
SALES_ORDERS = [
	{"name": "SO-0001", "customer": "Bolt", "docstatus": 0},
	{"name": "SO-0002", "customer": "Bolt", "docstatus": 1},
	{"name": "SO-0003", "customer": "Bolt", "docstatus": 2},
]


def connector(roles, *, user="buyer@example.com", permissions=None, connector_class=MemoryConnector):
	return connector_class(
		user=user,
		data={"purchase_order": ORDERS, "sales_order": SALES_ORDERS, "customer": [{"name": "Bolt"}]},
		permissions=permissions
		or {
			"purchase_order": {"read", "write", "submit"},
			"sales_order": {"read", "write", "submit"},
			"customer": {"read", "write"},
		},
		workflows={"purchase_order": PO_APPROVAL},
		roles=roles,
	)


def session_for(conn):
	return make_session(conn, registry=Registry(workflow.tools()))


def run(session, name, args):
	result = call_tool(session, name, args)
	return result


def test_describe_lists_states_with_docstatus_and_transitions_with_their_rules():
	result = run(session_for(connector({"Purchase User"})), "workflow.describe", {"entity": "purchase_order"})
	assert result.ok, result.error
	data = result.data
	assert data["workflow"] == "Purchase Order Approval"
	assert data["states"][2] == {"state": "Approved", "docstatus": 1, "meaning": "Submitted"}
	assert data["states"][1]["editable_by_role"] == "Purchase Manager"
	approve = next(t for t in data["transitions"] if t["action"] == "Approve")
	assert approve == {
		"from": "Pending Approval",
		"action": "Approve",
		"to": "Approved",
		"allowed_role": "Purchase Manager",
		"condition": "doc.grand_total > 10000",
		"self_approval": False,
	}


def test_a_document_waiting_for_another_role_says_who_it_waits_for():
	data = run(
		session_for(connector({"Purchase User"})),
		"workflow.describe",
		{"entity": "purchase_order", "name": "PO-0001"},
	).data
	assert data["current_state"] == "Pending Approval"
	assert data["your_actions"] == []
	assert "Purchase Manager" in data["note"]
	assert {a["action"] for a in data["actions_from_this_state"]} == {"Approve", "Reject"}
	assert data["_link"] == "/app/purchase-order/PO-0001"


def test_the_approver_sees_the_actions_the_site_offers_them():
	data = run(
		session_for(connector({"Purchase Manager"})),
		"workflow.describe",
		{"entity": "purchase_order", "name": "PO-0001"},
	).data
	assert [a["action"] for a in data["your_actions"]] == ["Approve", "Reject"]
	assert "note" not in data and "why_not_available" not in data


class SiteRefusingSelfApproval(MemoryConnector):
	"""Like Frappe's get_transitions for the document's owner when self approval is off."""

	def workflow(self, entity, name=None):
		out = super().workflow(entity, name)
		if out and name:
			out["actions"] = [a for a in out["actions"] if a["action"] != "Approve"]
		return out


def test_a_role_holder_without_the_action_is_told_why():
	conn = connector({"Purchase Manager"}, connector_class=SiteRefusingSelfApproval)
	data = run(session_for(conn), "workflow.describe", {"entity": "purchase_order", "name": "PO-0001"}).data
	assert [a["action"] for a in data["your_actions"]] == ["Reject"]
	assert "Approve" in data["why_not_available"] and "self approval" in data["why_not_available"]


@pytest.mark.parametrize(
	"name, status, actions",
	[("SO-0001", 0, ["submit"]), ("SO-0002", 1, []), ("SO-0003", 2, [])],
)
def test_without_a_workflow_the_docstatus_path_is_explained(name, status, actions):
	data = run(
		session_for(connector({"Sales User"})), "workflow.describe", {"entity": "sales_order", "name": name}
	).data
	assert data["workflow"] is None
	assert "Draft (0)" in data["explanation"] and "Cancelled (2)" in data["explanation"]
	assert data["docstatus"] == status and data["actions_now"] == actions
	if status == 1:
		assert "lacks the Cancel permission" in data["note"]
	if status == 2:
		assert "amended" in data["note"]


def test_a_non_submittable_entity_has_no_submission_to_explain():
	data = run(session_for(connector(set())), "workflow.describe", {"entity": "customer"}).data
	assert data["workflow"] is None and "not submitted" in data["explanation"]


def test_describe_is_refused_without_read_permission():
	conn = connector({"Purchase User"}, permissions={"sales_order": {"read"}})
	result = run(session_for(conn), "workflow.describe", {"entity": "purchase_order"})
	assert result.status == "refused" and "permission to read Purchase Order" in result.error


def test_unknown_entity_is_an_argument_error():
	result = run(session_for(connector(set())), "workflow.describe", {"entity": "spaceship"})
	assert result.status == "error"


def test_apply_is_a_proposal_first_and_runs_as_the_person_on_confirmation():
	conn = connector({"Purchase Manager"}, user="manager@example.com")
	session = session_for(conn)
	result = run(
		session, "workflow.apply", {"entity": "purchase_order", "name": "PO-0001", "action": "Approve"}
	)
	assert result.status == "proposal", result.error
	proposal = result.proposal
	assert proposal["summary"] == "Approve Purchase Order PO-0001: Pending Approval → Approved"
	assert proposal["fields"] == [
		{
			"key": "workflow_state",
			"label": "Workflow state",
			"before": "Pending Approval",
			"value": "Approved",
		},
		{"key": "docstatus", "label": "Document status", "before": "Draft", "value": "Submitted"},
	]
	assert ("apply_workflow", "purchase_order") not in conn.calls

	done = confirm(session, proposal["token"])
	assert done.ok, done.error
	assert done.data["state"] == "Approved"
	assert conn.calls.count(("apply_workflow", "purchase_order")) == 1


def test_apply_refuses_an_action_the_person_cannot_take_and_lists_theirs():
	conn = connector({"Purchase User"})
	result = run(
		session_for(conn),
		"workflow.apply",
		{"entity": "purchase_order", "name": "PO-0001", "action": "Approve"},
	)
	assert result.status == "error"
	assert (
		"not available to buyer@example.com" in result.error
		and "Actions available to them now: none" in result.error
	)
	assert ("apply_workflow", "purchase_order") not in conn.calls


def test_no_one_confirms_an_approval_for_someone_else():
	manager = session_for(connector({"Purchase Manager"}, user="manager@example.com"))
	proposal = run(
		manager, "workflow.apply", {"entity": "purchase_order", "name": "PO-0001", "action": "Approve"}
	).proposal
	colleague_conn = connector({"Purchase Manager"}, user="colleague@example.com")
	colleague = session_for(colleague_conn)
	colleague.secret, colleague.proposals = manager.secret, manager.proposals  # same site, same store
	refused = confirm(colleague, proposal["token"])
	assert refused.status == "refused"
	assert ("apply_workflow", "purchase_order") not in colleague_conn.calls


def test_apply_on_an_entity_without_workflow_points_to_submit():
	result = run(
		session_for(connector({"Sales User"})),
		"workflow.apply",
		{"entity": "sales_order", "name": "SO-0001", "action": "Approve"},
	)
	assert result.status == "error" and "sales_order.submit" in result.error


def test_tools_are_well_formed():
	tools = {t.name: t for t in workflow.tools()}
	assert set(tools) == {"workflow.describe", "workflow.apply"}
	assert tools["workflow.apply"].writes and tools["workflow.apply"].preview is not None
	assert not tools["workflow.describe"].writes and tools["workflow.describe"].prompt_rules


# --- submitting and cancelling past a workflow -------------------------------------------

PO_WITH_CANCEL = {
	**PO_APPROVAL,
	"states": [*PO_APPROVAL["states"], {"state": "Cancelled", "doc_status": "2"}],
	"transitions": [
		*PO_APPROVAL["transitions"],
		{"state": "Approved", "action": "Cancel", "next_state": "Cancelled", "allowed": "Purchase Manager"},
	],
}


def entity_session(conn):
	from noviz_agent.tools import entities

	return make_session(conn, registry=Registry(entities.tools()))


def test_a_draft_under_a_workflow_is_not_proposed_for_direct_submission_and_the_answer_names_the_way():
	# The desk offers no Submit under a workflow (its roles, conditions and self-approval rule would
	# be skipped); the agent points to the workflow's actions instead and proposes nothing.
	conn = connector({"Purchase User"})
	session = entity_session(conn)
	result = call_tool(session, "purchase_order.submit", {"name": "PO-0002"})
	assert result.status == "error" and result.proposal is None
	assert 'workflow "Purchase Order Approval"' in result.error and "workflow.apply" in result.error
	assert ("submit", "purchase_order") not in conn.calls


def test_the_connector_refuses_a_direct_submit_under_a_workflow_too():
	conn = connector({"Purchase User"})
	with pytest.raises(Exception, match="Purchase Order Approval"):
		conn.submit("purchase_order", "PO-0002")
	assert conn.data["purchase_order"][1]["docstatus"] == 0


def test_a_document_without_a_workflow_is_still_proposed_for_submission():
	conn = connector({"Sales User"})
	result = call_tool(entity_session(conn), "sales_order.submit", {"name": "SO-0001"})
	assert result.status == "proposal", result.error
	assert result.proposal["action"] == "submit"


@pytest.mark.parametrize(("workflow", "offered"), [(PO_APPROVAL, True), (PO_WITH_CANCEL, False)])
def test_cancel_is_refused_only_where_a_workflow_state_cancels(workflow, offered):
	# frappe's can_cancel_document: Cancel stays on the form unless a transition leads to a
	# cancelled state, and then cancelling is that workflow action.
	conn = connector(
		{"Purchase Manager"}, permissions={"purchase_order": {"read", "write", "submit", "cancel"}}
	)
	conn.workflows["purchase_order"] = workflow
	conn.data["purchase_order"][0]["docstatus"] = 1
	result = call_tool(entity_session(conn), "purchase_order.cancel", {"name": "PO-0001"})
	assert result.status == ("proposal" if offered else "error"), result.error
	if not offered:
		assert "cancelled through the workflow's actions" in result.error
