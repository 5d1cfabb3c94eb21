"""Files that cannot be read: each gets a message saying what to do, and nothing is written."""

from __future__ import annotations

import io
import zipfile

import pytest

from noviz_agent.engine import gateway
from noviz_agent.intake.files import IntakeError, Limits, check_file
from noviz_agent.intake.proposal import read_document
from noviz_agent.testing import ScriptedModel, answer
from noviz_agent.testing.invoices import InvoiceSpec, Line, render_image, render_pdf

from .fakes import FakeSystem, make_session

SPEC = InvoiceSpec(party_name="Seed Supplier 01", number="INV-1", lines=[Line("Office Chair", 1, 180)])


def encrypted_pdf() -> bytes:
	from fpdf import FPDF

	pdf = FPDF()
	pdf.set_encryption(owner_password="owner-secret", user_password="reader-secret")
	pdf.add_page()
	pdf.set_font("Helvetica", size=12)
	pdf.cell(text="INVOICE Invoice No: INV-1 Total 180.00")
	return bytes(pdf.output())


def zipped() -> bytes:
	out = io.BytesIO()
	with zipfile.ZipFile(out, "w") as z:
		z.writestr("invoice.txt", "Invoice")
	return out.getvalue()


def refused_through_the_tool(content: bytes, filename: str, **system_kw) -> str:
	system = FakeSystem(**system_kw)
	system.add_file("F-1", content, filename=filename)
	session = make_session(system)
	result = gateway.call_tool(session, "documents.intake", {"file": "F-1"})
	assert result.status == "error" and result.proposal is None
	assert system.inserted == []
	assert session.results.get("intake:x") is None and not session.results._data  # nothing kept either
	return result.error


def test_empty_file_is_refused():
	assert "is empty" in refused_through_the_tool(b"", "invoice.pdf")


def test_encrypted_pdf_is_refused_with_how_to_get_an_unprotected_copy():
	message = refused_through_the_tool(encrypted_pdf(), "locked.pdf")
	assert "password" in message and "unprotected copy" in message


def test_unsupported_type_is_refused_whatever_its_name_says():
	message = refused_through_the_tool(zipped(), "invoice.pdf")
	assert "not a file type that can be read" in message and "PDF" in message


def test_file_over_the_size_limit_is_refused():
	pdf = render_pdf(SPEC)
	message = refused_through_the_tool(pdf, "big.pdf", max_bytes=len(pdf) - 1)
	assert "the limit is" in message


def test_vision_answer_that_is_not_json_writes_nothing():
	message = refused_through_the_tool(
		render_image(SPEC), "photo.png", vision=ScriptedModel([answer("{not json")])
	)
	assert "not valid JSON" in message


def test_limits_from_settings_use_the_megabytes_set_by_the_admin():
	limits = Limits.from_settings({"intake_max_file_mb": 1})
	with pytest.raises(IntakeError, match="the limit is 1 MB"):
		check_file(b"%PDF-" + b"0" * (1024 * 1024), "x.pdf", limits)


def test_damaged_pdf_is_refused_not_a_traceback():
	with pytest.raises(IntakeError, match="could not be opened as a PDF"):
		read_document(b"%PDF-1.7\n garbage without objects", "broken.pdf")
