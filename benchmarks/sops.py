"""Procedures: per-step accuracy and per-session success, model-driven controller vs the baseline.

Sessions are generated for the three shipped procedures with facts (order delivered or not,
invoice over its order or not, employee active or not) and faults (ids that do not exist,
API errors, off-topic questions, ambiguous answers, cancelled proposals). Each session's
label — the steps a correct run takes and how it ends — is derived from the procedure and
the generated facts BEFORE any controller runs (`expected`), by walking the procedure with
the facts; controllers never see labels or facts, only the simulated person's messages and
the records they look up.

A dev split (seeds 0..) was used while building the controllers; the other split (seeds from
10_000) was not, and is reported first. It is not held-out data: its sessions come from the same
generator, with the same facts and phrasing, only other random seeds, so it shows the controllers
were not fitted to particular sessions, not how they do on real conversations.

  python benchmarks/sops.py                       # scripted policy model vs baseline
  python benchmarks/sops.py --sessions 300 --json
  python benchmarks/sops.py --base-url http://127.0.0.1:11434/v1 --model qwen2.5:7b   # a real provider
  (the API key, if any, comes from the environment variable named by --api-key-env, default SOP_API_KEY)

The "model" column with no provider given is `noviz_agent.testing.sop_policy.SopPolicyModel`:
a scripted policy that decides from the prompt text it is sent (see its docstring for what it
can and cannot read). It measures the controller's machinery, not a language model.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from knowledge.search import Passage  # noqa: E402
from noviz_agent.engine import gateway  # noqa: E402
from noviz_agent.engine.errors import ToolError  # noqa: E402
from noviz_agent.sops import memory as mem  # noqa: E402
from noviz_agent.sops.actions import ASK, END, TOOL, ActionRepository  # noqa: E402
from noviz_agent.sops.controllers import BaselineController, ModelController  # noqa: E402
from noviz_agent.sops.examples import example_specs  # noqa: E402
from noviz_agent.sops.matching import Matcher  # noqa: E402
from noviz_agent.sops.memory import InMemoryRunStore  # noqa: E402
from noviz_agent.sops.parser import after, branch  # noqa: E402
from noviz_agent.sops.procedures import compile_procedure  # noqa: E402
from noviz_agent.sops.runner import MAX_REPEATS, Runner  # noqa: E402
from noviz_agent.testing.sop_policy import SopPolicyModel  # noqa: E402
from noviz_agent.tools import registry as shared_registry  # noqa: E402
from tests.support.factories import make_session  # noqa: E402
from tests.support.memory_connector import MemoryConnector  # noqa: E402

CANCEL, INVOICE, LEAVE = (s.title for s in example_specs())
DEV_SEED, OTHER_SEED = 0, 10_000
OFF_TOPIC = [
	"How do customer returns work?",
	"What does 'To Deliver and Bill' mean?",
	"Who approves leave in our company?",
	"how long does a credit note take",
	"Can you explain what a purchase order is?",
	"wait, what happens to the stock when an order is cancelled?",
]
AMBIGUOUS_ID = ["the big one from last week", "yes", "the usual one", "not sure, the latest?"]
AMBIGUOUS_DATE = ["sometime next week", "after the holidays", "3/4/2026", "the 3rd or the 4th of March"]
REASONS = ["They ordered the wrong size", "Customer found a cheaper offer", "Duplicate order"]


@dataclass
class Reply:
	kind: str  # "valid" | "invalid_id" | "ambiguous" | "off_topic"
	text: str
	value: str | None = None


@dataclass
class Case:
	"""One generated session: facts, the person's planned replies, injected faults, and its label."""

	id: str
	procedure: str
	opening: str
	records: dict[str, list[dict]]
	replies: dict[int, list[Reply]]
	conditions: dict[int, bool]
	api_failures: dict[int, int]
	confirm: bool
	faults: list[str]
	targets: dict[int, dict] = field(default_factory=dict)  # tool line → expected arguments when it succeeds
	label: list[tuple] = field(default_factory=list)
	label_status: str = ""


class FlakyConnector(MemoryConnector):
	"""Fails the first `n` calls of a tool as an unreachable server would."""

	def __init__(self, *args, failures=None, **kwargs):
		super().__init__(*args, **kwargs)
		self.failures = dict(failures or {})

	def get(self, entity, name):
		if self.failures.get(entity, 0):
			self.failures[entity] -= 1
			raise ToolError(f"The server did not answer in time ({entity}); try again.")
		return super().get(entity, name)


class Knowledge:
	def search(self, query, *, k=5, module=None, roles=()):
		return [Passage("Process", "Overview", "process", "core", 1.0, "The process document explains it.")]


# --- generation -----------------------------------------------------------------------


