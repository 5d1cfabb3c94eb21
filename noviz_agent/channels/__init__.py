"""Channels: the ways a person reaches the agent besides the desk chat.

A channel only adapts input and output. It identifies nobody itself (the edge does, the way frappe
does) and decides nothing itself: every call goes through the engine's gateway as the person, so the
allowance, the administrator's policy, row bounds, proposals and the log are the same code as the
chat's. Each module here is frappe-free; its edge lives in `noviz_agent/edge/`.

| module | what it does |
| --- | --- |
| mcp | the Model Context Protocol server: the tools an assistant sees, each call through the gateway, results as structured content with a readable text form, writes as proposals |
| mcp_http | that server over Streamable HTTP, one request at a time (stateless, so any web worker answers), sessions in an expiring store |
"""
