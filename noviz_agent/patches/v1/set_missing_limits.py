"""Limits added to Agent Settings by an upgrade (assistant tool calls per hour) get their default."""

from noviz_agent.install import set_missing_limits


def execute():
	set_missing_limits()
