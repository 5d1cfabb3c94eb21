"""The turn's Session for the signed-in person: identity, connector, allowance, limits, stores, provider.

Everything here reads frappe state (the session user, roles, Agent Settings, Redis) and
hands the engine plain objects; the engine never sees frappe.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

import frappe

from noviz_agent import validation
from noviz_agent.edge.frappe_versions import RELEASE, form_path
from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderSettings, SettingsError
from noviz_agent.engine.secrets import Scrubber
from noviz_agent.engine.session import Limits, Person, Session

SETTINGS = "Agent Settings"
PROGRESS_EVENT = "noviz_agent_progress"
PASSWORD_FIELDS = ("api_key", "vision_api_key", "embedding_api_key")

# Site tests set this to a callable `(settings: dict) -> Provider` (e.g. returning a ScriptedModel),
# so a turn runs through the real api without reaching any model server.
provider_factory: Callable[[dict], Any] | None = None


class NotConfigured(Exception):
	"""The provider is not set up; `message` is for the person, `admin_hint` for whoever can fix it."""

	def __init__(self, message: str, admin_hint: str):
		super().__init__(message)
		self.admin_hint = admin_hint


def load_settings(with_secrets: bool = False) -> dict:
	"""Agent Settings as a plain dict; API keys only when asked for, decrypted with `get_password`."""
	doc = frappe.get_cached_doc(SETTINGS)
	values = doc.as_dict(no_default_fields=True)
	for field in PASSWORD_FIELDS:
		values.pop(field, None)
	if with_secrets:
		values.update(_secrets(doc))
	return values


def _secrets(doc) -> dict:
	"""The API keys, decrypted with frappe's `get_password`; a key that is not set is not read at all.

	An unreadable key counts as none, as `get_password(raise_exception=False)` gives it.
	"""
	values = dict.fromkeys(PASSWORD_FIELDS, "")
	for field in PASSWORD_FIELDS:
		if doc.get(field):
			values[field] = doc.get_password(field, raise_exception=False) or ""
	return values


def scrubber(values: dict, user: str, connector=None) -> Scrubber:
	"""The one scrubber for this person's texts: every provider key of the site and every credential
	of their Agent System Connections (engine/secrets.py).

	Keys already loaded (with `values`, with the connector) are known now; the others are read only
	when a text first needs scrubbing, so a request with nothing to scrub reads no password.
	"""
	known = [values.get(field) for field in PASSWORD_FIELDS if values.get(field)]
	known += list(getattr(connector, "secrets", tuple)()) if connector is not None else []

	def more() -> list[str]:
		found = list(_secrets(frappe.get_cached_doc(SETTINGS)).values())
		if connector is None:
			from noviz_agent.edge.frappe_systems import connections

			for connection in connections(user):
				found += [connection["api_key"] or "", connection["api_secret"] or ""]
		return [secret for secret in found if secret]

	return Scrubber(known, more=more)


def provider_settings(values: dict, role: str = "reasoning") -> ProviderSettings:
	"""One model's settings from Agent Settings values (with secrets); limits fall back to their defaults."""
	return ProviderSettings.from_agent_settings(
		{
			**values,
			"timeout": validation.limit(values, "timeout"),
			"max_retries": validation.limit(values, "max_retries"),
			"tool_call_format": validation.choice(values, "tool_call_format"),
		},
		role,
	)


def make_provider(values: dict):
	"""The reasoning provider for a turn; raises NotConfigured with words for the person and the admin."""
	if provider_factory is not None:
		return provider_factory(values)
	if not (values.get("base_url") or "").strip() or not (values.get("model") or "").strip():
		raise NotConfigured(
			"The agent is not set up on this site yet. Ask your administrator to configure it.",
			f"Set the provider base URL and reasoning model in Agent Settings ({form_path('Agent Settings')}).",
		)
	try:
		settings = provider_settings(values)
	except SettingsError as exc:
		raise NotConfigured(
			"The agent's model settings are incomplete. Ask your administrator to check them.", str(exc)
		) from None
	return OpenAICompatibleProvider(settings)


