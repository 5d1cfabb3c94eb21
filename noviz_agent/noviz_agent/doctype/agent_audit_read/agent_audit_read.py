"""Agent Audit Read: one row each time an auditor opens another person's conversation."""

from frappe.model.document import Document


class AgentAuditRead(Document):
	pass
