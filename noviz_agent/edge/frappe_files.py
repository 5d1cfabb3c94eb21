"""The frappe edge of document intake: the uploaded File, the candidates read as the person, the draft.

An upload is checked (type, size, a readable PDF) before anything is written, then stored as a
private File attached to the person's conversation; only its owner may read it back here. Confirm
inserts the new records the proposal listed and the draft (docstatus 0) in the person's own
session, inside one savepoint, and attaches the original file to the draft.
"""

from __future__ import annotations

import frappe
from frappe import _

from noviz_agent.edge import frappe_session
from noviz_agent.edge.frappe_versions import form_path
from noviz_agent.intake import einvoice, files, vision
from noviz_agent.intake.files import IntakeError, Limits
from noviz_agent.intake.values import site_order

CONVERSATION = "Agent Conversation"
PARTY_DOCTYPES = {"supplier": ("Supplier", "supplier_name"), "customer": ("Customer", "customer_name")}
# Site tests set these to `(settings) -> provider` to script the vision or the reasoning model.
vision_factory = None
text_factory = None


def save_upload(content: bytes, filename: str, conversation: str | None, values: dict) -> str:
	"""Store an upload as a private File of the person; refused in words (nothing written) when unusable."""
	limits = Limits.from_settings(values)
	kind = files.check_file(content, filename, limits)
	if kind == "pdf":
		files.open_pdf(content, filename).close()  # a protected or damaged PDF is refused before it is stored
	if kind == "xml":
		einvoice.parse_xml(content, filename)  # malformed or hostile XML is refused before it is stored
	doc = frappe.get_doc(
		{
			"doctype": "File",
			"file_name": filename or f"document.{kind}",
			"content": content,
			"is_private": 1,
			"attached_to_doctype": CONVERSATION if conversation else None,
			"attached_to_name": conversation,
		}
	)
	doc.insert()
	return doc.name


