"""Action matching: free-text steps resolve to one action with a score; unknown ones are reported by line."""

from __future__ import annotations

import pytest

from noviz_agent.sops import matching
from noviz_agent.sops.actions import ActionRepository
from noviz_agent.sops.examples import example_specs
from noviz_agent.sops.matching import Matcher
from noviz_agent.sops.procedures import choose, compile_procedure, validate
from noviz_agent.tools import build_registry


@pytest.fixture(scope="module")
def matcher():
	return Matcher(ActionRepository.from_registry(build_registry()))


@pytest.mark.parametrize(
	"step, action",
	[
		("Ask the customer for the sales order number.", "person.ask"),
		("Look up the sales order.", "sales_order.get"),
		("Cancel the sales order.", "sales_order.cancel"),
		("Let the customer know the order is cancelled.", "person.tell"),
		("Search the knowledge base for how returns work.", "knowledge.search"),
		("Create the leave application.", "leave_application.create"),
		("Look up the employee.", "employee.get"),
		("Stop here.", "procedure.end"),
		("End.", "procedure.end"),
	],
)
def test_steps_match_the_action_a_reader_expects(matcher, step, action):
	match = matcher.match(step)
	assert match is not None and match.action == action
	assert match.method == "lexical" and 0 < match.score <= 1
	assert match.runner_up and match.runner_up != action and match.runner_up_score <= match.score


def test_entity_words_prefer_the_exact_entity_over_a_longer_one(matcher):
	# "employee" alone fits employee.get better than employee_advance.get.
	ranked = matcher.scores("Look up the employee.")
	assert ranked[0][0].name == "employee.get" and ranked[0][1] > ranked[1][1]


def test_a_step_no_action_fits_does_not_match(matcher):
	assert matcher.match("Frobnicate the widget.") is None


def test_a_pin_wins_and_an_unknown_pin_does_not_match(matcher):
	assert matcher.match("Look up the order it came from", "purchase_order.get").method == "pinned"
	assert matcher.match("Look up the order", "purchase_order.fly") is None


def test_unknown_actions_are_reported_with_their_line_and_closest_actions(matcher):
	found = validate("Look up the sales order.\nIf it is open:\n\tFrobnicate the widget.\nEnd.\n", matcher)
	assert [p.line for p in found] == [3]
	assert "does not match any known action" in found[0].message and "closest:" in found[0].message
	pinned = validate("Look up the order. [sales_order.fly]\n", matcher)
	assert pinned[0].line == 1 and "'sales_order.fly' does not exist" in pinned[0].message


def test_bad_indentation_and_unknown_actions_are_reported_together(matcher):
	found = validate(
		"Look up the sales order.\n   Cancel the sales order.\nFrobnicate the widget.\n", matcher
	)
	assert [p.line for p in found] == [2, 3]
	assert "indented" in found[0].message and "does not match any known action" in found[1].message


def test_the_shipped_procedures_compile_and_keep_each_match(matcher):
	for spec in example_specs():
		compiled = compile_procedure(spec.procedure, matcher, title=spec.title)
		assert set(compiled.actions) == {line.number for line in compiled.procedure.steps()}
		assert all(entry["score"] >= matching.MIN_SCORE for entry in compiled.match_log().values())


class WordsEmbedder:
	"""Unit vectors over a tiny vocabulary: enough to see the embedding blended in."""

	name = "words"
	VOCAB = ("order", "cancel", "ask", "tell", "employee", "leave")

	def embed(self, texts):
		out = []
		for text in texts:
			vector = [1.0 if word in text.lower() else 0.0 for word in self.VOCAB]
			norm = sum(v * v for v in vector) ** 0.5 or 1.0
			out.append([v / norm for v in vector])
		return out


def test_an_embedder_is_blended_in_and_named_in_the_match():
	matcher = Matcher(ActionRepository.from_registry(build_registry()), WordsEmbedder())
	match = matcher.match("Cancel the sales order.")
	assert match.action == "sales_order.cancel" and match.method == "lexical+words"


def test_without_a_builtin_embedder_matching_falls_back_to_lexical(monkeypatch):
	import knowledge.embedding as embedding

	monkeypatch.delattr(embedding, "builtin_embedder", raising=False)
	assert matching.default_embedder() is None


def test_a_broken_builtin_embedder_does_not_stop_matching(monkeypatch):
	import knowledge.embedding as embedding

	def broken():
		raise OSError("model file missing")

	monkeypatch.setattr(embedding, "builtin_embedder", broken, raising=False)
	assert matching.default_embedder() is None


@pytest.mark.parametrize(
	"request_text, title",
	[
		("A customer wants to cancel their order", "Cancel a customer order"),
		("Please cancel sales order SAL-ORD-2026-00003 for the customer", "Cancel a customer order"),
		(
			"The supplier invoice doesn't match the purchase order",
			"Supplier invoice does not match its order",
		),
		("An employee requests leave", "Employee leave request"),
		("top customers by revenue", None),
		("show me overdue invoices", None),
	],
)
def test_requests_choose_the_procedure_they_describe_or_none(matcher, request_text, title):
	chosen = choose(request_text, example_specs(), roles=set(), weights=matcher.idf)
	assert (chosen.title if chosen else None) == title


def test_a_procedure_for_other_roles_is_never_chosen(matcher):
	from dataclasses import replace

	specs = [replace(s, roles=("HR Manager",)) for s in example_specs()]
	assert choose("An employee requests leave", specs, roles={"Sales User"}, weights=matcher.idf) is None
	assert choose("An employee requests leave", specs, roles={"HR Manager"}, weights=matcher.idf) is not None


@pytest.mark.attack("secrets")
def test_the_main_key_is_never_lent_to_another_hosts_embedding_model():
	values = {
		"base_url": "https://api.example.com/v1",
		"api_key": "sk-main-secret",
		"embedding_model": "text-embedding-3-small",
		"embedding_base_url": "https://embed.other.example/v1",
	}
	embedder, choice = matching.settings_embedder(values, builtin=lambda: None)
	assert embedder.base_url == "https://embed.other.example/v1"
	assert embedder._client.api_key != "sk-main-secret"
	assert "sk-main-secret" not in choice


def test_two_sites_with_different_embedding_settings_get_different_matchers():
	one = {
		"embedding_model": "m",
		"embedding_base_url": "http://127.0.0.1:9/v1",
		"embedding_api_key": "a-key-001",
	}
	two = {**one, "embedding_api_key": "b-key-002"}
	_, first = matching.settings_embedder(one, builtin=lambda: None)
	_, second = matching.settings_embedder(two, builtin=lambda: None)
	assert first != second and "a-key-001" not in first
	builtin = object()
	assert matching.settings_embedder(one, builtin=lambda: builtin) == (builtin, "builtin")
