"""Errors the knowledge package raises; each message names what to fix."""


class KnowledgeError(Exception):
	"""Base for every error the knowledge package raises on purpose."""


class DocumentError(KnowledgeError):
	"""A process document cannot be read: the message starts with the file (or record) at fault."""


class StoreUnavailable(KnowledgeError):
	"""PostgreSQL cannot be reached or lacks pgvector."""


class EmbeddingError(KnowledgeError):
	"""The embedding provider failed or answered something unusable."""


class IndexingError(KnowledgeError):
	"""An index run stopped; documents already written stay, the failing one keeps its previous chunks."""

	def __init__(self, message: str, *, document: str | None = None, report=None):
		super().__init__(message)
		self.document = document
		self.report = report
