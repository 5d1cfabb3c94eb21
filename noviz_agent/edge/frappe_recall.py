"""A turn job reads what frappe keeps in Redis for it in one round trip, not thirty.

Every job starts with frappe's per-request cache (`frappe.local.cache`) empty, so it reads
again, one Redis call at a time, what frappe keeps there: DocType meta, table columns, naming
and assignment rules, notifications, defaults, system settings. A turn reads about thirty such
entries, and under load each call waits for Redis to be scheduled.

A worker that runs many turns in one process (`bench noviz-agent worker --no-fork`) remembers
which entries its last two turns of a site both read - their names only, never their values -
and the next turn reads exactly those in one pipeline and puts them where frappe's own reads look
first. The values are read fresh from Redis at the start of the job, so the job sees what frappe
would have read a few milliseconds later; nothing is kept from one job to the next. A forking
worker starts each job from the parent, which has learnt nothing: it reads as before.
"""

from __future__ import annotations

import pickle

import frappe

# Per site: (simple keys, (hash, field) pairs) read by the last turn, and those the next one
# will prefetch (read by both of the last two). Key names only.
_last: dict[str, tuple[frozenset, frozenset]] = {}
_wanted: dict[str, tuple[frozenset, frozenset]] = {}
# Names found to be Redis hashes (frappe keeps both hashes and values in the same local dict).
_hashes: set[str] = set()
_values: set[str] = set()
MAX_ENTRIES = 200


def prefetch() -> int:
	"""Read the entries the last turns of this site read into `frappe.local.cache`; how many."""
	keys, fields = _wanted.get(frappe.local.site, (frozenset(), frozenset()))
	local = frappe.local.cache
	# What the job already read (frappe reads its hooks before the job starts) is not read again.
	keys = [key for key in keys if key not in local]
	fields = [(name, field) for name, field in fields if field not in (local.get(name) or {})]
	if not keys and not fields:
		return 0
	pipe = frappe.cache.pipeline(transaction=False)
	if keys:
		pipe.mget(keys)
	for name, field in fields:
		pipe.hget(name, field)
	replies = pipe.execute()
	found = 0
	if keys:
		for key, raw in zip(keys, replies.pop(0), strict=True):
			if key not in local:
				# As frappe's get_value: a missing key is remembered as None for the request.
				local[key] = None if raw is None else pickle.loads(raw)
				found += raw is not None
	for (name, field), raw in zip(fields, replies, strict=True):
		if raw is None:
			continue  # as frappe's hget: a missing field is not remembered
		entries = local.setdefault(name, {})
		if field not in entries:
			entries[field] = pickle.loads(raw)
			found += 1
	return found


def learn() -> None:
	"""Note which cached entries this job read (from `frappe.local.cache`, before it is dropped)."""
	local = getattr(frappe.local, "cache", None)
	site = getattr(frappe.local, "site", None)
	if not local or not site:
		return
	known = _hashes | _values
	unknown = [name for name, value in local.items() if isinstance(value, dict) and name not in known]
	if unknown:
		pipe = frappe.cache.pipeline(transaction=False)
		for name in unknown:
			pipe.type(name)
		for name, kind in zip(unknown, pipe.execute(), strict=True):
			kind = kind.decode() if isinstance(kind, bytes) else kind
			if kind == "hash":
				_hashes.add(name)
			elif kind == "string":
				_values.add(name)
			# "none": not in Redis now; it is looked at again after a later job
	keys = frozenset(name for name, value in local.items() if not isinstance(value, dict) or name in _values)
	fields = frozenset(
		(name, field) for name in local if name in _hashes for field in local[name] if isinstance(field, str)
	)
	if len(keys) + len(fields) > MAX_ENTRIES:
		return  # an unusual job: learn nothing from it
	before = _last.get(site)
	_last[site] = (keys, fields)
	# What the last two turns both read (what one question needed and the next did not - another
	# DocType's meta, say - is left out: reading it for nothing costs more than it saves).
	if before is not None:
		_wanted[site] = (keys & before[0], fields & before[1])
