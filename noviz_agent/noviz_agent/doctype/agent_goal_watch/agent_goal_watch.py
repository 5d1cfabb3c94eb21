"""Agent Goal Watch: one thing a standing goal computes on each run (a watch kind and its parameters)."""

from frappe.model.document import Document


class AgentGoalWatch(Document):
	pass
