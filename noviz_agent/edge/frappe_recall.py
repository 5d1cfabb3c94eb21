"""A turn job reads what frappe keeps in Redis for it in one round trip, not thirty.

Every job starts with frappe's per-request cache (`frappe.local.cache`) empty, so it reads
again, one Redis call at a time, what frappe keeps there: DocType meta, table columns, naming
and assignment rules, notifications, the person's roles, defaults and user permissions. A turn
reads about thirty such entries, and under load each call waits for Redis to be scheduled.

A worker that runs many turns in one process (`bench noviz-agent worker --no-fork`) remembers
which entries its last few turns of a site read - their names only, never their values - and
the next turn reads those in one pipeline and puts them where frappe's own reads look first:
- **Fresh.** The values are read from Redis at the start of the job, so the job sees what frappe
  would have read a few milliseconds later; no value is kept from one job to the next.
- **Unpickled when used.** An entry stays as Redis sent it until frappe looks for it, so one
  read for nothing costs only its bytes. A DocType's meta read again with the same bytes is the
  Meta this process built from them before (frappe treats a Meta as read-only; unpickling a large
  one costs milliseconds). Other values are always unpickled anew: callers may change them.
- **The person's own.** An entry of the person the job runs for (their roles, defaults, user
  permissions in frappe's hashes; their User document, companies and procedures under keys that
  name them) is learnt as "the person's", and read for whoever the next job runs for, not for
  the people of the last few jobs.
- **What is used.** An entry counts as read when frappe looked for it, not because it was
  prefetched: what turns stop needing stops being read.

The names are also kept in Redis for the site (names only, a day), so a worker that has just
started - a new one, or one restarted after a crash - prefetches from its first job. A forking
worker starts each job from the parent, which has learnt nothing but those shared names.
"""

from __future__ import annotations

import functools
import pickle
import re
import time
from collections import Counter, deque

import frappe

WINDOW = 6  # the jobs per site whose reads the next job prefetches
MAX_ENTRIES = 200  # a job that read more is unusual: nothing is learnt from it
PERSON = "\x00person"  # stands for the person a job runs for, in learnt names
PERSON_IN_KEY = PERSON.encode()
# The names last learnt on the site by any worker, for a worker's first jobs (names only).
SHARED_KEY = "noviz_agent:recall_names"
SHARED_SECONDS = 24 * 3600
SHARE_EVERY_SECONDS = 60
META_HASH = "doctype_meta"

# Per site: the (keys, fields) read by each of the last WINDOW jobs; names only.
_recent: dict[str, deque] = {}
# Per site: what the next job prefetches: (simple keys, (hash, field) pairs), PERSON unresolved.
_wanted: dict[str, tuple[frozenset, frozenset]] = {}
_shared: dict[str, float] = {}  # when this process last wrote the site's names to Redis
# Names found to be Redis hashes or plain values (frappe keeps both in the same local dict).
_hashes: set = set()
_values: set = set()
# DocType meta as last unpickled, per (hash, doctype): (its pickled bytes, the Meta).
_metas: dict[tuple, tuple[bytes, object]] = {}


class Pickled:
	"""A prefetched value as Redis sent it."""

	__slots__ = ("name", "field", "raw")

	def __init__(self, raw: bytes, name=None, field=None):
		self.raw, self.name, self.field = raw, name, field

	def load(self):
		if self.field is None or not _is_meta(self.name):
			return pickle.loads(self.raw)
		kept = _metas.get((self.name, self.field))
		if kept is not None and kept[0] == self.raw:
			return kept[1]
		meta = pickle.loads(self.raw)
		_metas[(self.name, self.field)] = (self.raw, meta)
		return meta


