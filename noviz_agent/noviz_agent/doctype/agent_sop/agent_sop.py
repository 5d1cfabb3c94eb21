"""Agent SOP: a written procedure the agent follows; validation names each problem with its line."""

import frappe
from frappe import _
from frappe.model.document import Document

from noviz_agent.edge import frappe_sops


class AgentSOP(Document):
	def validate(self):
		self.validate_procedure()
		self.validate_applies_when()

	def validate_procedure(self):
		problems = frappe_sops.problems(self.procedure or "")
		if problems:
			frappe.throw(
				"<br>".join(frappe.utils.escape_html(str(p)) for p in problems),
				title=_("Fix the procedure"),
			)

	def validate_applies_when(self):
		if not (self.applies_when or "").strip():
			frappe.throw(_("Say when this procedure applies; requests are matched against it."))
