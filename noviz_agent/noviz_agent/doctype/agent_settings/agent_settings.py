"""Agent Settings: the model provider, the limits and the organisation's policy for the agent."""

import frappe
from frappe import _
from frappe.model.document import Document

from noviz_agent import validation


class AgentSettings(Document):
	def validate(self):
		self.validate_urls_and_limits()
		self.validate_knowledge_folder()

	def validate_urls_and_limits(self):
		problems = validation.settings_problems(self.as_dict())
		if problems:
			frappe.throw(
				"<br>".join(frappe.utils.escape_html(p) for p in problems),
				title=_("Check the agent settings"),
			)

	def validate_knowledge_folder(self):
		folder = (self.knowledge_folder or "").strip()
		if folder and not folder.startswith("/"):
			frappe.throw(
				_(
					"Extra knowledge folder must be an absolute path on the server, e.g. /home/frappe/knowledge."
				)
			)
