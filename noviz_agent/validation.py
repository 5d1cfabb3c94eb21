"""Input and settings checks for the frappe edge, kept frappe-free so they are tested anywhere.

The api and the Agent Settings controller call these and turn an `InputError` into
`frappe.throw`; the messages are written for the person who has to fix the input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlparse

# Bounds an administrator may set in Agent Settings: field -> (label, low, high, default).
LIMITS: dict[str, tuple[str, int, int, int]] = {
	"max_steps": ("Max tool steps per turn", 1, 30, 8),
	"max_seconds": ("Turn time limit (seconds)", 10, 900, 120),
	"history_turns": ("History turns sent", 0, 50, 6),
	"page_size": ("Rows per page", 5, 200, 20),
	# OpenAI refuses a request with more than 128 tools (schema_rules.MAX_TOOLS).
	"max_tools": ("Max tools offered", 5, 128, 40),
	"proposal_ttl_minutes": ("Proposal lifetime (minutes)", 1, 1440, 15),
	"max_message_chars": ("Message length limit (characters)", 100, 20000, 4000),
	"rate_limit_per_hour": ("Questions per person per hour", 1, 3600, 60),
	"mcp_calls_per_hour": ("Assistant tool calls per person per hour", 1, 100_000, 600),
	"timeout": ("Provider timeout (seconds)", 5, 600, 60),
	"max_retries": ("Provider retries", 0, 10, 2),
	"slow_turn_ms": ("Slow turn threshold (ms)", 1000, 900000, 20000),
	"tokens_per_minute": ("Tokens per minute to the provider", 0, 100_000_000, 0),
	"cache_seconds": ("Reuse a person's own answer for (seconds)", 0, 86_400, 0),
	"keep_conversations_days": ("Keep conversations (days)", 0, 36_500, 0),
	"keep_logs_days": ("Keep interaction log rows (days)", 0, 36_500, 0),
}

# Settings that take one of a few values: field -> (label, choices, default).
CHOICES: dict[str, tuple[str, tuple[str, ...], str]] = {
	"tool_call_format": ("Tool call format", ("native", "text", "auto"), "native"),
}

RATINGS = {"up": "Up", "down": "Down", "1": "Up", "-1": "Down", "+1": "Up", "good": "Up", "bad": "Down"}
MAX_COMMENT_CHARS = 2000
_TOKEN = re.compile(r"^[A-Za-z0-9_\-]{8,64}\.[A-Za-z0-9_\-]{8,128}$")
_RESULT_ID = re.compile(r"^[A-Za-z0-9_\-]{6,64}$")
_TURN_ID = re.compile(r"^[A-Za-z0-9_-]{4,40}$")


class InputError(ValueError):
	"""Input the person or administrator must correct; the message says how."""


@dataclass(frozen=True)
class UrlField:
	"""A URL setting and the words to name it in a message."""

	field: str
	label: str


URL_FIELDS = (
	UrlField("base_url", "Provider base URL"),
	UrlField("vision_base_url", "Vision model base URL"),
	UrlField("embedding_base_url", "Embedding model base URL"),
)


def url_problem(value: str | None, label: str) -> str | None:
	"""Why a provider URL cannot be used; None when it is empty or fine."""
	value = (value or "").strip()
	if not value:
		return None
	parsed = urlparse(value)
	if parsed.scheme not in ("http", "https"):
		return f"{label} must start with http:// or https:// (got {value!r}), e.g. https://api.openai.com/v1."
	if not parsed.hostname:
		return f"{label} has no host name (got {value!r}), e.g. http://127.0.0.1:8000/v1."
	if parsed.query or parsed.fragment:
		return f"{label} must not carry a query or fragment; give only the API root, e.g. https://host/v1."
	if parsed.username or parsed.password:
		return f"{label} must not contain a user name or password; put the key in the API Key field."
	return None


def limit_problem(field: str, value) -> str | None:
	"""Why a limit value is out of range; None when it fits (or is empty, so the default applies)."""
	label, low, high, _default = LIMITS[field]
	if value in (None, ""):
		return None
	try:
		number = int(value)
	except (TypeError, ValueError):
		return f"{label} must be a whole number between {low} and {high}."
	if number != float(value) or not low <= number <= high:
		return f"{label} must be between {low} and {high} (got {value})."
	return None


def settings_problems(values: dict) -> list[str]:
	"""Everything wrong with an Agent Settings form, each in a sentence the administrator can act on."""
	problems = [p for f in URL_FIELDS if (p := url_problem(values.get(f.field), f.label))]
	problems += [p for field in LIMITS if (p := limit_problem(field, values.get(field)))]
	problems += [p for field in CHOICES if (p := choice_problem(field, values.get(field)))]
	if (values.get("base_url") or "").strip() and not (values.get("model") or "").strip():
		problems.append("Reasoning model is empty: name the model to use, e.g. gpt-4o-mini.")
	for role in ("vision", "embedding"):
		if (values.get(f"{role}_base_url") or "").strip() and not (values.get(f"{role}_model") or "").strip():
			problems.append(
				f"{role.title()} model is empty but its base URL is set: name the model or clear the URL."
			)
	for field in ("prompt_cost_per_million", "cached_cost_per_million", "completion_cost_per_million"):
		value = values.get(field)
		if value not in (None, "") and float(value) < 0:
			problems.append(f"{field.replace('_', ' ').capitalize()} cannot be negative.")
	return problems


def choice_problem(field: str, value) -> str | None:
	"""Why a choice value is not one of its options; None when it is (or is empty, so the default applies)."""
	label, options, _default = CHOICES[field]
	if value in (None, "") or value in options:
		return None
	return f"{label} must be one of {', '.join(options)} (got {value!r})."


def choice(values: dict, field: str) -> str:
	"""A choice from settings, falling back to its default when empty or not one of the options."""
	_label, options, default = CHOICES[field]
	value = values.get(field)
	return value if value in options else default


def limit(values: dict, field: str) -> int:
	"""A limit from settings, falling back to its default when empty or out of range."""
	_label, low, high, default = LIMITS[field]
	value = values.get(field)
	if value in (None, "") or limit_problem(field, value):
		return default
	return int(value) if low <= int(value) <= high else default


# Frappe's web workers are killed after `http_timeout` seconds (120 unless the bench says otherwise);
# a turn run inside a request must end, log and answer well before that.
DEFAULT_WEB_TIMEOUT = 120
WEB_TIMEOUT_MARGIN = 15


def turn_seconds(configured: float, web_timeout: float | None) -> float:
	"""The time limit for a turn run inside a web request: the setting, kept below the web timeout."""
	web = float(web_timeout or DEFAULT_WEB_TIMEOUT)
	return max(5.0, min(float(configured), web - WEB_TIMEOUT_MARGIN))


def embedding_endpoint(values: dict) -> tuple[str | None, str | None]:
	"""The embedding model's base URL and key; the main key is lent only to the main provider's own URL.

	With an embedding URL of another host and no embedding key, no key is sent at all: the
	provider's key must never reach a host the administrator did not give it to.
	"""
	main_url = (values.get("base_url") or "").strip().rstrip("/")
	url = (values.get("embedding_base_url") or "").strip().rstrip("/") or main_url
	key = values.get("embedding_api_key") or (values.get("api_key") if url == main_url else None)
	return url or None, key or None


# C0 control characters other than tab, line feed and carriage return (and DEL): terminal escapes,
# NUL bytes and bells pasted from other programs mean nothing to the model and break some stores.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check_message(message, max_chars: int) -> str:
	"""The question to send, stripped of control characters; an empty or oversize one is refused."""
	if not isinstance(message, str):
		raise InputError("The message must be text.")
	text = _CONTROL.sub(" ", message).strip()
	if not text:
		raise InputError("The message is empty: type a question or a request.")
	if len(text) > max_chars:
		raise InputError(
			f"The message is {len(text):,} characters long; the limit is {max_chars:,}. "
			"Shorten it or split it into several questions."
		)
	return text


def check_rating(rating) -> str:
	"""Feedback rating as stored on the log ("Up" or "Down")."""
	key = str(rating).strip().lower() if rating is not None else ""
	if key not in RATINGS:
		raise InputError("The rating must be 'up' or 'down' (or 1 / -1).")
	return RATINGS[key]


def check_comment(comment) -> str | None:
	"""A feedback comment, stripped, or None; refuse one longer than the log keeps."""
	if comment is None:
		return None
	text = str(comment).strip()
	if len(text) > MAX_COMMENT_CHARS:
		raise InputError(f"The comment is {len(text):,} characters long; the limit is {MAX_COMMENT_CHARS:,}.")
	return text or None


def check_token(token) -> str:
	"""A proposal token's shape, before any store is asked about it."""
	if not isinstance(token, str) or not _TOKEN.match(token.strip()):
		raise InputError("This confirmation token is malformed. Ask the agent to prepare the change again.")
	return token.strip()


