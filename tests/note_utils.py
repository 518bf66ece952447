"""Importer notes in tests: their message without the JSON path and rule in front and behind
(session 53: every note reads ``JSON-PATH: message (rule: RULE)``), for tests that check the
wording; tests/test_s53_importnotes.py checks the paths and rules."""

from __future__ import annotations

from collections.abc import Iterable

from memaudit_core.package import warning_parts


def message(warning: str) -> str:
    """A note's message (its whole text when it has no path and rule)."""
    parts = warning_parts(warning)
    return warning if parts is None else parts["message"]


def messages(warnings: Iterable[str]) -> list[str]:
    return [message(w) for w in warnings]


def unruled(warning: str) -> str:
    """A note as ``PATH: message``: its text without the rule at its end (a note whose message
    began with its path reads as before)."""
    parts = warning_parts(warning)
    return warning if parts is None else f"{parts['path']}: {parts['message']}"
