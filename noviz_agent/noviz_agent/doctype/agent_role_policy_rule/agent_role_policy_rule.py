"""One allow/deny row of an Agent Role Policy."""

from frappe.model.document import Document


class AgentRolePolicyRule(Document):
	pass
