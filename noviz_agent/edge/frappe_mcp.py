"""The MCP channel on a site: its endpoint's frappe side, the OAuth metadata clients discover, the clients seen.

Frappe identifies the person before this runs, from the Authorization header: an OAuth bearer token
(frappe's own OAuth provider, authorization code with PKCE) or an API key and secret. A desk cookie
alone is not accepted, so no web page can drive a person's assistant channel. Everything after that is
the frappe-free channel (`channels/mcp_http.py`), which reaches the site only through the Caller built
here: the person's Session (`frappe_session.build_session`, the chat's own), the chat's recording of a
turn and its hourly rate window (both handed in by `api.mcp`).

Where frappe publishes OAuth metadata itself (`/.well-known/oauth-protected-resource` and
`oauth-authorization-server`, switched on in OAuth Settings), clients read frappe's; where it does not,
`OAuthMetadata` (a page renderer) publishes the same two documents for frappe's own endpoints.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

import frappe
from frappe import _
from frappe.website.page_renderers.base_renderer import BaseRenderer
from werkzeug.wrappers import Response

from noviz_agent import validation
from noviz_agent.edge import frappe_session

# The channel (and the MCP SDK under it) is imported where a request to the endpoint needs it: this
# module is also the page renderer frappe loads for every website request.

MCP_PATH = "/api/method/noviz_agent.api.mcp"
SESSIONS = "mcp_session"
RESOURCE_METADATA = "/.well-known/oauth-protected-resource"
SERVER_METADATA = "/.well-known/oauth-authorization-server"
# frappe's OAuth provider (frappe/integrations/oauth2.py), the same on 15 and 16.
OAUTH = "/api/method/frappe.integrations.oauth2."
LOG = "Agent Interaction Log"


def handle(*, record: Callable[[dict, str, dict], None], admit: Callable[[dict], str | None]) -> Response:
	"""Answer one request to the MCP endpoint as the signed-in person (api.mcp)."""
	from noviz_agent.channels import mcp_http

	values = frappe_session.load_settings(with_secrets=True)
	if not values.get("enable_mcp"):
		answer = mcp_http.error(
			403,
			_(
				"Assistants (MCP) are switched off on this site. An administrator can switch them on in Agent Settings."
			),
		)
		return _werkzeug(answer)
	request = frappe.request
	owner, oauth = credential()
	user = signed_in(owner)
	answer = mcp_http.serve(
		mcp_http.HttpRequest(request.method, dict(request.headers), request.get_data(), request.path),
		user=user,
		caller_for=lambda kept: caller(values, kept, oauth, record=record, admit=admit),
		sessions=frappe_session.RedisStore(SESSIONS),
		resource_metadata_url=frappe.utils.get_url(RESOURCE_METADATA),
		refusal=refusal(values, user) if user else None,
		new_conversation=lambda: frappe.generate_hash(length=10),
	)
	return _werkzeug(answer)


def _werkzeug(answer) -> Response:
	return Response(answer.body, status=int(answer.status), headers=answer.headers)


def credential() -> tuple[str | None, str | None]:
	"""Whose credential the Authorization header carries, and a bearer token's OAuth Client: (None, None)
	without one. Frappe has already checked the secret; this says who the header (not a cookie) names."""
	kind, _sep, value = (frappe.get_request_header("Authorization") or "").partition(" ")
	kind, value = kind.lower(), value.strip()
	if kind == "bearer" and value:
		# The person's own token, which frappe accepted for this very request.
		row = frappe.db.get_value(
			"OAuth Bearer Token", {"name": value, "status": "Active"}, ["user", "client"]
		)
		return tuple(row) if row else (None, None)
	if kind == "basic":
		try:
			value = base64.b64decode(value).decode()
		except (ValueError, UnicodeDecodeError):
			return None, None
	if kind in ("token", "basic") and ":" in value:
		key = value.split(":", 1)[0]
		return frappe.db.get_value("User", {"api_key": key, "enabled": 1}, "name"), None
	return None, None


def signed_in(owner: str | None) -> str | None:
	"""The person frappe signed in from this request's credentials; None for a guest, a desk cookie alone,
	or a cookie beside a header that signed nobody in (a page in a browser must never drive this)."""
	user = frappe.session.user
	return user if owner and owner == user else None


def refusal(values: dict, user: str) -> str | None:
	"""Why this signed-in person may not use the channel, in words they can act on; None when they may."""
	if frappe.get_cached_value("User", user, "user_type") != "System User":
		return _("The agent is for desk users; this account cannot use it.")
	named = set(validation.lines(values.get("mcp_roles")))
	if named and not named & set(frappe.get_roles(user)):
		return _(
			"Connecting an assistant is not enabled for your roles. Ask your administrator (Agent Settings)."
		)
	return None


def caller(values: dict, kept: dict, oauth: str | None, *, record, admit):
	"""The channel's Caller for the signed-in person: their Session, their conversation, their log;
	`oauth` is the OAuth Client their bearer token belongs to (None for an API key)."""
	from noviz_agent.channels.mcp import Caller

	user = frappe.session.user
	conversation = kept["conversation"]
	app = frappe.db.get_value("OAuth Client", oauth, "app_name") if oauth else None
	client = kept.get("client") or app or ""

	def session():
		built = frappe_session.build_session(values, progress=False, conversation=conversation)
		# The assistant waits for its answer: a large analysis runs in the call, bounded by the turn's
		# limits, not on a queue whose answer only the desk would hear of.
		built.enqueue_analysis = None
		return built

	def store(call: dict) -> None:
		call["log"]["oauth_client"] = oauth
		call["title"] = _("{0} (assistant)").format(client or app or _("MCP client"))
		record(values, conversation, call)

	return Caller(
		session=session,
		record=store,
		person=frappe.utils.get_fullname(user),
		admit=lambda: admit(values),
		base_url=frappe.utils.get_url(),
		conversation=conversation,
		client=client,
	)


# --- what administrators see -----------------------------------------------------------

CLIENTS_SCANNED = 5000


def connected_clients() -> list[dict]:
	"""Each person and assistant seen over MCP: calls, last call, the OAuth client and its live tokens."""
	rows = frappe.get_list(
		LOG,
		filters={"channel": "mcp"},
		fields=["person", "client", "oauth_client", "creation"],
		order_by="creation desc",
		limit_page_length=CLIENTS_SCANNED,
	)
	seen: dict[tuple, dict] = {}
	for row in rows:
		key = (row.person, row.client or "", row.oauth_client or "")
		entry = seen.setdefault(
			key,
			{
				"person": row.person,
				"client": row.client or "",
				"oauth_client": row.oauth_client,
				"last_call": row.creation,
				"calls": 0,
			},
		)
		entry["calls"] += 1
	tokens = frappe.get_list(
		"OAuth Bearer Token",
		filters={"status": "Active", "expiration_time": (">", frappe.utils.now_datetime())},
		fields=["user", "client"],
		limit_page_length=CLIENTS_SCANNED,
	)
	live = {(t.user, t.client) for t in tokens}
	apps = dict(
		frappe.get_list("OAuth Client", fields=["name", "app_name"], as_list=True, limit_page_length=0)
	)
	for entry in seen.values():
		entry["app_name"] = apps.get(entry["oauth_client"]) if entry["oauth_client"] else None
		entry["signed_in_with"] = "OAuth" if entry["oauth_client"] else _("API key")
		entry["active_token"] = (
			(entry["person"], entry["oauth_client"]) in live if entry["oauth_client"] else None
		)
	return list(seen.values())


def settings_hints(values: dict) -> list[str]:
	"""What an administrator still has to do for assistants to sign in with OAuth (shown on saving Agent Settings)."""
	if not values.get("enable_mcp"):
		return []
	hints = []
	registration = False
	if _frappe_publishes_metadata():
		settings = frappe.get_cached_doc("OAuth Settings")
		registration = bool(settings.get("enable_dynamic_client_registration"))
		if not (
			settings.get("show_protected_resource_metadata") and settings.get("show_auth_server_metadata")
		):
			hints.append(
				_(
					"For assistants to find the sign-in page, switch on the protected-resource and "
					"authorization-server metadata in OAuth Settings."
				)
			)
	if not registration and not frappe.get_list("OAuth Client", limit_page_length=1):
		hints.append(
			_("No OAuth Client exists yet: create one for each assistant (OAuth Client), or use API keys.")
		)
	return hints


# --- OAuth metadata where frappe does not publish it -------------------------------------


def _frappe_publishes_metadata() -> bool:
	"""Whether this frappe answers /.well-known/oauth-* itself (then requests never reach the renderer)."""
	from frappe.integrations import oauth2

	return hasattr(oauth2, "get_protected_resource_metadata")


def protected_resource_metadata() -> dict:
	"""RFC 9728: this site is the resource, and its own OAuth provider signs people in."""
	site = frappe.utils.get_url()
	return {
		"resource": site,
		"authorization_servers": [site],
		"bearer_methods_supported": ["header"],
		"resource_name": frappe.utils.get_url().split("://", 1)[-1],
	}


def authorization_server_metadata() -> dict:
	"""RFC 8414 for frappe's own OAuth endpoints: authorization code with PKCE (S256), refresh tokens."""
	site = frappe.utils.get_url()
	return {
		"issuer": site,
		"authorization_endpoint": f"{site}{OAUTH}authorize",
		"token_endpoint": f"{site}{OAUTH}get_token",
		"revocation_endpoint": f"{site}{OAUTH}revoke_token",
		"introspection_endpoint": f"{site}{OAUTH}introspect_token",
		"userinfo_endpoint": f"{site}{OAUTH}openid_profile",
		"response_types_supported": ["code"],
		"response_modes_supported": ["query"],
		"grant_types_supported": ["authorization_code", "refresh_token"],
		"token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
		"code_challenge_methods_supported": ["S256"],
	}


class OAuthMetadata(BaseRenderer):
	"""A page renderer (hooks: page_renderer) for the two OAuth metadata documents MCP clients look up."""

	DOCUMENTS = {
		RESOURCE_METADATA.strip("/"): protected_resource_metadata,
		SERVER_METADATA.strip("/"): authorization_server_metadata,
	}

	def _document(self):
		# RFC 9728 and 8414 also allow the resource's path after the well-known name.
		return next((build for name, build in self.DOCUMENTS.items() if self.path.startswith(name)), None)

	def can_render(self) -> bool:
		return self._document() is not None

	def render(self) -> Response:
		response = Response(frappe.as_json(self._document()()), mimetype="application/json")
		response.headers["Access-Control-Allow-Origin"] = "*"
		return response
