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
	set_missing_limits()


def set_missing_limits() -> None:
	"""Every limit in Agent Settings without a value gets its default: at install, and for a limit an
	upgrade adds (an empty one would stop the administrator from saving the settings)."""
	settings = frappe.get_single("Agent Settings")
	for field, (_label, _low, _high, default) in validation.LIMITS.items():
		if settings.meta.has_field(field) and not settings.get(field):
			settings.set(field, default)
	settings.flags.ignore_mandatory = True
	# Runs during install-app or migrate, as no person who would own the settings.
	settings.save(ignore_permissions=True)
