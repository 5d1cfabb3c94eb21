"""Which modules people ask about, which tools are offered but never used, refusals, failures, guards."""

import frappe
from frappe import _

from noviz_agent.governance.review import usage

LOG = "Agent Interaction Log"


def execute(filters=None):
	filters = frappe._dict(filters or {})
	conditions = []
	if filters.get("from_date"):
		conditions.append(["creation", ">=", filters.from_date])
	if filters.get("to_date"):
		conditions.append(["creation", "<=", f"{filters.to_date} 23:59:59"])
	logs = frappe.get_list(
		LOG, filters=conditions, fields=["name", "modules", "tools_offered", "guards"], limit_page_length=0
	)
	calls = frappe.get_list(
		LOG,
		filters=conditions,
		fields=["`tabAgent Tool Call`.tool as tool", "`tabAgent Tool Call`.status as status"],
		limit_page_length=0,
	)
	rows = usage(logs, [c for c in calls if c.get("tool")])
	if filters.get("kind"):
		rows = [r for r in rows if r["kind"] == filters.kind]
	return columns(), rows


def columns():
	return [
		{"fieldname": "kind", "label": _("Kind"), "fieldtype": "Data", "width": 90},
		{"fieldname": "name", "label": _("Name"), "fieldtype": "Data", "width": 240},
		{"fieldname": "turns", "label": _("Turns"), "fieldtype": "Int", "width": 80},
		{"fieldname": "share", "label": _("% of turns"), "fieldtype": "Percent", "width": 100},
		{"fieldname": "offered", "label": _("Offered"), "fieldtype": "Int", "width": 90},
		{"fieldname": "used", "label": _("Used"), "fieldtype": "Int", "width": 80},
		{"fieldname": "never_used", "label": _("Never used"), "fieldtype": "Check", "width": 100},
		{"fieldname": "refused", "label": _("Refused"), "fieldtype": "Int", "width": 80},
		{"fieldname": "failed", "label": _("Failed"), "fieldtype": "Int", "width": 80},
		{"fieldname": "fired", "label": _("Guard fired"), "fieldtype": "Int", "width": 100},
	]
