"""Governance on a site: budgets in Redis reconciled to the database, the shared rate gate, the
response cache, audited reads and retention. The rules live in `noviz_agent.governance`.
"""

from __future__ import annotations

import datetime as dt

import frappe
from frappe import _

from noviz_agent.edge.frappe_session import RedisStore
from noviz_agent.governance import budgets, retention
from noviz_agent.governance.budgets import Cap, Spend
from noviz_agent.governance.cache import ResponseCache
from noviz_agent.governance.rate_gate import MeteredProvider, RateGate

BUDGET = "Agent Budget"
USAGE = "Agent Budget Usage"
AUDIT = "Agent Audit Read"
COST_MONTH = "Agent Cost Month"
LOG = "Agent Interaction Log"
CONVERSATION = "Agent Conversation"
AUDITOR = "Agent Auditor"
MICRO = 1_000_000  # cost kept in Redis as integer millionths
BUDGETS_CACHED = "budgets"  # the enabled budgets, kept in Redis (frappe_allowance.cached)


# --- budgets ----------------------------------------------------------------------------


def _budget_rows() -> list[dict]:
	# Read past permissions: a budget binds people who may not read it.
	rows = frappe.get_all(
		BUDGET,
		filters={"enabled": 1},
		fields=["scope", "role", "person", "monthly_tokens", "monthly_cost", "notify_percent"],
	)
	return [dict(r) for r in rows]


def caps() -> list[Cap]:
	"""Every enabled budget (kept in Redis until a budget, a role or a permission changes)."""
	from noviz_agent.edge.frappe_allowance import cached

	return [
		Cap(
			r["scope"],
			r["role"] if r["scope"] == "Role" else (r["person"] if r["scope"] == "Person" else ""),
			tokens=int(r["monthly_tokens"] or 0),
			money=float(r["monthly_cost"] or 0),
			warn_at=float(r["notify_percent"] or 80) / 100,
		)
		for r in cached(BUDGETS_CACHED, _budget_rows)
	]


class RedisUsage:
	"""Spending per cap and month in Redis (atomic INCRBY, shared by every worker), seeded from and
	reconciled to Agent Budget Usage, so a Redis restart loses nothing that was settled."""

	def _keys(self, key: str, month: str) -> tuple[str, str]:
		base = frappe.cache.make_key(f"noviz_agent:budget:{key}:{month}")
		return f"{base}:tokens", f"{base}:micro"

	def _seed(self, key: str, month: str) -> None:
		tokens_key, micro_key = self._keys(key, month)
		if frappe.cache.exists(tokens_key):
			return
		row = frappe.db.get_value(USAGE, _usage_name(key, month), ["tokens", "cost"], as_dict=True) or {}
		ttl = 40 * 24 * 3600
		frappe.cache.set(tokens_key, int(row.get("tokens") or 0), ex=ttl, nx=True)
		frappe.cache.set(micro_key, int(round(float(row.get("cost") or 0) * MICRO)), ex=ttl, nx=True)

	def reserve(self, key: str, month: str, amount: Spend, cap: Cap) -> bool:
		self._seed(key, month)
		used = self._incr(key, month, amount)
		if budgets.fits(cap, used - amount, amount):
			return True
		self._incr(key, month, Spend() - amount)  # give it back: this turn does not run
		return False

	def add(self, key: str, month: str, amount: Spend) -> None:
		self._seed(key, month)
		self._incr(key, month, amount)

	def used(self, key: str, month: str) -> Spend:
		self._seed(key, month)
		tokens_key, micro_key = self._keys(key, month)
		return Spend(int(frappe.cache.get(tokens_key) or 0), int(frappe.cache.get(micro_key) or 0) / MICRO)

	def _incr(self, key: str, month: str, amount: Spend) -> Spend:
		tokens_key, micro_key = self._keys(key, month)
		pipe = frappe.cache.pipeline(transaction=True)
		pipe.incrby(tokens_key, int(amount.tokens))
		pipe.incrby(micro_key, int(round(amount.money * MICRO)))
		tokens, micro = pipe.execute()
		return Spend(int(tokens), micro / MICRO)


def _usage_name(key: str, month: str) -> str:
	return f"{key}|{month}"


def record_spend(held: budgets.Reservation, actual: Spend) -> None:
	"""Add what a turn really spent to each cap's row: one upsert per row, so no increment is lost.

	Rows are touched in the same order by every turn (site, roles, person), so concurrent turns
	queue on each row instead of deadlocking; a deadlock reported anyway is retried.
	"""
	now = frappe.utils.now_datetime()
	for cap in held.caps:
		name = _usage_name(cap.key, held.month)
		values = (name, name, cap.key, held.month, int(actual.tokens), float(actual.money), now, now)
		for attempt in range(3):
			try:
				frappe.db.sql(UPSERT[frappe.db.db_type], values + (int(actual.tokens), float(actual.money)))
				break
			except frappe.QueryDeadlockError:
				if attempt == 2:
					raise


