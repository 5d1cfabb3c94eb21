"""Scans, photos and image-only PDF pages read by the configured vision model, one page per request.

Images go as base64 data URLs in an OpenAI-compatible chat message; the answer must be JSON in
the extraction schema (`document.DOCUMENT_SCHEMA`), requested as a strict `response_format` where
the provider supports it and restated in the prompt where it does not. An answer that is not valid
JSON, or not in the schema, is refused with a clear message: it is never repaired by guessing.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re

import jsonschema

from noviz_agent.intake.document import DOCUMENT_SCHEMA
from noviz_agent.intake.files import IntakeError

INSTRUCTIONS = (
	"You read one page of a business document (a supplier invoice, a customer's purchase order, a "
	"delivery note or a receipt) and answer with one JSON object only, following this JSON schema: "
	"{schema}. Copy values exactly as printed: dates and currencies as printed, numbers without "
	"thousands separators. party_name is whoever issued the document. Use null for what the page does "
	"not show, and an empty list when it has no lines. Never compute or correct a value."
)
RESPONSE_FORMAT = {
	"type": "json_schema",
	"json_schema": {"name": "document_page", "strict": True, "schema": DOCUMENT_SCHEMA},
}
TIMEOUT_SECONDS = 120.0


NO_VISION = (
	"This document is a scan or photo, and no vision model is configured to read it. Upload a PDF "
	"with a text layer, or ask the administrator to set a vision model in Agent Settings."
)


def structured_settings(settings):
	"""A model's settings with the extraction JSON schema requested as the response format."""
	body = {**(settings.extra_body or {}), "response_format": RESPONSE_FORMAT}
	return dataclasses.replace(settings, extra_body=body)


vision_settings = structured_settings


def data_url(content: bytes, mime: str) -> str:
	return f"data:{mime};base64,{base64.b64encode(content).decode()}"


def page_messages(content: bytes, mime: str, page: int, pages: int) -> list[dict]:
	schema = json.dumps(DOCUMENT_SCHEMA, separators=(",", ":"))
	return [
		{"role": "system", "content": INSTRUCTIONS.format(schema=schema)},
		{
			"role": "user",
			"content": [
				{"type": "text", "text": f"Page {page} of {pages}."},
				{"type": "image_url", "image_url": {"url": data_url(content, mime)}},
			],
		},
	]


def parse_answer(text: str, page: int, who: str = "vision model") -> dict:
	"""The model's JSON answer for one page; IntakeError when it is not valid JSON in the schema."""
	raw = (text or "").strip()
	fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", raw, re.S)
	if fenced:
		raw = fenced.group(1)
	try:
		value = json.loads(raw)
	except json.JSONDecodeError as exc:
		raise IntakeError(
			f"The {who}'s answer for page {page} was not valid JSON ({exc.msg} at position {exc.pos}), "
			"so nothing was read from it. Try again; if it keeps happening, the administrator should choose a "
			f"{who} that supports JSON output."
		) from None
	errors = sorted(
		jsonschema.Draft202012Validator(DOCUMENT_SCHEMA).iter_errors(value), key=lambda e: list(e.path)
	)
	if errors:
		where = ".".join(str(p) for p in errors[0].absolute_path) or "the answer"
		raise IntakeError(
			f"The {who}'s answer for page {page} does not follow the document schema ({where}: "
			f"{errors[0].message}), so nothing was read from it. Try again, or upload a PDF with a text layer."
		)
	return value


def read_pages(
	images: list[tuple[bytes, str]], provider, *, timeout: float = TIMEOUT_SECONDS, progress=None
) -> list[dict]:
	"""Each page image read by the vision model, in order."""
	if provider is None:
		raise IntakeError(NO_VISION)
	out = []
	for index, (content, mime) in enumerate(images, start=1):
		if progress:
			progress({"stage": "vision", "page": index, "pages": len(images)})
		reply = provider.complete(page_messages(content, mime, index, len(images)), [], timeout=timeout)
		out.append(parse_answer(reply.text, index))
	return out
