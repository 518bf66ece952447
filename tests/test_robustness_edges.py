"""Robustness gaps found by the second mutation pass (QA s17e).

Oracles: the module notes of memaudit_core/robustness.py (budget rescaling, the coverage-noise
model) and hand calculations on packages small enough to check on paper.
"""

from __future__ import annotations

import numpy as np
import pytest

from memaudit_core import robustness as rb
from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.package import parse_package


def test_recost_package_rescales_budget_and_grid_to_the_same_fraction():
    """B' = B * total' / total. Stored costs 6 + 2 = 8; under "words" the texts cost 3 + 1 = 4,
    so every budget field halves: budget 4 -> 2, budgets [2, 4, 8] -> [1, 2, 4]."""
    pkg = parse_package(
        {
            "memaudit": 1,
            "id": "p",
            "budget": 4,
            "budgets": [2, 4, 8],
            "experiences": [{"id": "e1"}, {"id": "e2"}],
            "units": [{"id": "u1", "weight": 1}],
            "candidates": [
                {
                    "id": "a",
                    "experience": "e1",
                    "type": "raw_span",
                    "text": "one two three",
                    "cost": 6,
                    "coverage": {"u1": 1},
                },
                {
                    "id": "b",
                    "experience": "e2",
                    "type": "atomic_fact",
                    "text": "four",
                    "cost": 2,
                    "coverage": {},
                },
            ],
        }
    )
    out, recosted, kept = rb.recost_package(pkg, "words")
    assert (recosted, kept) == (2, 0)
    assert [c.cost for c in out.candidates] == [3.0, 1.0]
    assert out.budget == pytest.approx(2.0)
    assert out.budgets == pytest.approx((1.0, 2.0, 4.0))


def test_shrink_multiplies_each_cell_by_a_factor_between_one_half_and_one():
    """Noise model: shrink multiplies a picked cell "by a factor drawn from U(0.5, 1)". At
    level 1 every covered cell is picked, so each new value lies in [a/2, a] at the same
    place. (200 cells: a U(0, 1) factor would fall below 1/2 for some of them.)"""
    inst = compile_package(generate("event_graph", seed=1, n_experiences=40))
    orig = inst.coverage.toarray()
    assert inst.coverage.nnz >= 100
    for seed in range(3):
        noisy, changed = rb.perturb_coverage(inst, "shrink", 1.0, np.random.default_rng(seed))
        new = noisy.coverage.toarray()
        covered = orig > 0
        assert np.all(new[~covered] == 0)
        ratio = new[covered] / orig[covered]
        assert ratio.min() >= 0.5 - 1e-12 and ratio.max() <= 1.0 + 1e-12
        assert changed == int(np.count_nonzero(ratio != 1.0))


def test_flip_on_rows_that_cover_every_unit_can_only_drop():
    """Noise model: "A row that covers every unit can only drop." With one unit, every
    covered row is full: flip at level 1 picks every cell and must drop them all."""
    doc = {
        "memaudit": 1,
        "id": "one-unit",
        "experiences": [{"id": f"e{i}", "time": i} for i in range(12)],
        "units": [{"id": "u1", "weight": 1}],
        "candidates": [
            {
                "id": f"c{i}",
                "experience": f"e{i}",
                "type": "atomic_fact",
                "cost": 1,
                "coverage": {"u1": 0.5},
            }
            for i in range(12)
        ],
    }
    inst = compile_package(parse_package(doc))
    for seed in range(3):
        noisy, changed = rb.perturb_coverage(inst, "flip", 1.0, np.random.default_rng(seed))
        assert changed == 12
        assert noisy.coverage.nnz == 0
