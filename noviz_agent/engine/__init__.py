"""The frappe-free core of the agent.

tools.py     Tool definitions and the Registry
session.py   the person, their allowed tools, the connector bound to them, the limits
gateway.py   the one place a tool runs; writes become proposals confirmed by token
errors.py    named errors (tool errors go to the model, limit errors end the turn)
"""
