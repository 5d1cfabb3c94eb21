"""`bench noviz-agent doctor`: checks of the settings, the provider and the knowledge store, each with a fix."""

from __future__ import annotations

from dataclasses import dataclass

from noviz_agent import validation
from noviz_agent.edge import frappe_knowledge, frappe_session
from noviz_agent.edge.frappe_versions import form_path


@dataclass(frozen=True)
class Check:
	"""One finding: `status` is ok, warn or fail; `message` says what to do when it is not ok."""

	name: str
	status: str
	message: str


def check_settings(values: dict) -> list[Check]:
	problems = validation.settings_problems(values)
	if not (values.get("base_url") or "").strip() or not (values.get("model") or "").strip():
		problems.insert(
			0, f"Provider base URL and reasoning model must be set ({form_path('Agent Settings')})."
		)
	if problems:
		return [Check("settings", "fail", problem) for problem in problems]
	key = "set" if values.get("api_key") else "not set (fine for local servers that need none)"
	return [Check("settings", "ok", f"{values['model']} at {values['base_url']}; API key {key}")]


def check_provider(values: dict) -> Check:
	try:
		provider = frappe_session.make_provider(values)
		reply = provider.complete([{"role": "user", "content": "Reply with the word: ready"}], [], timeout=30)
	except frappe_session.NotConfigured as exc:
		return Check("provider", "fail", exc.admin_hint)
	except Exception as exc:
		return Check("provider", "fail", f"{type(exc).__name__}: {exc}")
	text = (reply.text or "").strip().replace("\n", " ")[:60]
	return Check("provider", "ok", f"answered ({reply.model or values.get('model')}): {text!r}")


def check_tool_schemas(values: dict) -> Check:
	"""Every tool, as it would be sent to the configured provider, against that provider's rules."""
	from noviz_agent.engine.provider.schemas import check_as_sent, dialect_for
	from noviz_agent.tools import registry

	dialect = dialect_for(values.get("base_url") or "")
	strict = bool(values.get("strict_tools"))
	sent, problems = check_as_sent([t.schema() for t in registry()], strict=strict, dialect=dialect)
	if problems:
		shown = "; ".join(str(p) for p in problems[:3])
		return Check("tools", "fail", f"{len(problems)} tool schema problems for {dialect}: {shown}")
	mode = f", {sum(1 for t in sent if t['function'].get('strict'))} strict" if strict else ""
	return Check("tools", "ok", f"{len(sent)} tools fit the {dialect} function-calling rules{mode}")


def check_knowledge(values: dict) -> Check:
	if not frappe_knowledge.indexed(values):
		return Check(
			"knowledge",
			"warn",
			"no index yet: run `bench --site SITE noviz-agent index-knowledge` so answers can cite process documents.",
		)
	try:
		status = frappe_knowledge.status(values)
	except Exception as exc:
		return Check("knowledge", "fail", f"the store did not answer: {type(exc).__name__}: {exc}")
	return Check("knowledge", "ok", ", ".join(f"{k}={v}" for k, v in status.items()))


def check_scheduler() -> Check:
	from frappe.utils.scheduler import is_scheduler_disabled

	if is_scheduler_disabled():
		return Check(
			"scheduler",
			"warn",
			"the scheduler is disabled: scheduled jobs will not run on this site.",
		)
	return Check("scheduler", "ok", "scheduler enabled")


def run(*, call_provider: bool = True) -> list[Check]:
	values = frappe_session.load_settings(with_secrets=True)
	checks = check_settings(values)
	if all(c.status == "ok" for c in checks):
		checks.append(check_tool_schemas(values))
	if call_provider and all(c.status == "ok" for c in checks):
		checks.append(check_provider(values))
	checks.append(check_knowledge(values))
	checks.append(check_scheduler())
	checks.extend(check_systems())
	return checks


def check_systems() -> list[Check]:
	"""Each other system the person running the doctor connected: reachable, credentials valid, version."""
	import frappe

	from noviz_agent.edge.frappe_systems import check_connections

	return [
		Check(f"system {name}", status, message)
		for name, status, message in check_connections(frappe.session.user)
	]
