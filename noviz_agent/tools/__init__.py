"""Tool modules. Each exposes `tools() -> list[Tool]`; `build_registry` gathers them all.

entities   generated from the canonical model (connectors/entities/*.json)
reports    report.find, report.run
schema     schema.describe
discovery  tools.search
analytics  analytics.*, chart.build
knowledge  knowledge.search
workflow   workflow.describe, workflow.apply
documents  documents.intake
systems    other systems' entity tools and link tools
goals      goals.propose (a standing goal, confirmed by the person)

`registry()` is the one registry of a process (built on first use, frozen): the frappe edge, the
console script, the evaluation harness and procedure matching all share it, since it holds no
person's data and no turn changes it; what a person may use is filtered in their Session.
"""

from __future__ import annotations

import functools
import importlib

from noviz_agent.connectors.model import register_cache
from noviz_agent.engine.tools import Registry
from noviz_agent.tools.vocabulary import vocabulary

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
	"goals",
]


def build_registry() -> Registry:
	"""A new full canonical registry: every tool of every module, before any permission is applied.

	Most callers want `registry()`, the process's shared one; this builds a fresh copy (about a second).
	"""
	registry = Registry(vocabulary=vocabulary())
	for name in TOOL_MODULES:
		module = importlib.import_module(f"noviz_agent.tools.{name}")
		registry.extend(module.tools())
	return registry


@register_cache
@functools.lru_cache(maxsize=1)
def registry() -> Registry:
	"""The process's registry: built once, frozen, shared by every turn, person and caller."""
	return build_registry().freeze()
