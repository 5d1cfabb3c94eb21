"""Standing goals on a site: the Agent Goal DocType as a spec, the scheduler's tick, a run as the owner, delivery.

The scheduler (every five minutes) finds the goals that are due and queues one job per goal on the
long queue; the job becomes the goal's person (`frappe.set_user`), builds their session with the
chat's own `build_session` (allowance, role policy, permissions, proposal store), and runs the
frappe-free runner with the chat's budgets, rate gate and provider. What a run leaves: an Agent Goal
Run row, one Agent Interaction Log row (channel "goal"), and, when something changed, a desk
notification (Notification Log), an e-mail digest (Email Queue) and a turn in the goal's own
conversation, as the goal says. Proposals a run prepares wait in the person's inbox (/app/noviz-goals)
and are confirmed through the chat's own `api.confirm`.
"""

from __future__ import annotations

import json

import frappe
from frappe import _

from noviz_agent import records
from noviz_agent.connectors.model import desk_path
from noviz_agent.edge.frappe_versions import form_path
from noviz_agent.goals import runner
from noviz_agent.goals.schedule import Schedule
from noviz_agent.goals.spec import GoalError, GoalSpec
from noviz_agent.goals.watches import KINDS
from noviz_agent.governance import budgets

GOAL = "Agent Goal"
RUN = "Agent Goal Run"
LOG = "Agent Interaction Log"
CONVERSATION = "Agent Conversation"
MAY_DO = {"Report only": "report", "Prepare proposals": "propose"}
DELIVERY = {"notify_desk": "notification", "notify_email": "email", "notify_conversation": "conversation"}
# Written by runs and the scheduler, never by the person: a System Manager's pause does not count them.
SYSTEM_FIELDS = (
	"status",
	"stop_reason",
	"next_run",
	"last_run",
	"spent_month",
	"spent_tokens",
	"spent_cost",
	"memory",
	"conversation",
	"title",
)
STATUS = {
	"nothing_new": "Nothing new",
	"reported": "Reported",
	"stopped": "Stopped",
	"failed": "Failed",
	"skipped": "Skipped",
}
DUE_BATCH = 200
JOB_TIMEOUT = 25 * 60
RECENT_RUNS = 20


# --- the DocType as a spec ------------------------------------------------------------------------


def owner_problem(user: str) -> str | None:
	"""Why `user` cannot have a goal working for them, or None: a goal runs as a real desk person."""
	if user in ("Guest", "Administrator"):
		return _("A goal works for a person who signs in to the desk, not for {0}.").format(user)
	enabled, user_type = frappe.get_cached_value("User", user, ["enabled", "user_type"]) or (0, None)
	if user_type != "System User":
		return _("A goal works for a desk user; {0} is not one.").format(user)
	if not enabled:
		return _("{0} is disabled; a goal cannot work for them.").format(user)
	return None


def watch_rows(doc) -> list[dict]:
	"""The goal's watches as {kind, params}, only the parameters its kind takes and that were filled in."""
	rows = []
	for row in doc.get("watches") or []:
		kind = KINDS.get(row.kind)
		params = {
			p.name: row.get(p.name)
			for p in (kind.params if kind else ())
			if row.get(p.name) not in (None, "", 0)
		}
		rows.append({"kind": row.kind, "params": params})
	return rows


def schedule_values(row) -> dict:
	"""A goal's schedule fields (a document or a list row) as Schedule takes them."""
	return {
		"every": row.every,
		"hour": row.hour,
		"weekday": row.weekday,
		"day": row.day_of_month,
		"cron": row.cron,
	}


def spec_values(doc) -> dict:
	return {
		"name": doc.name,
		"owner": doc.person,
		"title": doc.title,
		"goal": doc.goal,
		"watches": watch_rows(doc),
		"schedule": schedule_values(doc),
		"company": doc.company,
		"may_do": MAY_DO.get(doc.may_do, "report"),
		"delivery": [value for field, value in DELIVERY.items() if doc.get(field)],
		"run_tokens": doc.run_tokens,
		"month_tokens": doc.month_tokens,
		"run_cost": doc.run_cost,
		"month_cost": doc.month_cost,
		"max_steps": doc.max_steps,
		"proposal_days": doc.proposal_days,
		"active": doc.active,
	}


