"""Union-report gaps found by the second mutation pass (QA s17e).

The packages are small enough that every expected value is a hand calculation from
DESIGN.md section 2 (cap1 objective, union package P+, upper-pruned bound, extraction and
selection), written next to the assertion.
"""

from __future__ import annotations

import pytest

from memaudit_core.package import parse_package
from memaudit_core.union import suggestion_changes, union_report


def _package(memories: list[dict], units: dict[str, float] | None = None) -> object:
    units = units or {"u1": 2.0, "u2": 1.0}
    texts = {"u3": "alpha beta gamma delta"}
    return parse_package(
        {
            "memaudit": 1,
            "id": "p",
            "experiences": [{"id": "e1", "time": 0}],
            "units": [
                {"id": u, "weight": w, "text": texts.get(u, f"unit {u}")} for u, w in units.items()
            ],
            "candidates": [
                {
                    "id": "e1:fact",
                    "experience": "e1",
                    "type": "atomic_fact",
                    "text": "fact",
                    "cost": 1,
                    "coverage": {"u1": 1.0},
                }
            ],
            "stores": [{"id": "ext", "system": "mem0", "memories": memories}],
        }
    )


def test_salience_ties_are_broken_by_recency():
    """Salience pruning: "highest salience first (ties and missing: newest created_at first)".
    Two memories of equal salience 0.5, cost 1 each, budget 1: the newer one (m_new) is kept."""
    pkg = _package(
        [
            {
                "id": "m_old",
                "text": "old",
                "cost": 1,
                "coverage": {"u2": 1.0},
                "created_at": "2024-01-01T00:00:00+00:00",
                "salience": 0.5,
            },
            {
                "id": "m_new",
                "text": "new",
                "cost": 1,
                "coverage": {"u1": 0.5},
                "created_at": "2024-02-01T00:00:00+00:00",
                "salience": 0.5,
            },
        ]
    )
    rep = union_report(pkg, "ext", 1, keep="salience")
    assert rep.salience is not None
    assert rep.salience.kept == ("m_new",)
    assert rep.kept == ("m_new",)
    assert rep.value == pytest.approx(2.0 * 0.5)  # w(u1) * min(1, 0.5)


def test_a_store_costing_exactly_the_budget_is_not_over_budget():
    """Feasible means cost <= B (DESIGN section 2). A store of two cost-1 memories at B = 2
    fits: nothing is pruned and no note says it costs "more than the budget"."""
    pkg = _package(
        [
            {"id": "m1", "text": "a", "cost": 1, "coverage": {"u2": 1.0}},
            {"id": "m2", "text": "b", "cost": 1, "coverage": {"u1": 1.0}},
        ]
    )
    rep = union_report(pkg, "ext", 2)
    assert rep.over_budget is False
    assert rep.keep_rule == "all"
    assert rep.recency is None and rep.salience is None
    assert rep.kept == ("m1", "m2")
    assert rep.value == pytest.approx(3.0)  # 2 * 1 + 1 * 1
    assert not any("more than the budget" in n for n in rep.notes)


def test_the_loss_split_note_gives_extraction_times_one_minus_selection():
    """Units u1 (w 2), u2 (w 1); package candidate e1:fact (cost 1) covers u1. Store: m_new
    (cost 1, u2 at 1.0, newer) and m_old (cost 1, u1 at 0.8). B = 1, recency keeps m_new:
    F(Y') = 1. Upper-pruned bound = max(1, 2 * 0.8) = 1.6. OPT over P+ = 2 (e1:fact).
    extraction = 1.6 / 2 = 0.8, selection = 1 / 1.6 = 0.625, union ratio 0.5.
    Losses: extraction 1 - 0.8 = 0.2; selection 0.8 * (1 - 0.625) = 0.3 (not 0.375)."""
    pkg = _package(
        [
            {
                "id": "m_old",
                "text": "old",
                "cost": 1,
                "coverage": {"u1": 0.8},
                "created_at": "2024-01-01T00:00:00+00:00",
            },
            {
                "id": "m_new",
                "text": "new",
                "cost": 1,
                "coverage": {"u2": 1.0},
                "created_at": "2024-02-01T00:00:00+00:00",
            },
        ]
    )
    rep = union_report(pkg, "ext", 1)
    assert rep.kept == ("m_new",)
    assert rep.union_opt.value == pytest.approx(2.0)
    assert rep.upper.value == pytest.approx(1.6)
    assert rep.extraction == pytest.approx(0.8)
    assert rep.selection == pytest.approx(0.625)
    (note,) = [n for n in rep.notes if n.startswith("Union ratio")]
    assert "extraction loses 0.200" in note
    assert "selection 0.300 (extraction x (1 - selection))" in note
    assert "Mostly selection" in note


def test_confirming_suggestions_leaves_annotated_cells_alone():
    """suggestion_changes: "Cells that already hold a value are left alone", and a score
    ">= SUGGESTION_FULL_AT (0.75) -> full, else partial". m1 already has u1 at 0.5 (an
    annotator's decision); its text holds all of u1's tokens {unit, u1}, but that cell must not
    be overwritten. u2 {unit, u2}: 1 of 2 tokens -> 0.5 -> partial. u3 {alpha, beta, gamma,
    delta}: 3 of 4 -> exactly 0.75 -> full."""
    pkg = _package(
        [{"id": "m1", "text": "unit u1 alpha beta gamma", "cost": 2, "coverage": {"u1": 0.5}}],
        units={"u1": 2.0, "u2": 1.0, "u3": 1.0},
    )
    store = pkg.store("ext")
    changes = suggestion_changes(pkg, store, who="qa", when="2026-01-01T00:00:00+00:00")
    assert {(c.memory_id, c.unit_id, c.old, c.new) for c in changes} == {
        ("m1", "u2", 0.0, 0.5),
        ("m1", "u3", 0.0, 1.0),
    }


def test_a_union_curve_is_still_a_tuple_of_rows_and_refuses_nothing_to_score():
    """Library QA: code written for the tuple union_curve returned (==, isinstance, +,
    index, pickle) keeps working; an empty choice of stores is an error, not an empty curve."""
    import pickle
    from pathlib import Path

    from memaudit_core.errors import MemAuditError
    from memaudit_core.package import load_package
    from memaudit_core.union import union_curve

    samples = Path(__file__).resolve().parent.parent / "sample_packages"
    demo = load_package(samples / "external-stores-demo.json")
    curve = union_curve(demo, budgets=[6, 18])
    assert isinstance(curve, tuple) and curve == tuple(curve) and len(curve) == 6
    assert curve.index(curve[1]) == 1 and len(curve + curve) == 12
    again = pickle.loads(pickle.dumps(curve))
    assert again == curve and again.n_unproven == curve.n_unproven
    with pytest.raises(MemAuditError, match="no external store to score"):
        union_curve(demo, [])
    with pytest.raises(MemAuditError, match="expected a Package"):
        union_curve("external-stores-demo.json")
