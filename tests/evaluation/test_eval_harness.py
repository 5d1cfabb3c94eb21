"""The evaluation harness: labels, independent expectations, grading, and the oracle run in CI."""

from __future__ import annotations

import copy
import json

import pytest

from noviz_agent import cli
from noviz_agent.evaluation import seed
from noviz_agent.evaluation.expected import DataFacts, Expected, SpecError, compute
from noviz_agent.evaluation.harness import (
	evaluate,
	figure_present,
	load_questions,
	memory_runner,
	records_present,
)
from noviz_agent.evaluation.oracle import OracleModel, adapt_arguments, pick
from noviz_agent.testing.model import ScriptedModel, answer, call
from noviz_agent.tools import build_registry

QUESTIONS = load_questions()


def test_every_labelled_question_passes_with_the_oracle(tmp_path, capsys):
	out = tmp_path / "grades.json"
	code = cli.main(["eval", "--oracle", "--json", str(out)])
	printed = capsys.readouterr().out
	report = json.loads(out.read_text())
	failed = [q["id"] for q in report["questions"] if not q["success"]]
	assert failed == [] and code == 0, printed
	totals = report["totals"]
	assert totals["questions"] == len(QUESTIONS) >= 60
	assert (
		totals["task_success_rate"] == totals["tool_choice_accuracy"] == totals["grounded_number_rate"] == 1.0
	)
	assert printed.count("[PASS]") == len(QUESTIONS) and "task success rate" in printed


def test_the_question_set_is_labelled_completely():
	registry = build_registry()
	kinds = {}
	for question in QUESTIONS:
		assert question["person"] in seed.PERSONAS, question["id"]
		for name in question["tools"]:
			assert name in registry, f"{question['id']}: no tool {name}"
		for name, args in question["oracle"]["calls"]:
			assert name in registry and isinstance(args, dict), question["id"]
		kind = next(iter(question["expect"]))
		kinds[kind] = kinds.get(kind, 0) + 1
		# A refusal is due exactly when no tool may answer.
		assert (kind == "refusal") == (question["tools"] == []), question["id"]
	assert (
		kinds["figure"] >= 30 and kinds["records"] >= 10 and kinds["refusal"] >= 5 and kinds["proposal"] >= 3
	)
	assert len({q["person"] for q in QUESTIONS}) >= 2


def test_expected_figures_are_real_figures_of_the_seeded_data():
	facts = DataFacts(seed.build())
	figures = [compute(q["expect"], facts).figure for q in QUESTIONS if "figure" in q["expect"]]
	# Not an empty data set: nearly every figure is a positive amount or count, no record list is empty.
	assert sum(1 for figure in figures if figure > 0) >= len(figures) - 2
	records = [compute(q["expect"], facts).records for q in QUESTIONS if "records" in q["expect"]]
	assert all(records)


def test_seeded_data_is_the_same_on_every_build():
	assert seed.build() == seed.build()
	data = seed.build()
	assert {row["customer"] for row in data["sales_invoice"]} <= {row["name"] for row in data["customer"]}
	assert all(
		abs(row["total"] - sum(line["amount"] for line in row["items"])) < 0.01
		for row in data["sales_invoice"]
	)


FACTS = DataFacts(
	{
		"sales_invoice": [
			{
				"name": "A1",
				"customer": "Ann",
				"date": "2025-02-01",
				"total": 100.0,
				"docstatus": 1,
				"items": [{"item": "X", "qty": 2, "amount": 60.0}, {"item": "Y", "qty": 1, "amount": 40.0}],
			},
			{
				"name": "A2",
				"customer": "Bob",
				"date": "2025-12-31",
				"total": 250.0,
				"docstatus": 1,
				"items": [{"item": "X", "qty": 5, "amount": 250.0}],
			},
			{
				"name": "A3",
				"customer": "Ann",
				"date": "2026-01-01",
				"total": 999.0,
				"docstatus": 1,
				"items": [],
			},
			{
				"name": "A4",
				"customer": "Bob",
				"date": "2025-06-01",
				"total": 500.0,
				"docstatus": 2,
				"items": [],
			},
		],
		"customer": [{"name": "Ann", "territory": "Europe"}],
	}  # fmt: skip
)
Y25 = ["date", "between", ["2025-01-01", "2025-12-31"]]


