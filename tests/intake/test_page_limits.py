"""The pixel budget: pages are measured before any is rendered, and nothing is rendered that no model reads."""

from __future__ import annotations

import io

import pypdf
import pytest

from noviz_agent.intake import files
from noviz_agent.intake.files import IntakeError
from noviz_agent.intake.proposal import read_document
from noviz_agent.testing import ScriptedModel, answer


def blank_pdf(pages: int, width: float, height: float) -> bytes:
	"""Pages with nothing on them, so no text layer: each one would go to the vision model."""
	writer = pypdf.PdfWriter()
	for _ in range(pages):
		writer.add_blank_page(width=width, height=height)
	out = io.BytesIO()
	writer.write(out)
	return out.getvalue()


@pytest.fixture
def renders(monkeypatch):
	"""Every page pdfium renders, by its size. A page over 1.7 m long fails the test at once instead
	of being rendered (which would take gigabytes: the failure this guards against)."""
	import pypdfium2 as pdfium

	seen: list[tuple[float, float]] = []
	original = pdfium.PdfPage.render

	def spy(page, *args, **kwargs):
		seen.append(page.get_size())
		if max(page.get_size()) > 5000:
			raise AssertionError(f"an oversized page {page.get_size()} was rendered")
		return original(page, *args, **kwargs)

	monkeypatch.setattr(pdfium.PdfPage, "render", spy)
	return seen


def empty_page_answer() -> str:
	return (
		'{"document_type": "other", "party_name": null, "party_tax_id": null, "document_number": null, '
		'"date": null, "due_date": null, "currency": null, "lines": [], "taxes": [], "subtotal": null, "total": null}'
	)


def test_oversized_textless_pages_are_refused_before_any_page_is_rendered(renders):
	pdf = blank_pdf(20, 14400, 14400)  # 200 × 200 inches: 5.6 GB of pixels each at 144 dpi
	assert len(pdf) < 4000
	model = ScriptedModel([answer(empty_page_answer())] * 20)
	with pytest.raises(IntakeError, match=r"Page 1 of huge\.pdf is 508 cm × 508 cm .* real paper size"):
		read_document(pdf, "huge.pdf", vision_model=model)
	assert renders == []
	assert model.requests == []


def test_scan_is_not_rendered_when_no_vision_model_is_configured(renders):
	with pytest.raises(IntakeError, match="no vision model is configured"):
		read_document(blank_pdf(2, 595, 842), "scan.pdf", vision_model=None)
	assert renders == []


def test_a_large_page_is_rendered_smaller_within_the_budget_not_refused(renders):
	model = ScriptedModel([answer(empty_page_answer())])
	with model:
		read_document(blank_pdf(1, 2384, 3370), "a0-poster.pdf", vision_model=model)  # A0
	assert len(renders) == 1
	image = model.requests[0][0][1]["content"][1]["image_url"]["url"]
	from base64 import b64decode

	from PIL import Image

	with Image.open(io.BytesIO(b64decode(image.split(",", 1)[1]))) as png:
		assert max(png.size) <= files.MAX_PAGE_SIDE


def test_pages_over_the_document_pixel_budget_are_refused_before_rendering(renders):
	# Twenty A3 pages at 144 dpi are 80 million pixels, above the 60 million of one document.
	pdf = blank_pdf(20, 842, 1191)
	with pytest.raises(IntakeError, match="million pixels to read"):
		read_document(pdf, "many-a3.pdf", vision_model=ScriptedModel([]))
	assert renders == []


def test_photo_with_more_pixels_than_the_budget_is_refused_before_it_is_decoded():
	from PIL import Image

	out = io.BytesIO()
	Image.new("1", (9000, 9000)).save(out, format="PNG")  # 81 million pixels in a few kB
	with pytest.raises(IntakeError, match="9,000 × 9,000 pixels"):
		files.normalised_image(out.getvalue(), "png")


def test_photo_is_not_opened_when_no_vision_model_is_configured(monkeypatch):
	def opened(*args, **kwargs):
		raise AssertionError("the image was opened")

	monkeypatch.setattr(files, "normalised_image", opened)
	from noviz_agent.testing.invoices import InvoiceSpec, Line, render_image

	photo = render_image(InvoiceSpec(party_name="A", number="1", lines=[Line("x", 1, 1)]))
	with pytest.raises(IntakeError, match="no vision model is configured"):
		read_document(photo, "photo.png", vision_model=None)
