"""Matching a free-text step to one action, by similarity over action names and descriptions.

Lexical similarity always runs: stemmed words weighted by rarity across the actions, with
the step's leading verb and earlier words counting more (procedures are imperative: "Cancel
the sales order" is about cancelling a sales order). When the built-in local embedder is
installed (`knowledge.embedding.builtin_embedder`), or another embedder is passed in, the
cosine of unit vectors is blended in. The match keeps its score, the method and the runner-up.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass

from rapidfuzz import fuzz

from knowledge.embedding import stem, tokens
from noviz_agent.sops.actions import Action, ActionRepository

# Below this a step matches no action: validation reports it as unknown.
MIN_SCORE = 0.3
NAME_WEIGHT = 0.65
VERB_BONUS = 2.5
POSITION_DECAY = 0.25


@dataclass(frozen=True)
class Match:
	"""The action a step resolved to, how sure the matcher was, and the next best action."""

	action: str
	score: float
	method: str
	runner_up: str | None = None
	runner_up_score: float = 0.0

	def to_dict(self) -> dict:
		return {
			"action": self.action,
			"score": round(self.score, 3),
			"method": self.method,
			"runner_up": self.runner_up,
			"runner_up_score": round(self.runner_up_score, 3),
		}


def default_embedder():
	"""The built-in local embedder when the installed knowledge package has one; else None."""
	try:
		from knowledge.embedding import builtin_embedder
	except ImportError:
		return None
	try:
		return builtin_embedder()
	except Exception:  # a missing model file must not stop procedures: lexical still matches
		return None


def settings_embedder(values: dict, *, builtin=default_embedder) -> tuple[object | None, str]:
	"""The embedder procedures use with these Agent Settings values, and what it depends on.

	The built-in local embedder when installed (the same everywhere); else the embedding model of
	the settings, reached with the key the rules lend it - the main provider's key only for the
	main provider's own URL, never for another host (`validation.embedding_endpoint`); else None
	(lexical matching only). The second value names the choice without any key, so a matcher
	built for one site's settings is never used for another's.
	"""
	made = builtin()
	if made is not None:
		return made, "builtin"
	model = (values.get("embedding_model") or "").strip()
	if not model:
		return None, "lexical"
	from knowledge.embedding import OpenAIEmbedder
	from noviz_agent.validation import embedding_endpoint

	url, key = embedding_endpoint(values)
	fingerprint = "|".join((model, url or "", hashlib.sha256((key or "").encode()).hexdigest()[:12]))
	try:
		return OpenAIEmbedder(model, base_url=url, api_key=key), fingerprint
	except Exception:  # a misconfigured provider leaves lexical matching, never an error
		return None, "lexical"


def _stems(text: str) -> list[str]:
	return [stem(word) for word in tokens(text)]


class Matcher:
	"""Scores steps against every action of a repository; build once per repository."""

	def __init__(self, repository: ActionRepository, embedder=None):
		self.repository = repository
		self.actions: list[Action] = list(repository)
		self.embedder = embedder
		self._names = [
			set(_stems(f"{a.name.replace('.', ' ').replace('_', ' ')} {a.words}")) for a in self.actions
		]
		self._texts = [set(_stems(a.description)) for a in self.actions]
		self._verbs = [set(_stems(a.words)) for a in self.actions]
		# The words of a tool's entity: a step naming only part of them ("employee") fits
		# `employee.get` better than `employee_advance.get`.
		self._entities = [set(_stems((a.entity or "").replace("_", " "))) for a in self.actions]
		df = Counter(
			word for name, text in zip(self._names, self._texts, strict=True) for word in name | text
		)
		total = len(self.actions)
		self._idf = {word: math.log(1 + total / count) for word, count in df.items()}
		self._vectors = None
		if embedder is not None:
			try:
				self._vectors = embedder.embed([a.match_text() for a in self.actions])
			except Exception:
				self.embedder, self._vectors = None, None

	def _lexical(self, words: list[str]) -> list[float]:
		if not words:
			return [0.0] * len(self.actions)
		weights = []
		for index, word in enumerate(words):
			weight = self._idf.get(word, 0.0) / (1 + POSITION_DECAY * index)
			weights.append(weight)
		total = sum(weights) or 1.0
		first = words[0]
		scores = []
		present = set(words)
		for name, text, verbs, entity in zip(
			self._names, self._texts, self._verbs, self._entities, strict=True
		):
			in_name = sum(w for word, w in zip(words, weights, strict=True) if word in name)
			in_text = sum(w for word, w in zip(words, weights, strict=True) if word in text or word in name)
			score = NAME_WEIGHT * in_name / total + (1 - NAME_WEIGHT) * in_text / total
			if first in verbs:
				score += VERB_BONUS * weights[0] / total * 0.1
			if entity:
				score *= 0.7 + 0.3 * len(entity & present) / len(entity)
			scores.append(min(score, 1.0))
		return scores

	def scores(self, step: str) -> list[tuple[Action, float]]:
		"""Every action with its similarity to the step, best first."""
		words = _stems(step)
		lexical = self._lexical(words)
		if self._vectors is not None:
			try:
				query = self.embedder.embed([step])[0]
				cosine = [sum(a * b for a, b in zip(query, v, strict=False)) for v in self._vectors]
				combined = [0.5 * lex + 0.5 * max(cos, 0.0) for lex, cos in zip(lexical, cosine, strict=True)]
			except Exception:
				combined = lexical
		else:
			combined = lexical
		ranked = sorted(
			zip(self.actions, combined, strict=True),
			key=lambda pair: (-pair[1], -fuzz.token_set_ratio(step.lower(), pair[0].name.replace("_", " "))),
		)
		return ranked

	@property
	def idf(self) -> dict[str, float]:
		"""How rare each word stem is across the actions (generic business words weigh little)."""
		return dict(self._idf)

	@property
	def method(self) -> str:
		return (
			f"lexical+{getattr(self.embedder, 'name', 'embedding')}"
			if self._vectors is not None
			else "lexical"
		)

	def match(self, step: str, pin: str | None = None) -> Match | None:
		"""The action for a step; a pinned action wins when it exists; None when nothing is close enough."""
		if pin:
			if pin in self.repository:
				return Match(pin, 1.0, "pinned")
			return None
		ranked = self.scores(step)
		if not ranked or ranked[0][1] < MIN_SCORE:
			return None
		best, score = ranked[0]
		runner, runner_score = ranked[1] if len(ranked) > 1 else (None, 0.0)
		return Match(best.name, score, self.method, runner.name if runner else None, runner_score)

	def closest(self, step: str, n: int = 3) -> list[tuple[str, float]]:
		return [(a.name, round(s, 2)) for a, s in self.scores(step)[:n]]