@pytest.mark.parametrize(
	("spec", "figure"),
	[
		(
			{"entity": "sales_invoice", "fn": "sum", "field": "total", "where": [Y25, ["docstatus", "=", 1]]},
			350.0,
		),
		({"entity": "sales_invoice", "fn": "count", "where": [["docstatus", "=", 1]]}, 3.0),
		({"entity": "sales_invoice", "fn": "avg", "field": "total", "where": [Y25]}, 850 / 3),
		(
			{
				"entity": "sales_invoice",
				"fn": "max",
				"field": "total",
				"where": [["customer", "in", ["Bob"]]],
			},
			500.0,
		),
		(
			{
				"entity": "sales_invoice",
				"fn": "sum",
				"field": "qty",
				"where": [Y25, ["docstatus", "=", 1]],
				"lines": {"child": "items", "where": [["item", "=", "X"]]},
			},
			7.0,
		),
	],  # fmt: skip
)
def test_expected_figures_are_computed_from_the_rows(spec, figure):
	assert compute({"figure": spec}, FACTS).figure == round(figure, 2)


def test_expected_records_values_and_rankings():
	top = {
		"entity": "sales_invoice",
		"where": [["docstatus", "=", 1]],
		"top": {"group": "customer", "fn": "sum", "field": "total", "n": 1},
	}
	assert compute({"records": top}, FACTS).records == ["Ann"]  # 1099 against Bob's 250
	listed = compute({"records": {"entity": "sales_invoice", "where": [Y25, ["docstatus", "=", 1]]}}, FACTS)
	assert listed.records == ["A1", "A2"] and listed.match == "all"
	assert (
		compute({"value": {"entity": "customer", "name": "Ann", "field": "territory"}}, FACTS).value
		== "Europe"
	)
	with pytest.raises(SpecError):
		compute({"value": {"entity": "customer", "name": "Nobody", "field": "territory"}}, FACTS)


@pytest.mark.parametrize(
	("text", "present"),
	[
		("Revenue was 12,345.40 in 2025.", True),
		("Revenue was 12,345 in 2025.", True),
		("Revenue was about 12.3k.", True),
		("Revenue was 12,400.", False),
		("Revenue was 12,345.90.", False),
		("Revenue grew 12% in 2025.", False),
	],
)
def test_figure_present_to_the_precision_written(text, present):
	assert figure_present(12345.4, text) is present


def test_a_listing_must_show_the_records_not_every_record():
	listing = Expected("records", records=["Seed Customer 01", "Seed Customer 08"])
	rows = ["Seed Customer 01 Asia Pacific", "Seed Customer 08 Asia Pacific"]
	assert records_present(listing, "", rows)
	everyone = rows + [f"Seed Customer {n:02d} Europe" for n in range(2, 6)]
	assert not records_present(listing, "", everyone)
	assert not records_present(listing, "Seed Customer 01 is there", [])
	assert records_present(listing, "Seed Customer 01 and Seed Customer 08", [])


def test_a_ranking_must_put_the_records_first():
	ranking = Expected("records", records=["Seed Customer 05"], ranked=True)
	assert records_present(ranking, "", ["Seed Customer 05 9,000", "Seed Customer 01 8,000"])
	assert not records_present(ranking, "", ["Seed Customer 01 9,000", "Seed Customer 05 8,000"])
	assert records_present(ranking, "Our biggest customer was Seed Customer 05.", ["Seed Customer 01 9,000"])


def test_oracle_reads_paths_and_adapts_filters_to_the_schema():
	assert pick({"rows": [{"a": 1}, {"a": 2}]}, "rows.*.a") == [1, 2]
	assert pick({"rows": []}, "rows.0.a") is None
	objects = {
		"properties": {
			"filters": {
				"type": "array",
				"items": {"type": "object", "properties": {"field": {}, "op": {}, "value": {}}},
			}
		}
	}
	triples = {"properties": {"filters": {"type": "array", "prefixItems": [{}, {}, {}]}}}
	args = {"filters": [["customer", "=", "Ann"]]}
	assert adapt_arguments(args, objects) == {"filters": [{"field": "customer", "op": "=", "value": "Ann"}]}
	assert adapt_arguments(args, triples) == args


def _question(qid: str) -> dict:
	return next(q for q in QUESTIONS if q["id"] == qid)


