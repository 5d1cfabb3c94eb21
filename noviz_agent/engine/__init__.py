"""The frappe-free core of the agent.

tools.py     Tool definitions and the Registry
session.py   the person, their allowed tools, the connector bound to them, the limits
gateway.py   the one place a tool runs; writes become proposals confirmed by token
errors.py    named errors (tool errors go to the model, limit errors end the turn)
provider/    the model provider: interface, settings, OpenAI-compatible client, retries, text tool calls
schema_rules.py  the function-calling rules providers enforce (OpenAI, Azure OpenAI, Gemini)
message_rules.py the order of tool calls and their answers in a request
loop.py      the reasoning loop; guards.py the named checks on proposed calls
routing.py, selection.py, policy.py   which tools a request is offered
prompt.py    the layered prompt (its text lives in prompts/)
responses.py structured responses; history.py bounded history; turn.py one whole turn

ScriptedModel and the OpenAI-compatible HTTP stub live in noviz_agent.testing.
"""
