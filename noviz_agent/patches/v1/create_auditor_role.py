"""Sites installed before audited review get the Agent Auditor role."""

from noviz_agent.install import ensure_auditor_role


def execute():
	ensure_auditor_role()
