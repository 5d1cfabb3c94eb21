"""After install: Agent Settings starts with its defaults saved, so the chat can explain what is missing."""

from __future__ import annotations

import frappe

from noviz_agent import validation

AUDITOR = "Agent Auditor"


def ensure_auditor_role() -> None:
	"""The role that may review other people's conversations (each read is recorded)."""
	if not frappe.db.exists("Role", AUDITOR):
		frappe.get_doc({"doctype": "Role", "role_name": AUDITOR, "desk_access": 1}).insert(
			ignore_permissions=True
		)


def after_install() -> None:
	ensure_auditor_role()
	settings = frappe.get_single("Agent Settings")
	for field, (_label, _low, _high, default) in validation.LIMITS.items():
		if settings.meta.has_field(field) and not settings.get(field):
			settings.set(field, default)
	settings.flags.ignore_mandatory = True
	# Runs during install-app, before any person exists to own the settings.
	settings.save(ignore_permissions=True)
