"""Split a process document into passages by meaning: one per ``## `` section.

A section longer than ``max_chars`` is cut at paragraph, then sentence, then line
boundaries; each later piece repeats the tail of the previous one (``overlap_chars``) so a
sentence that straddles a cut keeps its context. Fenced code blocks are never cut in the
middle unless one alone is too long, and then every piece is re-fenced. Each chunk is
labelled ``title > section`` so a passage carries where it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge.documents import Document

MAX_CHARS = 1500
OVERLAP_CHARS = 200
INTRO_SECTION = "Overview"

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_SECTION = re.compile(r"^##[ \t]+(.+?)[ \t#]*$")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass(frozen=True)
class Chunk:
	"""One passage of a document, as stored and searched."""

	ordinal: int
	section: str
	label: str
	content: str

	def text_for_embedding(self) -> str:
		# The label carries the document and section names, which the body often omits.
		return f"{self.label}\n\n{self.content}"


def chunk_document(
	document: Document, *, max_chars: int = MAX_CHARS, overlap_chars: int = OVERLAP_CHARS
) -> list[Chunk]:
	"""The document's passages in reading order."""
	if overlap_chars >= max_chars // 2:
		raise ValueError("overlap_chars must be less than half of max_chars")
	chunks: list[Chunk] = []
	for section, text in split_sections(document.body, title=document.title):
		for piece in split_long(text, max_chars=max_chars, overlap_chars=overlap_chars):
			chunks.append(
				Chunk(
					ordinal=len(chunks),
					section=section,
					label=f"{document.cited_title} > {section}",
					content=piece,
				)
			)
	return chunks


def split_sections(body: str, *, title: str = "") -> list[tuple[str, str]]:
	"""``(section name, text)`` pairs at level-2 headings outside code fences; empty sections are dropped."""
	sections: list[tuple[str, list[str]]] = [(INTRO_SECTION, [])]
	fence: str | None = None
	for line in body.splitlines():
		marker = _FENCE.match(line)
		if marker:
			token = marker.group(1)
			if fence is None:
				fence = token[0] * 3
			elif token.startswith(fence):
				fence = None
		heading = None if fence or marker else _SECTION.match(line)
		if heading:
			sections.append((heading.group(1).strip(), []))
			continue
		sections[-1][1].append(line)
	result = []
	for index, (name, lines) in enumerate(sections):
		if index == 0:
			lines = _drop_title_heading(lines, title)
		text = "\n".join(lines).strip()
		if text:
			result.append((name, text))
	return result


def split_long(text: str, *, max_chars: int = MAX_CHARS, overlap_chars: int = OVERLAP_CHARS) -> list[str]:
	"""Cut ``text`` into pieces of at most ``max_chars``, overlap included, at the gentlest boundary."""
	if len(text) <= max_chars:
		return [text]
	# Room for the repeated tail and its "… " and blank-line joiners.
	budget = max_chars - overlap_chars - 4
	units = [unit for block in _blocks(text) for unit in _fit(block, budget)]
	pieces: list[str] = []
	current: list[str] = []
	size = 0
	for unit in units:
		if current and size + len(unit) + 2 > budget:
			pieces.append("\n\n".join(current))
			current, size = [], 0
		current.append(unit)
		size += len(unit) + 2
	if current:
		pieces.append("\n\n".join(current))
	return [pieces[0]] + [
		_join_overlap(_tail(previous, overlap_chars), piece)
		for previous, piece in zip(pieces, pieces[1:], strict=False)
	]


def _blocks(text: str) -> list[str]:
	"""Paragraphs, with each fenced code block kept whole as one block."""
	blocks: list[str] = []
	current: list[str] = []
	fence: str | None = None
	for line in text.splitlines():
		marker = _FENCE.match(line)
		if fence is None and marker:
			if current:
				blocks.append("\n".join(current))
				current = []
			fence = marker.group(1)[0] * 3
			current.append(line)
			continue
		if fence is not None:
			current.append(line)
			if marker and marker.group(1).startswith(fence):
				blocks.append("\n".join(current))
				current, fence = [], None
			continue
		if not line.strip():
			if current:
				blocks.append("\n".join(current))
				current = []
			continue
		current.append(line)
	if current:
		blocks.append("\n".join(current))
	return [block.strip("\n") for block in blocks if block.strip()]


def _fit(block: str, budget: int) -> list[str]:
	"""Split one block that exceeds the budget: code by lines (re-fenced), prose by sentences."""
	if len(block) <= budget:
		return [block]
	if _FENCE.match(block):
		return _split_code(block, budget)
	sentences = [s for s in _SENTENCE_END.split(block) if s]
	if len(sentences) == 1:
		sentences = block.splitlines() if "\n" in block else _hard_cut(block, budget)
	return _pack(sentences, budget, joiner=" ")


def _split_code(block: str, budget: int) -> list[str]:
	lines = block.splitlines()
	opener = lines[0]
	closer = lines[-1] if len(lines) > 1 and _FENCE.match(lines[-1]) else opener.strip()[:3]
	inner = lines[1:-1] if len(lines) > 1 and _FENCE.match(lines[-1]) else lines[1:]
	room = max(budget - len(opener) - len(closer) - 2, 40)
	wrapped = []
	for line in inner:
		wrapped.extend(_hard_cut(line, room) if len(line) > room else [line])
	return [f"{opener}\n{body}\n{closer}" for body in _pack(wrapped, room, joiner="\n")]


def _pack(parts: list[str], budget: int, *, joiner: str) -> list[str]:
	out: list[str] = []
	current = ""
	for part in parts:
		if len(part) > budget:
			if current:
				out.append(current)
				current = ""
			out.extend(_hard_cut(part, budget))
			continue
		candidate = f"{current}{joiner}{part}" if current else part
		if len(candidate) > budget:
			out.append(current)
			current = part
		else:
			current = candidate
	if current:
		out.append(current)
	return out


def _hard_cut(text: str, size: int) -> list[str]:
	"""Last resort for a run of text with no boundary: cut at spaces when there are any."""
	pieces = []
	while len(text) > size:
		cut = text.rfind(" ", 1, size)
		cut = cut if cut > 0 else size
		pieces.append(text[:cut].rstrip())
		text = text[cut:].lstrip()
	if text:
		pieces.append(text)
	return pieces


def _tail(text: str, size: int) -> str:
	"""The last ``size`` characters of ``text``, starting at a sentence or word boundary."""
	if _FENCE.match(text.splitlines()[-1] if text else ""):
		# Repeating half a code block out of its fence would read as prose; skip it.
		return ""
	if len(text) <= size:
		return text
	tail = text[-size:]
	sentence = _SENTENCE_END.search(tail)
	if sentence and sentence.end() < len(tail) - 20:
		return tail[sentence.end() :]
	space = tail.find(" ")
	return tail[space + 1 :] if 0 <= space < len(tail) - 1 else tail


def _join_overlap(tail: str, piece: str) -> str:
	if not tail:
		return piece
	return f"… {tail}\n\n{piece}"


def _drop_title_heading(lines: list[str], title: str) -> list[str]:
	"""A leading ``# Title`` repeats the front matter; the label already carries it."""
	for index, line in enumerate(lines):
		if not line.strip():
			continue
		if line.startswith("# ") and (not title or line[2:].strip().lower() == title.strip().lower()):
			return lines[index + 1 :]
		return lines
	return lines