class FrappeIntake:
	"""What `documents.intake` reads and writes, always as the signed-in person."""

	def __init__(self, user: str, values: dict):
		self.user = user
		self.values = values

	def limits(self) -> Limits:
		return Limits.from_settings(self.values)

	def read_file(self, file: str) -> tuple[str, bytes]:
		"""The person's own upload; someone else's file is refused even where the site would show it."""
		rows = frappe.get_list(
			"File", filters={"name": file, "owner": self.user}, fields=["name", "file_name"]
		)
		if not rows:
			raise IntakeError(
				_("File {0} is not one of your uploads; upload the document in the chat.").format(file)
			)
		return rows[0].file_name, frappe.get_doc("File", file).get_content()

	def vision_model(self):
		"""The vision model, every call of it rate-gated and held against the person's budgets (each
		page read is a model call); None when none is configured, so nothing renders pages for it."""
		from noviz_agent.edge.frappe_governance import metered

		values = frappe_session.load_settings(with_secrets=True)
		if vision_factory is not None:
			return metered(vision_factory(self.values), values, self.user)
		if not (values.get("vision_model") or "").strip():
			return None
		model = self._structured(values, "vision")
		return metered(model, values, self.user) if model is not None else None

	def text_model(self):
		"""The reasoning model, asked for the extraction schema, to read text PDFs, rate-gated and held
		against the person's budgets like the vision model; None when not configured."""
		from noviz_agent.edge.frappe_governance import metered

		values = frappe_session.load_settings(with_secrets=True)
		if text_factory is not None:
			return metered(text_factory(self.values), values, self.user)
		if not (values.get("base_url") or "").strip() or not (values.get("model") or "").strip():
			return None
		model = self._structured(values, "reasoning")
		return metered(model, values, self.user) if model is not None else None

	@staticmethod
	def _structured(values: dict, role: str):
		from noviz_agent.engine.provider import OpenAICompatibleProvider, SettingsError

		try:
			settings = frappe_session.provider_settings(values, role)
		except SettingsError:
			return None  # incomplete settings: the document is read without this model
		return OpenAICompatibleProvider(vision.structured_settings(settings))

	def date_order(self) -> str | None:
		"""DMY or MDY from the site's date format: the tie-breaker for a truly ambiguous printed date."""
		return site_order(frappe.db.get_single_value("System Settings", "date_format"))

	def _company(self) -> str | None:
		return frappe.defaults.get_user_default(
			"Company", user=self.user
		) or frappe.defaults.get_global_default("company")

	def tax_accounts(self) -> list[dict]:
		"""The tax accounts of the person's company that they can read, with their rates."""
		filters = {"account_type": "Tax", "is_group": 0, "disabled": 0}
		if self._company():
			filters["company"] = self._company()
		try:
			rows = frappe.get_list(
				"Account", filters=filters, fields=["name", "tax_rate"], limit_page_length=0
			)
		except frappe.PermissionError:
			return []
		return [dict(r) for r in rows]

	def expense_types(self) -> list[str]:
		if not frappe.db.exists("DocType", "Expense Claim Type"):
			return []
		try:
			return frappe.get_list("Expense Claim Type", pluck="name", limit_page_length=0)
		except frappe.PermissionError:
			return []

	def employee(self) -> str | None:
		if not frappe.db.exists("DocType", "Employee"):
			return None
		try:
			rows = frappe.get_list(
				"Employee", filters={"user_id": self.user, "status": "Active"}, pluck="name"
			)
		except frappe.PermissionError:
			return None
		return rows[0] if len(rows) == 1 else None

	def parties(self, party_type: str) -> list[dict]:
		doctype, title = PARTY_DOCTYPES[party_type]
		try:
			rows = frappe.get_list(
				doctype,
				fields=["name", f"{title} as title", "tax_id"],
				filters={"disabled": 0},
				limit_page_length=0,
			)
		except frappe.PermissionError:
			return []
		return [dict(r) for r in rows]

	def items(self) -> list[dict]:
		try:
			rows = frappe.get_list(
				"Item",
				fields=["name as item_code", "item_name"],
				filters={"disabled": 0},
				limit_page_length=0,
			)
			parts = frappe.get_list(
				"Item",
				fields=["name", "`tabItem Supplier`.supplier", "`tabItem Supplier`.supplier_part_no"],
				filters=[["Item Supplier", "supplier_part_no", "is", "set"]],
				limit_page_length=0,
			)
		except frappe.PermissionError:
			return []
		by_item: dict[str, list] = {}
		for p in parts:
			by_item.setdefault(p.name, []).append([p.supplier, p.supplier_part_no])
		return [{**r, "supplier_parts": by_item.get(r.item_code, [])} for r in rows]

	def currencies(self) -> set[str] | None:
		try:
			return set(frappe.get_list("Currency", filters={"enabled": 1}, pluck="name", limit_page_length=0))
		except frappe.PermissionError:
			return None

	def existing_bills(self, supplier: str, bill_no: str) -> list[str]:
		try:
			return frappe.get_list(
				"Purchase Invoice",
				filters={"supplier": supplier, "bill_no": bill_no, "docstatus": ["!=", 2]},
				pluck="name",
			)
		except frappe.PermissionError:
			return []

	def can_create(self, doctype: str) -> bool:
		if not frappe.db.exists("DocType", doctype):
			raise IntakeError(
				_("{0} is not installed on this site, so this document cannot become one.").format(doctype)
			)
		return bool(frappe.has_permission(doctype, "create", user=self.user))

	def insert_draft(self, draft: dict, file: str) -> dict:
		"""The new records and the draft, as the person, in one savepoint; the file attached to the draft."""
		from noviz_agent.engine.errors import ValidationFailed

		source = frappe.get_doc("File", file)
		if source.owner != self.user:
			raise IntakeError(_("File {0} is not one of your uploads.").format(file))
		savepoint = "noviz_agent_intake"
		frappe.db.savepoint(savepoint)
		try:
			created = []
			for record in draft["new_records"]:
				doc = frappe.get_doc({"doctype": record["doctype"], **record["values"]}).insert()
				created.append({"doctype": doc.doctype, "name": doc.name})
			doc = frappe.get_doc({"doctype": draft["doctype"], **draft["values"]})
			doc.insert()
			frappe.get_doc(
				{
					"doctype": "File",
					"file_url": source.file_url,
					"file_name": source.file_name,
					"is_private": 1,
					"attached_to_doctype": doc.doctype,
					"attached_to_name": doc.name,
				}
			).insert()
		except frappe.PermissionError as exc:
			frappe.db.rollback(save_point=savepoint)
			from noviz_agent.engine.errors import PermissionDenied

			raise PermissionDenied(
				str(exc) or _("You do not have permission to create {0}.").format(draft["doctype"])
			) from None
		except (frappe.ValidationError, frappe.LinkValidationError) as exc:
			frappe.db.rollback(save_point=savepoint)
			raise ValidationFailed(frappe.utils.strip_html(str(exc))) from None
		return {
			"name": doc.name,
			"_link": form_path(doc.doctype, doc.name),
			"new_records": created,
		}