def _id_replies(rng, line, good, prefix, faults) -> list[Reply]:
	replies = []
	if rng.random() < 0.25:
		replies.append(Reply("off_topic", rng.choice(OFF_TOPIC)))
		faults.append("off_topic")
	if rng.random() < 0.2:
		replies.append(Reply("ambiguous", rng.choice(AMBIGUOUS_ID)))
		faults.append("ambiguous")
	if rng.random() < 0.2:
		bad = f"{prefix}{rng.randint(90_000, 99_999):05d}"
		replies.append(Reply("invalid_id", f"It is {bad}", bad))
		faults.append("invalid_id")
	phrasing = rng.choice(["{}", "It's {}", "order number {} please", "{} I think"])
	replies.append(Reply("valid", phrasing.format(good if rng.random() < 0.8 else good.lower()), good))
	return replies


def _cancel(rng, case_id) -> Case:
	faults: list[str] = []
	order = f"SAL-ORD-2026-{rng.randint(1, 9999):05d}"
	per = rng.choice([0, 0, 40, 100])
	status = {0: "Not Delivered", 40: "Partly Delivered", 100: "Fully Delivered"}[per]
	records = {
		"sales_order": [
			{
				"name": order,
				"customer": "Acme Ltd",
				"status": "To Deliver and Bill" if per < 100 else "To Bill",
				"delivery_status": status,
				"per_delivered": per,
				"total": 1000.0,
				"docstatus": 1,
			}
		]
	}
	replies = {
		1: _id_replies(rng, 1, order, "SAL-ORD-2026-", faults),
		8: [Reply("valid", rng.choice(REASONS))],
	}
	if rng.random() < 0.15:
		replies[8].insert(0, Reply("off_topic", rng.choice(OFF_TOPIC)))
		faults.append("off_topic")
	failures = {2: rng.choice([0, 0, 0, 1, 2])}
	faults += ["api_error"] * bool(failures[2])
	confirm = rng.random() < 0.85
	faults += ["cancelled_proposal"] * (not confirm and per == 0)
	return Case(
		case_id,
		CANCEL,
		"A customer wants to cancel their order",
		records,
		replies,
		{3: per > 0},
		failures,
		confirm,
		faults,
		targets={2: {"name": order}, 9: {"name": order}},
	)


def _invoice(rng, case_id) -> Case:
	faults: list[str] = []
	invoice, order = f"ACC-PINV-2026-{rng.randint(1, 9999):05d}", f"PUR-ORD-2026-{rng.randint(1, 9999):05d}"
	ordered = float(rng.randint(10, 90) * 100)
	billed = ordered + rng.choice([0.0, 0.0, 150.0, -200.0])
	records = {
		"purchase_invoice": [
			{
				"name": invoice,
				"supplier": "Bolt Supplies",
				"total": billed,
				"docstatus": 0,
				"status": "Draft",
				"items": [{"item": "BOLT-10", "qty": 10, "purchase_order": order}],
			}
		],
		"purchase_order": [{"name": order, "supplier": "Bolt Supplies", "total": ordered, "docstatus": 1}],
	}
	replies = {1: _id_replies(rng, 1, invoice, "ACC-PINV-2026-", faults)}
	failures = {3: rng.choice([0, 0, 0, 1, 2])}
	faults += ["api_error"] * bool(failures[3])
	return Case(
		case_id,
		INVOICE,
		"The supplier invoice doesn't match the purchase order",
		records,
		replies,
		{4: billed > ordered},
		failures,
		True,
		faults,
		targets={2: {"name": invoice}, 3: {"name": order}},
	)


def _date_replies(rng, value: str, faults) -> list[Reply]:
	replies = []
	if rng.random() < 0.2:
		replies.append(Reply("ambiguous", rng.choice(AMBIGUOUS_DATE)))
		faults.append("ambiguous")
	day = int(value[-2:])
	phrasing = rng.choice([value, f"{day} March 2026", f"March {day}, 2026"])
	replies.append(Reply("valid", phrasing, value))
	return replies


def _leave(rng, case_id) -> Case:
	faults: list[str] = []
	employee = f"HR-EMP-{rng.randint(1, 999):05d}"
	active = rng.random() < 0.8
	records = {
		"employee": [
			{"name": employee, "employee_name": "Ada Lane", "status": "Active" if active else "Left"}
		]
	}
	start = rng.randint(2, 20)
	from_date, to_date = f"2026-03-{start:02d}", f"2026-03-{start + rng.randint(0, 5):02d}"
	leave_type = rng.choice(["Casual Leave", "Sick Leave", "Privilege Leave"])
	replies = {
		1: _id_replies(rng, 1, employee, "HR-EMP-", faults),
		6: [Reply("valid", leave_type, leave_type)],
		7: _date_replies(rng, from_date, faults),
		8: _date_replies(rng, to_date, faults),
	}
	if rng.random() < 0.15:
		replies[6].insert(0, Reply("off_topic", rng.choice(OFF_TOPIC)))
		faults.append("off_topic")
	confirm = rng.random() < 0.85
	values = {"employee": employee, "leave_type": leave_type, "from_date": from_date, "to_date": to_date}
	return Case(
		case_id,
		LEAVE,
		"An employee requests leave",
		records,
		replies,
		{3: not active},
		{},
		confirm,
		faults,
		targets={2: {"name": employee}, 9: {"values": values}},
	)


