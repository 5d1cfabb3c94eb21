"""Agent Cost Month: cost totals that outlive the interaction log rows retention removes."""

from frappe.model.document import Document


class AgentCostMonth(Document):
	pass
