"""What an uploaded file is, judged by its bytes, and whether it may be read: type, size, page and pixel limits.

Every refusal is an `IntakeError` whose message tells the person what to do; nothing is written
before these checks pass. Pages are rendered only for a vision model that will read them, and only
after the pixel budget of every page to be rendered has been checked from the page sizes alone.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from noviz_agent.engine.errors import ToolError

# Defaults; Agent Settings may lower or raise the size limit (intake_max_file_mb).
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_PAGES = 20
# Known by their first bytes; the file name's extension is never trusted.
SIGNATURES = {
	"pdf": (b"%PDF-",),
	"png": (b"\x89PNG\r\n\x1a\n",),
	"jpeg": (b"\xff\xd8\xff",),
	"webp": (b"RIFF",),
}
MIME = {
	"pdf": "application/pdf",
	"png": "image/png",
	"jpeg": "image/jpeg",
	"webp": "image/webp",
	"xml": "application/xml",
}
# XML (an e-invoice: UBL or CII) is known by its first markup after an optional byte-order mark.
ALLOWED_KINDS = (*SIGNATURES, "xml")
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
# A page with fewer words than this has no usable text layer (a scan with a stamp, say).
MIN_TEXT_WORDS = 8
RENDER_SCALE = 2.0  # about 144 dpi: small print stays legible for the vision model
# The pixel budget, checked from the page sizes before anything is rendered. A large page is
# scaled down to MAX_PAGE_SIDE pixels on its long side (vision models downscale beyond that
# anyway); one that would fall below MIN_RENDER_SCALE (about 50 dpi) has nothing legible left.
MAX_PAGE_SIDE = 3000
MIN_RENDER_SCALE = 0.7
MAX_DOCUMENT_PIXELS = 60_000_000  # 20 A4 pages at 144 dpi are about 40 million
POINTS_PER_CM = 72 / 2.54


class IntakeError(ToolError):
	"""A file or an answer that cannot be used; the message says what to do instead."""


@dataclass(frozen=True)
class Limits:
	max_bytes: int = MAX_FILE_BYTES
	max_pages: int = MAX_PAGES
	kinds: tuple[str, ...] = ALLOWED_KINDS

	@classmethod
	def from_settings(cls, values: dict | None) -> Limits:
		values = values or {}
		mb = values.get("intake_max_file_mb")
		try:
			max_bytes = int(float(mb) * 1024 * 1024) if mb else MAX_FILE_BYTES
		except (TypeError, ValueError):
			max_bytes = MAX_FILE_BYTES
		return cls(max_bytes=max_bytes if max_bytes > 0 else MAX_FILE_BYTES)


def sniff(content: bytes) -> str | None:
	"""The kind of file by its first bytes: pdf, png, jpeg, webp, xml; None when it is none of them."""
	for kind, prefixes in SIGNATURES.items():
		if any(content.startswith(p) for p in prefixes):
			if kind == "webp" and content[8:12] != b"WEBP":
				continue
			return kind
	return "xml" if _looks_like_xml(content) else None


def _looks_like_xml(content: bytes) -> bool:
	head = content[:64]
	for bom in _BOMS:
		if head.startswith(bom):
			encoding = "utf-8" if bom == _BOMS[0] else ("utf-16-le" if bom == _BOMS[1] else "utf-16-be")
			head = head[len(bom) :].decode(encoding, "ignore").encode()
			break
	head = head.lstrip()
	return head.startswith(b"<?xml") or (head[:1] == b"<" and head[1:2].isalpha())


def check_file(content: bytes | None, filename: str, limits: Limits = Limits()) -> str:
	"""The file's kind when it may be read; raises IntakeError saying what to do otherwise."""
	name = filename or "the file"
	if not content:
		raise IntakeError(f"{name} is empty (0 bytes). Upload the document again, or export it anew.")
	if len(content) > limits.max_bytes:
		raise IntakeError(
			f"{name} is {len(content) / 1048576:.1f} MB; the limit is {limits.max_bytes / 1048576:.0f} MB. "
			"Upload a smaller scan (lower resolution, or only the pages of this document)."
		)
	kind = sniff(content)
	if kind is None or kind not in limits.kinds:
		allowed = ", ".join(k.upper() for k in limits.kinds)
		raise IntakeError(
			f"{name} is not a file type that can be read. Upload a {allowed} file "
			"(a PDF, an e-invoice XML, or a photo or scan of the document)."
		)
	return kind


