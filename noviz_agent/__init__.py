"""Noviz agent: an AI agent that works inside ERPNext as the signed-in person.

engine/      frappe-free core: tools, session, gateway, loop, provider, responses
tools/       tool modules (entity tools are generated from connectors/entities)
connectors/  the connector contract, the canonical model and the frappe connector
noviz_agent/ the Frappe module "Noviz Agent" (DocTypes, page)
"""

__version__ = "0.1.0"
