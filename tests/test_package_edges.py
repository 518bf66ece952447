"""Validation and cost-rule gaps found by the second mutation pass (QA s17e)."""

from __future__ import annotations

import pytest

from memaudit_core.costs import undercounted_by_words
from memaudit_core.errors import PackageError
from memaudit_core.package import parse_package


def _doc(**extra):
    doc = {
        "memaudit": 1,
        "id": "p",
        "experiences": [{"id": "e1"}],
        "units": [{"id": "u1", "weight": 1}],
        "candidates": [
            {"id": "c", "experience": "e1", "type": "atomic_fact", "cost": 1, "coverage": {"u1": 1}}
        ],
    }
    doc.update(extra)
    return doc


def test_a_negative_budget_in_the_budget_grid_is_rejected_by_path():
    """A budget is a number >= 0; the grid's entries are budgets (rule budget-range, as for
    the single ``budget`` field). Nothing is dropped or clamped silently."""
    with pytest.raises(PackageError) as info:
        parse_package(_doc(budgets=[2, -1, 4]))
    assert ("$.budgets[1]", "budget-range") in {(p.path, p.rule) for p in info.value.problems}
    assert parse_package(_doc(budgets=[0, 2])).budgets == (0.0, 2.0)


def test_words_undercount_flag_at_exactly_one_fifth():
    """costs.undercounted_by_words: "at least a fifth of its non-space characters are in a
    script written without spaces". "abcd我": 1 of 5 -> exactly a fifth -> flagged;
    "abcde我": 1 of 6 -> not."""
    assert undercounted_by_words("abcd我") is True
    assert undercounted_by_words("ab cd 我") is True
    assert undercounted_by_words("abcde我") is False
