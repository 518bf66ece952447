"""Evidence-explorer gaps found by the second mutation pass (QA s17e): the focus unit picked
by default, the order of the focus unit's candidates, and the timeline rows of the package's
other stores. Expected values are worked out by hand from the rules in explain.py's
docstrings and analysis.score's recency pruning."""

from __future__ import annotations

from memaudit_core.explain import evidence_view
from memaudit_core.package import parse_package


def _pkg(units, candidates, stores, times):
    return parse_package(
        {
            "memaudit": 1,
            "id": "p",
            "experiences": [{"id": e, "time": t} for e, t in times.items()],
            "units": [{"id": u, "kind": "fact", "weight": w} for u, w in units.items()],
            "candidates": [
                {
                    "id": cid,
                    "experience": e,
                    "type": typ,
                    "cost": cost,
                    "coverage": cov,
                    "text": cid,
                }
                for cid, e, typ, cost, cov in candidates
            ],
            "stores": stores,
        }
    )


PKG = _pkg(
    {"u1": 3, "u2": 1},
    [
        ("e1:big", "e1", "raw_span", 2, {"u1": 1.0}),
        ("e1:fact", "e1", "atomic_fact", 1, {"u1": 1.0}),
        ("e2:small", "e2", "atomic_fact", 1, {"u2": 1.0}),
    ],
    [{"id": "s", "label": "Store S", "select": ["e1:big", "e2:small"]}],
    {"e1": 5, "e2": 5},
)


def test_focus_candidates_are_ordered_by_coverage_then_cost_then_id():
    """u1 is covered at 1.0 by e1:big (cost 2) and e1:fact (cost 1): cheaper first."""
    view = evidence_view(PKG, 2, writer="gvt", focus_unit_id="u1")
    assert [c.candidate_id for c in view.focus_candidates] == ["e1:fact", "e1:big"]


def test_timeline_shows_other_stores_as_kept_at_the_budget():
    """Store S selects e1:big (cost 2) and e2:small (cost 1); B = 2. Recency pruning (same
    time 5, then cheaper): e2:small kept (1), e1:big no longer fits (1 + 2 > 2). The timeline
    row of S holds what S keeps at this budget, e2:small, and e1:big marked as cut (QA s49)."""
    view = evidence_view(PKG, 2, writer="gvt")
    assert "Store S" in view.timeline.rows
    row = [p for p in view.timeline.points if p.row == "Store S"]
    assert sorted(p.candidate_id for p in row if not p.cut) == ["e2:small"]
    assert sorted(p.candidate_id for p in row if p.cut) == ["e1:big"]


def test_default_focus_is_the_first_of_equally_large_losses():
    """An empty store against OPT at B = 2 (both cost-1 candidates): u1 and u2 each lose 1.
    The default focus is the filtered unit with the largest loss, the first one on a tie."""
    pkg = _pkg(
        {"u1": 1, "u2": 1},
        [
            ("e1:a", "e1", "atomic_fact", 1, {"u1": 1.0}),
            ("e2:a", "e2", "atomic_fact", 1, {"u2": 1.0}),
        ],
        [{"id": "empty", "select": []}],
        {"e1": 0, "e2": 1},
    )
    view = evidence_view(pkg, 2, store_id="empty")
    assert [(u.unit_id, u.lost) for u in view.units] == [("u1", 1.0), ("u2", 1.0)]
    assert view.focus_unit_id == "u1"


def test_the_heatmap_row_cap_keeps_focus_rows_then_members_then_arrival_order(monkeypatch):
    """Past the row cap: rows covering the focus unit first, then the store's and the
    optimum's, then arrival order (the note says so; the second mutation pass found no test).
    The expected rows come from the package's own dicts."""
    from memaudit_core import explain
    from memaudit_core.generators import generate

    pkg = generate("update_chain")
    full = explain.evidence_view(pkg, 6, writer="gvt", focus_unit_id="v_3")
    cap = 5
    monkeypatch.setattr(explain, "HEATMAP_MAX_ROWS", cap)
    capped = explain.evidence_view(pkg, 6, writer="gvt", focus_unit_id="v_3")

    time_of = {e.id: (e.time, e.id) for e in pkg.experiences}
    arrival = [
        c.id for c in sorted(pkg.candidates, key=lambda c: (time_of[c.experience], c.cost, c.id))
    ]
    assert list(full.heatmap.row_ids) == arrival  # every row, in arrival order, below the cap
    members = {
        rid
        for rid, s, o in zip(
            full.heatmap.row_ids, full.heatmap.row_in_store, full.heatmap.row_in_opt, strict=True
        )
        if s or o
    }
    by_id = {c.id: c for c in pkg.candidates}

    def priority(cid: str) -> tuple[int, int]:
        on_focus = by_id[cid].coverage.get("v_3", 0) > 0
        return (0 if on_focus else 1 if cid in members else 2, arrival.index(cid))

    expected = sorted(sorted(arrival, key=priority)[:cap], key=arrival.index)
    assert list(capped.heatmap.row_ids) == expected
    assert f"cap {cap}" in capped.heatmap.message and capped.heatmap.n_rows_total == len(arrival)
