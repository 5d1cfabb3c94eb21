"""Agent Knowledge Document: a process explanation edited in the desk, indexed with the shipped ones."""

import frappe
from frappe.model.document import Document

from knowledge.documents import document_from_record, slugify
from knowledge.errors import DocumentError


class AgentKnowledgeDocument(Document):
	def validate(self):
		self.set_slug()
		self.validate_as_knowledge()

	def set_slug(self):
		self.slug = slugify(self.slug or self.title or "")

	def validate_as_knowledge(self):
		lines = lambda value: [p.strip() for p in (value or "").replace(",", "\n").splitlines() if p.strip()]  # noqa: E731
		try:
			document_from_record(
				self.name or self.slug,
				title=self.title,
				module=self.module,
				content=self.body or "",
				doctypes=lines(self.doctypes),
				roles=lines(self.roles),
				slug=self.slug,
			)
		except DocumentError as exc:
			frappe.throw(str(exc))
