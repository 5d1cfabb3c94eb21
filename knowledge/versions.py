"""Which ERPNext releases a passage describes, and the note a reader on another release needs.

A document's front matter names the releases it describes (``version: ERPNext 15 and 16``).
Inside the body, a claim that holds for one release only is marked where it is made:

- ``(v15)`` or ``(v16)`` right after a claim: the claim holds for that release only;
- ``(v16: …)`` after a claim: in that release it is what follows the colon instead;
- ``(v15; v16: …)``: both at once, the claim is 15's and 16 has what follows the colon;
- a section heading ending in ``(v16)``: the whole section holds for that release only.

A passage holds for its section's release when the heading is marked, else for the document's.
When the site's release is known, a passage that does not hold for it, or that has marks for
another release, gets a note that says so; the note travels with the passage to the model and
into the citation the person reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# "ERPNext 15", "ERPNext 15 and 16", "ERPNext v15, v16".
_RELEASES = re.compile(r"\bERPNext\s+(v?\d+(?:\s*(?:,|and|&|or)\s*v?\d+)*)", re.IGNORECASE)
# "(v15)", "(v16: text)", "(v15; v16: text)"; one level of parentheses may appear inside the text.
MARK = re.compile(r"\(v\d{2}(?=[;:,)])(?:[^()]|\([^()]*\))*\)")
# The releases inside a mark: the first, and each after "; " or ", ".
_MARK_RELEASE = re.compile(r"(?:^\(|[;,]\s*)v(\d{2})\b")
_HEADING_MARK = re.compile(r"\(v(\d{2})((?:\s*,\s*v\d{2})*)\)\s*$")


def releases(version: str) -> frozenset[int]:
	"""The ERPNext major releases a front-matter ``version`` names; empty when it names none."""
	found: set[int] = set()
	for match in _RELEASES.finditer(version or ""):
		found.update(int(number) for number in re.findall(r"\d+", match.group(1)))
	return frozenset(found)


def _numbers(first: str, rest: str) -> frozenset[int]:
	return frozenset({int(first), *(int(n) for n in re.findall(r"\d+", rest or ""))})


def section_releases(section: str) -> frozenset[int]:
	"""The releases a section heading is marked for (``Budget periods (v16)``); empty when unmarked."""
	match = _HEADING_MARK.search(section or "")
	return _numbers(match.group(1), match.group(2)) if match else frozenset()


def marked_releases(text: str) -> frozenset[int]:
	"""Every release named by a ``(vNN)`` or ``(vNN: …)`` mark in ``text``."""
	found: set[int] = set()
	for match in MARK.finditer(text or ""):
		found.update(int(n) for n in _MARK_RELEASE.findall(match.group(0)))
	return frozenset(found)


def passage_releases(document_version: str, section: str) -> frozenset[int]:
	"""The releases a passage holds for: its section's mark, else its document's; empty when unknown."""
	return section_releases(section) or releases(document_version)


def site_major(version) -> int | None:
	"""The major release from what a site reports (16, "16", "16.7.3", "v15.99.1"); None when unknown."""
	if version is None or isinstance(version, bool):
		return None
	if isinstance(version, int):
		return version if version > 0 else None
	match = re.match(r"\s*v?(\d+)", str(version))
	return int(match.group(1)) if match and int(match.group(1)) > 0 else None


def _names(numbers: Iterable[int]) -> str:
	ordered = [str(n) for n in sorted(numbers)]
	return ordered[0] if len(ordered) == 1 else ", ".join(ordered[:-1]) + " and " + ordered[-1]


def version_note(holds_for: Iterable[int], marked: Iterable[int], site: int | None) -> str:
	"""What a reader on ERPNext ``site`` must know about this passage; empty when nothing.

	``holds_for`` are the releases the passage describes, ``marked`` those named by marks in it.
	"""
	holds_for, marked = frozenset(holds_for), frozenset(marked)
	if site is None:
		return ""
	if holds_for and site not in holds_for:
		return (
			f"This passage describes ERPNext {_names(holds_for)}; this site runs ERPNext {site}, "
			"where it may not hold: check the live site before relying on it."
		)
	others = marked - {site}
	if others:
		return (
			f"This site runs ERPNext {site}: parts marked (v{site}) and unmarked parts apply; "
			f"parts marked only for ERPNext {_names(others)} do not."
		)
	return ""


def short_label(holds_for: Iterable[int], site: int | None) -> str:
	"""A citation suffix when the passage does not hold for the site's release: "ERPNext 16 only"."""
	holds_for = frozenset(holds_for)
	if site is None or not holds_for or site in holds_for:
		return ""
	return f"ERPNext {_names(holds_for)} only"