_INSERT = (
	"insert into `tabAgent Budget Usage` (name, budget_month, budget_key, month, tokens, cost, creation, "
	"modified, owner, modified_by, docstatus) values (%s, %s, %s, %s, %s, %s, %s, %s, 'Administrator', "
	"'Administrator', 0)"
)
# Our own spending table, our own values: never text from a model or a person.
UPSERT = {
	"mariadb": _INSERT + " on duplicate key update tokens = tokens + %s, cost = cost + %s",
	"postgres": _INSERT.replace("`", '"')
	+ ' on conflict (name) do update set tokens = "tabAgent Budget Usage".tokens + %s, '
	'cost = "tabAgent Budget Usage".cost + %s',
}


def notify_crossed(crossed: list[Cap]) -> None:
	"""Tell System Managers that a budget passed its warning level."""
	if not crossed:
		return
	managers = [
		u for u in frappe.get_users_with_role("System Manager") if u not in ("Administrator", "Guest")
	]
	for cap in crossed:
		subject = _("Noviz agent: {0} is {1}% used").format(cap.describe(), int(cap.warn_at * 100))
		for user in managers:
			frappe.get_doc(
				{"doctype": "Notification Log", "for_user": user, "type": "Alert", "subject": subject}
			).insert(ignore_permissions=True)


# --- rate gate and cache ------------------------------------------------------------------


class RedisCounters:
	def incr(self, key: str, amount: int, ttl: int) -> int:
		name = frappe.cache.make_key(f"noviz_agent:rate:{key}")
		pipe = frappe.cache.pipeline(transaction=True)
		pipe.incrby(name, amount)
		pipe.expire(name, ttl)
		value, _ok = pipe.execute()
		return int(value)


def rate_gate(values: dict) -> RateGate:
	provider = (values.get("base_url") or "provider").rstrip("/")
	return RateGate(RedisCounters(), provider, int(values.get("tokens_per_minute") or 0))


def call_budget(values: dict, user: str) -> budgets.CallBudget:
	"""The person's caps for single model calls made outside a turn (see governance.budgets.CallBudget)."""
	from noviz_agent.records import Rates, estimate_cost

	rates = Rates.from_settings(values)

	def recorded(held, actual, crossed) -> None:
		record_spend(held, actual)
		notify_crossed(crossed)

	return budgets.CallBudget(
		RedisUsage(),
		budgets.applicable(caps(), user, set(frappe.get_roles(user))),
		frappe.utils.getdate(),
		dearest=max(rates.prompt, rates.completion),
		price=lambda prompt, completion: estimate_cost(prompt, 0, completion, rates),
		on_settled=recorded,
	)


def metered(provider, values: dict, user: str):
	"""`provider` with every call rate-gated and held against the person's budgets (vision reading,
	a procedure's step after a confirm); None stays None."""
	if provider is None:
		return None
	return MeteredProvider(provider, rate_gate(values), call_budget(values, user))


def response_cache(values: dict, user: str) -> ResponseCache | None:
	ttl = int(values.get("cache_seconds") or 0)
	if ttl <= 0:
		return None
	embed = None
	try:
		from knowledge.embedding import builtin_embedder

		embed = builtin_embedder().embed
	except Exception:
		embed = None  # exact repeats only
	threshold = float(values.get("cache_similarity") or 0.93)
	from noviz_agent.edge.frappe_allowance import cache_token

	# Keyed by the permission generation too: an answer kept before a role or permission changed
	# (Role Permission Manager included) is never served after it.
	return ResponseCache(
		RedisStore(f"cache:{user}"),
		ttl=ttl,
		threshold=threshold,
		embed=embed,
		context=f"perm:{cache_token()}",
	)


# --- audited review -------------------------------------------------------------------------


# The agent's records of people's turns whose content no desk view shows (permission level 1, which
# no role holds): read only through `audited_record`, by their person or an Agent Auditor.
AUDITED = {LOG: "log", "Agent SOP Run": "procedure_run"}
CONTENT = {LOG: ("request", "error", "feedback_comment"), "Agent SOP Run": ("state",)}


def record_read(auditor: str, person: str, **what) -> None:
	"""One Agent Audit Read row: who read whose conversation, log or procedure run, and when."""
	frappe.get_doc(
		{
			"doctype": AUDIT,
			"auditor": auditor,
			"person": person,
			"read_at": frappe.utils.now_datetime(),
			**what,
		}
	).insert(ignore_permissions=True)  # the audit trail is written for the auditor, never by them


