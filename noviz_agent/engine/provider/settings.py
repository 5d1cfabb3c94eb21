"""Where a model lives and how to talk to it: one settings type for the reasoning, vision and embedding models.

`ProviderSettings.from_agent_settings(values, role)` reads the flat Agent Settings form
(`base_url`, `model`, `api_key`, then `vision_*` and `embedding_*`); a vision or embedding
model without its own URL uses the reasoning model's server, and its key only when the URL
is the same, so a key is never sent to a server it was not given for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["ROLES", "TOOL_CALL_FORMATS", "ProviderSettings", "SettingsError"]

ROLES = ("reasoning", "vision", "embedding")
# native: only structured tool_calls; text: calls printed as text are parsed too;
# auto: text is parsed only when a reply has no structured calls and starts with a call.
TOOL_CALL_FORMATS = ("native", "text", "auto")
DEFAULT_TOOL_CALL_FORMAT = "native"


class SettingsError(ValueError):
	"""Agent Settings do not describe a usable model; the message names the field to fill in."""


@dataclass(frozen=True, repr=False)
class ProviderSettings:
	"""One model: its server, name and key, how patiently to call it, and how it takes tools."""

	base_url: str = ""
	api_key: str = ""
	model: str = ""
	timeout: float = 60.0
	max_retries: int = 2
	temperature: float | None = None
	max_tokens: int | None = None
	extra_headers: dict[str, str] = field(default_factory=dict)
	extra_body: dict[str, Any] = field(default_factory=dict)
	# Tools sent with strict: true (OpenAI, vLLM, recent Ollama); schemas are converted for it.
	strict_tools: bool = False
	tool_call_format: str = DEFAULT_TOOL_CALL_FORMAT
	role: str = field(default="reasoning", compare=False)

	def __post_init__(self):
		self.validate()

	def validate(self) -> None:
		where = f"Agent Settings ({self.role} model)"
		if self.role not in ROLES:
			raise SettingsError(f"{where}: the role must be one of {', '.join(ROLES)}.")
		if not (self.base_url or "").strip():
			raise SettingsError(
				f"{where}: the base URL is missing, e.g. https://api.openai.com/v1 or http://localhost:8000/v1."
			)
		if not re.match(r"^https?://", self.base_url.strip()):
			raise SettingsError(
				f"{where}: the base URL must start with http:// or https:// (got {self.base_url!r})."
			)
		if not (self.model or "").strip():
			raise SettingsError(
				f"{where}: the model name is missing, e.g. gpt-4o-mini or Qwen/Qwen2.5-7B-Instruct."
			)
		if not self.timeout or self.timeout <= 0:
			raise SettingsError(f"{where}: the timeout must be a positive number of seconds.")
		if self.max_retries < 0:
			raise SettingsError(f"{where}: retries cannot be negative.")
		if self.tool_call_format not in TOOL_CALL_FORMATS:
			raise SettingsError(
				f"{where}: the tool call format must be one of {', '.join(TOOL_CALL_FORMATS)} "
				f"(got {self.tool_call_format!r})."
			)

	def __repr__(self) -> str:
		shown = []
		for f in fields(self):
			value = getattr(self, f.name)
			if f.name == "api_key":
				value = "***" if value else ""
			elif f.name == "extra_headers":
				# Header values may carry credentials too (Azure's api-key, proxies' tokens).
				value = {name: "***" for name in value}
			shown.append(f"{f.name}={value!r}")
		return f"ProviderSettings({', '.join(shown)})"

	__str__ = __repr__

	@classmethod
	def from_dict(
		cls, data: dict, role: str = "reasoning", inherit: ProviderSettings | None = None
	) -> ProviderSettings:
		"""Build from a mapping of this type's fields; `inherit` fills a missing base URL and key."""
		known = {f.name for f in fields(cls)} - {"role"}
		values = {k: v for k, v in (data or {}).items() if k in known and v not in (None, "")}
		if inherit is not None:
			values.setdefault("base_url", inherit.base_url)
			if values["base_url"].strip().rstrip("/") == inherit.base_url.strip().rstrip("/"):
				values.setdefault("api_key", inherit.api_key)
		name = ""
		try:
			for name, kind in (
				("timeout", float),
				("temperature", float),
				("max_retries", int),
				("max_tokens", int),
			):
				if name in values:
					values[name] = kind(values[name])
		except (TypeError, ValueError):
			raise SettingsError(f"Agent Settings ({role} model): {name} must be a number.") from None
		if not values.get("max_tokens"):
			values.pop("max_tokens", None)  # a blank Int field reads as 0, which means "no limit" here
		if "strict_tools" in values:
			values["strict_tools"] = bool(int(values["strict_tools"]))  # a Check field reads 0/1
		return cls(**values, role=role)

	@classmethod
	def from_agent_settings(cls, values: dict, role: str = "reasoning") -> ProviderSettings:
		"""One model's settings from the flat Agent Settings form; SettingsError names what is missing."""
		reasoning = {
			"base_url": values.get("base_url"),
			"api_key": values.get("api_key"),
			"model": values.get("model"),
			"timeout": values.get("timeout"),
			"max_retries": values.get("max_retries"),
			"strict_tools": values.get("strict_tools"),
			"tool_call_format": values.get("tool_call_format"),
		}
		if role == "reasoning":
			return cls.from_dict(reasoning, "reasoning")
		if role not in ROLES:
			raise SettingsError(
				f"Agent Settings: unknown model role {role!r}; use one of {', '.join(ROLES)}."
			)
		own = {
			"base_url": values.get(f"{role}_base_url"),
			"api_key": values.get(f"{role}_api_key"),
			"model": values.get(f"{role}_model"),
			"timeout": values.get("timeout"),
			"max_retries": values.get("max_retries"),
		}
		if not (own["model"] or "").strip():
			raise SettingsError(f"Agent Settings: the {role} model is not configured (its model name).")
		try:
			inherit = cls.from_dict(reasoning, "reasoning")
		except SettingsError:
			if not (own["base_url"] or "").strip():
				raise
			inherit = None  # its own server: the reasoning model need not be set up for it
		return cls.from_dict(own, role, inherit=inherit)