def checked_spec(doc) -> GoalSpec:
	try:
		return GoalSpec.from_dict(spec_values(doc))
	except GoalError as exc:
		frappe.throw(
			"<br>".join(frappe.utils.escape_html(p) for p in exc.problems), title=_("This goal cannot run")
		)


def next_run_of(doc) -> str:
	schedule = checked_spec(doc).schedule
	return schedule.next_after(frappe.utils.now_datetime()).strftime("%Y-%m-%d %H:%M:%S")


def doc_values(spec: dict) -> dict:
	"""Agent Goal fields from a spec's plain values (the goals.propose tool's, once confirmed)."""
	schedule = spec.get("schedule") or {}
	delivery = set(spec.get("delivery") or ())
	values = {
		"doctype": GOAL,
		"title": spec.get("title"),
		"person": spec["owner"],
		"goal": spec["goal"],
		"company": spec.get("company"),
		"watches": [{"kind": w["kind"], **w.get("params", {})} for w in spec.get("watches") or []],
		"every": schedule.get("every") or "week",
		"weekday": schedule.get("weekday") or "monday",
		"day_of_month": schedule.get("day") or 1,
		"hour": schedule.get("hour", 8),
		"cron": schedule.get("cron"),
		"may_do": next(label for label, value in MAY_DO.items() if value == spec.get("may_do", "report")),
		"run_tokens": spec.get("run_tokens"),
		"month_tokens": spec.get("month_tokens"),
		"run_cost": spec.get("run_cost") or 0,
		"month_cost": spec.get("month_cost") or 0,
		"max_steps": spec.get("max_steps") or 3,
		"proposal_days": spec.get("proposal_days") or 7,
		"active": 1,
	}
	values.update({field: int(value in delivery) for field, value in DELIVERY.items()})
	return values


class FrappeGoalStore:
	"""Goals made as the signed-in person (the confirmed `goals.propose`), under the DocType's permissions."""

	def create(self, spec: dict) -> dict:
		doc = frappe.get_doc(doc_values(spec))
		doc.insert()
		return {"name": doc.name, "_link": form_path(GOAL, doc.name)}


# --- the scheduler -------------------------------------------------------------------------------


def enqueue_due(now=None) -> list[str]:
	"""The scheduler's tick: every active goal whose time has come is queued once, as its own job.

	Its next time is set now, so a job that dies is not queued again on every tick; the job itself
	runs as the goal's person.
	"""
	now = frappe.utils.get_datetime(now) if now else frappe.utils.now_datetime()
	# The scheduler reads every person's due goals (the agent's own records); each run reads as its owner.
	due = frappe.get_all(
		GOAL,
		filters={"active": 1, "next_run": ("<=", now)},
		fields=["name", "every", "weekday", "day_of_month", "hour", "cron"],
		order_by="next_run asc",
		limit=DUE_BATCH,
	)
	for row in due:
		schedule = Schedule.from_dict(schedule_values(row))
		frappe.db.set_value(GOAL, row.name, "next_run", schedule.next_after(now), update_modified=False)
		frappe.enqueue(
			"noviz_agent.edge.frappe_goals.run_goal",
			queue="long",
			timeout=JOB_TIMEOUT,
			job_id=f"noviz_agent:goal:{row.name}",
			deduplicate=True,
			enqueue_after_commit=True,
			goal=row.name,
		)
	return [row.name for row in due]


class RedisLock:
	"""runner.Lock in the site's Redis: SET NX with an expiry, so a dead worker frees it."""

	def _key(self, key: str) -> str:
		return frappe.cache.make_key(f"noviz_agent:lock:{key}")

	def acquire(self, key: str, seconds: int) -> bool:
		return bool(frappe.cache.set(self._key(key), frappe.local.site or "1", ex=seconds, nx=True))

	def release(self, key: str) -> None:
		frappe.cache.delete(self._key(key))