def _auditor_or_owner(doctype: str, name: str, person: str, user: str, what: str) -> bool:
	"""Whether `user` reads someone else's record (then they must be an Agent Auditor)."""
	if person == user:
		return False
	if AUDITOR not in frappe.get_roles(user):
		frappe.throw(
			_("{0} {1} belongs to someone else; only its owner or an Agent Auditor may read it.").format(
				what, name
			),
			frappe.PermissionError,
		)
	return True


def readable_conversation(name: str, user: str):
	"""A conversation for its owner; for an Agent Auditor too, with the read recorded."""
	if not frappe.db.exists(CONVERSATION, name):
		frappe.throw(_("Conversation {0} does not exist.").format(name), frappe.DoesNotExistError)
	doc = frappe.get_doc(CONVERSATION, name)
	if _auditor_or_owner(CONVERSATION, name, doc.person, user, _("Conversation")):
		record_read(user, doc.person, conversation=name)
	return doc


def audited_record(doctype: str, name: str, user: str):
	"""An interaction log or a procedure run with its content: for its person; for an Agent Auditor
	too, with the read recorded. No other path shows that content (see the DocTypes' permission levels)."""
	if doctype not in AUDITED:
		frappe.throw(_("Only interaction logs and procedure runs are read here."), frappe.ValidationError)
	if not frappe.db.exists(doctype, name):
		frappe.throw(_("{0} {1} does not exist.").format(_(doctype), name), frappe.DoesNotExistError)
	doc = frappe.get_doc(doctype, name)
	if _auditor_or_owner(doctype, name, doc.person, user, _(doctype)):
		record_read(user, doc.person, conversation=doc.conversation, **{AUDITED[doctype]: name})
	return doc


def audited_contents(names: list[str], user: str) -> dict[str, dict]:
	"""The content of these interaction logs for an Agent Auditor (a report's rows), each read of
	another person's log recorded; {} for anyone else, who sees the logs without it."""
	if not names or AUDITOR not in frappe.get_roles(user):
		return {}
	# The agent's own records, read for the auditor once their role is checked; each read is recorded.
	rows = frappe.get_all(
		LOG, filters={"name": ("in", names)}, fields=["name", "person", "conversation", *CONTENT[LOG]]
	)
	now = frappe.utils.now_datetime()
	others = [r for r in rows if r.person != user]
	if others:
		frappe.db.bulk_insert(
			AUDIT,
			[
				"name",
				"auditor",
				"person",
				"conversation",
				"log",
				"read_at",
				"owner",
				"modified_by",
				"creation",
				"modified",
			],
			[
				(
					frappe.generate_hash(length=10),
					user,
					r.person,
					r.conversation,
					r.name,
					now,
					user,
					user,
					now,
					now,
				)
				for r in others
			],
		)
	return {r.name: {field: r.get(field) for field in CONTENT[LOG]} for r in rows}


# --- retention -------------------------------------------------------------------------------


def apply_retention() -> dict:
	"""Remove conversations and log rows older than Agent Settings says, in batches; keep cost totals."""
	settings = frappe.get_single("Agent Settings")
	today = frappe.utils.getdate()
	removed = {"conversations": 0, "logs": 0}
	cut = retention.cutoff(today, int(settings.get("keep_conversations_days") or 0))
	if cut:
		while names := frappe.get_all(
			CONVERSATION, filters={"modified": ("<", cut)}, pluck="name", limit=retention.BATCH
		):
			for name in names:
				frappe.db.set_value(LOG, {"conversation": name}, "conversation", None, update_modified=False)
				frappe.delete_doc(CONVERSATION, name, ignore_permissions=True, force=True)
			removed["conversations"] += len(names)
			frappe.db.commit()
	cut = retention.cutoff(today, int(settings.get("keep_logs_days") or 0))
	if cut:
		while rows := frappe.get_all(
			LOG,
			filters={"creation": ("<", cut)},
			fields=[
				"name",
				"creation",
				"person",
				"model",
				"prompt_tokens",
				"completion_tokens",
				"estimated_cost",
			],
			limit=retention.BATCH,
		):
			for item in retention.monthly_costs(rows):
				frappe.get_doc({"doctype": COST_MONTH, **item}).insert(ignore_permissions=True)
			for row in rows:
				frappe.delete_doc(LOG, row.name, ignore_permissions=True, force=True)
			removed["logs"] += len(rows)
			frappe.db.commit()
	return removed


def turn_budget(user: str, roles, values: dict, worst_tokens: int, rates) -> tuple[list[Cap], Spend]:
	"""The caps binding this person and a turn's worst case: its token limit at the dearer of the prices."""
	dearest = max(rates.prompt, rates.completion) if rates else 0.0
	worst = Spend(worst_tokens, round(worst_tokens * dearest / 1_000_000, 6))
	return budgets.applicable(caps(), user, set(roles)), worst


def month_today() -> dt.date:
	return frappe.utils.getdate()