def generate(n: int, seed: int, compiled: dict) -> list[Case]:
	rng = random.Random(seed)
	makers = [_cancel, _invoice, _leave]
	cases = []
	for i in range(n):
		case = makers[i % 3](rng, f"{seed}-{i}")
		case.label, case.label_status = expected(case, compiled[case.procedure])
		cases.append(case)
	return cases


# --- labels: the procedure walked with the facts, before any controller runs -------------


def expected(case: Case, compiled) -> tuple[list[tuple], str]:
	"""The steps a correct run takes for these facts, and how it ends."""
	procedure, actions = compiled.procedure, compiled.actions
	replies = copy.deepcopy(case.replies)
	failures = dict(case.api_failures)
	steps: list[tuple] = []
	reached: list[int] = []
	attempts: dict[int, int] = {}
	bad_id: dict[int, tuple[int, str]] = {}  # tool line → (question line, the id that does not exist)
	position = procedure.first().number
	for _ in range(200):
		if position is None:
			return steps, mem.COMPLETED
		line = procedure.lines[position]
		if position not in reached:
			reached.append(position)
			attempts = {}
		if line.kind == "if":
			target = branch(line, case.conditions[position], procedure)
			position = target.number if target else None
			continue
		attempts[position] = attempts.get(position, 0) + 1
		if attempts[position] > MAX_REPEATS:
			return [*steps, ("ended", position, actions[position])], mem.ENDED
		action = compiled_action(compiled, position)
		if action.kind == ASK:
			steps.append(("step", position, action.name))
			while True:
				reply = replies[position].pop(0)
				if reply.kind == "off_topic":
					steps.append(("interrupt", position, "knowledge.search"))
					continue
				if reply.kind == "ambiguous":
					break  # asked again
				following = after(line, procedure)
				if reply.kind == "invalid_id":
					bad_id[following.number] = (position, reply.value)
				position = following.number if following else None
				break
			continue
		if action.kind == TOOL:
			# The server's outage comes first: its first calls fail whatever the id.
			if failures.get(position, 0):
				failures[position] -= 1
				args = {"name": bad_id[position][1]} if position in bad_id else case.targets[position]
				steps.append(("step", position, action.name, False, args))
				continue
			if position in bad_id:
				source, value = bad_id.pop(position)
				steps.append(("step", position, action.name, False, {"name": value}))
				position = source
				continue
			steps.append(("step", position, action.name, True, case.targets[position]))
			if action.writes and not case.confirm:
				return steps, mem.ENDED
		elif action.kind == END:
			steps.append(("step", position, action.name))
			return steps, mem.COMPLETED
		else:
			steps.append(("step", position, action.name))
		following = after(line, procedure)
		position = following.number if following else None
	raise RuntimeError(f"label walk of {case.id} did not finish")


def compiled_action(compiled, line: int):
	return compiled.repository.get(compiled.actions[line])


# --- running a controller over a case ------------------------------------------------------


def observed(state) -> list[tuple]:
	"""The steps a run took, in the label's form."""
	steps = []
	for e in state.memory:
		if e.kind == "interrupt":
			steps.append(("interrupt", e.line, "knowledge.search"))
		elif e.kind == "ended":
			steps.append(("ended", e.line, e.action))
		elif e.kind == "step":
			if "." in e.action and not e.action.startswith(("person.", "procedure.", "knowledge.")):
				key = {k: e.args[k] for k in ("name", "values") if k in e.args}
				steps.append(("step", e.line, e.action, e.ok, key))
			else:
				steps.append(("step", e.line, e.action))
	return steps


