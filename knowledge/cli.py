"""``noviz-agent knowledge index|search|status``: the knowledge base outside a bench.

Results go to stdout (JSON with ``--json``), progress and errors to stderr; a failure
exits non-zero with one line saying what went wrong, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from knowledge.errors import KnowledgeError
from knowledge.service import KnowledgeConfig, load_documents, open_knowledge


def register(subparsers) -> None:
	"""Add the ``knowledge`` command group to the console script's argparse subparsers."""
	parser = subparsers.add_parser("knowledge", help="index and search the process documents")
	commands = parser.add_subparsers(dest="knowledge_command", metavar="{index,search,status}")
	commands.required = True

	index = commands.add_parser("index", help="index the documents (unchanged ones are skipped)")
	_store_options(index)
	index.add_argument("--rebuild", action="store_true", help="re-chunk and re-embed every document")
	index.add_argument("--json", action="store_true", help="print the report as JSON")
	index.set_defaults(func=_guarded(run_index))

	search = commands.add_parser("search", help="the closest passages for a question")
	search.add_argument("query")
	search.add_argument("--k", type=int, default=5, help="how many passages (default 5)")
	search.add_argument("--module", help="only this module, e.g. selling")
	search.add_argument(
		"--role",
		action="append",
		default=[],
		dest="roles",
		help="search as a person with this role (repeatable); without it, role-restricted documents stay hidden",
	)
	search.add_argument(
		"--no-index", action="store_true", help="search the store as it is, without indexing first"
	)
	search.add_argument("--json", action="store_true", help="print a JSON list of passages")
	_store_options(search)
	search.set_defaults(func=_guarded(run_search))

	status = commands.add_parser("status", help="what the store holds")
	_store_options(status, with_docs=False)
	status.add_argument("--json", action="store_true")
	status.set_defaults(func=_guarded(run_status))


def _store_options(parser: argparse.ArgumentParser, *, with_docs: bool = True) -> None:
	if with_docs:
		parser.add_argument(
			"--docs",
			action="append",
			type=Path,
			default=[],
			help="a folder of documents (repeatable); default: the shipped knowledge/docs",
		)
	parser.add_argument(
		"--data-dir", type=Path, help="folder of the embedded PostgreSQL (used when no --dsn)"
	)
	parser.add_argument("--dsn", help="PostgreSQL with pgvector, e.g. postgresql://user@host/db")
	parser.add_argument(
		"--embedding-model",
		help="OpenAI-compatible embedding model (default: the built-in local embedder)",
	)
	parser.add_argument("--embedding-base-url", help="base URL of the OpenAI-compatible embeddings API")
	parser.add_argument(
		"--lexical",
		action="store_true",
		help="no embedder at all: BM25 only (when no --embedding-model is given)",
	)


def _config(args) -> KnowledgeConfig:
	docs = tuple(getattr(args, "docs", []) or ())
	return KnowledgeConfig.from_env(
		dsn=args.dsn,
		data_dir=args.data_dir,
		docs_dirs=docs,
		include_shipped=not docs,
		embedding_model=args.embedding_model,
		embedding_base_url=args.embedding_base_url,
		builtin_embedder=False if args.lexical else None,
	)


def run_index(args) -> int:
	config = _config(args)
	base = open_knowledge(config)
	documents = load_documents(config)
	report = base.index(documents, rebuild=args.rebuild, progress=_stderr_progress)
	if args.json:
		print(json.dumps(report.to_dict()))
	else:
		summary = report.to_dict()
		print(
			f"{summary['added']} added, {summary['updated']} updated, {summary['unchanged']} unchanged, "
			f"{summary['removed']} removed; {summary['chunks_written']} chunks written, "
			f"{summary['embedding_calls']} embedding requests, {summary['seconds']} s"
		)
	return 0


def run_search(args) -> int:
	config = _config(args)
	base = open_knowledge(config)
	if not args.no_index:
		# Cheap when nothing changed: only checksums are compared.
		base.index(load_documents(config))
	passages = base.search(args.query, k=args.k, module=args.module, roles=args.roles)
	if args.json:
		print(json.dumps([passage.to_dict() for passage in passages], ensure_ascii=False))
		return 0
	if not passages:
		print("no passage matches")
	for number, passage in enumerate(passages, start=1):
		print(f"{number}. {passage.citation}  [{passage.module}/{passage.slug}]  score {passage.score:.4f}")
		print("   " + " ".join(passage.content.split())[:300])
	return 0


def run_status(args) -> int:
	config = _config(args)
	status = open_knowledge(config).status()
	if args.json:
		print(json.dumps(status))
	else:
		for key, value in status.items():
			print(f"{key}: {value}")
	return 0


def _stderr_progress(done: int, total: int, current: str) -> None:
	width = 30
	filled = int(width * done / total) if total else width
	sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {current[:40]:<40}")
	if done >= total:
		sys.stderr.write("\n")
	sys.stderr.flush()


def _guarded(command):
	"""Turn every failure into one line on stderr and exit code 2 (1 for the unexpected)."""

	def run(args) -> int:
		try:
			return command(args)
		except KnowledgeError as exc:
			print(f"error: {exc}", file=sys.stderr)
			return 2
		except KeyboardInterrupt:
			print("interrupted", file=sys.stderr)
			return 130
		except Exception as exc:  # the promise is no traceback, whatever failed
			print(f"error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
			return 1

	run.__name__ = command.__name__
	return run


def main(argv: list[str] | None = None) -> int:
	"""Run the knowledge commands alone (``python -m knowledge.cli``), as the console script would."""
	parser = argparse.ArgumentParser(prog="noviz-agent")
	register(parser.add_subparsers(dest="command", required=True))
	args = parser.parse_args(argv)
	return args.func(args)


if __name__ == "__main__":
	sys.exit(main())
