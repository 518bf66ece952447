"""CLI list-parsing gaps found by the second mutation pass (QA s17e)."""

from __future__ import annotations

import pytest

from memaudit_core.specs import parse_seeds


def test_a_one_seed_range_is_that_seed():
    """``A-B`` with A <= B (the error says "write A-B with A <= B"): 3-3 is seed 3."""
    assert parse_seeds("3-3") == [3]
    assert parse_seeds("0-0,5") == [0, 5]


def test_ranges_keep_every_step_of_large_or_fine_grids_and_refuse_absurd_ones():
    """Library QA: 12-significant-digit rounding merged 1e15..1e15+10 into one budget, and a
    step of 1e-300 overflowed instead of being refused."""
    from memaudit_core.errors import MemAuditError
    from memaudit_core.grids import budget_range

    assert budget_range(1e15, 1e15 + 10, 1) == tuple(1e15 + i for i in range(11))
    assert budget_range(123456789012.5, 123456789013.5, 0.5) == (
        123456789012.5,
        123456789013.0,
        123456789013.5,
    )
    for start, stop, step in [(0, 1e308, 1e-300), (0, 1e300, 1)]:
        with pytest.raises(MemAuditError, match=r"about 1e\+\d+ budgets, more than"):
            budget_range(start, stop, step)
    with pytest.raises(MemAuditError, match="start must be a number"):
        budget_range("abc", 1, 1)
    with pytest.raises(MemAuditError, match="stop must be a number"):
        budget_range(1, True, 1)


def test_counts_of_any_size_read_as_a_power_of_ten():
    from memaudit_core.errors import count_text

    assert count_text(999_999_999_999) == "999,999,999,999"
    assert count_text(3 * 10**300) == "about 3e+300"
    assert count_text(10**400) == "about 1e+400"  # past a float (library QA: OverflowError)


def test_specs_refuse_what_they_cannot_read_as_user_errors():
    from memaudit_core.errors import MemAuditError
    from memaudit_core.specs import MAX_LIST_VALUES, parse_number_list, parse_params, parse_seeds

    with pytest.raises(MemAuditError, match="seeds, more than"):
        parse_seeds(f"0-{MAX_LIST_VALUES - 1},{MAX_LIST_VALUES}")
    assert parse_params("length=3") == {"length": "3"}  # one item, not its letters
    with pytest.raises(MemAuditError, match="key before '=' is empty"):
        parse_params(["=5"])
    with pytest.raises(MemAuditError, match="expected text"):
        parse_number_list(None)
    with pytest.raises(MemAuditError, match="expected text"):
        parse_seeds(5)
