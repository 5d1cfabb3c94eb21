"""The stub's streamed replies: one chat completion told again as OpenAI's Server-Sent Events.

A streamed chat completion is a series of `data: <chunk>\\n\\n` events closed by `data: [DONE]\\n\\n`.
Every chunk (`object: "chat.completion.chunk"`, the completion's id, created and model) carries a
`delta` of the assistant message: the first its role, then the text a few words at a time, then
each tool call under its `index` - id, type and name first with empty arguments, then only pieces
of the arguments. The last choice chunk has an empty delta and the finish_reason. With
`stream_options.include_usage` one more chunk follows with no choices and the usage, and every
other chunk has `usage: null`; without it no chunk mentions usage (OpenAI's documented stream).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["DONE", "argument_pieces", "event", "stream_chunks", "text_pieces"]

WORDS_PER_PIECE = 3
ARGUMENT_CHARS = 16
DONE = b"data: [DONE]\n\n"


def text_pieces(text: str, words: int = WORDS_PER_PIECE) -> list[str]:
	"""The text cut after every few words; the pieces join back to the text exactly."""
	return re.findall(rf"(?:\S+\s*){{1,{words}}}|\s+", text)


def argument_pieces(arguments: str, size: int = ARGUMENT_CHARS) -> list[str]:
	"""A call's JSON arguments in pieces of a few characters, as a model writes them."""
	return [arguments[i : i + size] for i in range(0, len(arguments), size)]


def stream_chunks(completion: dict, *, include_usage: bool) -> list[dict]:
	"""The chunks of a streamed reply that reassemble into `completion` (a chat.completion)."""
	choice = completion["choices"][0]
	message = choice["message"]
	head = {
		"id": completion["id"],
		"object": "chat.completion.chunk",
		"created": completion["created"],
		"model": completion["model"],
	}

	def chunk(delta: dict, finish_reason: str | None = None) -> dict:
		out: dict[str, Any] = {
			**head,
			"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
		}
		if include_usage:
			out["usage"] = None
		return out

	content = message.get("content")
	chunks = [chunk({"role": "assistant", "content": "" if content is not None else None})]
	chunks += [chunk({"content": piece}) for piece in text_pieces(content or "")]
	for index, call in enumerate(message.get("tool_calls") or []):
		function = call["function"]
		first = {"index": index, "id": call["id"], "type": call["type"]}
		chunks.append(
			chunk({"tool_calls": [{**first, "function": {"name": function["name"], "arguments": ""}}]})
		)
		chunks += [
			chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
			for piece in argument_pieces(function["arguments"])
		]
	chunks.append(chunk({}, choice["finish_reason"]))
	if include_usage:
		chunks.append({**head, "choices": [], "usage": completion["usage"]})
	return chunks


def event(chunk: dict) -> bytes:
	"""One Server-Sent Event carrying a chunk."""
	return b"data: " + json.dumps(chunk).encode() + b"\n\n"
