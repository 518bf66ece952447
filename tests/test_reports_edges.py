"""Overview statistics gap found by the second mutation pass (QA s17e)."""

from __future__ import annotations

import pytest

from memaudit_core.package import parse_package
from memaudit_core.reports import package_stats


def test_weight_by_unit_kind_counts_weights_given_by_queries():
    """DESIGN section 2: a unit without a weight weighs the sum of the weights of the queries
    requiring it. u1 (fact, explicit 2), u2 (fact, from q1 weight 3), u3 (stale, from q1 and q2:
    3 + 0.5). Per kind: fact 2 units weighing 5, stale 1 unit weighing 3.5."""
    pkg = parse_package(
        {
            "memaudit": 1,
            "id": "p",
            "experiences": [{"id": "e1"}],
            "units": [
                {"id": "u1", "kind": "fact", "weight": 2},
                {"id": "u2", "kind": "fact"},
                {"id": "u3", "kind": "stale"},
            ],
            "queries": [
                {"id": "q1", "requires": ["u2", "u3"], "weight": 3},
                {"id": "q2", "requires": ["u3"], "weight": 0.5},
            ],
            "candidates": [
                {
                    "id": "c",
                    "experience": "e1",
                    "type": "atomic_fact",
                    "cost": 1,
                    "coverage": {"u1": 1},
                },
            ],
        }
    )
    by_kind = {k: (n, w) for k, n, w in package_stats(pkg).units_by_kind}
    assert by_kind["fact"] == (2, pytest.approx(5.0))
    assert by_kind["stale"] == (1, pytest.approx(3.5))
