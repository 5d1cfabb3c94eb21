"""The retry policy of the provider client: which faults are worth another try, and how long to wait.

Timeouts, dropped connections, 429 and 5xx are retried with exponential backoff and jitter
(or the server's own Retry-After, when it is short enough to wait for in a person's request);
a refused key, an unknown model or a rejected request is not retried. The SDK's own retries
are off, so this is the one place that decides.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK is imported where a client is made (half a second to import)
	import openai

__all__ = ["Fault", "GaveUp", "RetryPolicy", "classify", "retry_after"]

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 8.0
# A Retry-After longer than this ends the turn now rather than holding the person's request.
MAX_RETRY_AFTER_S = 30.0


@dataclass
class Fault:
	"""What went wrong with one attempt, classified."""

	kind: str  # timeout | connection | rate_limit | server | auth | not_found | rejected | bad_response
	retry: bool
	status: int | None = None
	detail: str = ""
	retry_after: float | None = None


class GaveUp(Exception):
	"""No more tries: the last fault and how many attempts were made."""

	def __init__(self, fault: Fault, attempts: int):
		super().__init__(fault.kind)
		self.fault = fault
		self.attempts = attempts


class RetryPolicy:
	"""Bounded retries: `max_retries` more tries after the first, backoff doubling from 0.5 s with jitter."""

	def __init__(
		self,
		max_retries: int,
		*,
		sleep: Callable[[float], None] = time.sleep,
		rng: Callable[[], float] = random.random,
		where: str = "",
	):
		self.max_retries = max_retries
		self.sleep = sleep
		self.rng = rng
		self.where = where

	def run(self, call: Callable[[], Any]) -> tuple[Any, int]:
		"""(result, attempts) of the first attempt that succeeds; GaveUp when none does."""
		tries = self.max_retries + 1
		for attempt in range(1, tries + 1):
			try:
				return call(), attempt
			except Exception as exc:  # noqa: BLE001 - every fault is classified below
				fault = classify(exc)
			wait = self.delay(fault, attempt)
			if not fault.retry or attempt == tries or wait is None:
				raise GaveUp(fault, attempt) from None
			log.warning(
				"model provider %s: %s, retry %d of %d in %.2f s",
				self.where,
				fault.kind,
				attempt,
				tries - 1,
				wait,
			)
			self.sleep(wait)
		raise AssertionError("unreachable")

	def delay(self, fault: Fault, attempt: int) -> float | None:
		"""Seconds to wait before the next attempt; None when the server asks for longer than we hold a turn."""
		if fault.retry_after is not None:
			return fault.retry_after if fault.retry_after <= MAX_RETRY_AFTER_S else None
		base = min(MAX_BACKOFF_S, 0.5 * 2 ** (attempt - 1))
		return base * (0.5 + self.rng() / 2)


class StreamError(Exception):
	"""The server reported an error inside a stream it had started (HTTP 200 already sent)."""


def classify(exc: Exception) -> Fault:
	"""An exception of the `openai` SDK as a Fault; anything else is a bug and is raised again."""
	import openai  # imported by the client that raised it (openai_compatible imports it when used)

	if isinstance(exc, StreamError | openai.APIError) and not isinstance(exc, openai.APIStatusError):
		if not isinstance(exc, openai.APIConnectionError | openai.APIResponseValidationError):
			# An error reported mid-stream: the server failed this reply; it is not asked again.
			return Fault("stream", False, detail=str(exc)[:200])
	if isinstance(exc, openai.APITimeoutError):
		return Fault("timeout", True)
	if isinstance(exc, openai.APIConnectionError):
		return Fault("connection", True, detail=str(exc.__cause__ or exc))
	if isinstance(exc, openai.APIStatusError):
		status, detail = exc.status_code, _detail(exc)
		if status == 429:
			return Fault("rate_limit", True, status, detail, retry_after(exc.response.headers))
		if status >= 500 or status in (408, 409):
			return Fault("server", True, status, detail, retry_after(exc.response.headers))
		kind = {401: "auth", 403: "auth", 404: "not_found"}.get(status, "rejected")
		return Fault(kind, False, status, detail)
	if isinstance(exc, openai.APIResponseValidationError):
		return Fault("bad_response", False, detail=exc.message[:200])
	if isinstance(exc, ValueError):  # the body claimed to be JSON but was not
		return Fault("bad_response", False, detail="the body is not valid JSON")
	raise exc


def _detail(exc: openai.APIStatusError) -> str:
	body = exc.body
	if isinstance(body, dict):
		body = body.get("error", body)
		if isinstance(body, dict):
			body = body.get("message") or body
	text = str(body if body is not None else exc.message)
	return text if len(text) <= 200 else text[:197] + "..."


def retry_after(headers: Any) -> float | None:
	"""Seconds the server asked us to wait: `retry-after-ms`, `Retry-After` seconds or an HTTP date."""
	try:
		if headers.get("retry-after-ms"):
			return max(0.0, float(headers["retry-after-ms"]) / 1000)
		value = headers.get("retry-after")
		if not value:
			return None
		try:
			return max(0.0, float(value))
		except ValueError:
			when = email.utils.parsedate_to_datetime(value)
			return max(0.0, when.timestamp() - time.time())
	except (TypeError, ValueError):
		return None
