"""Nothing reads or writes business data around the person's permissions.

`get_all`, `ignore_permissions` and raw SQL are allowed only for the agent's own records
and the administrator's configuration, in the places listed here with their reason;
the frappe connector — the one path to business data — uses none of them.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BYPASS = re.compile(
	r"\bget_all\(|ignore_permissions\s*=\s*True|\bdb\.sql\(|\bdb\.set_value\(|\bdb\.get_value\("
)

ALLOWED = {
	# The interaction log and conversations are the agent's own records, written for the person
	# (a later turn inserted as its own row, a settled proposal's state written on the turn that showed it).
	"noviz_agent/api.py": 7,
	# The role policy must apply to people who cannot read it; it only removes tools. The list of
	# installed DocTypes is site structure (the desk's boot reads it for everyone).
	"noviz_agent/edge/frappe_allowance.py": 4,
	# Indexing desk knowledge documents is an administrator's command; roles filter at search.
	"noviz_agent/edge/frappe_knowledge.py": 1,
	# Saving default settings and creating the Agent Auditor role during install-app.
	"noviz_agent/install.py": 2,
	# Governance is the agent's own bookkeeping: budgets bind people who cannot read them, spending
	# and audit rows are written for the person, retention removes the agent's own old records, an
	# Agent Auditor's report reads the logs' content once the role is checked (each read recorded).
	"noviz_agent/edge/frappe_governance.py": 12,
	# A procedure run's memory is the agent's own record of the person's conversation (read for
	# them once their own conversation's run is found); the conversation names its run (set when
	# stored, and once by the upgrade for older runs, with plain reads and per-row updates).
	"noviz_agent/edge/frappe_sops.py": 7,
	# An assistant's request: whose credential its Authorization header carries (the person's own
	# bearer token or API key, which frappe just accepted), its OAuth Client and that client's name.
	"noviz_agent/edge/frappe_mcp.py": 3,
	# Standing goals: the scheduler finds every person's due goals and moves their next time; a run
	# writes its own row, its log, the goal's memory and spending, and the person's desk notification.
	# What a run reads of the books is read as the goal's person, through the gateway.
	"noviz_agent/edge/frappe_goals.py": 6,
}


def _product_files():
	for path in sorted((ROOT / "noviz_agent").rglob("*.py")):
		rel = path.relative_to(ROOT).as_posix()
		if "/tests/" in rel or path.name.startswith("test_"):
			continue
		yield rel, path.read_text(encoding="utf-8")


def test_the_frappe_connector_never_bypasses_permissions():
	source = (ROOT / "noviz_agent/connectors/frappe_connector.py").read_text(encoding="utf-8")
	code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("#", '"', "'")))
	assert not BYPASS.search(code.split('"""', 2)[-1])
	assert "frappe.get_list" in source


def test_bypasses_appear_only_where_listed_with_a_reason():
	found = {}
	for rel, text in _product_files():
		count = len(BYPASS.findall(text))
		if count:
			found[rel] = count
	assert found == ALLOWED, (
		"A new permission bypass (get_all, ignore_permissions, db.sql, db.get_value/set_value) appeared or "
		"one went away: business data must go through the connector as the person. Update ALLOWED only "
		f"for the agent's own records, with the reason. Found: {found}"
	)
