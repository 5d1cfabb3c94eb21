"""The evaluation harness on a live site: every labelled question passes with the oracle model.

Needs data seeded with ``benchmarks/bench_seed.py`` (the questions name its customers, items
and suppliers). Expected figures are read from the DocTypes by ``SiteFacts``; the turns run as
the Accounts User and Sales User test people through the real session and connector. Run with
`bench --site S run-tests --app noviz_agent --module noviz_agent.tests.test_site_evaluation`.
"""

from __future__ import annotations

import frappe

from noviz_agent.edge import frappe_evaluation, frappe_session
from noviz_agent.evaluation.harness import evaluate, load_questions
from noviz_agent.evaluation.oracle import oracle_model
from noviz_agent.tests.utils import ACCOUNTS, SALES, PeopleTestCase


class TestSiteEvaluation(PeopleTestCase):
	def test_every_labelled_question_passes_with_the_oracle(self):
		self.assertTrue(
			frappe.db.exists("Customer", "Seed Customer 01"),
			"the site has no seeded data: run benchmarks/bench_seed.py first",
		)
		values = frappe_session.load_settings(with_secrets=True)
		runner = frappe_evaluation.site_runner(
			values,
			{"accounts": ACCOUNTS, "sales": SALES},
			lambda question, session: oracle_model(question, session.registry),
			rollback=False,
		)
		questions = load_questions()
		facts = frappe_evaluation.facts_for({"accounts": ACCOUNTS, "sales": SALES})
		report = evaluate(questions, facts, runner, provider="oracle", echo=None)
		failed = [(g.id, g.expected, g.answer, g.error) for g in report.grades if not g.success]
		self.assertEqual(failed, [])
		self.assertEqual(report.totals()["questions"], len(questions))

	def test_site_facts_read_the_seeded_invoices_with_their_lines(self):
		facts = frappe_evaluation.SiteFacts()
		invoices = [row for row in facts.rows("sales_invoice") if row["customer"] == "Seed Customer 01"]
		self.assertTrue(invoices, "the site has no seeded invoices for Seed Customer 01")
		self.assertTrue(all(row["items"] for row in invoices if row["docstatus"] == 1))
		totals = frappe.get_list(
			"Sales Invoice",
			filters={"customer": "Seed Customer 01"},
			pluck="grand_total",
			limit_page_length=0,
		)
		self.assertAlmostEqual(sum(row["total"] for row in invoices), float(sum(totals)), places=2)
