"""Play an MCP client that signs in with OAuth 2.1 (authorization code + PKCE) against a live site, end to end.

The client is the official MCP Python SDK's own (`OAuthClientProvider` + `streamablehttp_client`): it
calls the MCP endpoint, gets the 401, reads the protected-resource and authorization-server metadata,
sends the person to frappe's authorize page with an S256 code challenge, exchanges the code with its
verifier at frappe's token endpoint and calls the tools with the bearer token. The person's part in
the browser (signing in, pressing Allow on frappe's consent page) is played with HTTP requests, and
the code is read from the redirect, so nothing has to listen at the redirect URI.

Then the person revokes the client the way frappe offers it (Third Party Apps) and the old token is
refused. An OAuth Client is created for the run (as Administrator) and deleted afterwards.

	python scripts/mcp_oauth_check.py --url http://noviz.localhost:8000 \\
		--user sales.user@noviz.test --password ... --admin-password ...
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from urllib.parse import parse_qs, urlparse

import anyio
import httpx
import requests
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

ENDPOINT = "/api/method/noviz_agent.api.mcp"
ALLOW = re.compile(r"\$\('#allow'\).*?window\.location\.replace\(\"([^\"]+)\"\)", re.S)


class Storage:
	"""The client's token store (in memory): the OAuth Client registered for this run, then its tokens."""

	def __init__(self, client: OAuthClientInformationFull):
		self.client, self.tokens = client, None

	async def get_tokens(self) -> OAuthToken | None:
		return self.tokens

	async def set_tokens(self, tokens: OAuthToken) -> None:
		self.tokens = tokens

	async def get_client_info(self) -> OAuthClientInformationFull | None:
		return self.client

	async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
		self.client = client_info


def signed_in(url: str, user: str, password: str) -> requests.Session:
	browser = requests.Session()
	response = browser.post(f"{url}/api/method/login", data={"usr": user, "pwd": password}, timeout=30)
	response.raise_for_status()
	return browser


def create_client(admin: requests.Session, url: str, redirect_uri: str) -> str:
	doc = {
		"app_name": "MCP OAuth check",
		"redirect_uris": redirect_uri,
		"default_redirect_uri": redirect_uri,
		"scopes": "all openid",
		"grant_type": "Authorization Code",
		"response_type": "Code",
		"skip_authorization": 0,
		# A public client: PKCE instead of a secret (frappe 16 asks; 15 has no such field).
		"token_endpoint_auth_method": "None",
	}
	response = admin.post(f"{url}/api/resource/OAuth Client", json=doc, timeout=30)
	response.raise_for_status()
	return response.json()["data"]["client_id"]


def delete_client(admin: requests.Session, url: str, client_id: str) -> str:
	"""The run's OAuth Client, after what links to it (its authorization codes, any token left)."""
	for doctype in ("OAuth Authorization Code", "OAuth Bearer Token"):
		found = admin.get(
			f"{url}/api/resource/{doctype}",
			params={"filters": json.dumps([["client", "=", client_id]]), "limit_page_length": 0},
			timeout=30,
		)
		for row in found.json().get("data", []) if found.ok else []:
			admin.delete(f"{url}/api/resource/{doctype}/{row['name']}", timeout=30)
	deleted = admin.delete(f"{url}/api/resource/OAuth Client/{client_id}", timeout=30)
	why = "" if deleted.ok else f" ({deleted.json().get('exc_type')}: {deleted.text[:200]})"
	return f"HTTP {deleted.status_code}{why}"


class Person:
	"""The person at the browser: follows the authorization URL, presses Allow, hands back the code."""

	def __init__(self, browser: requests.Session, log):
		self.browser, self.log, self.redirect = browser, log, None

	def authorize(self, authorization_url: str) -> None:
		query = parse_qs(urlparse(authorization_url).query)
		self.log(
			f"authorize: {urlparse(authorization_url).path} code_challenge_method={query['code_challenge_method'][0]}"
			f" code_challenge={query['code_challenge'][0][:12]}… resource={query.get('resource', ['-'])[0]}"
		)
		page = self.browser.get(authorization_url, allow_redirects=False, timeout=30)
		if page.status_code in (301, 302, 303) and "approve" in page.headers.get("Location", ""):
			approve = page.headers["Location"]
		else:
			found = ALLOW.search(page.text)
			if not found:
				raise SystemExit(f"No Allow button on the authorize page (HTTP {page.status_code}).")
			approve = html.unescape(found.group(1))
			self.log("consent page shown; the person presses Allow")
		granted = self.browser.get(
			approve if approve.startswith("http") else f"{_origin(authorization_url)}{approve}",
			allow_redirects=False,
			timeout=30,
		)
		self.redirect = granted.headers.get("Location", "")
		if "code=" not in self.redirect:
			raise SystemExit(
				f"Frappe did not redirect with a code (HTTP {granted.status_code}): {granted.text[:300]}"
			)
		self.log(f"redirected to {self.redirect.split('?')[0]} with a code")

	async def redirect_handler(self, authorization_url: str) -> None:
		await anyio.to_thread.run_sync(self.authorize, authorization_url)

	async def callback_handler(self) -> tuple[str, str | None]:
		query = parse_qs(urlparse(self.redirect).query)
		return query["code"][0], query.get("state", [None])[0]


