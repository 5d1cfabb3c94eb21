"""Scans and photos through a scripted vision model: the image sent as a data URL, the JSON answer read."""

from __future__ import annotations

import base64
import io
import json

import pytest

from noviz_agent.engine.llm import ModelSettings
from noviz_agent.intake import vision
from noviz_agent.intake.files import IntakeError
from noviz_agent.intake.proposal import read_document
from noviz_agent.testing import ScriptedModel, answer
from noviz_agent.testing.invoices import InvoiceSpec, Line, render_image

SPEC = InvoiceSpec(
	party_name="Seed Supplier 02",
	number="INV-88",
	lines=[Line("Toner Cartridge", 3, 76.0), Line("Coffee Beans 1kg", 10, 24.0)],
	currency="USD",
)


def page_answer(spec: InvoiceSpec, **override) -> str:
	value = spec.expected() | {"date": spec.date.strftime("%d %B %Y")} | override
	return json.dumps(value)


def image_only_pdf(pages: int) -> bytes:
	from fpdf import FPDF

	pdf = FPDF(unit="pt", format="A4")
	for _ in range(pages):
		pdf.add_page()
		pdf.image(io.BytesIO(render_image(SPEC)), x=0, y=0, w=595)
	return bytes(pdf.output())


def test_photo_goes_to_the_vision_model_as_a_data_url_and_comes_back_in_the_schema():
	image = render_image(SPEC)
	model = ScriptedModel([answer(page_answer(SPEC))])
	with model:
		doc, meta = read_document(image, "photo.png", vision_model=model)
	messages = model.requests[0][0]
	part = messages[1]["content"][1]
	assert part["type"] == "image_url"
	prefix = "data:image/png;base64,"
	assert part["image_url"]["url"].startswith(prefix)
	assert base64.b64decode(part["image_url"]["url"][len(prefix) :]) == image
	assert '"document_type"' in messages[0]["content"]  # the schema is in the prompt too
	assert meta == {"pages": 1, "read_by": ["vision"]}
	assert doc == SPEC.expected()  # the printed date is parsed in code


def test_image_only_pdf_is_read_page_by_page_and_merged():
	first = page_answer(SPEC, lines=SPEC.expected()["lines"][:1], total=None, subtotal=None)
	second = page_answer(SPEC, lines=SPEC.expected()["lines"][1:], party_name=None)
	model = ScriptedModel([answer(first), answer(second)])
	with model:
		doc, meta = read_document(image_only_pdf(2), "scan.pdf", vision_model=model)
	assert meta == {"pages": 2, "read_by": ["vision", "vision"]}
	assert [x["description"] for x in doc["lines"]] == ["Toner Cartridge", "Coffee Beans 1kg"]
	assert doc["total"] == SPEC.total and doc["party_name"] == "Seed Supplier 02"


def test_vision_settings_ask_for_the_strict_json_schema():
	settings = vision.vision_settings(
		ModelSettings(base_url="http://127.0.0.1:1/v1", model="m", role="vision")
	)
	fmt = settings.extra_body["response_format"]
	assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
	schema = fmt["json_schema"]["schema"]
	assert set(schema["required"]) == set(schema["properties"])  # strict mode: every property required


def test_vision_answer_that_is_not_json_is_refused_with_a_clear_message():
	model = ScriptedModel([answer("Sure! The invoice is from Seed Supplier 02, total 468.")])
	with pytest.raises(IntakeError, match="not valid JSON"):
		read_document(render_image(SPEC), "photo.png", vision_model=model)


def test_vision_answer_outside_the_schema_is_refused():
	model = ScriptedModel([answer(json.dumps({"party_name": "X"}))])
	with pytest.raises(IntakeError, match="does not follow the document schema"):
		read_document(render_image(SPEC), "photo.png", vision_model=model)


def test_scan_without_a_vision_model_says_what_to_configure():
	with pytest.raises(IntakeError, match="no vision model is configured"):
		read_document(render_image(SPEC), "photo.png", vision_model=None)
