"""A fake Frappe site over real HTTP on 127.0.0.1: the REST answers a Helpdesk site gives.

Just enough of Frappe's REST API for the connector's tests: `frappe.client.get_list` (fields,
count/group-by aggregates, [doctype, field, op, value] filters, order, paging), `/api/resource`
GET/PUT, `frappe.utils.change_log.get_versions`, token authentication per person, row
permissions per person, Frappe's error bodies, and scripted faults (status codes with
Retry-After, slow answers). Every request is recorded.

As strict as the release it plays (`frappe_version`): Frappe 15 takes aggregates only as SQL text
and fails on field objects; Frappe 16 refuses SQL functions written as text with its own message
and takes `{"COUNT": "*", "as": ...}`-style objects (it has none for COUNT(DISTINCT)).
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

FIELD = re.compile(r"^`tab(?P<dt>[^`]+)`\.`(?P<f>[^`]+)`$")
AGG = re.compile(r"^(?P<fn>count|sum|avg|min|max)\((?:distinct )?(?P<col>[^)]+)\) as (?P<alias>\w+)$")


def _messages(text: str) -> str:
	return json.dumps([json.dumps({"message": text})])


class FakeFrappe:
	def __init__(
		self, tokens: dict[str, str], data: dict[str, list[dict]], can_read, frappe_version="15.101.1"
	):
		self.tokens, self.data, self.can_read = tokens, data, can_read
		self.frappe_version = frappe_version
		self.major = int(frappe_version.split(".")[0])
		self.faults: list[dict] = []
		self.requests: list[dict] = []
		self.lock = threading.Lock()
		handler = type("Handler", (_Handler,), {"fake": self})
		self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
		self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"

	def __enter__(self):
		threading.Thread(target=self.server.serve_forever, daemon=True).start()
		return self

	def __exit__(self, *exc):
		self.server.shutdown()
		self.server.server_close()

	def fault(
		self,
		status: int = 0,
		*,
		times: int = 1,
		delay: float = 0.0,
		retry_after: str | None = None,
		message="",
	):
		self.faults.append(
			{"status": status, "times": times, "delay": delay, "retry_after": retry_after, "message": message}
		)

	def _next_fault(self) -> dict | None:
		with self.lock:
			if not self.faults:
				return None
			fault = self.faults[0]
			fault["times"] -= 1
			if fault["times"] <= 0:
				self.faults.pop(0)
			return dict(fault)


class _Handler(BaseHTTPRequestHandler):
	fake: FakeFrappe

	def log_message(self, *args):  # quiet
		pass

	def _send(self, status: int, body: dict, headers: dict | None = None):
		raw = json.dumps(body, default=str).encode()
		self.send_response(status)
		self.send_header("Content-Type", "application/json")
		for k, v in (headers or {}).items():
			self.send_header(k, v)
		self.send_header("Content-Length", str(len(raw)))
		self.end_headers()
		self.wfile.write(raw)

	def _handle(self, method: str):
		length = int(self.headers.get("Content-Length") or 0)
		body = json.loads(self.rfile.read(length) or b"{}") if length else {}
		path = urlparse(self.path).path
		self.fake.requests.append(
			{
				"method": method,
				"path": unquote(path),
				"body": body,
				"authorization": self.headers.get("Authorization"),
			}
		)
		fault = self.fake._next_fault()
		if fault:
			if fault["delay"]:
				time.sleep(fault["delay"])
			if fault["status"]:
				headers = {"Retry-After": fault["retry_after"]} if fault["retry_after"] is not None else None
				return self._send(
					fault["status"],
					{"exc_type": "Fault", "_server_messages": _messages(fault["message"] or "busy")},
					headers,
				)
		auth = (self.headers.get("Authorization") or "").removeprefix("token ")
		user = self.fake.tokens.get(auth)
		if user is None:
			return self._send(
				401,
				{
					"exc_type": "AuthenticationError",
					"_server_messages": _messages(f"Invalid API key or secret: {auth}"),
				},
			)
		if path == "/api/method/frappe.auth.get_logged_user":
			return self._send(200, {"message": user})
		if path == "/api/method/frappe.utils.change_log.get_versions":
			version = {"title": "Frappe Framework", "version": self.fake.frappe_version, "branch": ""}
			return self._send(200, {"message": {"frappe": version}})
		if path == "/api/method/frappe.client.get_list":
			return self._get_list(user, body)
		match = re.match(r"^/api/resource/([^/]+)/([^/]+)$", path)
		if match:
			doctype, name = unquote(match.group(1)), unquote(match.group(2))
			rows = [r for r in self.fake.data.get(doctype, []) if str(r["name"]) == name]
			if not rows:
				return self._send(
					404,
					{
						"exc_type": "DoesNotExistError",
						"_server_messages": _messages(f"{doctype} {name} not found"),
					},
				)
			if not self.fake.can_read(user, doctype, rows[0]):
				return self._send(
					403,
					{
						"exc_type": "PermissionError",
						"_server_messages": _messages(f"No permission for {doctype} {name}"),
					},
				)
			if method == "PUT":
				rows[0].update(body)
			return self._send(200, {"data": rows[0]})
		return self._send(404, {"exc_type": "DoesNotExistError", "_server_messages": _messages("Not found")})

	def do_GET(self):
		self._handle("GET")

	def do_POST(self):
		self._handle("POST")

	def do_PUT(self):
		self._handle("PUT")

	def _refused_fields(self, fields: list) -> str | None:
		for f in fields:
			if self.fake.major >= 16 and isinstance(f, str) and re.match(r"^\s*[a-zA-Z_]\w*\s*\(", f):
				return (
					f"SQL functions are not allowed as strings in SELECT: {f}. "
					"Use dict syntax like {'COUNT': '*'} instead."
				)
			if self.fake.major < 16 and not isinstance(f, str):
				return f"Field {f!r} is not a valid field name"
		return None

	def _aggregate(self, f) -> dict | None:
		"""An aggregate field as {fn, col, alias}, in the form this release takes; None for a plain field."""
		if isinstance(f, dict):
			(fn, col), alias = next((k, v) for k, v in f.items() if k != "as"), f.get("as")
			return {"fn": fn.lower(), "col": "" if col == "*" else col, "alias": alias}
		match = AGG.match(f)
		return match.groupdict() if match else None

	def _get_list(self, user: str, args: dict):
		doctype = args["doctype"]
		if doctype not in self.fake.data:
			return self._send(
				404,
				{
					"exc_type": "DoesNotExistError",
					"_server_messages": _messages(f"DocType {doctype} not found"),
				},
			)
		if not self.fake.can_read(user, doctype, None):
			return self._send(
				403,
				{
					"exc_type": "PermissionError",
					"_server_messages": _messages(f"No permission for {doctype}"),
				},
			)
		rows = [r for r in self.fake.data[doctype] if self.fake.can_read(user, doctype, r)]
		for _dt, field, op, value in args.get("filters") or []:
			rows = [r for r in rows if _match(r.get(field), op, value)]
		fields = args.get("fields") or ["name"]
		refusal = self._refused_fields(fields)
		if refusal:
			return self._send(417, {"exc_type": "ValidationError", "_server_messages": _messages(refusal)})
		aggregates = [self._aggregate(f) for f in fields]
		if any(aggregates):
			groups: dict[tuple, list[dict]] = {}
			keys = [FIELD.match(f).group("f") for f, a in zip(fields, aggregates, strict=True) if not a]
			for row in rows:
				groups.setdefault(tuple(row.get(k) for k in keys), []).append(row)
			if not keys and not groups:
				groups[()] = []
			out = []
			for key, members in groups.items():
				item = dict(zip(keys, key, strict=True))
				for agg in filter(None, aggregates):
					col = FIELD.match(agg["col"].strip()) or re.match(r"^(?P<f>\w+)$", agg["col"].strip())
					values = [m.get(col.group("f")) for m in members] if col else members
					item[agg["alias"]] = len(values) if agg["fn"] == "count" else sum(values)
				out.append(item)
			return self._send(200, {"message": out})
		names = [FIELD.match(f).group("f") if FIELD.match(f) else f for f in fields]
		order = args.get("order_by") or ""
		if order:
			column, _, direction = order.partition(" ")
			key = FIELD.match(column).group("f") if FIELD.match(column) else column
			rows = sorted(
				rows, key=lambda r: str(r.get(key) or ""), reverse=direction.strip().lower() == "desc"
			)
		start, size = int(args.get("limit_start") or 0), int(args.get("limit_page_length") or 20)
		page = rows[start : start + size] if size else rows[start:]
		return self._send(200, {"message": [{n: r.get(n) for n in names} for r in page]})


def _same(value, expected) -> bool:
	"""Equality as SQL compares a column with a quoted value: an integer name 2 equals '2'."""
	return value == expected or (value is not None and str(value) == str(expected))


def _match(value, op: str, expected) -> bool:
	if op == "=":
		return _same(value, expected)
	if op == "!=":
		return not _same(value, expected)
	if op == "in":
		return any(_same(value, e) for e in expected)
	if op == "like":
		return str(expected).strip("%").lower() in str(value or "").lower()
	if op == "is":
		return bool(value) == (expected == "set")
	return {">": value > expected, "<": value < expected, ">=": value >= expected, "<=": value <= expected}[
		op
	]
