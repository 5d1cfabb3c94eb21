"""The model provider, in the shape of openai-agents-python's models package.

interface.py          ToolCall, Usage, ModelReply and the Provider protocol the loop calls
settings.py           ProviderSettings: one type for the reasoning, vision and embedding models
openai_compatible.py  the OpenAI-compatible chat client
retry.py              its retry policy (what is retried, backoff, Retry-After)
schemas.py            tools as a provider takes them: strict mode, Gemini's schema subset
text_calls.py         tool calls that open-weights models print as text
"""

from noviz_agent.engine.errors import ProviderError
from noviz_agent.engine.provider.interface import ModelReply, Provider, ToolCall, Usage
from noviz_agent.engine.provider.openai_compatible import (
	PLACEHOLDER_KEY,
	OpenAICompatibleProvider,
	ProviderFailure,
)
from noviz_agent.engine.provider.settings import TOOL_CALL_FORMATS, ProviderSettings, SettingsError
from noviz_agent.engine.provider.text_calls import parse_text_tool_calls

__all__ = [
	"PLACEHOLDER_KEY",
	"TOOL_CALL_FORMATS",
	"ModelReply",
	"OpenAICompatibleProvider",
	"Provider",
	"ProviderError",
	"ProviderFailure",
	"ProviderSettings",
	"SettingsError",
	"ToolCall",
	"Usage",
	"parse_text_tool_calls",
]
