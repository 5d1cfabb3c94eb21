"""Turns an administrator should read: rated down, failed, or slower than the threshold in Agent Settings."""

import frappe
from frappe import _

from noviz_agent import validation
from noviz_agent.edge import frappe_governance

REASONS = ("Not helpful", "Failed", "Slow")


def execute(filters=None):
	filters = frappe._dict(filters or {})
	threshold = int(
		filters.get("slow_ms")
		or validation.limit(frappe.get_cached_doc("Agent Settings").as_dict(), "slow_turn_ms")
	)
	return columns(), rows(filters, threshold)


def columns():
	return [
		{
			"fieldname": "name",
			"label": _("Log"),
			"fieldtype": "Link",
			"options": "Agent Interaction Log",
			"width": 160,
		},
		{"fieldname": "creation", "label": _("When"), "fieldtype": "Datetime", "width": 160},
		{"fieldname": "person", "label": _("Person"), "fieldtype": "Link", "options": "User", "width": 180},
		{"fieldname": "reasons", "label": _("Why"), "fieldtype": "Data", "width": 150},
		{"fieldname": "request", "label": _("Request"), "fieldtype": "Data", "width": 300},
		{"fieldname": "response_type", "label": _("Response"), "fieldtype": "Data", "width": 90},
		{"fieldname": "latency_ms", "label": _("Latency (ms)"), "fieldtype": "Int", "width": 110},
		{"fieldname": "error", "label": _("Error"), "fieldtype": "Data", "width": 250},
		{"fieldname": "feedback_comment", "label": _("Comment"), "fieldtype": "Data", "width": 200},
		{"fieldname": "model", "label": _("Model"), "fieldtype": "Data", "width": 120},
	]


def reasons_for(row, threshold: int) -> list[str]:
	"""Why a logged turn needs attention (empty when it does not)."""
	found = []
	if row.get("rating") == "Down":
		found.append("Not helpful")
	if row.get("failed"):
		found.append("Failed")
	if int(row.get("latency_ms") or 0) > threshold:
		found.append("Slow")
	return found


def rows(filters, threshold: int) -> list[dict]:
	conditions = [["creation", ">=", filters.from_date]] if filters.get("from_date") else []
	if filters.get("to_date"):
		conditions.append(["creation", "<=", f"{filters.to_date} 23:59:59"])
	if filters.get("person"):
		conditions.append(["person", "=", filters.person])
	or_conditions = [["rating", "=", "Down"], ["failed", "=", 1], ["latency_ms", ">", threshold]]
	logs = frappe.get_list(
		"Agent Interaction Log",
		filters=conditions,
		or_filters=or_conditions,
		fields=[
			"name",
			"creation",
			"person",
			"response_type",
			"latency_ms",
			"rating",
			"failed",
			"model",
		],
		order_by="creation desc",
		limit_page_length=1000,
	)
	wanted = filters.get("reason")
	out = []
	for log in logs:
		found = reasons_for(log, threshold)
		if not found or (wanted and wanted not in found):
			continue
		log["reasons"] = ", ".join(found)
		out.append(log)
	# What people asked, the errors and their comments are shown to an Agent Auditor only, each
	# read of someone else's log recorded (Agent Audit Read); others see why a turn needs attention.
	contents = frappe_governance.audited_contents([log["name"] for log in out], frappe.session.user)
	for log in out:
		content = contents.get(log["name"]) or {}
		log["request"] = (content.get("request") or "")[:200]
		error = content.get("error") or ""
		log["error"] = error.splitlines()[0][:200] if error else ""
		log["feedback_comment"] = content.get("feedback_comment") or ""
	return out