class Recalled(dict):
	"""`frappe.local.cache`, or one hash of it, holding prefetched entries: unpickles each when it
	is first read and notes which ones frappe looked for (its cache reads look with `in` first)."""

	def __init__(self, *args):
		super().__init__(*args)
		self.prefetched: set = set()
		self.used: set = set()

	def __contains__(self, key) -> bool:
		if key in self.prefetched:
			self.used.add(key)
		return dict.__contains__(self, key)

	def __getitem__(self, key):
		value = dict.__getitem__(self, key)
		if type(value) is Pickled:
			value = value.load()
			dict.__setitem__(self, key, value)
		return value

	def get(self, key, default=None):
		return self[key] if dict.__contains__(self, key) else default

	def setdefault(self, key, default=None):
		if dict.__contains__(self, key):
			return self[key]
		dict.__setitem__(self, key, default)
		return default

	def pop(self, key, *default):
		value = dict.pop(self, key, *default)
		return value.load() if type(value) is Pickled else value

	def popitem(self):
		key, value = dict.popitem(self)
		return key, value.load() if type(value) is Pickled else value

	def values(self):
		return [self[key] for key in list(dict.keys(self))]

	def items(self):
		return [(key, self[key]) for key in list(dict.keys(self))]

	def copy(self):
		return dict(self.items())

	def unused(self, key) -> bool:
		return key in self.prefetched and key not in self.used


def prefetch() -> int:
	"""Read the entries the last turns of this site read into `frappe.local.cache`; how many."""
	site = frappe.local.site
	if site not in _wanted:
		_wanted[site] = _read_shared()
	keys, fields = _wanted[site]
	person = _person()
	local = frappe.local.cache
	# What the job already read (frappe reads its hooks before the job starts) is not read again.
	keys = [
		key
		for key in (_resolved(key, person) for key in keys)
		if key is not None and not dict.__contains__(local, key)
	]
	by_hash: dict = {}
	for name, field in fields:
		if field == PERSON:
			if not person:
				continue
			field = person
		if field not in (local.get(name) or {}):
			by_hash.setdefault(name, []).append(field)
	if not keys and not by_hash:
		return 0
	pipe = frappe.cache.pipeline(transaction=False)
	if keys:
		pipe.mget(keys)
	for name, names in by_hash.items():
		pipe.hmget(name, names)
	replies = pipe.execute()
	local = frappe.local.cache = Recalled(local)
	found = 0
	if keys:
		for key, raw in zip(keys, replies.pop(0), strict=True):
			if raw is None:
				# Left to frappe's get_value, which makes it with its generator (an entry that
				# answered None here would stop that).
				continue
			dict.__setitem__(local, key, Pickled(raw))
			local.prefetched.add(key)
			found += 1
	for (name, names), raws in zip(by_hash.items(), replies, strict=True):
		entries = dict.get(local, name)
		if not isinstance(entries, Recalled):
			entries = Recalled(entries or {})
			dict.__setitem__(local, name, entries)
		for field, raw in zip(names, raws, strict=True):
			# A missing field is not remembered, as frappe's hget does not remember one.
			if raw is not None and not dict.__contains__(entries, field):
				dict.__setitem__(entries, field, Pickled(raw, name, field))
				entries.prefetched.add(field)
				found += 1
	return found


def warm() -> int:
	"""Before a worker's first job: unpickle the DocType meta the site's recent turns read (the
	names other workers shared), so that the first job that reads one with the same bytes gets
	the Meta built here; how many. Read only."""
	keys, fields = _read_shared()
	metas: dict = {}
	for name, field in fields:
		if field != PERSON and _is_meta(name):
			metas.setdefault(name, []).append(field)
	if not metas:
		return 0
	pipe = frappe.cache.pipeline(transaction=False)
	for name, names in metas.items():
		pipe.hmget(name, names)
	warmed = 0
	for (name, names), raws in zip(metas.items(), pipe.execute(), strict=True):
		for field, raw in zip(names, raws, strict=True):
			if raw is not None:
				Pickled(raw, name, field).load()  # kept in _metas, as a job's read would keep it
				warmed += 1
	return warmed