def open_pdf(content: bytes, filename: str = "the PDF"):
	"""The PDF opened with pdfplumber; a password-protected or damaged one is refused in words."""
	import pdfplumber
	from pdfminer.pdfdocument import PDFPasswordIncorrect
	from pdfminer.pdfparser import PDFSyntaxError

	try:
		pdf = pdfplumber.open(io.BytesIO(content))
		pdf.pages  # noqa: B018 - parses the page tree now, so damage shows here
	except PDFPasswordIncorrect:
		raise IntakeError(
			f"{filename} is protected by a password, so it cannot be read. Open it, save or print an "
			"unprotected copy as PDF, and upload that."
		) from None
	except (PDFSyntaxError, Exception) as exc:
		# pdfplumber wraps pdfminer's errors; the wrapped one says whether a password is the reason.
		causes = [exc, *(a for a in exc.args if isinstance(a, BaseException))]
		if any(isinstance(c, PDFPasswordIncorrect) for c in causes):
			raise IntakeError(
				f"{filename} is protected by a password, so it cannot be read. Open it, save or print an "
				"unprotected copy as PDF, and upload that."
			) from None
		if any("password" in str(c).lower() or "Encrypt" in type(c).__name__ for c in causes):
			raise IntakeError(
				f"{filename} is encrypted, so it cannot be read. Save an unprotected copy and upload that."
			) from None
		raise IntakeError(
			f"{filename} could not be opened as a PDF ({type(exc).__name__}). It may be damaged; "
			"export it again or upload a photo of the document."
		) from None
	return pdf


def render_scale(width: float, height: float) -> float:
	"""The scale a page of this size (in points) is rendered at: 144 dpi, less for a large page."""
	return min(RENDER_SCALE, MAX_PAGE_SIDE / max(width, height, 1.0))


def _cm(points: float) -> str:
	return f"{points / POINTS_PER_CM:,.0f} cm"


def render_plan(content: bytes, indexes: list[int], filename: str = "the PDF") -> dict[int, float]:
	"""The scale of each page to render, after checking the pixel budget from the page sizes alone.

	Raises IntakeError, before any page is rendered, when a page is too large to be legible at the
	largest image a vision model takes, or when all the pages together exceed the document budget."""
	import pypdfium2 as pdfium

	pdf = pdfium.PdfDocument(content)
	try:
		plan, total = {}, 0
		for index in indexes:
			width, height = pdf.get_page_size(index)
			scale = render_scale(width, height)
			if scale < MIN_RENDER_SCALE:
				raise IntakeError(
					f"Page {index + 1} of {filename} is {_cm(width)} × {_cm(height)} and has no text layer: far "
					"larger than any invoice or receipt, so it cannot be rendered legibly for reading. Export or "
					"scan the document at its real paper size (A4 or Letter) and upload that."
				)
			plan[index] = scale
			total += round(width * scale) * round(height * scale)
		if total > MAX_DOCUMENT_PIXELS:
			raise IntakeError(
				f"The {len(indexes)} scanned pages of {filename} would need {total / 1e6:,.0f} million pixels to "
				f"read; at most {MAX_DOCUMENT_PIXELS / 1e6:,.0f} million can be read at once. Upload fewer pages, or "
				"export the document with a text layer."
			)
		return plan
	finally:
		pdf.close()


def page_image(content: bytes, index: int, scale: float = RENDER_SCALE) -> bytes:
	"""One PDF page rendered to PNG for the vision model, at a scale `render_plan` allowed."""
	import pypdfium2 as pdfium

	pdf = pdfium.PdfDocument(content)
	try:
		image = pdf[index].render(scale=scale).to_pil()
		out = io.BytesIO()
		image.save(out, format="PNG")
		return out.getvalue()
	finally:
		pdf.close()


def normalised_image(content: bytes, kind: str) -> tuple[bytes, str]:
	"""An uploaded image checked by Pillow (a broken one is refused) and kept in its own format."""
	from PIL import Image, UnidentifiedImageError

	try:
		with Image.open(io.BytesIO(content)) as image:
			width, height = image.size  # from the header: nothing is decoded yet
			if width * height > MAX_DOCUMENT_PIXELS:
				raise IntakeError(
					f"The image is {width:,} × {height:,} pixels, more than the "
					f"{MAX_DOCUMENT_PIXELS / 1e6:,.0f} million that can be read. Take the photo again at a normal "
					"resolution, or upload a PDF."
				)
			image.verify()
	except (UnidentifiedImageError, OSError, SyntaxError, Image.DecompressionBombError) as exc:
		raise IntakeError(
			f"The image could not be read ({type(exc).__name__}). Take the photo again or upload a PDF."
		) from None
	return content, MIME[kind]
