"""Agent SOP Run: one procedure's run in one conversation, with its execution memory (written by the agent)."""

from frappe.model.document import Document


class AgentSOPRun(Document):
	pass
