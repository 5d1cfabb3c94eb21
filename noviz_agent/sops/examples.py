"""The example procedures shipped with the app (the `Agent SOP` fixtures), read without a site."""

from __future__ import annotations

import json
from pathlib import Path

from noviz_agent.sops.procedures import SopSpec

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agent_sop.json"


def example_specs() -> list[SopSpec]:
	"""The shipped procedures as specs, in fixture order."""
	rows = json.loads(FIXTURES.read_text(encoding="utf-8"))
	return [
		SopSpec(
			name=row["name"],
			title=row["title"],
			applies_when=row["applies_when"],
			procedure=row["procedure"],
			roles=tuple(r["role"] for r in row.get("roles") or ()),
			enabled=bool(row.get("enabled", 1)),
		)
		for row in rows
	]


def example(title: str) -> SopSpec:
	"""One shipped procedure by its title."""
	for spec in example_specs():
		if spec.title == title:
			return spec
	raise KeyError(f"No shipped procedure is titled {title!r}")
