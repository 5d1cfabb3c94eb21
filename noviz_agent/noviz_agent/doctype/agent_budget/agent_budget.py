"""Agent Budget: a monthly cap in tokens and cost for the site, a role or a person."""

import frappe
from frappe import _
from frappe.model.document import Document


class AgentBudget(Document):
	def validate(self):
		self.validate_target()
		self.validate_limits()

	def validate_target(self):
		if self.scope == "Role" and not self.role:
			frappe.throw(_("Choose the role this budget applies to."))
		if self.scope == "Person" and not self.person:
			frappe.throw(_("Choose the person this budget applies to."))
		if self.scope != "Role":
			self.role = None
		if self.scope != "Person":
			self.person = None

	def validate_limits(self):
		if not (self.monthly_tokens or self.monthly_cost):
			frappe.throw(_("Set a monthly token limit, a monthly cost limit, or both."))
