"""Test doubles for the model, shipped with the product so site tests and `bench ... ask` can use them.

model.py           ScriptedModel: a queue of planned tool calls and answers; records what it was sent
memory_connector.py  MemoryConnector: the connector contract in memory (tests, `noviz-agent eval`)
stub_provider.py   an OpenAI-compatible HTTP server on 127.0.0.1 for fault tests and live demos
stub_stream.py     its streamed replies: a completion as OpenAI's Server-Sent Events
"""

from noviz_agent.testing.model import ScriptedModel, answer, call, calls

__all__ = ["ScriptedModel", "answer", "call", "calls"]
