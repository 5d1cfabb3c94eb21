"""Agent System: another Frappe site (Helpdesk) the agent may reach as each connected person."""

import frappe
from frappe import _
from frappe.model.document import Document

from noviz_agent import validation


class AgentSystem(Document):
	def validate(self):
		self.validate_base_url()

	def validate_base_url(self):
		problem = validation.url_problem(self.base_url, _("Base URL"))
		if problem:
			frappe.throw(problem)
		self.base_url = self.base_url.strip().rstrip("/")
