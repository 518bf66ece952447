"""CLI list-parsing gaps found by the second mutation pass (QA s17e)."""

from __future__ import annotations

from memaudit_core.specs import parse_seeds


def test_a_one_seed_range_is_that_seed():
    """``A-B`` with A <= B (the error says "write A-B with A <= B"): 3-3 is seed 3."""
    assert parse_seeds("3-3") == [3]
    assert parse_seeds("0-0,5") == [0, 5]