def limits_from(values: dict) -> Limits:
	"""Turn limits from Agent Settings, each falling back to its default when unset."""
	return Limits(
		max_steps=validation.limit(values, "max_steps"),
		max_seconds=validation.turn_seconds(
			validation.limit(values, "max_seconds"), frappe.conf.get("http_timeout")
		),
		page_size=validation.limit(values, "page_size"),
		history_turns=validation.limit(values, "history_turns"),
		max_tools=validation.limit(values, "max_tools"),
		proposal_ttl_seconds=validation.limit(values, "proposal_ttl_minutes") * 60,
	)


def bounded_by_policy(limits: Limits, person: Person) -> Limits:
	"""The turn's limits with the role policy's row bound applied (it only ever lowers them)."""
	from noviz_agent.edge.frappe_allowance import site_policy

	bound = site_policy().max_rows(person.roles)
	return dataclasses.replace(limits, page_size=min(limits.page_size, bound)) if bound else limits


def site_secret() -> bytes:
	"""The key that signs proposal tokens: derived from the site's encryption key, never stored."""
	from frappe.utils.password import get_encryption_key

	return hmac.new(get_encryption_key().encode(), b"noviz_agent proposal tokens", hashlib.sha256).digest()


class RedisStore:
	"""An expiring key-value store in the site's Redis with an atomic take (put/get/take, like MemoryStore)."""

	def __init__(self, namespace: str):
		self.namespace = namespace

	def _key(self, key: str) -> str:
		return frappe.cache.make_key(f"noviz_agent:{self.namespace}:{key}")

	def put(self, key: str, value: Any, ttl: float) -> None:
		payload = json.dumps(value, default=str, ensure_ascii=False)
		frappe.cache.set(self._key(key), payload, ex=max(1, int(ttl)))

	def get(self, key: str) -> Any | None:
		raw = frappe.cache.get(self._key(key))
		return None if raw is None else json.loads(raw)

	def take(self, key: str) -> Any | None:
		"""GET and DEL in one MULTI/EXEC: of two concurrent takes only one sees the value."""
		pipe = frappe.cache.pipeline(transaction=True)
		pipe.get(self._key(key))
		pipe.delete(self._key(key))
		raw, _deleted = pipe.execute()
		return None if raw is None else json.loads(raw)


def default_company(user: str) -> str | None:
	"""The company a figure is for when the person names none: the one ERPNext's own forms preset
	for them (their User default or the single company User Permissions allow, then the site's
	default), else the company of Global Defaults. Turns, the analysis PDF, the evaluation's expected
	figures and the seeding scripts all take it from here."""
	return frappe.defaults.get_user_default("Company", user=user) or frappe.db.get_single_value(
		"Global Defaults", "default_company"
	)


def person_for(user: str) -> Person:
	"""The Person the turn runs as, from the User record and the site's roles."""
	full_name = frappe.utils.get_fullname(user)
	company = default_company(user)
	language = frappe.get_cached_value("User", user, "language") or frappe.local.lang or "en"
	return Person(
		user=user,
		roles=frozenset(frappe.get_roles(user)),
		full_name=full_name,
		company=company,
		language=language,
	)


def progress_sender_for(user: str, turn: str) -> Callable[[dict], None]:
	"""Publish the engine's progress events to this person's browser only."""

	def send(event: dict) -> None:
		frappe.publish_realtime(PROGRESS_EVENT, {**event, "turn": turn}, user=user)

	return send


progress_sender = progress_sender_for


def make_connector(user: str):
	"""The frappe connector bound to this person (imported late: it is another module's job)."""
	from noviz_agent.connectors.frappe_connector import FrappeConnector
	from noviz_agent.edge.frappe_systems import connector_for

	# Other systems (Helpdesk) the person connected come along, each as the person there.
	return connector_for(user, FrappeConnector(user))


def analysis_job_id(user: str, key: str, params: dict | None, companies: list[str] | None = None) -> str:
	"""One job per person and question: asking again while it runs does not start a second one."""
	digest = hashlib.sha256(
		json.dumps([user, key, params or {}, companies or []], sort_keys=True, default=str).encode()
	).hexdigest()[:16]
	return f"noviz_agent:analysis:{digest}"


