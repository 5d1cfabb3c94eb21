from frappe.model.document import Document


class AgentSOPRole(Document):
	pass
