"""Agent Interaction Log: one row per turn, written by the turn API, read-only for everyone else."""

from frappe.model.document import Document


class AgentInteractionLog(Document):
	pass