class SiteBudget:
	"""runner.BudgetGate with the chat's own Agent Budget caps, reservations and spending rows."""

	def __init__(self, user: str, roles, values: dict):
		self.user, self.roles, self.values = user, roles, values

	def reserve(self, worst: budgets.Spend):
		from noviz_agent.edge import frappe_governance

		caps, held_worst = frappe_governance.turn_budget(
			self.user, self.roles, self.values, worst.tokens, records.Rates.from_settings(self.values)
		)
		return budgets.reserve(frappe_governance.RedisUsage(), caps, held_worst, frappe.utils.getdate())

	def settle(self, held, usage) -> None:
		from noviz_agent import api

		log = {
			"prompt_tokens": usage.prompt_tokens,
			"cached_tokens": usage.cached_tokens,
			"completion_tokens": usage.completion_tokens,
		}
		api._settle_budget(held, log, self.values)


def run_goal(goal: str) -> dict:
	"""The job: one run of `goal` as its person, recorded and delivered. Called by the queue, or directly."""
	from noviz_agent.edge import frappe_session

	doc = frappe.get_doc(GOAL, goal)
	if not doc.active:
		return {"goal": goal, "status": "inactive"}
	values = frappe_session.load_settings(with_secrets=True)
	started = frappe.utils.now_datetime()
	month = budgets.month_of(frappe.utils.getdate())
	spent = budgets.Spend(int(doc.spent_tokens or 0), float(doc.spent_cost or 0))
	spent = spent if doc.spent_month == month else budgets.Spend()
	try:
		spec = GoalSpec.from_dict(spec_values(doc))
	except GoalError as exc:
		# Written before, no longer keepable (a watch or a bound that changed): it stops and says what to fix.
		spec = GoalSpec(doc.person, doc.goal or doc.name, (), name=doc.name, title=doc.title or "")
		reason = _("The goal stopped: it can no longer run as written. {0}").format(" ".join(exc.problems))
		outcome = runner.stopped(spec, reason, records.loads(doc.memory, {}))
		return record(doc, spec, outcome, values, started, None, spent)
	conversation = (
		(doc.conversation or frappe.generate_hash(length=10)) if "conversation" in spec.delivery else None
	)
	try:
		inputs = _inputs(doc, spec, values, conversation, spent)
	except Exception as exc:  # the session could not be built: told to the person, never silent
		frappe.log_error(title=f"Noviz agent: goal {goal} could not start")
		outcome = runner.failed(spec, exc, records.loads(doc.memory, {}), attempts=1)
		return record(doc, spec, outcome, values, started, None, spent)
	outcome = runner.execute(inputs, RedisLock())
	return record(doc, spec, outcome, values, started, conversation, spent)


def _inputs(doc, spec: GoalSpec, values: dict, conversation: str | None, spent) -> runner.RunInputs:
	"""The run's inputs as its person: their session (when they may still run it), provider and budgets."""
	from noviz_agent.edge import frappe_governance, frappe_session
	from noviz_agent.governance.rate_gate import GatedProvider

	person = doc.person
	enabled = owner_problem(person) is None
	session = None
	if enabled:
		frappe.set_user(person)
		session = frappe_session.build_session(values, progress=False, conversation=conversation)
		session.goals = None  # a run never makes goals

	def provider():
		return GatedProvider(frappe_session.make_provider(values), frappe_governance.rate_gate(values))

	return runner.RunInputs(
		spec,
		session,
		provider=provider,
		today=frappe.utils.getdate(),
		memory=records.loads(doc.memory, {}) or {},
		month_spent=spent,
		rates=records.Rates.from_settings(values),
		owner_enabled=enabled,
		budget=SiteBudget(person, session.person.roles, values) if session is not None else None,
		base_url=frappe.utils.get_url(),
	)


# --- recording and delivery ------------------------------------------------------------------------


