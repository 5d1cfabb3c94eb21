"""``noviz-agent knowledge ...``: JSON out, one-line errors, non-zero exits, never a traceback."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
from pathlib import Path

import psycopg
import pytest

from knowledge import cli, service


@pytest.fixture
def run(pg_dsn, capsys):
	"""Run the knowledge commands against the session server's default schema, freshly emptied."""
	service.close_all()
	with psycopg.connect(pg_dsn, autocommit=True) as connection:
		connection.execute("DROP SCHEMA IF EXISTS noviz_knowledge CASCADE")

	def _run(*argv, dsn=True):
		args = list(argv) + (["--dsn", pg_dsn] if dsn else [])
		code = cli.main(args)
		out, err = capsys.readouterr()
		return code, out, err

	yield _run
	service.close_all()


def test_register_adds_the_knowledge_group_to_a_parent_parser():
	parser = argparse.ArgumentParser(prog="noviz-agent")
	cli.register(parser.add_subparsers(dest="command"))
	args = parser.parse_args(["knowledge", "search", "stock", "--k", "3", "--json"])
	assert args.k == 3 and args.json and callable(args.func)


def test_index_then_search_as_json(run, write, docs_root):
	write(
		"selling",
		"returns",
		"## Credit notes\n\nA credit note reverses a sales invoice.",
		title="Sales returns",
	)
	write("hr", "payroll", "## Slips\n\nSalary slips are confidential.", roles=["HR Manager"])
	code, out, err = run("knowledge", "index", "--docs", str(docs_root), "--json")
	assert code == 0, err
	assert json.loads(out)["added"] == 2
	assert "2/2" in err  # the progress bar goes to stderr

	code, out, _ = run("knowledge", "search", "credit note", "--docs", str(docs_root), "--json", "--k", "2")
	assert code == 0
	results = json.loads(out)
	assert results[0] == {
		"title": "Sales returns",
		"section": "Credit notes",
		"slug": "returns",
		"module": "selling",
		"score": results[0]["score"],
		"content": "A credit note reverses a sales invoice.",
		"releases": [],
		"version_note": "",
	}

	code, out, _ = run("knowledge", "search", "salary slips", "--docs", str(docs_root), "--json")
	# Hybrid search still offers the nearest visible passage, never the restricted one.
	assert code == 0 and "payroll" not in {passage["slug"] for passage in json.loads(out)}
	code, out, _ = run("knowledge", "search", "salary slips", "--docs", str(docs_root), "--json", "--lexical")
	assert json.loads(out) == []
	code, out, _ = run(
		"knowledge", "search", "salary slips", "--docs", str(docs_root), "--json", "--role", "HR Manager"
	)
	assert json.loads(out)[0]["slug"] == "payroll"


def test_search_indexes_the_shipped_documents_when_no_folder_is_given(run):
	code, out, err = run(
		"knowledge", "search", "why can't I edit a submitted invoice", "--json", "--module", "core"
	)
	assert code == 0, err
	results = json.loads(out)
	assert results and all(r["module"] == "core" for r in results)


def test_status_reports_counts(run, write, docs_root):
	write("stock", "valuation", "## FIFO\n\nOldest first.")
	run("knowledge", "index", "--docs", str(docs_root))
	code, out, _ = run("knowledge", "status", "--json")
	status = json.loads(out)
	assert code == 0 and status["documents"] == 1 and status["mode"] == "hybrid"
	assert status["embedder"].startswith("wordllama")


def test_lexical_option_indexes_and_searches_without_an_embedder(run, write, docs_root):
	write("stock", "valuation", "## FIFO\n\nOldest first.")
	code, out, err = run("knowledge", "index", "--docs", str(docs_root), "--lexical", "--json")
	assert code == 0, err
	assert json.loads(out)["embedding_model"] is None
	code, out, _ = run("knowledge", "status", "--json", "--lexical")
	assert json.loads(out)["mode"] == "lexical"


def test_empty_query_exits_non_zero_with_one_line(run, write, docs_root):
	write("stock", "valuation", "Text.")
	code, out, err = run("knowledge", "search", "  ", "--docs", str(docs_root), "--json")
	assert code == 2 and out == ""
	assert err.startswith("error: empty query") and "Traceback" not in err


def test_malformed_front_matter_names_the_file(run, docs_root):
	(docs_root / "stock").mkdir()
	(docs_root / "stock" / "bad.md").write_text("---\ntitle: [oops\n---\nx", encoding="utf-8")
	code, _, err = run("knowledge", "index", "--docs", str(docs_root))
	assert code == 2 and "stock/bad.md" in err and "Traceback" not in err


def test_unreachable_dsn_exits_non_zero(run):
	code, _, err = run("knowledge", "status", "--dsn", "postgresql://x:pw@127.0.0.1:1/db", dsn=False)
	assert code == 2 and "cannot reach PostgreSQL" in err and "pw" not in err.replace("PostgreSQL", "")


def test_embedded_server_in_a_data_dir(run, write, docs_root):
	write("stock", "valuation", "## FIFO\n\nOldest lots first.")
	data_dir = Path(tempfile.mkdtemp(prefix="noviz-knowledge-cli-")) / "data"
	try:
		code, out, err = run(
			"knowledge",
			"search",
			"oldest lots",
			"--docs",
			str(docs_root),
			"--data-dir",
			str(data_dir),
			"--json",
			dsn=False,
		)
		assert code == 0, err
		assert json.loads(out)[0]["slug"] == "valuation"
		assert (data_dir / "pgdata" / "PG_VERSION").exists()
	finally:
		service.close_all()
		shutil.rmtree(data_dir.parent, ignore_errors=True)


def test_search_shows_why_a_passage_matched_not_a_raw_fusion_score(run, write, docs_root):
	write(
		"selling",
		"returns",
		"## Credit notes\n\nA credit note reverses a sales invoice.",
		title="Sales returns",
	)
	write("stock", "valuation", "## FIFO\n\nOldest lots are issued first.", title="Valuation")
	run("knowledge", "index", "--docs", str(docs_root))
	code, out, err = run("knowledge", "search", "credit note", "--docs", str(docs_root), "--k", "2")
	assert code == 0, err
	first = out.splitlines()[:2]
	assert first[0].startswith("1. Sales returns > Credit notes")
	assert first[1].startswith("   why: shares words with the question and close in meaning (")
	assert "score" not in out and not re.search(r"\b0\.0\d{3}\b", out)


def test_index_progress_is_a_library_progress_bar(run, write, docs_root):
	write("stock", "valuation", "## FIFO\n\nOldest first.")
	code, _, err = run("knowledge", "index", "--docs", str(docs_root))
	assert code == 0 and "indexing: 100%" in err and "1/1" in err and "doc" in err
