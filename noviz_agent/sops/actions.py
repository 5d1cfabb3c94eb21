"""The action repository: every step of a procedure resolves to one of these.

Five kinds: a registry tool (an API call through the gateway), ask the person, tell the
person, search knowledge, end. Each action has a name, a description the matcher reads,
and its required parameters. Tool actions come from the tool registry; words people use
for each tool verb (look up → get) are data below, so matching reads like the procedure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ASK, TELL, SEARCH, END, TOOL = "ask", "tell", "search", "end", "tool"

# How procedures phrase each generated tool verb; read by the matcher, never by the model.
VERB_WORDS = {
	"get": "look up check open read fetch retrieve find details of one by its id number",
	"list": "list find search show all records matching",
	"count": "count how many number of",
	"create": "create make new add raise register record submit request enter file",
	"update": "update change edit modify amend set correct",
	"submit": "submit finalise finalize post confirm",
	"cancel": "cancel void withdraw revoke stop",
}


@dataclass(frozen=True)
class Action:
	"""One thing a step can do, with what the matcher compares a step against."""

	name: str
	kind: str
	description: str
	required: tuple[str, ...] = ()
	writes: bool = False
	entity: str | None = None
	verb: str | None = None
	words: str = ""
	parameters: dict = field(default_factory=dict, compare=False, hash=False)

	def match_text(self) -> str:
		"""Name, description and the verb's everyday words, as one text for similarity."""
		readable = self.name.replace(".", " ").replace("_", " ")
		return f"{readable}. {self.words} {self.description}".strip()


BUILTIN: tuple[Action, ...] = (
	Action(
		"person.ask",
		ASK,
		"Ask the person a question and wait for their answer (a number, an id, a date, a reason).",
		("question",),
		words="ask request enquire inquire question get from the customer employee supplier person for which "
		"what reason number id date",
	),
	Action(
		"person.tell",
		TELL,
		"Tell the person something: explain, inform, confirm, let them know, reply, say.",
		("message",),
		words="tell inform explain say let know notify reply confirm to the customer employee supplier person",
	),
	Action(
		"knowledge.search",
		SEARCH,
		"Search the organisation's process documents (knowledge base, policy, how a process works).",
		("query",),
		entity=None,
		words="search look up read consult knowledge base documents policy process guide how works",
	),
	Action(
		"procedure.end",
		END,
		"End the procedure here: stop, finish, done.",
		(),
		words="end stop finish done close the procedure conversation",
	),
)


@dataclass
class ActionRepository:
	"""The actions a procedure may use: the built-ins plus the tools of a registry."""

	actions: dict[str, Action] = field(default_factory=dict)

	@classmethod
	def from_registry(cls, registry, allowed: set[str] | frozenset[str] | None = None) -> ActionRepository:
		"""Built-ins first, then every registry tool (only `allowed` ones when given)."""
		repo = cls({a.name: a for a in BUILTIN})
		for tool in registry:
			if allowed is not None and tool.name not in allowed:
				continue
			if tool.name in repo.actions:
				continue  # knowledge.search is both a tool and a built-in; the built-in is the action
			verb = tool.action or tool.name.split(".", 1)[1]
			repo.actions[tool.name] = Action(
				name=tool.name,
				kind=TOOL,
				description=tool.description.split(". Also called")[0][:400],
				required=tuple(tool.parameters.get("required", ())),
				writes=tool.writes,
				entity=tool.entity or tool.name.split(".", 1)[0],
				verb=verb,
				words=VERB_WORDS.get(verb, ""),
				parameters=tool.parameters,
			)
		return repo

	def get(self, name: str) -> Action | None:
		return self.actions.get(name)

	def __contains__(self, name: object) -> bool:
		return name in self.actions

	def __iter__(self):
		return iter(self.actions.values())

	def __len__(self) -> int:
		return len(self.actions)
