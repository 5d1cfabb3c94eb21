"""Every server method the desk chat calls is a whitelisted function of noviz_agent.api, for the HTTP
method the chat uses. (A call to a name the API does not have only fails on a live site: the chat's
safety read of a waiting turn once called `api.turn_state`, which is a module there, not an endpoint.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "noviz_agent" / "public" / "js" / "noviz_chat"


def whitelisted() -> dict[str, set[str]]:
	"""{function: HTTP methods} for each @frappe.whitelist function of noviz_agent/api.py."""
	found = {}
	for node in ast.parse((ROOT / "noviz_agent" / "api.py").read_text(encoding="utf-8")).body:
		if not isinstance(node, ast.FunctionDef):
			continue
		for decorator in node.decorator_list:
			if "whitelist" not in ast.unparse(decorator):
				continue
			methods = {"GET", "POST", "PUT", "DELETE"}  # frappe's default: any
			for keyword in getattr(decorator, "keywords", []):
				if keyword.arg == "methods":
					methods = set(ast.literal_eval(keyword.value))
			found[node.name] = methods
	return found


def chat_calls() -> list[tuple[str, str]]:
	"""(method name, HTTP method) for each call the desk's side of the chat makes."""
	desk = (JS / "desk.js").read_text(encoding="utf-8")
	calls = [
		(name, verb or "POST")
		for name, verb in re.findall(r'\bcall\("(\w+)",[^)]*?(?:"(GET|POST)")?\)', desk)
	]
	for path in JS.glob("*.js"):
		# A URL with a query string is a link (GET); the upload posts its form to the bare URL.
		for name, query in re.findall(
			r"/api/method/noviz_agent\.api\.(\w+)(\?)?", path.read_text(encoding="utf-8")
		):
			calls.append((name, "GET" if query else "POST"))
	return calls


def test_the_chat_calls_only_whitelisted_api_functions_with_their_http_method():
	calls = chat_calls()
	assert len(calls) >= 15, calls  # the parse found the chat's calls
	endpoints = whitelisted()
	for name, verb in calls:
		assert name in endpoints, (
			f"the chat calls noviz_agent.api.{name}, which is not a whitelisted function"
		)
		assert verb in endpoints[name], (
			f"the chat calls {name} with {verb}; it takes {sorted(endpoints[name])}"
		)
