"""The turn's hook into procedures: start one when a request fits, continue the one that is running.

`ProcedureDesk` is built by the frappe edge for one conversation (its procedures, its run
store, the conversation's name, which may not exist yet on a first turn). The turn calls it
with each message; it answers None when no procedure is involved, so the ordinary turn runs.
After the turn is recorded the edge calls `save(conversation)`; after a proposal is settled
it calls `settled(...)`, and the run goes on from the observation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from noviz_agent.engine import loop, provenance, responses
from noviz_agent.engine.gateway import ToolResult
from noviz_agent.engine.llm import Usage
from noviz_agent.sops import memory as mem
from noviz_agent.sops.actions import ActionRepository
from noviz_agent.sops.controllers import BaselineController, Controller, ModelController
from noviz_agent.sops.matching import Matcher, default_embedder
from noviz_agent.sops.memory import RunState, RunStore
from noviz_agent.sops.parser import ProcedureError
from noviz_agent.sops.procedures import (
	BASELINE_APPLIES_SCORE,
	Compiled,
	SopSpec,
	choose,
	compile_procedure,
	fit,
)
from noviz_agent.sops.runner import Output, Runner


@dataclass
class Handled:
	"""A turn answered by a procedure: the response and what the interaction log records."""

	response: dict
	log: dict
	state: RunState


@dataclass
class ProcedureDesk:
	"""Procedures for one conversation; `controller_for(provider)` picks the model or the baseline."""

	specs: list[SopSpec]
	store: RunStore
	conversation: str | None = None
	controller_for: Callable[[object], Controller] | None = None
	embedder: object = None
	# A matcher built once per worker over the same registry; built here from the session when absent.
	shared_matcher: Matcher | None = None
	state: RunState | None = field(default=None, init=False)
	_matcher: Matcher | None = field(default=None, init=False)
	_controllers: dict = field(default_factory=dict, init=False)

	def matcher(self, session) -> Matcher:
		if self._matcher is None and self.shared_matcher is not None:
			self._matcher = self.shared_matcher
		if self._matcher is None:
			# The whole registry: a step means the same action for everyone; the gateway refuses what is not granted.
			repository = ActionRepository.from_registry(session.registry)
			self._matcher = Matcher(
				repository, self.embedder if self.embedder is not None else default_embedder()
			)
		return self._matcher

	def _controller(self, provider) -> Controller:
		"""One controller per provider for the desk's life, so a turn's model calls add up in one place."""
		made = self._controllers.get(id(provider))
		if made is None:
			if self.controller_for is not None:
				made = self.controller_for(provider)
			else:
				made = ModelController(provider) if provider is not None else BaselineController()
			self._controllers[id(provider)] = made
		return made

	def _compiled(self, session, spec: SopSpec) -> Compiled | None:
		try:
			return compile_procedure(spec.procedure, self.matcher(session), title=spec.title, name=spec.name)
		except ProcedureError:
			return None  # an invalid procedure never runs; its form shows why

	def _runner(self, session, provider, compiled: Compiled, state: RunState | None = None) -> Runner:
		if state is not None:
			# What the run read in earlier turns is still in its memory: untrusted in this turn too.
			provenance.seed(session.untrusted, state.untrusted)
		controller = self._controller(provider)
		return Runner(
			compiled.procedure,
			compiled.actions,
			self.matcher(session).repository,
			controller,
			session,
			sop=compiled.name,
		)

	def _fresh_usage(self, provider) -> None:
		"""Each turn's log counts that turn's model calls only."""
		controller = self._controller(provider)
		if hasattr(controller, "usage"):
			controller.usage = Usage()

	def __call__(self, session, provider, message: str) -> Handled | None:
		started = time.perf_counter()
		self._fresh_usage(provider)
		state = self.store.load(self.conversation) if self.conversation else None
		if state is not None and state.open:
			spec = next((s for s in self.specs if s.name == state.sop), None)
			compiled = self._compiled(session, spec) if spec else None
			if compiled is None:
				state.status = mem.ENDED  # the procedure was removed or broken since the run began
				self.state = state
				return None
			runner = self._runner(session, provider, compiled, state)
			return self._handled(session, runner.resume(state, message), message, started, runner.controller)
		spec = self._pick(session, provider, message)
		compiled = self._compiled(session, spec) if spec else None
		if compiled is None:
			return None
		runner = self._runner(session, provider, compiled)
		return self._handled(
			session, runner.start(message, compiled.match_log()), message, started, runner.controller
		)

	def _pick(self, session, provider, message: str) -> SopSpec | None:
		weights = self.matcher(session).idf
		spec = choose(message, self.specs, session.person.roles, weights)
		if spec is None:
			return None
		controller = self._controller(provider)
		if isinstance(controller, BaselineController):
			return spec if fit(message, spec, weights) >= BASELINE_APPLIES_SCORE else None
		applies = getattr(controller, "applies", None)
		return spec if applies is None or applies(message, spec) else None

	def settled(self, session, provider, token: str, confirmed: bool, result: ToolResult) -> Handled | None:
		"""Continue the run that waited on this proposal; None when no run waited on it."""
		started = time.perf_counter()
		self._fresh_usage(provider)
		state = self.store.load(self.conversation) if self.conversation else None
		if state is None or state.status != mem.AWAITING_CONFIRMATION or state.pending_token != token:
			return None
		spec = next((s for s in self.specs if s.name == state.sop), None)
		compiled = self._compiled(session, spec) if spec else None
		if compiled is None:
			return None
		runner = self._runner(session, provider, compiled, state)
		return self._handled(
			session, runner.settled(state, confirmed, result), "", started, runner.controller
		)

	def _handled(self, session, out: Output, message: str, started: float, controller=None) -> Handled:
		self.state = out.state
		provenance.seed(out.state.untrusted, session.untrusted)
		response = responses.build(
			out.text, out.results, question=message, entities=session.registry.vocabulary.entities
		)
		log = {
			"tools_called": loop.tool_calls_for_log(out.results),
			"modules": ["procedures"],
			"procedure": {
				"sop": out.state.sop,
				"status": out.state.status,
				"position": out.state.position,
				"events": out.log,
			},
			"latency_ms": round((time.perf_counter() - started) * 1000, 1),
		}
		usage = getattr(controller, "usage", None)
		if usage is not None:
			log.update(
				prompt_tokens=usage.prompt_tokens,
				cached_tokens=usage.cached_tokens,
				completion_tokens=usage.completion_tokens,
				model=getattr(controller, "model", ""),
			)
		if out.state.status == mem.ENDED:
			log["error"] = "; ".join(out.log[-2:]) or "procedure ended"
		return Handled(response, log, out.state)

	def save(self, conversation: str | None = None) -> None:
		"""Store the run this desk touched, under the conversation (named once the turn is recorded)."""
		conversation = conversation or self.conversation
		if self.state is not None and conversation:
			self.store.save(conversation, self.state)
			self.conversation = conversation
