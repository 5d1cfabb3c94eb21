"""The German translation ships complete: every UI string of the chat, with its placeholders intact."""

from __future__ import annotations

import re
from pathlib import Path

from babel.messages.pofile import read_po

from noviz_agent.engine import progress

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "noviz_agent" / "public" / "js"
# __("..."), t("...") and the conversation actions' act("...") calls; only literal strings are UI text.
CALL = re.compile(r"\b(?:__|t|act)\(\s*\"((?:[^\"\\]|\\.)*)\"")
PINS = ("Pin {0}", "Unpin {0}")


def ui_strings() -> set[str]:
	found = set(PINS)
	for path in JS.rglob("*.js"):
		found.update(CALL.findall(path.read_text(encoding="utf-8")))
	found.update(progress.ENTITY_ACTIONS.values())
	found.update(progress.FIXED.values())
	found.update({progress.THINKING, progress.GENERIC, "Computing {0}…"})
	return found


def german() -> dict[str, str]:
	"""The German catalogue in the gettext form Frappe 15 and 16 both read (`<app>/locale/de.po`)."""
	with (ROOT / "noviz_agent" / "locale" / "de.po").open("rb") as handle:
		catalog = read_po(handle)
	return {m.id: m.string for m in catalog if m.id}


def test_the_chat_has_ui_strings_to_translate():
	assert {"Send", "Confirm", "Show more", "Reading {0}…"} <= ui_strings()


def test_every_ui_string_has_a_german_translation():
	missing = sorted(ui_strings() - set(german()))
	assert missing == []


def test_translations_keep_their_placeholders_and_are_not_blank():
	for source, target in german().items():
		assert target.strip(), source
		assert sorted(re.findall(r"\{\d\}", source)) == sorted(re.findall(r"\{\d\}", target)), source


def test_no_second_catalogue_in_the_older_csv_form():
	assert not (ROOT / "noviz_agent" / "translations").exists(), "one catalogue: locale/de.po"
