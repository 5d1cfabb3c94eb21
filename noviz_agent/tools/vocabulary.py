"""The vocabulary handed to the engine with the registry: the canonical model's words for its entities.

The engine never imports the model: routing, similarity, tool search and rendering read these
words from `registry.vocabulary`, which the registry's builder (`tools.build_registry`) fills here
from this site's entity maps and the maps of the other systems the agent can reach.
"""

from __future__ import annotations

from noviz_agent.connectors.model import load_model
from noviz_agent.connectors.systems import KNOWN, system_model
from noviz_agent.engine.tools import EntityWords, Vocabulary


def entity_words() -> list[EntityWords]:
	"""What people call each entity of this site and of the other known systems."""
	entities = [*load_model(), *(ent for system in KNOWN for ent in system_model(system))]
	return [EntityWords(e.key, e.module, e.label, tuple(e.synonyms), e.description) for e in entities]


def vocabulary() -> Vocabulary:
	"""Words of every entity (routing) and this site's entities by key (tables, cards, desk links)."""
	return Vocabulary(words=tuple(entity_words()), entities=dict(load_model().entities))
