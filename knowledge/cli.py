"""``noviz-agent knowledge index|search|status``: the knowledge base outside a bench.

Results go to stdout (JSON with ``--json``), progress (a tqdm bar) and errors to stderr; a
failure exits non-zero with one line saying what went wrong, never a traceback. The store and
search libraries are imported when a command runs, not for ``--help``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from knowledge.errors import KnowledgeError


def _command(commands, name: str, summary: str, description: str, examples: list[str]):
	epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples)
	raw = argparse.RawDescriptionHelpFormatter
	return commands.add_parser(
		name, help=summary, description=description, epilog=epilog, formatter_class=raw
	)


def register(subparsers) -> None:
	"""Add the ``knowledge`` command group to the console script's argparse subparsers."""
	parser = _command(
		subparsers,
		"knowledge",
		"index and search the process documents",
		"The process documents the agent cites (shipped ones and your own Markdown folders), indexed "
		"in PostgreSQL with pgvector (an embedded server unless --dsn is given) and searched by words "
		"and meaning.",
		[
			'noviz-agent knowledge search "how do I return goods to a supplier"',
			"noviz-agent knowledge status",
		],
	)
	commands = parser.add_subparsers(dest="knowledge_command", metavar="{index,search,status}")
	commands.required = True

	index = _command(
		commands,
		"index",
		"index the documents (unchanged ones are skipped)",
		"Chunk and embed the documents into the store; documents whose checksum did not change are skipped.",
		["noviz-agent knowledge index", "noviz-agent knowledge index --docs ./our-procedures --rebuild"],
	)
	_store_options(index)
	index.add_argument("--rebuild", action="store_true", help="re-chunk and re-embed every document")
	index.add_argument("--json", action="store_true", help="print the report as JSON")
	index.set_defaults(func=_guarded(run_index))

	search = _command(
		commands,
		"search",
		"the closest passages for a question",
		"The passages closest to a question, as a person with the given roles may read them, each "
		"with why it matched (the words it shares with the question, how close it is in meaning).",
		[
			'noviz-agent knowledge search "why can\'t I edit a submitted invoice" --k 3',
			'noviz-agent knowledge search "payroll" --module hr --role "HR Manager" --json',
		],
	)
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

	status = _command(
		commands,
		"status",
		"what the store holds",
		"Documents and chunks in the store, the embedding model, and whether search is hybrid or lexical.",
		["noviz-agent knowledge status --json"],
	)
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


def _config(args):
	from knowledge.service import KnowledgeConfig

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
	from knowledge.service import load_documents, open_knowledge

	config = _config(args)
	base = open_knowledge(config)
	documents = load_documents(config)
	with Progress("indexing") as progress:
		report = base.index(documents, rebuild=args.rebuild, progress=progress)
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
	from knowledge.service import load_documents, open_knowledge

	config = _config(args)
	documents = load_documents(config)
	modules = sorted({document.module for document in documents})
	if args.module and args.module not in modules:
		raise KnowledgeError(_unknown_module(args.module, modules))
	base = open_knowledge(config)
	if not args.no_index:
		# Cheap when nothing changed: only checksums are compared.
		base.index(documents)
	passages = base.search(args.query, k=args.k, module=args.module, roles=args.roles)
	if args.json:
		print(json.dumps([passage.to_dict() for passage in passages], ensure_ascii=False))
		return 0
	if not passages:
		print("no passage matches")
	for number, passage in enumerate(passages, start=1):
		print(f"{number}. {passage.citation}  [{passage.module}/{passage.slug}]")
		print(f"   why: {relevance(passage)}")
		print("   " + " ".join(passage.content.split())[:300])
	return 0


def relevance(passage) -> str:
	"""Why a passage was found, in words: the words it shares with the question, how close in meaning.

	The fused score only orders results (reciprocal ranks, not a probability): it is not shown."""
	reasons = []
	if passage.lexical > 0:
		reasons.append("shares words with the question")
	if passage.similarity is not None:
		closeness = max(0, round(passage.similarity * 100))
		reasons.append(f"close in meaning ({closeness}% alike)")
	return " and ".join(reasons) or "the nearest passage found, sharing no word with the question"


def _unknown_module(name: str, modules: list[str]) -> str:
	from rapidfuzz import fuzz, process

	close = [m for m, _, _ in process.extract(name, modules, scorer=fuzz.WRatio, limit=2, score_cutoff=70)]
	hint = f"; did you mean {' or '.join(close)}?" if close else ""
	return f"no module {name!r} among the documents{hint} The modules are: {', '.join(modules)}"


def run_status(args) -> int:
	from knowledge.service import open_knowledge

	config = _config(args)
	status = open_knowledge(config).status()
	if args.json:
		print(json.dumps(status))
	else:
		for key, value in status.items():
			print(f"{key}: {value}")
	return 0


class Progress:
	"""The indexer's ``progress(done, total, title)`` callback as a tqdm bar on stderr."""

	def __init__(self, label: str):
		self.label = label
		self.bar = None

	def __enter__(self) -> Progress:
		return self

	def __call__(self, done: int, total: int, current: str) -> None:
		from tqdm import tqdm

		if self.bar is None:
			self.bar = tqdm(total=total, desc=self.label, unit="doc", file=sys.stderr, disable=False)
		self.bar.total = total
		self.bar.set_postfix_str(current[:40], refresh=False)
		self.bar.update(done - self.bar.n)

	def __exit__(self, *exc) -> None:
		if self.bar is not None:
			self.bar.close()


def _guarded(command):
	"""Turn every failure into one line on stderr and exit code 2 (1 for the unexpected)."""

	def run(args) -> int:
		try:
			return command(args)
		except BrokenPipeError:
			raise  # the reader went away (`| head`): the console script ends quietly
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