def record(
	doc, spec: GoalSpec, outcome: runner.RunOutcome, values: dict, started, conversation, spent
) -> dict:
	"""The run's row, its log (and conversation turn), the goal's memory and spending, and delivery."""
	person = doc.person
	if outcome.status == "skipped":
		return {"goal": doc.name, "status": outcome.status}
	log_name = _log(spec, outcome, values, conversation)
	delivered = deliver(doc, spec, outcome) if outcome.delivers else []
	month = budgets.month_of(frappe.utils.getdate())
	total = spent + budgets.Spend(outcome.tokens, outcome.cost)
	changes = {
		"memory": json.dumps(outcome.memory, default=str, ensure_ascii=False),
		"last_run": started,
		"spent_month": month,
		"spent_tokens": total.tokens,
		"spent_cost": total.money,
	}
	if conversation and frappe.db.exists(CONVERSATION, conversation):
		changes["conversation"] = conversation
	if outcome.status == "stopped":
		changes.update(active=0, status="Stopped", stop_reason=outcome.stop_reason, next_run=None)
	# The goal's own bookkeeping, written for its person whoever runs the job.
	frappe.db.set_value(GOAL, doc.name, changes, update_modified=False)
	run = frappe.get_doc(
		{
			"doctype": RUN,
			"goal": doc.name,
			"person": person,
			"status": STATUS[outcome.status],
			"started": started,
			"finished": frappe.utils.now_datetime(),
			"attempts": outcome.attempts,
			"new_findings": len(outcome.changes.new),
			"changed_findings": len(outcome.changes.changed),
			"resolved_findings": len(outcome.changes.resolved),
			"delivered": ", ".join(delivered),
			"digest": outcome.digest.text if outcome.digest else (outcome.stop_reason or outcome.error or ""),
			"digest_response": json.dumps(outcome.digest.response, default=str) if outcome.digest else None,
			"findings": json.dumps([f.to_dict() for f in outcome.findings], default=str, ensure_ascii=False),
			"proposals": json.dumps(outcome.proposals, default=str, ensure_ascii=False),
			"model_calls": outcome.model_calls,
			"prompt_tokens": outcome.usage.prompt_tokens,
			"completion_tokens": outcome.usage.completion_tokens,
			"tokens": outcome.tokens,
			"cost": outcome.cost,
			"log": log_name,
			"error": outcome.error,
		}
	)
	run.flags.ignore_links = True
	# The agent's own record of the person's goal: they read it, never write it.
	run.insert(ignore_permissions=True)
	return {"goal": doc.name, "run": run.name, "status": outcome.status, "delivered": delivered}


def _log(spec: GoalSpec, outcome: runner.RunOutcome, values: dict, conversation: str | None) -> str:
	"""The run's interaction-log row, like a turn's; a reported run also becomes a turn of its conversation."""
	from noviz_agent import api

	question = f"[goal] {spec.label}"
	user = spec.owner
	if conversation and outcome.digest is not None and outcome.status == "reported":
		doc = (
			frappe.get_doc(CONVERSATION, conversation)
			if frappe.db.exists(CONVERSATION, conversation)
			else None
		)
		entry = {
			"question": question,
			"answer": outcome.digest.text,
			"response": outcome.digest.response,
			"tool_calls": outcome.log.get("tools_called") or [],
		}
		_doc, log = api._record(
			user,
			doc,
			question,
			outcome.digest.response,
			outcome.log,
			entry,
			None,
			values,
			new_name=conversation,
		)
		return log.name
	log = frappe.get_doc(
		{
			"doctype": LOG,
			**records.log_values(
				outcome.log,
				request=question,
				person=user,
				conversation=None,
				rates=records.Rates.from_settings(values),
			),
		}
	)
	# The agent's own audit record of the person's run, as for a turn.
	log.insert(ignore_permissions=True)
	return log.name


def _subject(spec: GoalSpec, outcome: runner.RunOutcome) -> str:
	if outcome.status == "stopped":
		return _("Goal “{0}” stopped").format(spec.label)
	if outcome.status == "failed":
		return _("Goal “{0}” could not run").format(spec.label)
	return outcome.digest.title


def _body(outcome: runner.RunOutcome) -> str:
	if outcome.digest is not None:
		return outcome.digest.html
	text = outcome.stop_reason or _("The run failed twice ({0}); it is tried again at its next time.").format(
		outcome.error
	)
	return f"<p>{frappe.utils.escape_html(text)}</p>"


