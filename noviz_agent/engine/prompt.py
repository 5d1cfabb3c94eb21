"""The layered system prompt: stable text first, the person last, so providers cache the prefix.

Order is fixed: the core (what the agent is and is not), the matched modules' sections in
the canonical module order, the rule blocks of offered tools not yet sent in this
conversation, the organisation's policy from Agent Settings, and the session block. All
text lives in files under `prompts/` and is rendered with strict placeholders: a template
naming a variable that is not given is an error, never an empty string.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

PROMPTS_DIR = Path(__file__).parent / "prompts"
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
MAX_ROLES_SHOWN = 12


class PromptTemplateError(KeyError):
	"""A template names a variable that was not given (or a prompt file is missing)."""

	def __str__(self) -> str:
		return str(self.args[0]) if self.args else "prompt template error"


@dataclass(frozen=True)
class Prompt:
	"""The assembled system prompt and its layers (name, text), in order."""

	system: str
	layers: list[tuple[str, str]]
	rules_sent_now: set[str] = field(default_factory=set)

	def layer_names(self) -> list[str]:
		return [name for name, _ in self.layers]


def render(template: str, where: str = "template", **values) -> str:
	"""Fill `{{ name }}` placeholders; a placeholder without a value raises PromptTemplateError."""

	def fill(match: re.Match) -> str:
		name = match.group(1)
		if name not in values:
			raise PromptTemplateError(f"{where}: no value for placeholder '{{{{ {name} }}}}'")
		return str(values[name])

	return _PLACEHOLDER.sub(fill, template)


@functools.lru_cache(maxsize=256)
def read_prompt(relative: str) -> str | None:
	"""A prompt file's text (trailing whitespace trimmed), or None when there is none."""
	path = PROMPTS_DIR / relative
	if not path.is_file():
		return None
	return path.read_text(encoding="utf-8").strip()


def render_file(relative: str, **values) -> str:
	text = read_prompt(relative)
	if text is None:
		raise PromptTemplateError(f"no prompt file {relative} under {PROMPTS_DIR}")
	return render(text, relative, **values)


def module_section(module: str) -> str | None:
	text = read_prompt(f"modules/{module}.md")
	return render(text, f"modules/{module}.md") if text is not None else None


def rule_text(tool) -> str | None:
	"""A tool's rule block: its own `prompt_rules`, else a file `rules/<tool name>.md`."""
	if tool.prompt_rules and tool.prompt_rules.strip():
		return tool.prompt_rules.strip()
	return read_prompt(f"rules/{tool.name}.md")


def _digest(text: str) -> str:
	return "#" + hashlib.sha256(text.encode()).hexdigest()[:12]


def rule_blocks(registry, tools, rules_sent) -> tuple[list[str], set[str]]:
	"""Rule blocks of offered tools not sent before; identical blocks shared by tools go once.

	`rules_sent` holds tool names and block digests ("#…") from earlier turns of the conversation.
	"""
	blocks: list[str] = []
	sent_now: set[str] = set()
	for name in tools:
		tool = registry.get(name)
		if tool is None or name in rules_sent:
			continue
		text = rule_text(tool)
		if not text:
			continue
		key = _digest(text)
		sent_now.add(name)
		if key in rules_sent or key in sent_now:
			continue
		sent_now.add(key)
		blocks.append(f"### {name}\n{text}")
	return blocks, sent_now


def session_block(person, today: date, company: str | None) -> str:
	roles = sorted(person.roles)
	shown = ", ".join(roles[:MAX_ROLES_SHOWN]) or "(none)"
	if len(roles) > MAX_ROLES_SHOWN:
		shown += f" and {len(roles) - MAX_ROLES_SHOWN} more"
	return render_file(
		"session.md",
		user=person.user,
		full_name=person.full_name or person.user,
		roles=shown,
		date=today.isoformat(),
		weekday=today.strftime("%A"),
		company=company or person.company or "(not set)",
		language=person.language or "en",
	)


def assemble(
	session,
	selection,
	*,
	policy_text: str = "",
	rules_sent: frozenset[str] | set[str] = frozenset(),
	today: date,
	company: str | None = None,
) -> Prompt:
	"""The system prompt for one request, in the fixed cache-friendly order."""
	layers: list[tuple[str, str]] = [("core", render_file("core.md"))]
	for module in selection.modules:
		text = module_section(module)
		if text:
			layers.append((f"module:{module}", text))
	blocks, sent_now = rule_blocks(session.registry, selection.tools, rules_sent)
	if blocks:
		layers.append(("rules", render_file("rules.md", blocks="\n\n".join(blocks))))
	if policy_text and policy_text.strip():
		layers.append(("policy", render_file("policy.md", policy=policy_text.strip())))
	layers.append(("session", session_block(session.person, today, company)))
	system = "\n\n".join(text for _, text in layers)
	return Prompt(system=system, layers=layers, rules_sent_now=sent_now)
