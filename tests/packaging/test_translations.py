"""The German translation ships complete: every UI string of the chat, with its placeholders intact."""

from __future__ import annotations

import csv
import re
from pathlib import Path

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
	with (ROOT / "noviz_agent" / "translations" / "de.csv").open(newline="", encoding="utf-8") as handle:
		return {row[0]: row[1] for row in csv.reader(handle)}


def test_the_chat_has_ui_strings_to_translate():
	assert {"Send", "Confirm", "Show more", "Reading {0}…"} <= ui_strings()


def test_every_ui_string_has_a_german_translation():
	missing = sorted(ui_strings() - set(german()))
	assert missing == []


def test_translations_keep_their_placeholders_and_are_not_blank():
	for source, target in german().items():
		assert target.strip(), source
		assert sorted(re.findall(r"\{\d\}", source)) == sorted(re.findall(r"\{\d\}", target)), source