def check_turn_id(turn) -> str:
	"""A turn id the chat chose or got back from send: letters, digits, '-' and '_', at most 40."""
	if not isinstance(turn, str) or not _TURN_ID.match(turn.strip()):
		raise InputError("This turn id is malformed; send the message again without one.")
	return turn.strip()


def check_page(result_id, number) -> tuple[str, int]:
	"""A result id and a 1-based page number for table paging."""
	if not isinstance(result_id, str) or not _RESULT_ID.match(result_id):
		raise InputError("This table can no longer be paged; ask the question again.")
	try:
		page = int(number)
	except (TypeError, ValueError):
		raise InputError("The page number must be a whole number.") from None
	if page < 1:
		raise InputError("The page number starts at 1.")
	return result_id, page


def rate_window(
	count: int, allowed: int, window_seconds: int, retry_in: int, what: str = "asked {allowed} questions"
) -> str | None:
	"""The message for a person over their quota (questions, or an assistant's tool calls); None while within it."""
	if count <= allowed:
		return None
	minutes = max(1, round(retry_in / 60))
	return (
		f"You have {what.format(allowed=allowed)} in the last {window_seconds // 60} minutes, the limit on this site. "
		f"Try again in about {minutes} minute{'s' if minutes != 1 else ''}."
	)


def lines(value: str | None) -> list[str]:
	"""The entries of a one-per-line (or comma-separated) settings field, trimmed, empty ones dropped."""
	return [part.strip() for part in (value or "").replace(",", "\n").splitlines() if part.strip()]