def learn() -> None:
	"""Note which cached entries this job read (from `frappe.local.cache`, before it is dropped)."""
	local = getattr(frappe.local, "cache", None)
	site = getattr(frappe.local, "site", None)
	if not local or not site:
		return
	person = _person()
	read = {name: value for name, value in dict.items(local) if not _unused(local, name)}
	# What kind each name is, is kept for its generic name: a person's own key is looked up once,
	# not once for each person.
	generic = {name: _generic(name, person) for name in read}
	known = _hashes | _values
	unknown = [name for name, value in read.items() if isinstance(value, dict) and generic[name] not in known]
	if unknown:
		pipe = frappe.cache.pipeline(transaction=False)
		for name in unknown:
			pipe.type(name)
		for name, kind in zip(unknown, pipe.execute(), strict=True):
			kind = kind.decode() if isinstance(kind, bytes) else kind
			if kind == "hash":
				_hashes.add(generic[name])
			elif kind == "string":
				_values.add(generic[name])
			# "none": not in Redis now; it is looked at again after a later job
	keys = frozenset(
		generic[name]
		for name, value in read.items()
		if not isinstance(value, dict) or generic[name] in _values
	)
	fields = frozenset(
		(name, PERSON if field == person else field)
		for name in read
		if generic[name] in _hashes
		for field in dict.keys(read[name])
		if isinstance(field, str) and not _unused(read[name], field)
	)
	if len(keys) + len(fields) > MAX_ENTRIES:
		return  # an unusual job: learn nothing from it
	recent = _recent.setdefault(site, deque(maxlen=WINDOW))
	recent.append((keys, fields))
	_wanted[site] = _most_read(recent)
	if time.monotonic() - _shared.get(site, float("-inf")) >= SHARE_EVERY_SECONDS:
		_write_shared(*_wanted[site])
		_shared[site] = time.monotonic()


def _most_read(recent) -> tuple[frozenset, frozenset]:
	"""Everything the recent jobs read; the most read first when that is too much."""
	counts = Counter(("key", key) for keys, _ in recent for key in keys)
	counts.update(("field", field) for _, fields in recent for field in fields)
	chosen = [entry for entry, _ in counts.most_common(MAX_ENTRIES)]
	return (
		frozenset(name for kind, name in chosen if kind == "key"),
		frozenset(name for kind, name in chosen if kind == "field"),
	)


@functools.lru_cache(maxsize=256)
def _segment(person: str) -> re.Pattern:
	"""The person's name as a whole segment of a cache key (`...|user:NAME:key`, `...::NAME`)."""
	return re.compile(rb"(?<=[:|])" + re.escape(person.encode()) + rb"(?=:|$)")


def _generic(key, person: str | None):
	"""A key that names the person a job runs for, learnt as standing for whoever the next one runs for."""
	if not person or not isinstance(key, bytes):
		return key
	return _segment(person).sub(PERSON_IN_KEY, key)


def _resolved(key, person: str | None):
	"""A learnt key for this job's person (None when it names a person and the job has none)."""
	if not isinstance(key, bytes) or PERSON_IN_KEY not in key:
		return key
	return key.replace(PERSON_IN_KEY, person.encode()) if person else None


def _person() -> str | None:
	return getattr(getattr(frappe.local, "session", None), "user", None)


def _is_meta(name) -> bool:
	text = name.decode() if isinstance(name, bytes) else str(name)
	return text.rpartition("|")[2] == META_HASH


def _unused(entries: dict, key) -> bool:
	"""Whether the entry was only prefetched: nobody looked for it in this job."""
	return isinstance(entries, Recalled) and entries.unused(key)


def _read_shared() -> tuple[frozenset, frozenset]:
	"""The names a worker of this site learnt (none when there are none or they are unreadable)."""
	raw = frappe.cache.get(frappe.cache.make_key(SHARED_KEY))
	try:
		keys, fields = pickle.loads(raw) if raw else ((), ())
		keys, fields = frozenset(keys), frozenset((name, field) for name, field in fields)
	except Exception:  # written by another version, or damaged: learnt again from this worker's jobs
		return frozenset(), frozenset()
	if len(keys) + len(fields) > MAX_ENTRIES:
		return frozenset(), frozenset()
	return keys, fields


def _write_shared(keys: frozenset, fields: frozenset) -> None:
	frappe.cache.set(frappe.cache.make_key(SHARED_KEY), pickle.dumps((keys, fields)), ex=SHARED_SECONDS)