def run_case(case: Case, compiled, controller_factory, registry) -> tuple[list[tuple], str]:
	conn = FlakyConnector(
		"bench@example.com",
		data=copy.deepcopy(case.records),
		permissions={e: {"read", "create", "cancel", "submit", "write"} for e in case.records}
		| {"leave_application": {"read", "create"}},
		failures={compiled_action(compiled, line).entity: n for line, n in case.api_failures.items()},
	)
	session = make_session(conn, registry=registry)
	session.knowledge = Knowledge()
	store = InMemoryRunStore()
	replies = copy.deepcopy(case.replies)
	runner = Runner(
		compiled.procedure,
		compiled.actions,
		compiled.repository,
		controller_factory(),
		session,
		sop=case.procedure,
	)
	state = runner.start(case.opening).state
	for _ in range(40):
		store.save(case.id, state)
		state = store.load(case.id)  # every turn goes through the store, as across workers
		if state.status == mem.AWAITING_ANSWER:
			queue = replies.get(state.position) or []
			if not queue:
				break  # the run asked something the person has no answer for: it went astray
			state = runner.resume(state, queue.pop(0).text).state
		elif state.status == mem.AWAITING_CONFIRMATION:
			token = state.pending_token
			result = gateway.confirm(session, token) if case.confirm else gateway.cancel(session, token)
			state = runner.settled(state, case.confirm, result).state
		else:
			break
	return observed(state), state.status


def score(cases: list[Case], outcomes) -> dict:
	right = total = sessions = 0
	by_fault: dict[str, list[int]] = {}
	for case, (steps, status) in zip(cases, outcomes, strict=True):
		right += sum(1 for a, b in zip(steps, case.label, strict=False) if a == b)
		total += max(len(steps), len(case.label))
		ok = steps == case.label and status == case.label_status
		sessions += ok
		for fault in set(case.faults) or {"none"}:
			by_fault.setdefault(fault, [0, 0])
			by_fault[fault][0] += ok
			by_fault[fault][1] += 1
	return {
		"sessions": len(cases),
		"step_accuracy": round(right / total, 3) if total else 0.0,
		"session_success": round(sessions / len(cases), 3) if cases else 0.0,
		"success_by_fault": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_fault.items())},
	}


def main(argv=None) -> None:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--sessions", type=int, default=150, help="sessions per split")
	parser.add_argument("--base-url", help="an OpenAI-compatible provider for the model-driven controller")
	parser.add_argument("--model", help="the provider's model name")
	parser.add_argument("--api-key-env", default="SOP_API_KEY")
	parser.add_argument("--json", action="store_true")
	args = parser.parse_args(argv)

	registry = shared_registry()
	repository = ActionRepository.from_registry(registry)
	matcher = Matcher(repository)
	compiled = {}
	for spec in example_specs():
		c = compile_procedure(spec.procedure, matcher, title=spec.title, name=spec.title)
		c.repository = repository
		compiled[spec.title] = c

	if args.base_url:
		from noviz_agent.engine.llm import ModelSettings, OpenAICompatibleProvider

		provider = OpenAICompatibleProvider(
			ModelSettings(
				base_url=args.base_url, model=args.model or "", api_key=os.environ.get(args.api_key_env, "")
			)
		)
		model_name = f"model ({args.model})"
	else:
		provider = SopPolicyModel()
		model_name = "model (scripted policy)"
	made: list[ModelController] = []

	def model_controller() -> ModelController:
		made.append(ModelController(provider))
		return made[-1]

	controllers = {"baseline": BaselineController, model_name: model_controller}

	report = {}
	for split, seed in (("dev", DEV_SEED), ("other_seeds", OTHER_SEED)):
		cases = generate(args.sessions, seed, compiled)
		report[split] = {}
		for name, factory in controllers.items():
			outcomes = [run_case(case, compiled[case.procedure], factory, registry) for case in cases]
			report[split][name] = score(cases, outcomes)
			if name == model_name:
				# Decisions the model's reply could not be used for, so the baseline's rule made them.
				report[split][name]["fallbacks"] = sum(c.fallbacks for c in made)
				made.clear()
	if isinstance(provider, SopPolicyModel):
		report["model_calls"] = provider.calls
	if args.json:
		print(json.dumps(report, indent=2))
		return
	print(
		"Sessions are generated by this script; the scripted policy's rules follow the generator's facts "
		"and phrasing. 'other_seeds' is the same generator with seeds not used while building (not held-out data)."
		if isinstance(provider, SopPolicyModel)
		else "Sessions are generated by this script; 'other_seeds' is the same generator with seeds not used "
		"while building (not held-out data)."
	)
	for split in ("other_seeds", "dev"):
		print(f"\n{split} split ({args.sessions} generated sessions: {CANCEL} / {INVOICE} / {LEAVE})")
		print(f"{'controller':32} {'step accuracy':>14} {'session success':>16}")
		for name, figures in report[split].items():
			fallbacks = (
				f"   ({figures['fallbacks']} decisions fell back to rules)" if "fallbacks" in figures else ""
			)
			print(
				f"{name:32} {figures['step_accuracy']:>14.3f} {figures['session_success']:>16.3f}{fallbacks}"
			)
		for name, figures in report[split].items():
			print(f"  {name} success by fault: {figures['success_by_fault']}")


if __name__ == "__main__":
	main()
