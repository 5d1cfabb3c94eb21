"""Nobody gets through the agent what the desk would not show them: every read path, three people.

The in-memory connector applies permissions the way the site does (role permissions per
entity, User Permissions restricting a company or a territory, empty values visible); each
path below must return exactly what that person's connector shows, never more.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from noviz_agent.engine.gateway import call_tool
from tests.support.factories import make_session
from tests.support.memory_connector import MemoryConnector

pytestmark = pytest.mark.attack("permissions")


def _invoices() -> list[dict]:
	rows = []
	plan = [("Alpha Co", "North"), ("Alpha Co", "South"), ("Beta Co", "South"), ("Alpha Co", "")]
	for i in range(60):
		company, territory = plan[i % len(plan)]
		rows.append(
			{
				"name": f"SINV-{i:04d}",
				"customer": f"Cust {i % 7}",
				"company": company,
				"territory": territory,
				"date": f"2026-{1 + i % 9:02d}-{1 + i % 27:02d}",
				"posting_date": f"2026-{1 + i % 9:02d}-{1 + i % 27:02d}",
				"total": float(100 + i),
				"net_total": float(100 + i),
				"grand_total": float(100 + i),
				"base_grand_total": float(100 + i),
				"base_net_total": float(100 + i),
				"currency": "USD",
				"status": "Paid",
				"docstatus": 1,
				"modified": f"2026-10-{1 + i % 27:02d}",
			}
		)
	return rows


REPORTS = {
	"Accounts Receivable": {
		"roles": ["Accounts User"],
		"columns": [{"fieldname": "party", "label": "Party"}],
		"rows": [{"party": "Cust 1"}],
	}
}
PEOPLE = {
	# Accounts User limited to one company by a User Permission.
	"ann": ({"Accounts User"}, {"company": {"Alpha Co"}}),
	# Sales User limited to one territory.
	"sam": ({"Sales User"}, {"territory": {"North"}}),
	# Sales Manager without restrictions.
	"max": ({"Sales Manager"}, {}),
}


def _person(who: str) -> MemoryConnector:
	roles, restrictions = PEOPLE[who]
	return MemoryConnector(
		f"{who}@example.com",
		{"sales_invoice": _invoices()},
		{"sales_invoice": {"read"}},
		reports=REPORTS,
		roles=roles,
		restrictions=restrictions,
	)


def _desk_view(who: str) -> list[dict]:
	"""What the desk shows this person: the rows their restrictions leave visible."""
	_, restrictions = PEOPLE[who]
	return [
		row
		for row in _invoices()
		if all(not row.get(f) or row.get(f) in allowed for f, allowed in restrictions.items())
	]


def _session(who: str):
	session = make_session(_person(who))
	session.offered = set(session.allowed)
	return session


@pytest.mark.parametrize("who", list(PEOPLE))
def test_list_pages_show_exactly_the_desk_view(who):
	session, seen, page = _session(who), set(), 1
	while True:
		result = call_tool(session, "sales_invoice.list", {"page": page})
		assert result.status == "ok"
		rows = result.data["rows"]
		seen |= {r["name"] for r in rows}
		if not rows or page * session.limits.page_size >= result.data["total"]:
			break
		page += 1
	assert seen == {r["name"] for r in _desk_view(who)}


@pytest.mark.parametrize("who", list(PEOPLE))
def test_count_matches_the_desk_view(who):
	result = call_tool(_session(who), "sales_invoice.count", {})
	assert result.status == "ok" and result.data["count"] == len(_desk_view(who))


@pytest.mark.parametrize("who", ["ann", "sam"])
def test_get_of_a_hidden_record_is_refused(who):
	visible = {r["name"] for r in _desk_view(who)}
	hidden = next(r["name"] for r in _invoices() if r["name"] not in visible)
	result = call_tool(_session(who), "sales_invoice.get", {"name": hidden})
	assert result.status == "refused"
	assert call_tool(_session(who), "sales_invoice.get", {"name": sorted(visible)[0]}).status == "ok"


@pytest.mark.parametrize("who", list(PEOPLE))
def test_aggregates_add_up_only_what_the_person_may_see(who):
	# Totals are one company's (here the person's default), and within it only what they may see.
	session = _session(who)
	session.person = replace(session.person, company="Alpha Co")
	result = call_tool(
		session,
		"analytics.aggregate",
		{
			"entity": "sales_invoice",
			"metrics": [{"fn": "sum", "field": "total", "as": "t"}],
			"group_by": ["customer"],
			"limit": 50,
		},
	)
	assert result.status == "ok", result.error
	got = {r["customer"]: round(r["t"], 2) for r in result.data["rows"]}
	expected: dict[str, float] = {}
	for row in _desk_view(who):
		if row["company"] == "Alpha Co":
			expected[row["customer"]] = round(expected.get(row["customer"], 0) + row["total"], 2)
	assert got == expected


def test_a_report_the_role_may_not_run_is_refused_verbatim():
	assert call_tool(_session("ann"), "report.run", {"report": "Accounts Receivable"}).status == "ok"
	refused = call_tool(_session("sam"), "report.run", {"report": "Accounts Receivable"})
	assert refused.status in ("refused", "error")
	assert "Accounts Receivable" in refused.error


def test_results_kept_for_one_person_cannot_be_paged_by_another():
	ann, sam = _session("ann"), _session("sam")
	kept = call_tool(ann, "report.run", {"report": "Accounts Receivable"})
	assert kept.status == "ok" and kept.data["result_id"]
	# Sam may page reports: the refusal below is about whose result it is, not a missing tool.
	assert sam.may_use("report.run")
	other = call_tool(sam, "report.run", {"result_id": kept.data["result_id"], "page": 1})
	assert other.status == "error"
	assert "no longer available" in other.error
	assert call_tool(ann, "report.run", {"result_id": kept.data["result_id"], "page": 1}).status == "ok"


def test_list_results_are_paged_again_as_the_person_who_pages_them():
	"""A list's result id names the query, not the rows: paging runs it again as whoever pages."""
	from noviz_agent import records

	ann, sam = _session("ann"), _session("sam")
	listed = call_tool(ann, "sales_invoice.list", {})
	assert listed.status == "ok" and listed.data.get("result_id")
	record = ann.results.get(listed.data["result_id"])
	assert record["user"] == "ann@example.com"
	tool, args = records.page_call(record, listed.data["result_id"], 2)
	assert tool == "sales_invoice.list" and sam.may_use(tool)
	page = call_tool(sam, tool, args)
	visible = {r["name"] for r in _desk_view("sam")}
	assert page.status == "ok" and {r["name"] for r in page.data["rows"]} <= visible
