"""Agent Budget Usage: spending per budget and month, written only by the agent in single statements."""

from frappe.model.document import Document


class AgentBudgetUsage(Document):
	pass
