"""Agent Role Policy: what the agent may offer people with one role; rules only ever remove access."""

import frappe
from frappe import _
from frappe.model.document import Document

from noviz_agent.engine.policy import PolicyError, RolePolicy


class AgentRolePolicy(Document):
	def validate(self):
		self.validate_rules()

	def validate_rules(self):
		rows = [
			{"role": self.role, "effect": r.effect, "module": r.module, "tool": r.tool} for r in self.rules
		]
		for index, row in enumerate(rows, start=1):
			if not (row["module"] or row["tool"]):
				frappe.throw(_("Rule {0}: choose a module or name a tool.").format(index))
		try:
			RolePolicy.from_rows(rows)
		except PolicyError as exc:
			frappe.throw(str(exc))
