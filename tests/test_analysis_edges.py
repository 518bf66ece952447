"""Analysis gaps found by the second mutation pass (QA s17e).

Oracle: the recency rule written in ``analysis.score``'s notes ("package candidates by
experience time, then cost, then id; each item kept when it still fits"), applied by hand.
"""

from __future__ import annotations

import pytest

from memaudit_core.analysis import score
from memaudit_core.package import parse_package


def test_recency_pruning_takes_the_cheaper_of_two_equally_recent_candidates():
    """e1 and e2 share time 5. The store selects e1:big (cost 2) and e2:small (cost 1); B = 2.
    Newest first, then cheaper: e2:small (spent 1), then e1:big does not fit (1 + 2 > 2).
    Kept {e2:small}: F = 1 (u2). Taking e1:big first would keep it alone, worth 3 (u1)."""
    pkg = parse_package(
        {
            "memaudit": 1,
            "id": "p",
            "experiences": [{"id": "e1", "time": 5}, {"id": "e2", "time": 5}],
            "units": [{"id": "u1", "weight": 3}, {"id": "u2", "weight": 1}],
            "candidates": [
                {
                    "id": "e1:big",
                    "experience": "e1",
                    "type": "raw_span",
                    "cost": 2,
                    "coverage": {"u1": 1},
                },
                {
                    "id": "e2:small",
                    "experience": "e2",
                    "type": "atomic_fact",
                    "cost": 1,
                    "coverage": {"u2": 1},
                },
            ],
            "stores": [{"id": "s", "select": ["e1:big", "e2:small"]}],
        }
    )
    ev = score(pkg, 2, store_id="s")
    assert ev.over_budget and ev.pruned == "recency"
    assert ev.selected == ("e2:small",)
    assert ev.dropped == ("e1:big",)
    assert ev.value == pytest.approx(1.0)


def test_library_mistakes_are_user_errors():
    """Library QA: these escaped as TypeError / pickling errors or passed without a word."""
    import pickle

    from memaudit_core.analysis import ablation_method, sweep
    from memaudit_core.costs import cost_of
    from memaudit_core.errors import EmptyTextError, MemAuditError, UnknownNameError
    from memaudit_core.generators import generate
    from memaudit_core.saturations import SATURATIONS, get_saturation

    for name, saturation in SATURATIONS.items():
        assert pickle.loads(pickle.dumps(saturation)).name == name
    with pytest.raises(UnknownNameError):
        get_saturation(["cap1"])
    with pytest.raises(UnknownNameError):
        ablation_method(["generic"])
    with pytest.raises(EmptyTextError, match="must be a string, got int"):
        cost_of(5)
    with pytest.raises(MemAuditError, match="no budgets given"):
        sweep([generate("update_chain")], [], ["gvt"])
