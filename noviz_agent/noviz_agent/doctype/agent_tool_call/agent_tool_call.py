"""One tool call of a logged turn: name, outcome and time."""

from frappe.model.document import Document


class AgentToolCall(Document):
	pass
