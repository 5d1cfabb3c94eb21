"""Text PDFs through the reasoning model, against the OpenAI-compatible stub that refuses what OpenAI refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderFailure, ProviderSettings
from noviz_agent.intake import checks
from noviz_agent.intake.proposal import build, read_document
from noviz_agent.intake.vision import RESPONSE_FORMAT, structured_settings
from noviz_agent.testing.stub_provider import StubProvider

from .fakes import FakeSystem

HETZNER = (
	Path(__file__).parents[2] / "benchmarks" / "data" / "intake_real" / "text" / "hetzner-R0005532486.pdf"
)


def as_printed(**override) -> str:
	"""The answer a model gives for the Hetzner invoice, values copied as the page prints them."""
	value = {
		"document_type": "supplier_invoice",
		"party_name": "Hetzner Online GmbH",
		"party_tax_id": "DE812871812",
		"document_number": "R0005532486",
		"date": "19.01.2016",
		"due_date": "22.01.2016",
		"currency": "€",
		"lines": [
			{"description": "EQ4 #57811", "quantity": 1, "rate": 41.1765, "amount": 41.18, "item_code": None},
			{
				"description": "EX40 #253154",
				"quantity": 1,
				"rate": 41.1765,
				"amount": 41.18,
				"item_code": None,
			},
			*[
				{
					"description": "zusätzliche IP",
					"quantity": 1,
					"rate": 0.8403,
					"amount": 0.84,
					"item_code": None,
				}
				for _ in range(6)
			],
		],
		"taxes": [{"description": "USt. (19 %)", "amount": 16.61}],
		"subtotal": 87.39,
		"total": 104.0,
	}
	return json.dumps(value | override)


def provider(stub: StubProvider) -> OpenAICompatibleProvider:
	settings = ProviderSettings(base_url=stub.base_url, model="stub-model", max_retries=0)
	return OpenAICompatibleProvider(structured_settings(settings))


def test_text_pdf_goes_to_the_reasoning_model_as_page_text_with_the_extraction_schema():
	with StubProvider(rules=False) as stub:
		stub.push(text=as_printed())
		doc, meta = read_document(HETZNER.read_bytes(), HETZNER.name, text_model=provider(stub))
	assert meta == {"pages": 1, "read_by": ["model"]}
	body = stub.chat_requests[0]
	assert (
		body["response_format"] == RESPONSE_FORMAT
		and body["response_format"]["json_schema"]["strict"] is True
	)
	user = body["messages"][1]["content"]
	assert isinstance(user, str)  # text tokens, not an image
	assert "Rechnungsnummer: R0005532486" in user and "Brutto  104,00 €" in user
	# Code, not the model, turns the printed values into a date and a currency code.
	assert (doc["date"], doc["due_date"], doc["currency"]) == ("2016-01-19", "2016-01-22", "EUR")
	assert checks.totals_accepted(build(doc, FakeSystem())["checks"])


def test_total_the_model_gets_wrong_is_flagged_by_the_checks_not_accepted():
	with StubProvider(rules=False) as stub:
		stub.push(text=as_printed(total=140.0))
		doc, _ = read_document(HETZNER.read_bytes(), HETZNER.name, text_model=provider(stub))
	result = build(doc, FakeSystem())
	assert not checks.totals_accepted(result["checks"])
	assert any("but the total printed is 140.00" in m for m in result["failed_checks"])


def test_model_answer_outside_the_schema_is_not_used_and_the_builtin_reader_reads_the_page():
	with StubProvider(rules=False) as stub:
		stub.push(text='{"total": "104,00"}')
		doc, meta = read_document(HETZNER.read_bytes(), HETZNER.name, text_model=provider(stub))
	assert meta["read_by"] == ["text"]
	assert "does not follow the document schema" in meta["notes"][0]
	assert doc["document_number"] == "R0005532486" and doc["total"] == 104.0


def test_model_that_fails_leaves_the_page_to_the_builtin_reader_with_a_note():
	with StubProvider(rules=False) as stub:
		stub.push(status=503, error="overloaded")
		doc, meta = read_document(HETZNER.read_bytes(), HETZNER.name, text_model=provider(stub))
	assert meta["read_by"] == ["text"] and "reasoning model could not read" in meta["notes"][0]
	assert doc["total"] == 104.0


def test_stub_refuses_a_structured_output_schema_openai_would_refuse():
	loose = {
		"type": "json_schema",
		"json_schema": {
			"name": "document",
			"strict": True,
			"schema": {"type": "object", "properties": {"total": {"type": "number"}}},
		},
	}
	with StubProvider(rules=False) as stub:
		stub.push(text="{}")
		settings = ProviderSettings(
			base_url=stub.base_url, model="stub-model", max_retries=0, extra_body={"response_format": loose}
		)
		with pytest.raises(ProviderFailure) as failed:
			OpenAICompatibleProvider(settings).complete([{"role": "user", "content": "x"}], [])
		assert failed.value.status == 400
		assert stub.pending == 1  # the refused request took nothing from the queue
		assert {p.rule for p in stub.refused[0]["problems"]} == {
			"strict-additional-properties",
			"strict-required",
		}
