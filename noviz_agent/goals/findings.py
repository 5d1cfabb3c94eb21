"""Findings and what changed since the last run.

A finding is one thing a watch computed that matters for the goal: its figures (each with its
unit; the finding names the company, currency and period they belong to), the records behind it
and why it matters. Its `key` says what it is about ("overdue_customers:Acme"); its `state` is
the coarse condition that makes it worth telling ("oldest invoice more than 30 days overdue"),
so the fingerprint does not move with every day's small drift of the figures. A finding already
reported is not reported again until its state changes. A condition that clears is reported as
resolved once it has stayed clear for CLEAR_AFTER_DAYS (one that comes back the same before then
was never really gone, and is not reported twice). A finding about a closed period (a month
outside its forecast range) never clears: it is simply never reported again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import asdict, dataclass, field

LASTING = "event"  # a finding about a closed period: it never resolves
CONDITION = "condition"  # a finding about the books as they stand: it resolves when it no longer holds
MEMORY_KEEP_DAYS = 400  # events are remembered this long, so a closed month is never reported twice
CLEAR_AFTER_DAYS = 14  # a condition absent this long is resolved; back sooner, it was never gone


@dataclass
class Finding:
	key: str
	watch: str
	title: str
	state: str
	why: str
	figures: list[dict] = field(default_factory=list)
	company: str | None = None
	currency: str | None = None
	period: dict = field(default_factory=dict)
	records: list[dict] = field(default_factory=list)
	subject: dict = field(default_factory=dict)
	kind: str = CONDITION

	@property
	def fingerprint(self) -> str:
		return hashlib.sha256(json.dumps([self.key, self.state]).encode()).hexdigest()[:16]

	def to_dict(self) -> dict:
		return {**asdict(self), "fingerprint": self.fingerprint}

	def for_model(self) -> dict:
		"""What the model reads: no links, figures as label/value/unit."""
		return {
			"title": self.title,
			"why": self.why,
			"figures": self.figures,
			"company": self.company,
			"currency": self.currency,
			"period": self.period,
			"records": [r.get("name") for r in self.records][:10],
			"subject": self.subject,
		}


@dataclass
class Changes:
	"""One run against the memory of earlier runs."""

	new: list[Finding] = field(default_factory=list)
	changed: list[Finding] = field(default_factory=list)
	resolved: list[dict] = field(default_factory=list)  # remembered entries that no longer hold
	unchanged: list[Finding] = field(default_factory=list)
	clearing: list[str] = field(default_factory=list)  # absent now, not yet long enough to be resolved

	@property
	def reported(self) -> list[Finding]:
		"""Findings the person is told about in this run."""
		return [*self.new, *self.changed]

	@property
	def anything(self) -> bool:
		return bool(self.new or self.changed or self.resolved)


def compare(current: list[Finding], memory: dict | None, computed: set[str], today: str) -> Changes:
	"""What is new, what changed state and what cleared since the findings kept in `memory`.

	`computed`: the watches that ran to the end in this run; a condition of a watch that failed
	this time is neither resolved nor forgotten.
	"""
	kept = dict((memory or {}).get("findings") or {})
	changes = Changes()
	seen = set()
	for finding in current:
		if finding.key in seen:
			continue
		seen.add(finding.key)
		before = kept.get(finding.key)
		if before is None:
			changes.new.append(finding)
		elif before.get("fingerprint") != finding.fingerprint:
			changes.changed.append(finding)
		else:
			changes.unchanged.append(finding)
	day = dt.date.fromisoformat(today)
	for key, entry in kept.items():
		if key in seen or entry.get("kind", CONDITION) == LASTING or entry.get("watch") not in computed:
			continue
		cleared = dt.date.fromisoformat(entry.get("cleared") or today)
		if (day - cleared).days >= CLEAR_AFTER_DAYS:
			changes.resolved.append({"key": key, **entry})
		else:
			changes.clearing.append(key)
	return changes


def remember(memory: dict | None, changes: Changes, today: str) -> dict:
	"""The memory after this run: what holds now, what is clearing (and since when), events for a while."""
	kept = dict((memory or {}).get("findings") or {})
	for entry in changes.resolved:
		kept.pop(entry["key"], None)
	for key in changes.clearing:
		kept[key] = {**kept[key], "cleared": kept[key].get("cleared") or today}
	for finding in [*changes.new, *changes.changed, *changes.unchanged]:
		previous = kept.get(finding.key) or {}
		kept[finding.key] = {
			"fingerprint": finding.fingerprint,
			"state": finding.state,
			"title": finding.title,
			"watch": finding.watch,
			"kind": finding.kind,
			"reported": previous.get("reported") if any(f is finding for f in changes.unchanged) else today,
			"seen": today,
		}
	horizon = (dt.date.fromisoformat(today) - dt.timedelta(days=MEMORY_KEEP_DAYS)).isoformat()
	kept = {k: v for k, v in kept.items() if v.get("kind") != LASTING or (v.get("seen") or today) >= horizon}
	return {"findings": kept}
