"""Tool modules. Each exposes `tools() -> list[Tool]`; `build_registry` gathers them all.

entities   generated from the canonical model (connectors/entities/*.json)
reports    report.find, report.run
schema     schema.describe
discovery  tools.search
analytics  analytics.*, chart.build
knowledge  knowledge.search
workflow   workflow.describe, workflow.apply
documents  documents.intake
"""

from __future__ import annotations

import importlib

from noviz_agent.engine.tools import Registry

# Each module lands with its own issue; add its name here when it does.
TOOL_MODULES: list[str] = [
	"entities",
	"reports",
	"schema",
	"discovery",
	"analytics",
	"knowledge",
	"workflow",
	"documents",
	"systems",
]


def build_registry() -> Registry:
	"""The full canonical registry: every tool of every module, before any permission is applied."""
	registry = Registry()
	for name in TOOL_MODULES:
		module = importlib.import_module(f"noviz_agent.tools.{name}")
		registry.extend(module.tools())
	return registry
