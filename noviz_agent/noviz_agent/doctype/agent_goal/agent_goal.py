"""Agent Goal: a standing goal that watches the books for one person and tells them what changed.

The person it works for is the one who made it, for good: it runs as them and reports to them only.
Anyone else (a System Manager) may only pause it, never change what it watches or whom it works for.
"""

import frappe
from frappe import _
from frappe.model.document import Document

from noviz_agent.edge import frappe_goals


class AgentGoal(Document):
	def validate(self):
		self.validate_person()
		self.validate_others_only_pause()
		self.validate_spec()
		self.set_status()
		self.set_next_run()

	def validate_person(self):
		if self.is_new():
			self.person = self.person or frappe.session.user
			if self.person != frappe.session.user:
				frappe.throw(
					_("A goal works for the person who makes it; {0} can make their own goals.").format(
						self.person
					),
					frappe.PermissionError,
				)
		elif self.person != self.get_doc_before_save().person:
			frappe.throw(_("The person a goal works for cannot change; they can make a goal of their own."))
		problem = frappe_goals.owner_problem(self.person)
		if problem:
			frappe.throw(problem, frappe.ValidationError)

	def validate_others_only_pause(self):
		before = None if self.is_new() else self.get_doc_before_save()
		if before is None or frappe.session.user == self.person:
			return
		changed = [
			df.label or df.fieldname
			for df in self.meta.fields
			if df.fieldtype not in ("Section Break", "Column Break", "Table")
			and df.fieldname not in frappe_goals.SYSTEM_FIELDS + ("active",)
			and self.get(df.fieldname) != before.get(df.fieldname)
		]
		if changed or frappe_goals.watch_rows(self) != frappe_goals.watch_rows(before):
			frappe.throw(
				_("Only {0} can change this goal; you may pause it. Changed: {1}.").format(
					self.person, ", ".join(changed) or _("Watches")
				),
				frappe.PermissionError,
			)
		if self.active and not before.active:
			frappe.throw(
				_("Only {0} can switch this goal back on.").format(self.person), frappe.PermissionError
			)

	def validate_spec(self):
		self.title = frappe_goals.checked_spec(self).label

	def set_status(self):
		if self.active:
			self.status, self.stop_reason = "Active", None
		elif self.status != "Stopped" or not self.stop_reason:
			self.status = "Paused"

	def set_next_run(self):
		before = None if self.is_new() else self.get_doc_before_save()
		schedule_changed = before is None or any(
			self.get(f) != before.get(f)
			for f in ("every", "weekday", "day_of_month", "hour", "cron", "active")
		)
		if self.active and (schedule_changed or not self.next_run):
			self.next_run = frappe_goals.next_run_of(self)
		elif not self.active:
			self.next_run = None
