"""The connector contract over another Frappe site's REST API, as the person in that system.

Every call carries the person's own API key and secret for that system, so its permissions
decide what comes back. Reads use the same permission-checked list query the desk uses
(`frappe.client.get_list`, with group-by for aggregates), records and writes go through
`/api/resource`, submit and cancel through `frappe.client`. HTTP is `requests` with urllib3's
retry policy (backoff, `Retry-After`) for reads and for refusals the server made before doing
anything (429, 503); a write is never retried after a timeout, so it cannot run twice. The
system's own words come back in the engine's named errors; credentials never appear in them.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import ReadTimeoutError
from urllib3.util.retry import Retry

from noviz_agent.connectors.base import PERMISSION_TYPES
from noviz_agent.connectors.model import Entity, Model, doc_url
from noviz_agent.connectors.translate import (
	aggregate_query,
	count_query,
	doc_to_canonical,
	list_args,
	rows_to_canonical,
	syntax_for,
	to_frappe_values,
)
from noviz_agent.engine.errors import NotFound, PermissionDenied, ToolError, ValidationFailed
from noviz_agent.engine.secrets import Scrubber

_TAG = re.compile(r"<[^>]+>")
READ_RETRY_STATUSES = (429, 500, 502, 503, 504)
READS = frozenset({"GET", "POST"})
WRITES = frozenset({"POST", "PUT"})
WRITE_RETRY_STATUSES = (429, 503)  # refused before the server did anything


class Unreachable(ToolError):
	"""The other system did not answer; the message names it and what to check."""


def _retry(total: int, backoff: float, statuses, methods) -> Retry:
	return Retry(
		total=total,
		connect=total,
		read=0 if methods == WRITES else total,
		status=total,
		backoff_factor=backoff,
		status_forcelist=statuses,
		allowed_methods=methods,
		respect_retry_after_header=True,
		raise_on_status=False,
	)


class RestConnector:
	"""One person's view of another Frappe site, in the canonical terms of that system's model."""

	def __init__(
		self,
		system: str,
		base_url: str,
		api_key: str,
		api_secret: str,
		model: Model,
		*,
		user: str = "",
		timeout: float = 15.0,
		retries: int = 3,
		backoff: float = 0.5,
	):
		if not base_url.startswith(("http://", "https://")):
			raise ValueError(f"The base URL of {system} must start with http:// or https://")
		self.system, self.base_url, self.model = system, base_url.rstrip("/"), model
		self.user = user or f"{system} account"
		self.timeout = timeout
		self._secret = (api_key, api_secret)
		# The server may echo the credentials it refused, as it received them (trimmed, say).
		self._scrub = Scrubber(self._secret)
		# Reads (GET, and the POSTed list query) retry on every transient answer; writes only on
		# answers that mean nothing was done, and never after a timeout.
		self._reads = self._session(api_key, api_secret, _retry(retries, backoff, READ_RETRY_STATUSES, READS))
		self._writes = self._session(
			api_key, api_secret, _retry(retries, backoff, WRITE_RETRY_STATUSES, WRITES)
		)
		self._installed: list[str] | None = None
		self._aggregate_syntax: str | None = None

	def _session(self, api_key: str, api_secret: str, retry: Retry) -> requests.Session:
		session = requests.Session()
		session.headers["Authorization"] = f"token {api_key}:{api_secret}"
		session.headers["Accept"] = "application/json"
		session.mount(self.base_url, HTTPAdapter(max_retries=retry))
		return session

	def __repr__(self) -> str:
		return f"RestConnector({self.system!r}, {self.base_url!r}, user={self.user!r})"

	def secrets(self) -> tuple[str, ...]:
		"""The person's credentials for this system, for the scrubber (engine/secrets.py) to remove."""
		return tuple(part for part in self._secret if part)

	# --- HTTP ------------------------------------------------------------------------------

	def _call(self, method: str, path: str, *, what: str, read: bool = True, **kwargs) -> Any:
		"""One request; the decoded `message`/`data`, or the engine's named error in the system's words."""
		url = f"{self.base_url}{path}"
		http = self._reads if read else self._writes
		try:
			response = http.request(method, url, timeout=self.timeout, **kwargs)
		except requests.Timeout:
			raise Unreachable(
				f"{self.system} did not answer within {self.timeout:g} s while {what}. Try again later."
			) from None
		except requests.ConnectionError as exc:
			# Read timeouts that outlast the retries arrive wrapped as a connection error.
			if isinstance(getattr(exc.args[0] if exc.args else None, "reason", None), ReadTimeoutError):
				raise Unreachable(
					f"{self.system} did not answer within {self.timeout:g} s while {what}. Try again later."
				) from None
			raise Unreachable(
				f"{self.system} cannot be reached at {self.base_url} while {what}. "
				"Ask your administrator to check the system's address in Agent System."
			) from None
		except (requests.RequestException, ValueError) as exc:
			# Anything else requests or http.client refuse before sending (a malformed header, a bad
			# URL) may quote the request itself, credentials included: only the kind of fault is told.
			raise Unreachable(
				f"The request to {self.system} could not be sent while {what} ({type(exc).__name__}). "
				"Ask your administrator to check the address in Agent System, and connect your account "
				"again in Agent System Connection (the key or secret may hold a stray character)."
			) from None
		return self._read(response, what)

	def _read(self, response: requests.Response, what: str) -> Any:
		try:
			body = response.json()
		except ValueError:
			body = {}
		if response.status_code < 400:
			return body.get("message", body.get("data"))
		message = self._clean(self._server_message(body) or f"{self.system} answered {response.status_code}")
		# The system's own words: its people wrote them, so they are untrusted text (`origin`).
		origin = self.system
		if response.status_code in (401, 403):
			if response.status_code == 401:
				message = (
					f"{self.system} did not accept your credentials ({message}). Connect your account again "
					"in Agent System Connection."
				)
			raise PermissionDenied(message, origin=origin)
		if response.status_code == 404:
			raise NotFound(message, origin=origin)
		if response.status_code in (400, 409, 417, 422):
			raise ValidationFailed(message, origin=origin)
		raise Unreachable(f"{self.system} failed while {what}: {message}", origin=origin)

	@staticmethod
	def _server_message(body: dict) -> str:
		raw = body.get("_server_messages")
		if raw:
			try:
				items = [json.loads(item) for item in json.loads(raw)]
				texts = [i.get("message", "") if isinstance(i, dict) else str(i) for i in items]
				return " ".join(t for t in texts if t)
			except (ValueError, TypeError):
				pass
		exc = body.get("exception") or body.get("exc_type") or body.get("message")
		return str(exc) if exc else ""

	def _clean(self, text: str) -> str:
		text = re.sub(r"\s+", " ", html.unescape(_TAG.sub("", text))).strip()
		return self._scrub(text)

	# --- the contract --------------------------------------------------------------------------

	def _entity(self, key: str) -> Entity:
		if key not in self.model.entities:
			raise NotFound(f"There is no entity '{key}' in {self.system}.")
		return self.model.entity(key)

	def _get_list(self, kwargs: dict, what: str) -> list[dict]:
		return (
			self._call("POST", "/api/method/frappe.client.get_list", what=what, json=kwargs, read=True) or []
		)

	def entities(self) -> list[str]:
		"""The entities whose DocType this person can see in the other system."""
		if self._installed is None:
			found = []
			for entity in self.model:
				try:
					self._get_list(
						{"doctype": entity.doctype, "fields": ["name"], "limit_page_length": 1}, "probing"
					)
				except (NotFound, ValidationFailed):
					continue
				except PermissionDenied:
					pass  # exists; this person just may not read it
				except Unreachable:
					# Not answering now (or the connection is misconfigured): its tools stay, and each
					# call says why it cannot be made; nothing is remembered from this probe.
					return [e.key for e in self.model]
				found.append(entity.key)
			self._installed = found
		return list(self._installed)

	def permissions(self, entity: str) -> set[str]:
		"""Read when the system lets the person list the entity; writes are decided by the system at the call."""
		ent = self._entity(entity)
		try:
			self._get_list(
				{"doctype": ent.doctype, "fields": ["name"], "limit_page_length": 1}, "checking access"
			)
		except (PermissionDenied, NotFound, ValidationFailed):
			return set()
		except Unreachable:
			pass  # the system decides at each call; a call now says why it cannot be made
		# What the person may change is decided by the other system when the change is made: the
		# proposal's preview and the confirm both go there as the person and carry its refusal.
		granted = {"read"}
		granted |= {"create"} if "create" in ent.actions else set()
		granted |= {"write"} if "update" in ent.actions else set()
		granted |= {"submit", "cancel"} if ent.submittable else set()
		return granted & set(PERMISSION_TYPES)

	def list(self, entity, *, fields=None, filters=None, order_by=None, limit=20, offset=0) -> list[dict]:
		ent = self._entity(entity)
		kwargs, keymap = list_args(
			ent, fields=fields, filters=filters, order_by=order_by, limit=limit, offset=offset
		)
		kwargs.pop("distinct", None)
		rows = self._get_list(kwargs, f"listing {ent.label}")
		return [self._linked(ent, row) for row in rows_to_canonical(rows, keymap)]

	def _linked(self, ent: Entity, record: dict) -> dict:
		"""A record's link on its own system: a relative /app/ path would open this site, not that one."""
		if record.get("name") not in (None, ""):
			record["_link"] = f"{self.base_url}{doc_url(ent.doctype, record['name'])}"
		return record

	def _syntax(self) -> str:
		"""How the other system's `get_list` takes aggregates: asked of its Frappe version once."""
		if self._aggregate_syntax is None:
			try:
				versions = self._call(
					"GET",
					"/api/method/frappe.utils.change_log.get_versions",
					what="reading versions",
					read=True,
				)
			except (PermissionDenied, NotFound, ValidationFailed):
				versions = {}
			self._aggregate_syntax = syntax_for(((versions or {}).get("frappe") or {}).get("version"))
		return self._aggregate_syntax

	def count(self, entity: str, filters=None) -> int:
		ent = self._entity(entity)
		query = count_query(ent, filters, self._syntax())
		return query.finish(self._get_list(query.kwargs, f"counting {ent.label}"))

	def aggregate(
		self, entity, *, metrics, group_by=None, filters=None, order_by=None, limit=None
	) -> list[dict]:
		ent = self._entity(entity)
		query = aggregate_query(
			ent,
			metrics=metrics,
			group_by=group_by,
			filters=filters,
			order_by=order_by,
			limit=limit,
			syntax=self._syntax(),
		)
		return query.finish(self._get_list(query.kwargs, f"adding up {ent.label}"))

	def get(self, entity: str, name: str) -> dict:
		ent = self._entity(entity)
		doc = self._call("GET", f"/api/resource/{_quote(ent.doctype)}/{_quote(name)}", what=f"reading {name}")
		return self._linked(ent, doc_to_canonical(ent, doc or {}))

	def version(self, entity: str, name: str) -> str:
		"""The record's `modified` in that system, read as the person with the same list query."""
		ent = self._entity(entity)
		rows = self._get_list(
			{
				"doctype": ent.doctype,
				"fields": ["modified"],
				"filters": [[ent.doctype, "name", "=", name]],
				"limit_page_length": 1,
			},
			f"reading the version of {name}",
		)
		if not rows or not (rows[0] or {}).get("modified"):
			raise NotFound(f"{ent.doctype} {name} was not found in {self.system}, or you cannot read it.")
		return str(rows[0]["modified"])

	def create(self, entity: str, values: dict) -> dict:
		ent = self._entity(entity)
		body = to_frappe_values(ent, values, creating=True)
		doc = self._call(
			"POST",
			f"/api/resource/{_quote(ent.doctype)}",
			what=f"creating a {ent.label}",
			json=body,
			read=False,
		)
		return doc_to_canonical(ent, doc or {})

	def update(self, entity: str, name: str, values: dict) -> dict:
		ent = self._entity(entity)
		body = to_frappe_values(ent, values, creating=False)
		path = f"/api/resource/{_quote(ent.doctype)}/{_quote(name)}"
		doc = self._call("PUT", path, what=f"changing {name}", json=body, read=False)
		return doc_to_canonical(ent, doc or {})

	def submit(self, entity: str, name: str) -> dict:
		ent = self._entity(entity)
		current = self._call(
			"GET", f"/api/resource/{_quote(ent.doctype)}/{_quote(name)}", what=f"reading {name}"
		)
		doc = self._call(
			"POST",
			"/api/method/frappe.client.submit",
			what=f"submitting {name}",
			json={"doc": current},
			read=False,
		)
		return doc_to_canonical(ent, doc or {})

	def cancel(self, entity: str, name: str) -> dict:
		ent = self._entity(entity)
		self._call(
			"POST",
			"/api/method/frappe.client.cancel",
			what=f"cancelling {name}",
			json={"doctype": ent.doctype, "name": name},
			read=False,
		)
		return self.get(entity, name)

	def meta(self, entity: str) -> dict:
		ent = self._entity(entity)
		return {
			"entity": ent.key,
			"doctype": ent.doctype,
			"system": self.system,
			"fields": [f.describe() for f in ent.fields.values()],
		}

	def check(self) -> dict:
		"""Health for the doctor: reachable, credentials valid, who they belong to, the framework version."""
		user = self._call("GET", "/api/method/frappe.auth.get_logged_user", what="checking the connection")
		versions = {}
		try:
			versions = self._call(
				"GET", "/api/method/frappe.utils.change_log.get_versions", what="reading versions"
			)
		except (PermissionDenied, NotFound, ValidationFailed, Unreachable):
			pass
		frappe_version = ((versions or {}).get("frappe") or {}).get("version")
		return {"system": self.system, "user": user, "frappe": frappe_version}


def _quote(part: str) -> str:
	return requests.utils.quote(str(part), safe="")