def deliver(doc, spec: GoalSpec, outcome: runner.RunOutcome) -> list[str]:
	"""Tell the person, where the goal says: a desk notification, an e-mail digest (the conversation turn is
	written with the log). A stop or a failure is always told on the desk, even with notifications off here."""
	from frappe.desk.doctype.notification_settings.notification_settings import is_notifications_enabled

	delivered = []
	subject, body = _subject(spec, outcome), _body(outcome)
	person = doc.person
	must = outcome.status in ("stopped", "failed")
	if ("notification" in spec.delivery or must) and is_notifications_enabled(person):
		frappe.get_doc(
			{
				"doctype": "Notification Log",
				"for_user": person,
				"type": "Alert",
				"subject": subject,
				"email_content": body,
				"document_type": GOAL,
				"document_name": doc.name,
				"link": desk_path("noviz-goals"),
			}
		).insert(ignore_permissions=True)  # written for the person, as frappe's own notifications are
		delivered.append("notification")
	if "email" in spec.delivery:
		email = frappe.get_cached_value("User", person, "email")
		try:
			frappe.sendmail(
				recipients=[email],
				subject=subject,
				message=body,
				reference_doctype=GOAL,
				reference_name=doc.name,
				now=False,
			)
			delivered.append("email")
		except frappe.OutgoingEmailError:
			frappe.clear_last_message()
			delivered.append("email not queued: no outgoing e-mail account is set up")
	if "conversation" in spec.delivery and outcome.status == "reported":
		delivered.append("conversation")
	return delivered


# --- the person's page --------------------------------------------------------------------------------


def overview(user: str) -> dict:
	"""The person's goals with their last run, and the proposals still open in their inbox, read as them."""
	from noviz_agent.edge import frappe_session
	from noviz_agent.engine import gateway

	goals = frappe.get_list(
		GOAL,
		filters={"person": user},
		fields=[
			"name",
			"title",
			"goal",
			"company",
			"active",
			"status",
			"stop_reason",
			"every",
			"weekday",
			"day_of_month",
			"hour",
			"cron",
			"next_run",
			"last_run",
			"may_do",
			"spent_month",
			"spent_tokens",
			"spent_cost",
			"conversation",
		],
		order_by="creation asc",
		limit_page_length=100,
	)
	runs = frappe.get_list(
		RUN,
		filters={"person": user, "goal": ("in", [g.name for g in goals] or [""])},
		fields=[
			"name",
			"goal",
			"status",
			"started",
			"new_findings",
			"changed_findings",
			"resolved_findings",
			"digest_response",
			"digest",
			"proposals",
			"model_calls",
			"tokens",
			"cost",
		],
		order_by="creation desc",
		limit_page_length=RECENT_RUNS * max(1, len(goals)),
	)
	session = frappe_session.build_session(frappe_session.load_settings(), progress=False) if runs else None
	inbox, last = [], {}
	for run in runs:
		last.setdefault(run.goal, run)
		for proposal in records.loads(run.proposals, []) or []:
			token = proposal.get("token")
			session.conversation = proposal.get("conversation") or None
			if token and gateway.peek(session, token) is not None:
				inbox.append(
					{
						"goal": run.goal,
						"run": run.name,
						"conversation": session.conversation,
						"proposal": proposal,
					}
				)
	out = []
	for goal in goals:
		run = last.get(goal.name)
		schedule = Schedule.from_dict(schedule_values(goal))
		out.append(
			{
				**{
					k: goal.get(k)
					for k in (
						"name",
						"title",
						"goal",
						"company",
						"active",
						"status",
						"stop_reason",
						"may_do",
						"conversation",
					)
				},
				"schedule": schedule.describe(),
				"next_run": str(goal.next_run or ""),
				"last_run": str(goal.last_run or ""),
				"spent": {
					"month": goal.spent_month,
					"tokens": goal.spent_tokens or 0,
					"cost": goal.spent_cost or 0,
				},
				"last": None
				if run is None
				else {
					"run": run.name,
					"status": run.status,
					"started": str(run.started or ""),
					"new": run.new_findings,
					"changed": run.changed_findings,
					"resolved": run.resolved_findings,
					"model_calls": run.model_calls,
					"tokens": run.tokens,
					"response": records.loads(run.digest_response, None)
					or {"type": "text", "text": run.digest or ""},
				},
			}
		)
	return {"goals": out, "proposals": inbox}


def set_active(name: str, active: bool) -> dict:
	"""Pause a goal (its person or a System Manager), or switch it back on (its person only)."""
	doc = frappe.get_doc(GOAL, name)
	doc.check_permission("write")
	doc.active = 1 if active else 0
	doc.save()
	return {"name": doc.name, "active": doc.active, "status": doc.status, "next_run": str(doc.next_run or "")}
