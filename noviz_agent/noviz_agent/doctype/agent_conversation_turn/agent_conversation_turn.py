"""One turn of a conversation: the question, the structured response and the tool calls."""

from frappe.model.document import Document


class AgentConversationTurn(Document):
	pass
