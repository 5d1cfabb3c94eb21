"""One scrubber for every text that leaves the engine: errors for the model, log rows, the browser.

A secret reaches an error text in more shapes than the one it was configured in: a library
quotes the header it refused (`'token key:se\\ncret'`, with the newline escaped), a server
echoes the key it did not accept, a traceback prints the request. The scrubber removes every
configured secret (provider keys, embedding keys, each of the person's Agent System
Connection credentials) in each of those shapes, and redacts the shapes credentials travel in
(`Authorization: ...`, `token key:secret`, `Bearer ...`) whatever their value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

MASK = "***"
# Shorter values are not secrets but words ("key", "1234"): replacing them would garble the text.
MIN_SECRET_CHARS = 6

# How credentials travel, redacted whatever their value: a header, a Frappe token, a bearer token.
_SHAPES = (
	re.compile(r"(?i)(\bauthorization\b['\"]?\s*[:=]\s*['\"]?)[^\r\n'\",}]+"),
	re.compile(r"(?i)(\btoken\s+)[^\s:'\",}]+:[^\s'\",}]+"),
	re.compile(r"(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{6,}"),
	re.compile(r"(?i)(\bapi[_-]?(?:key|secret)\b['\"]?\s*[:=]\s*['\"]?)[^\s'\",}&]{6,}"),
)


def _shapes(secret: str) -> set[str]:
	"""The forms a secret takes in error texts: as set, escaped by repr or JSON, and its printable
	pieces (a secret broken by a stray control character is quoted piece by piece)."""
	forms = {secret, secret.strip(), repr(secret)[1:-1], json.dumps(secret)[1:-1]}
	forms |= set(re.split(r"[\x00-\x20\x7f]+", secret))
	return {f for f in forms if len(f) >= MIN_SECRET_CHARS}


class Scrubber:
	"""`scrub(text)`: the text with every known secret and credential shape replaced by `***`.

	`secrets` are known now; `more` (called once, on the first text that needs scrubbing) names
	the ones that cost a read to learn, so a request that never scrubs anything never reads them.
	"""

	def __init__(self, secrets: Iterable[str] = (), more: Callable[[], Iterable[str]] | None = None):
		self._forms: list[str] = []
		self._more = more
		self.add(secrets)

	def add(self, secrets: Iterable[str]) -> Scrubber:
		forms = set(self._forms)
		for secret in secrets or ():
			if isinstance(secret, str) and secret:
				forms |= _shapes(secret)
		# Longest first: a secret that contains another is removed whole.
		self._forms = sorted(forms, key=len, reverse=True)
		return self

	def _learn(self) -> None:
		if self._more is not None:
			more, self._more = self._more, None
			try:
				self.add(more())
			except Exception:
				pass  # the shapes below still apply; a scrubber never makes an error of its own

	def __call__(self, text: Any) -> Any:
		if not isinstance(text, str) or not text:
			return text
		self._learn()
		for form in self._forms:
			if form in text:
				text = text.replace(form, MASK)
		for shape in _SHAPES:
			text = shape.sub(lambda m: m.group(1) + MASK, text)
		return text

	def data(self, value: Any) -> Any:
		"""Every string inside dicts and lists scrubbed (a log row, a stored response)."""
		return scrub_data(self, value)


def scrub_data(scrub: Callable[[Any], Any], value: Any) -> Any:
	"""`value` with `scrub` applied to every string inside its dicts and lists."""
	if isinstance(value, str):
		return scrub(value)
	if isinstance(value, dict):
		return {k: scrub_data(scrub, v) for k, v in value.items()}
	if isinstance(value, list | tuple):
		return [scrub_data(scrub, v) for v in value]
	return value


def scrub_shapes(text: Any) -> Any:
	"""Credential shapes redacted, for texts scrubbed where no secret is known."""
	return Scrubber()(text)
