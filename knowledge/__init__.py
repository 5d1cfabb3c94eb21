"""Frappe-free knowledge: process documents, chunking, embedding, the pgvector store and search.

- ``docs/<module>/<slug>.md``: the shipped process documents (front matter: title, module, doctypes, roles)
- ``documents``: read and validate documents from folders or desk records, with checksums
- ``chunking``: split at ``## `` headings, long sections with overlap, labels ``title > section``
- ``embedding``: the embedder protocol, the OpenAI-compatible embedder, the built-in local one
  (``builtin_embedder()``: WordLlama from its wheel; knowledge embeds content words with it by
  default, ``ContentWordsEmbedder``) and a deterministic hashing one
- ``vocabulary``: everyday words to ERPNext terms, added to questions before search
- ``store``: PostgreSQL + pgvector (HNSW, cosine); ``embedded``: the bundled server when no DSN is set
- ``indexing``: checksum-skipping, batch-embedding index runs; ``search``: BM25 + vectors, fused by rank
- ``service``: settings in, a cached knowledge base out; ``cli``: ``noviz-agent knowledge ...``
"""
