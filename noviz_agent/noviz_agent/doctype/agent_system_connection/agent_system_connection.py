"""Agent System Connection: one person's own credentials for another system; theirs alone."""

import frappe
from frappe import _
from frappe.model.document import Document


class AgentSystemConnection(Document):
	def validate(self):
		self.validate_owner()
		self.validate_one_per_system()

	def validate_owner(self):
		# A connection acts as its person: nobody sets up credentials for someone else.
		if self.is_new():
			self.person = frappe.session.user
		elif self.person != frappe.session.user:
			frappe.throw(
				_("Only {0} can change their own connection.").format(self.person), frappe.PermissionError
			)

	def validate_one_per_system(self):
		if frappe.db.exists(
			"Agent System Connection",
			{"system": self.system, "person": self.person, "name": ("!=", self.name)},
		):
			frappe.throw(
				_("You already have a connection to {0}; change that one instead.").format(self.system)
			)