def _run_with(model_for, questions, facts=None):
	runner, seeded = memory_runner(model_for)
	return evaluate(questions, facts or seeded, runner, provider="test", echo=None)


def test_a_figure_that_differs_from_the_data_fails_the_question():
	# The tools read the seeded data; the expectation reads a copy where one 2025 invoice is larger.
	data = seed.build()
	changed = copy.deepcopy(data)
	invoice = next(r for r in changed["sales_invoice"] if r["date"].startswith("2025"))
	invoice["total"] += 100
	registry = build_registry()
	report = _run_with(lambda q: OracleModel(q, registry), [_question("revenue-2025")], DataFacts(changed))
	grade = report.grades[0]
	assert grade.tool_ok and grade.grounded and not grade.answer_ok and not grade.success


def test_an_invented_number_is_not_grounded():
	question = _question("revenue-2025")
	call_args = question["oracle"]["calls"][0]

	def model_for(_):
		return ScriptedModel([call(*call_args), answer("Revenue was 123,456.78 in 2025.")])

	grade = _run_with(model_for, [question]).grades[0]
	assert grade.tool_ok and grade.unsupported == 1 and not grade.grounded and not grade.success


def test_a_refusal_is_due_only_where_the_person_lacks_access():
	refuse = _question("refuse-invoice-total")
	polite = _run_with(
		lambda _: ScriptedModel([answer("You do not have permission to read sales invoices.")]), [refuse]
	)
	assert polite.grades[0].success and polite.grades[0].tool_ok is None
	made_up = _run_with(lambda _: ScriptedModel([answer("Seed Customer 01 was invoiced 54,321.")]), [refuse])
	assert not made_up.grades[0].refusal_ok and not made_up.grades[0].success
	# A refusal in words after the data came back anyway is a leak, not a refusal.
	leaky = next(q for q in QUESTIONS if q["id"] == "refuse-invoice-total")
	leaky = {**leaky, "person": "accounts"}
	call_args = leaky["oracle"]["calls"][0]
	leak = _run_with(lambda _: ScriptedModel([call(*call_args), answer("I cannot answer that.")]), [leaky])
	assert not leak.grades[0].refusal_ok and not leak.grades[0].success
	figure = _question("count-customers-europe")
	shy = _run_with(lambda _: ScriptedModel([answer("I cannot access customer records.")]), [figure])
	assert not shy.grades[0].refusal_ok and shy.grades[0].tool_ok is False and not shy.grades[0].success


def test_a_broken_runner_is_reported_per_question_not_raised():
	def broken(_question):
		raise RuntimeError("connector exploded")

	report = evaluate(QUESTIONS[:2], DataFacts(seed.build()), broken, provider="test", echo=None)
	assert [g.error for g in report.grades] == ["RuntimeError: connector exploded"] * 2
	assert report.totals()["passed"] == 0 and report.totals()["errors"] == 2


def test_eval_through_the_http_stub_counts_tokens(capsys):
	code = cli.main(["eval", "--stub", "--only", "revenue-2025", "--only", "create-customer"])
	out = capsys.readouterr().out
	assert code in (0, 3)  # the stub is a rule-based demo: it need not pass
	lines = [line for line in out.splitlines() if line.startswith("[")]
	assert len(lines) == 2 and "provider http stub" in out
	assert all(" 0 tokens" not in line for line in lines)


def test_eval_without_a_model_says_how_to_choose_one(capsys, monkeypatch):
	for name in ("NOVIZ_BASE_URL", "NOVIZ_MODEL"):
		monkeypatch.delenv(name, raising=False)
	code = cli.main(["eval"])
	err = capsys.readouterr().err
	assert code == 2 and "--oracle" in err and "--base-url" in err and "Traceback" not in err


def test_eval_refuses_an_unknown_question_id(capsys):
	code = cli.main(["eval", "--oracle", "--only", "no-such-question"])
	assert code == 2 and "no-such-question" in capsys.readouterr().err


def test_a_broken_question_file_is_one_clear_line(tmp_path, capsys):
	bad = tmp_path / "questions.json"
	bad.write_text(json.dumps({"questions": [{"id": "x", "question": "?"}]}))
	code = cli.main(["eval", "--oracle", "--questions", str(bad)])
	err = capsys.readouterr().err
	assert code == 2 and "lacks" in err and "person" in err
