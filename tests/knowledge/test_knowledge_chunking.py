"""Chunking by meaning: sections, long sections with overlap, code blocks, unicode."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.chunking import INTRO_SECTION, chunk_document, split_long, split_sections
from knowledge.documents import Document


def doc(body: str, title: str = "Stock valuation") -> Document:
	return Document(slug="s", module="stock", title=title, body=body).with_checksum()


def test_sections_split_at_level_two_headings_with_labels():
	chunks = chunk_document(
		doc(
			"Intro line.\n\n## FIFO\n\nOldest first.\n\n### Detail\n\nStill FIFO.\n\n## Moving Average\n\nOne rate."
		)
	)
	assert [c.section for c in chunks] == [INTRO_SECTION, "FIFO", "Moving Average"]
	assert [c.label for c in chunks] == [
		"Stock valuation > Overview",
		"Stock valuation > FIFO",
		"Stock valuation > Moving Average",
	]
	assert "### Detail" in chunks[1].content and "Still FIFO." in chunks[1].content
	assert [c.ordinal for c in chunks] == [0, 1, 2]


def test_a_document_without_headings_is_one_overview_chunk():
	[chunk] = chunk_document(doc("Just a paragraph about stock."))
	assert chunk.section == INTRO_SECTION
	assert chunk.content == "Just a paragraph about stock."


def test_the_title_heading_and_empty_sections_are_dropped():
	chunks = chunk_document(doc("# Stock valuation\n\n## Empty\n\n## Full\n\nText."))
	assert [c.section for c in chunks] == ["Full"]


def test_an_empty_document_has_no_chunks():
	assert chunk_document(doc("")) == []


def test_headings_inside_code_blocks_are_not_sections():
	body = "## Example\n\n```markdown\n## not a heading\ntext\n```\n\nAfter the code.\n\n## Next\n\nMore."
	chunks = chunk_document(doc(body))
	assert [c.section for c in chunks] == ["Example", "Next"]
	assert "## not a heading" in chunks[0].content


def test_heading_needs_a_space_and_trailing_hashes_are_dropped():
	sections = split_sections("##NoSpace\n\n## Closed ##\n\ntext")
	assert [name for name, _ in sections] == [INTRO_SECTION, "Closed"]


def test_a_huge_section_is_split_with_overlap_and_every_piece_is_bounded():
	sentences = [f"Sentence number {i} explains one more rule about stock valuation." for i in range(200)]
	body = "## Long\n\n" + " ".join(sentences)
	chunks = chunk_document(doc(body), max_chars=800, overlap_chars=150)
	assert len(chunks) > 5
	assert all(c.section == "Long" and c.label == "Stock valuation > Long" for c in chunks)
	assert all(len(c.content) <= 800 for c in chunks)
	# Each later piece opens with the end of the previous one.
	for previous, current in zip(chunks, chunks[1:], strict=False):
		repeated = current.content.removeprefix("… ").split("\n\n", 1)[0]
		assert repeated and previous.content.endswith(repeated)
	# Nothing is lost.
	joined = " ".join(c.content for c in chunks)
	assert all(s in joined for s in sentences)


def test_a_sentence_on_a_boundary_keeps_its_context():
	paragraphs = [f"Paragraph {i}. " + "Filler words about warehouses. " * 12 for i in range(8)]
	pieces = split_long("\n\n".join(paragraphs), max_chars=700, overlap_chars=120)
	assert len(pieces) >= 3
	for piece in pieces[1:]:
		assert piece.startswith("… ")


def test_code_blocks_stay_whole_when_they_fit():
	code = "```python\n" + "\n".join(f"x{i} = {i}" for i in range(30)) + "\n```"
	body = "## Code\n\n" + ("Prose before. " * 40) + "\n\n" + code + "\n\n" + ("Prose after. " * 40)
	chunks = chunk_document(doc(body), max_chars=600, overlap_chars=100)
	holding = [c for c in chunks if "x0 = 0" in c.content]
	assert len(holding) == 1 and "x29 = 29" in holding[0].content
	assert holding[0].content.count("```") == 2


def test_an_oversized_code_block_is_cut_into_fenced_pieces():
	code = "```sql\n" + "\n".join(f"SELECT {i} FROM tab;" for i in range(200)) + "\n```"
	chunks = chunk_document(doc("## SQL\n\n" + code), max_chars=500, overlap_chars=80)
	assert len(chunks) > 3
	for chunk in chunks:
		assert chunk.content.startswith("```sql") and chunk.content.rstrip().endswith("```")
	lines = [line for c in chunks for line in c.content.splitlines() if line.startswith("SELECT")]
	assert lines == [f"SELECT {i} FROM tab;" for i in range(200)]


def test_unicode_text_is_kept_intact():
	body = "## Rechnungsstorno\n\nEine gebuchte Rechnung wird storniert — nicht geändert. 請求書は取り消します。 🚚 Lieferschein."
	[chunk] = chunk_document(doc(body, title="Stornierung & Berichtigung"))
	assert chunk.label == "Stornierung & Berichtigung > Rechnungsstorno"
	assert "請求書は取り消します。" in chunk.content and "🚚" in chunk.content


def test_long_unicode_text_without_spaces_is_cut():
	body = "## 長い\n\n" + "在庫評価は先入先出法です" * 300
	chunks = chunk_document(doc(body), max_chars=500, overlap_chars=50)
	assert len(chunks) > 3
	assert all(len(c.content) <= 500 for c in chunks)


def test_embedding_text_carries_the_label():
	[chunk] = chunk_document(doc("## FIFO\n\nOldest first."))
	assert chunk.text_for_embedding().startswith("Stock valuation > FIFO\n\n")


@settings(max_examples=60, deadline=None)
@given(
	st.lists(
		st.text(
			alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=400
		),
		min_size=1,
		max_size=12,
	)
)
def test_every_word_survives_chunking_within_the_size_bound(paragraphs):
	body = "## Section\n\n" + "\n\n".join(paragraphs)
	chunks = chunk_document(doc(body), max_chars=300, overlap_chars=60)
	assert all(len(c.content) <= 300 for c in chunks)
	text = " ".join(c.content for c in chunks)
	# A run longer than a whole chunk has to be cut somewhere; every shorter word must survive whole.
	for word in re.findall(r"\w+", body.split("\n", 1)[1]):
		if len(word) < 100:
			assert word in text
