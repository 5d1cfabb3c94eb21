"""Frappe-free knowledge: process documents, chunking, embedding, the pgvector store and search."""