# Files above this size are read on the long queue when a worker serves it (scans of many pages).
BACKGROUND_BYTES = 3 * 1024 * 1024
INTAKE_EVENT = "noviz_agent_intake"


def run_intake(values: dict, file: str, filename: str, conversation: str | None, turn: str | None):
	"""`documents.intake` through the gateway as the signed-in person: (response, log, history entry)."""
	from noviz_agent.engine import gateway, loop, responses

	session = frappe_session.build_session(values, turn=turn, conversation=conversation)
	result = gateway.call_tool(session, "documents.intake", {"file": file})
	if result.status == "proposal":
		text = _("Here is the draft read from {0} (file {1}). Check it, then Confirm or Cancel.").format(
			filename, file
		)
		response = responses.build(text, [result], entities=session.registry.vocabulary.entities)
	elif result.status == "refused":
		response = {**responses.empty_response(), "type": "refusal", "refusal": {"message": result.error}}
	else:
		response = responses.error_response(result.error or _("The document could not be read."))
	log = {
		"request": f"[upload {filename}]",
		"response_type": response["type"],
		"tools_called": loop.tool_calls_for_log([result]),
		"error": None if result.status == "proposal" else result.error,
	}
	# The file's ID stays in the history, so a later message can ask for a change to this draft.
	entry = {
		"question": f"[uploaded {filename} as file {file}]",
		"answer": response.get("text") or result.error or "",
		"tool_calls": log["tools_called"],
	}
	return response, log, entry


def attach_to_conversation(file: str, conversation: str) -> None:
	"""An upload made before its conversation existed is attached to it once it does (by its owner)."""
	doc = frappe.get_doc("File", file)
	if not doc.attached_to_name:
		doc.attached_to_doctype, doc.attached_to_name = CONVERSATION, conversation
		doc.save()


def runs_in_background(size: int) -> bool:
	return size > BACKGROUND_BYTES and frappe_session.long_queue_served()


def enqueue_intake(
	user: str, file: str, conversation: str, turn: str, *, new_conversation: bool = False, filename: str = ""
) -> None:
	frappe.enqueue(
		"noviz_agent.edge.frappe_files.intake_job",
		queue="long",
		user=user,
		file=file,
		conversation=conversation,
		turn=turn,
		new_conversation=new_conversation,
		filename=filename,
		job_id=f"noviz_agent:intake:{file}",
		deduplicate=True,
		enqueue_after_commit=True,
	)


def intake_job(
	user: str, file: str, conversation: str, turn: str, new_conversation: bool = False, filename: str = ""
) -> None:
	"""The background reading of a large upload, as its owner: a turn of the conversation it was
	uploaded in (its proposal bound to it, its log row written), the answer sent to them only."""
	from noviz_agent import api

	frappe.set_user(user)
	values = frappe_session.load_settings()
	filename = filename or FrappeIntake(user, values).read_file(file)[0]
	exists = bool(conversation) and frappe.db.exists(CONVERSATION, conversation)
	doc = api._own_conversation(conversation, user) if exists else None
	if doc is None and not new_conversation and conversation:
		conversation = None  # the conversation was deleted meanwhile: the draft starts a new one
	reply = api.answer_upload(
		user, values, file, filename, doc, conversation or frappe.generate_hash(length=10), turn
	)
	frappe.publish_realtime(
		INTAKE_EVENT,
		{
			"turn": turn,
			"conversation": reply["conversation"],
			"file": file,
			"response": reply["response"],
			"log": reply["log"],
		},
		user=user,
	)
