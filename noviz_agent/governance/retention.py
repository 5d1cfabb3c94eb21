"""Which of the agent's records are old enough to remove, and the cost totals kept when logs go.

The frappe edge runs this daily in batches; the rules are here so they are tested anywhere.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable

BATCH = 500


def cutoff(today: dt.date, days: int) -> dt.date | None:
	"""Records last active before this date are removed; None when the setting keeps everything."""
	if not days or days <= 0:
		return None
	return today - dt.timedelta(days=days)


def monthly_costs(rows: Iterable[dict]) -> list[dict]:
	"""Cost aggregates to keep when log rows are removed: per month, person, model."""
	totals: dict[tuple, dict] = defaultdict(
		lambda: {"turns": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0}
	)
	for row in rows:
		when = row["creation"]
		month = f"{when.year:04d}-{when.month:02d}"
		key = (month, row.get("person") or "", row.get("model") or "")
		item = totals[key]
		item["turns"] += 1
		item["prompt_tokens"] += int(row.get("prompt_tokens") or 0)
		item["completion_tokens"] += int(row.get("completion_tokens") or 0)
		item["cost"] = round(item["cost"] + float(row.get("estimated_cost") or 0), 6)
	return [{"month": m, "person": p, "model": mod, **v} for (m, p, mod), v in sorted(totals.items())]
