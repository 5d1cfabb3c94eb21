"""Agent Settings: the model provider, the limits and the organisation's policy for the agent."""

import frappe
from frappe import _
from frappe.model.document import Document

from noviz_agent import validation


class AgentSettings(Document):
	def validate(self):
		self.validate_urls_and_limits()
		self.validate_knowledge_folder()
		self.validate_mcp_roles()

	def on_update(self):
		self.show_mcp_hints()

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

	def validate_mcp_roles(self):
		unknown = [r for r in validation.lines(self.mcp_roles) if not frappe.db.exists("Role", r)]
		if unknown:
			frappe.throw(
				_("Roles that may connect assistants: no role named {0}.").format(", ".join(unknown)),
				title=_("Check the agent settings"),
			)

	def show_mcp_hints(self):
		from noviz_agent.edge.frappe_mcp import settings_hints

		hints = settings_hints(self.as_dict())
		if hints:
			frappe.msgprint(
				"<br>".join(frappe.utils.escape_html(h) for h in hints), title=_("Assistants (MCP)")
			)
