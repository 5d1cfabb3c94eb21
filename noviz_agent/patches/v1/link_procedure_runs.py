"""Conversations whose procedure started before runs were linked get the link to their run.

A turn reads a conversation's Agent SOP Run only when the conversation names one; without this,
a procedure in progress at the upgrade would be forgotten.
"""

from noviz_agent.edge.frappe_sops import link_existing_runs


def execute():
	link_existing_runs()
