"""Conversations whose procedure started before runs were linked get the link to their run.

A turn reads a conversation's Agent SOP Run only when the conversation names one; without this,
a procedure in progress at the upgrade would be forgotten.
"""

import frappe


def execute():
	if not frappe.db.table_exists("Agent SOP Run"):
		return
	# The latest run of each conversation, as FrappeRunStore reads it (our own tables, no one's input).
	frappe.db.sql(
		"""
		update `tabAgent Conversation` c
		join (
			select r.conversation, r.name
			from `tabAgent SOP Run` r
			where r.modified = (
				select max(r2.modified) from `tabAgent SOP Run` r2 where r2.conversation = r.conversation
			)
		) latest on latest.conversation = c.name
		set c.procedure_run = latest.name
		where ifnull(c.procedure_run, '') = ''
		"""
	)