def _origin(url: str) -> str:
	parts = urlparse(url)
	return f"{parts.scheme}://{parts.netloc}"


async def use_the_tools(url: str, provider: OAuthClientProvider, log) -> None:
	async with streamablehttp_client(url + ENDPOINT, auth=provider) as (read, write, _):
		async with ClientSession(read, write) as client:
			init = await client.initialize()
			log(
				f"initialize: server {init.serverInfo.name} {init.serverInfo.version}, protocol {init.protocolVersion}"
			)
			tools = (await client.list_tools()).tools
			log(f"tools/list: {len(tools)} tools: {', '.join(t.name for t in tools)}")
			result = await client.call_tool("records__list", {"entity": "sales_order"})
			if result.isError:
				log(f"records__list sales_order: refused: {result.content[0].text}")
			else:
				data = result.structuredContent
				log(
					f"records__list sales_order: {len(data['rows'])} rows of {data['total']} as the signed-in person"
				)


def main() -> int:
	parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
	parser.add_argument("--url", required=True, help="the site, e.g. http://noviz.localhost:8000")
	parser.add_argument("--user", required=True, help="the person who signs in")
	parser.add_argument("--password", required=True)
	parser.add_argument("--admin-user", default="Administrator")
	parser.add_argument("--admin-password", required=True, help="to create (and delete) the OAuth Client")
	parser.add_argument("--redirect-uri", default="http://127.0.0.1:8765/callback")
	args = parser.parse_args()
	url = args.url.rstrip("/")

	def log(line: str) -> None:
		print(line, flush=True)

	unauthenticated = httpx.post(
		url + ENDPOINT,
		json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
		headers={"Accept": "application/json, text/event-stream"},
	)
	log(
		f"no credentials: HTTP {unauthenticated.status_code}, WWW-Authenticate: {unauthenticated.headers.get('www-authenticate')}"
	)

	admin = signed_in(url, args.admin_user, args.admin_password)
	client_id = create_client(admin, url, args.redirect_uri)
	log(f"OAuth Client created for this run: {client_id}")
	try:
		person = Person(signed_in(url, args.user, args.password), log)
		registered = OAuthClientInformationFull(
			client_id=client_id,
			redirect_uris=[args.redirect_uri],
			token_endpoint_auth_method="none",
			grant_types=["authorization_code", "refresh_token"],
			response_types=["code"],
		)
		storage = Storage(registered)
		provider = OAuthClientProvider(
			server_url=url + ENDPOINT,
			client_metadata=OAuthClientMetadata(
				redirect_uris=[args.redirect_uri], token_endpoint_auth_method="none"
			),
			storage=storage,
			redirect_handler=person.redirect_handler,
			callback_handler=person.callback_handler,
		)
		anyio.run(use_the_tools, url, provider, log)
		context = provider.context
		log(
			f"discovered: resource metadata {'yes' if context.protected_resource_metadata else 'no'}, authorization server {context.auth_server_url}"
		)
		log(f"token endpoint: {context.oauth_metadata.token_endpoint if context.oauth_metadata else '-'}")
		token = storage.tokens.access_token
		log(
			f"bearer token issued: {token[:6]}… expires in {storage.tokens.expires_in} s, scope {storage.tokens.scope}"
		)

		revoked = person.browser.post(
			f"{url}/api/method/frappe.www.third_party_apps.delete_client",
			data={"client_id": client_id},
			timeout=30,
		)
		log(f"the person revokes the client (Third Party Apps): HTTP {revoked.status_code}")
		after = httpx.post(
			url + ENDPOINT,
			json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
			headers={"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"},
		)
		log(f"the old token after revoking: HTTP {after.status_code}")
		ok = unauthenticated.status_code == 401 and after.status_code == 401
	finally:
		log(f"OAuth Client deleted: {delete_client(admin, url, client_id)}")
	log("OK: signed in with PKCE, used the tools as the person, revoked" if ok else "FAILED")
	return 0 if ok else 1


if __name__ == "__main__":
	sys.exit(main())
