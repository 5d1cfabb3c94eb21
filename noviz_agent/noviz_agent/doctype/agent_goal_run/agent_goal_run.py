"""Agent Goal Run: one run of a standing goal, written by the agent as the goal's person (they read their own)."""

from frappe.model.document import Document


class AgentGoalRun(Document):
	pass