def analysis_enqueuer(user: str, turn: str | None) -> Callable[[str, dict, list[str]], str]:
	"""`enqueue_analysis(key, params, companies)`: a long-queue job computing one analysis as this person."""

	def enqueue_analysis(key: str, params: dict, companies: list[str]) -> str:
		job_id = analysis_job_id(user, key, params, companies)
		frappe.enqueue(
			"noviz_agent.tasks.run_analysis",
			queue="long",
			user=user,
			key=key,
			params=params or {},
			companies=list(companies or []),
			turn=turn,
			job_id=job_id,
			deduplicate=True,
			enqueue_after_commit=True,
		)
		return job_id

	return enqueue_analysis


SERVED_QUEUES_KEY = "noviz_agent:served_queues"
SERVED_QUEUES_SECONDS = 30


def served_queues() -> frozenset[str] | None:
	"""The queues some worker listens on (None when RQ cannot be read).

	RQ's list of workers is read at most every 30 seconds (one key in Redis instead of one read
	per worker on every message); a worker that just started or stopped is seen within that time.
	"""
	from frappe.utils.background_jobs import generate_qname, get_workers

	cached = frappe.cache.get_value(SERVED_QUEUES_KEY, expires=True)
	if cached is not None:
		return frozenset(cached)
	prefix = generate_qname("")  # this bench's queues (another bench may share the Redis)
	try:
		names = {q for w in get_workers() for q in w.queue_names()}
	except Exception:
		return None
	served = sorted(q[len(prefix) :] for q in names if q.startswith(prefix))
	frappe.cache.set_value(SERVED_QUEUES_KEY, served, expires_in_sec=SERVED_QUEUES_SECONDS)
	return frozenset(served)


def long_queue_served() -> bool:
	"""Whether a worker listens on the long queue: without one a queued analysis would never run."""
	return "long" in (served_queues() or ())


def intake_system(user: str, values: dict):
	"""Document intake's reads and writes as this person (imported late: the intake edge is its own module)."""
	from noviz_agent.edge.frappe_files import FrappeIntake

	return FrappeIntake(user, values)


def goal_store():
	"""Standing goals made as this person (imported late: the goals edge is its own module)."""
	from noviz_agent.edge.frappe_goals import FrappeGoalStore

	return FrappeGoalStore()


def registry():
	"""The process's canonical registry (`noviz_agent.tools.registry`): no person's data, no turn changes it."""
	from noviz_agent.tools import registry as shared

	return shared()


def build_session(
	values: dict,
	*,
	turn: str | None = None,
	progress: bool = True,
	conversation: str | None = None,
	turn_seconds: float | None = None,
	progress_sender: Callable[[dict], None] | None = None,
	cancelled: Callable[[], bool] | None = None,
) -> Session:
	"""The Session for the signed-in person; everything it holds is theirs alone.

	A background turn passes its own time limit (`turn_seconds`, below its job's timeout instead
	of the web timeout), its progress sender and its stop flag.
	"""
	from noviz_agent.edge.frappe_allowance import allowance
	from noviz_agent.edge.frappe_knowledge import opener

	user = frappe.session.user
	person = person_for(user)
	tools = registry()
	connector = make_connector(user)
	limits = limits_from(values)
	if turn_seconds:
		limits = dataclasses.replace(
			limits, max_seconds=max(5.0, min(float(validation.limit(values, "max_seconds")), turn_seconds))
		)
	if progress_sender is None and progress and turn:
		progress_sender = progress_sender_for(user, turn)
	return Session(
		person=person,
		connector=connector,
		registry=tools,
		allowed=allowance(person, connector, tools),
		limits=bounded_by_policy(limits, person),
		secret=site_secret(),
		proposals=RedisStore("proposal"),
		# Results are per person: a result id from someone else's turn finds nothing.
		results=RedisStore(f"result:{user}"),
		writes_enabled=bool(values.get("enable_writes")),
		progress=progress_sender,
		conversation=conversation,
		cancelled=cancelled,
		# Opened lazily: most turns never search the process documents.
		knowledge=opener(values),
		# Without a long-queue worker, large analyses run in the turn (bounded by its limits)
		# rather than waiting for a job that would never start.
		enqueue_analysis=analysis_enqueuer(user, turn) if long_queue_served() else None,
		intake=intake_system(user, values),
		erpnext_version=RELEASE,
		scrub=scrubber(values, user, connector),
		goals=goal_store(),
	)
