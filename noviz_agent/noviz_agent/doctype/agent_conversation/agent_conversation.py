"""Agent Conversation: one person's conversation with the agent; written only by the turn API."""

from frappe.model.document import Document


class AgentConversation(Document):
	pass
