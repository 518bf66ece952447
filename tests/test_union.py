"""Union scoring of external stores (memaudit_core.union) against an independent brute force.

The oracle below never touches compiled arrays, solvers or the union module: it enumerates
every store of the union package (at most one package candidate per experience, any subset of
the external memories, each its own group) from the package's plain dataclasses and computes F
in plain Python.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from oracles import BUILTIN_H

from memaudit_core.analysis import score
from memaudit_core.cli import main
from memaudit_core.errors import MemAuditError, PackageError, UnknownNameError
from memaudit_core.package import (
    Package,
    dumps_package,
    load_package,
    parse_package,
    replace_package,
)
from memaudit_core.union import (
    AnnotationChange,
    annotation_grid,
    apply_annotations,
    coverage_changes,
    parse_coverage,
    suggestion_changes,
    union_curve,
    union_report,
    with_store,
)

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "sample_packages" / "external-stores-demo.json"
TOL = 1e-9


# --------------------------------------------------------------------------- oracle


def _f(pkg: Package, rows: list[dict[str, float]]) -> float:
    """F of a store given as coverage rows (plain Python)."""
    weights = pkg.unit_weights()
    h = BUILTIN_H[pkg.saturation]
    z: dict[str, float] = {}
    for row in rows:
        for unit, a in row.items():
            z[unit] = z.get(unit, 0.0) + a
    return sum(weights[u] * h(v) for u, v in z.items())


def _live(store):
    return [m for m in store.memories if m.status != "deleted"]


def _subsets(items):
    for k in range(len(items) + 1):
        yield from itertools.combinations(items, k)


def brute_union(pkg: Package, store_id: str | None, budget: float, *, package=True, memories=True):
    """max F over feasible stores of package candidates (one per experience) + live memories."""
    groups = []
    if package:
        for e in pkg.experiences:
            groups.append([None] + [c for c in pkg.candidates if c.experience == e.id])
    mems = _live(pkg.store(store_id)) if (memories and store_id) else []
    best = 0.0
    limit = budget * (1 + 1e-9)
    for combo in itertools.product(*groups) if groups else [()]:
        chosen = [c for c in combo if c is not None]
        base_cost = sum(c.cost for c in chosen)
        if base_cost > limit:
            continue
        for sub in _subsets(mems):
            cost = base_cost + sum(m.cost for m in sub)
            if cost > limit:
                continue
            value = _f(pkg, [c.coverage for c in chosen] + [m.coverage for m in sub])
            best = max(best, value)
    return best


def recency_kept(store, budget: float) -> list[str]:
    """Newest created_at first (ties: later listed first), each kept if it still fits."""
    mems = _live(store)
    order = sorted(range(len(mems)), key=lambda j: (mems[j].created_at, j), reverse=True)
    kept, spent = [], 0.0
    for j in order:
        if spent + mems[j].cost <= budget * (1 + 1e-9):
            kept.append(mems[j].id)
            spent += mems[j].cost
    return kept


def _ratio(a: float, b: float) -> float | None:
    return None if b <= 1e-12 else a / b


def random_package(seed: int, saturation: str = "cap1") -> Package:
    rng = random.Random(seed)
    n_units = rng.randint(2, 4)
    units = [
        {"id": f"r{i}", "kind": "fact", "weight": rng.choice([0.5, 1, 2, 3])}
        for i in range(n_units)
    ]

    def cov():
        picks = rng.sample(range(n_units), rng.randint(0, min(2, n_units)))
        return {f"r{i}": rng.choice([0.5, 1.0, 0.3]) for i in picks}

    exps = [{"id": f"e{i}", "time": i} for i in range(rng.randint(2, 3))]
    cands = []
    for e in exps:
        for k in range(rng.randint(1, 2)):
            cands.append(
                {
                    "id": f"{e['id']}:c{k}",
                    "experience": e["id"],
                    "type": "atomic_fact",
                    "cost": rng.randint(1, 5),
                    "coverage": cov(),
                }
            )
    mems = []
    for j in range(rng.randint(1, 5)):
        m = {
            "id": f"m{j}",
            "cost": rng.randint(1, 5),
            "coverage": cov(),
            "created_at": f"2025-01-{rng.randint(1, 9):02d}T00:00:00",
            "salience": rng.random(),
        }
        status = rng.choice(["active", "active", "active", "superseded", "deleted"])
        if status != "active":
            m["status"] = status
        mems.append(m)
    return parse_package(
        {
            "memaudit": 1,
            "id": f"rand-{seed}",
            "objective": {"saturation": saturation},
            "experiences": exps,
            "units": units,
            "candidates": cands,
            "stores": [{"id": "ext", "system": "mem0", "memories": mems}],
        }
    )


# --------------------------------------------------------------------------- exactness


@pytest.mark.parametrize("seed", range(30))
def test_union_report_agrees_with_brute_force(seed: int) -> None:
    saturation = ["cap1", "linear", "log1p"][seed % 3]
    pkg = random_package(seed, saturation)
    store = pkg.store("ext")
    total = sum(m.cost for m in _live(store))
    for budget in sorted({0, 1, 3, 5, 8, total}):
        rep = union_report(pkg, "ext", budget)
        opt_plus = brute_union(pkg, "ext", budget)
        opt_p = brute_union(pkg, "ext", budget, memories=False)
        upper = brute_union(pkg, "ext", budget, package=False)
        kept = recency_kept(store, budget)
        value = _f(pkg, [m.coverage for m in _live(store) if m.id in kept])
        assert rep.union_opt_value == pytest.approx(opt_plus, abs=TOL)
        assert rep.package_opt_value == pytest.approx(opt_p, abs=TOL)
        assert rep.upper_value == pytest.approx(upper, abs=TOL)
        assert sorted(rep.kept) == sorted(kept)
        assert rep.value == pytest.approx(value, abs=TOL)
        for got, want in (
            (rep.union_ratio, _ratio(value, opt_plus)),
            (rep.package_ratio, _ratio(value, opt_p)),
            (rep.extraction, _ratio(upper, opt_plus)),
            (rep.selection, _ratio(value, upper)),
        ):
            if want is None:
                assert got is None
            else:
                assert got == pytest.approx(want, abs=1e-9)
        # The upper-pruned selection really is a budget-feasible subset of the store.
        costs = {m.id: m.cost for m in _live(store)}
        assert set(rep.upper.selected) <= set(costs)
        assert sum(costs[m] for m in rep.upper.selected) <= budget + 1e-9
        assert rep.value <= rep.upper_value + TOL <= rep.union_opt_value + 2 * TOL


def test_upper_pruned_is_exact_where_greedy_fails() -> None:
    # Cost-benefit greedy takes m0 (2 per unit of cost), then m1, and m3 no longer fits:
    # 3.5. The exact upper-pruned bound takes m3 alone: 5.0.
    pkg = parse_package(
        {
            "memaudit": 1,
            "id": "greedy-trap",
            "experiences": [{"id": "e1", "time": 0}],
            "units": [
                {"id": "a", "weight": 2},
                {"id": "b", "weight": 1.5},
                {"id": "c", "weight": 1.5},
            ],
            "candidates": [
                {
                    "id": "e1:x",
                    "experience": "e1",
                    "type": "raw_span",
                    "cost": 9,
                    "coverage": {"a": 1},
                }
            ],
            "stores": [
                {
                    "id": "ext",
                    "memories": [
                        {"id": "m0", "cost": 1, "coverage": {"a": 1}, "created_at": "2025-01-04"},
                        {"id": "m1", "cost": 2, "coverage": {"b": 1}, "created_at": "2025-01-03"},
                        {"id": "m2", "cost": 2, "coverage": {"c": 1}, "created_at": "2025-01-02"},
                        {
                            "id": "m3",
                            "cost": 4,
                            "coverage": {"a": 1, "b": 1, "c": 1},
                            "created_at": "2025-01-01",
                        },
                    ],
                }
            ],
        }
    )
    mems = _live(pkg.store("ext"))
    chosen, spent = [], 0.0
    while True:  # cost-benefit greedy, for contrast
        gains = [
            (
                (
                    _f(pkg, [x.coverage for x in chosen + [m]])
                    - _f(pkg, [x.coverage for x in chosen])
                )
                / m.cost,
                m,
            )
            for m in mems
            if m not in chosen and spent + m.cost <= 4
        ]
        gains = [g for g in gains if g[0] > 1e-12]
        if not gains:
            break
        best = max(gains, key=lambda g: g[0])[1]
        chosen.append(best)
        spent += best.cost
    assert _f(pkg, [m.coverage for m in chosen]) == pytest.approx(3.5)
    rep = union_report(pkg, "ext", 4)
    assert rep.upper_value == pytest.approx(brute_union(pkg, "ext", 4, package=False))
    assert rep.upper_value == pytest.approx(5.0) and rep.upper.selected == ("m3",)
    # Recency keeps m0 + m1 (newest first): a selection loss against the exact bound.
    assert rep.kept == ("m0", "m1") and rep.selection == pytest.approx(3.5 / 5.0)


def test_store_fitting_the_budget_keeps_everything() -> None:
    pkg = random_package(3)
    store = pkg.store("ext")
    total = sum(m.cost for m in _live(store))
    rep = union_report(pkg, "ext", total + 10)
    assert rep.keep_rule == "all" and not rep.over_budget
    assert sorted(rep.kept) == sorted(m.id for m in _live(store))
    assert rep.recency is None and rep.salience is None
    assert rep.upper_value == pytest.approx(rep.value)
    assert rep.selection in (None, pytest.approx(1.0))


# --------------------------------------------------------------------------- notes and edge cases


def _pkg(memories, *, candidates=None, budget=None) -> Package:
    doc = {
        "memaudit": 1,
        "id": "edge",
        "cost_unit": "words",
        "experiences": [{"id": "e1", "time": 0}, {"id": "e2", "time": 1}],
        "units": [
            {"id": "a", "kind": "current_truth", "weight": 2},
            {"id": "b", "kind": "invalidation", "weight": 1},
        ],
        "candidates": candidates
        or [
            {
                "id": "e1:raw",
                "experience": "e1",
                "type": "raw_span",
                "cost": 10,
                "coverage": {"a": 1},
            },
            {
                "id": "e2:raw",
                "experience": "e2",
                "type": "raw_span",
                "cost": 10,
                "coverage": {"b": 1},
            },
        ],
        "stores": [{"id": "ext", "label": "Ext", "system": "amem", "memories": memories}],
    }
    if budget is not None:
        doc["budget"] = budget
    return parse_package(doc)


def test_smallest_memory_over_budget_scores_zero_as_a_cost_effect() -> None:
    pkg = _pkg(
        [
            {"id": "n1", "cost": 30, "coverage": {"a": 1, "b": 1}, "created_at": "2025-01-01"},
            {"id": "n2", "cost": 25, "coverage": {"a": 1}, "created_at": "2025-01-02"},
        ]
    )
    rep = union_report(pkg, "ext", 12)
    assert rep.cost_effect
    assert rep.value == 0 and rep.kept == ()
    assert rep.upper_value == 0
    assert rep.union_ratio == 0.0 and rep.extraction == 0.0
    assert rep.selection is None  # 0 / 0: n/a
    note = next(n for n in rep.notes if "cost effect" in n)
    assert "not a content effect" in note and "n2" in note and "25" in note
    assert rep.union_opt_value == pytest.approx(2.0)  # e1:raw fits
    # A larger budget lifts the cost effect.
    assert not union_report(pkg, "ext", 25).cost_effect


def test_package_ratio_above_one_says_why() -> None:
    pkg = _pkg(
        [
            {"id": "m1", "cost": 2, "coverage": {"a": 1}, "created_at": "2025-01-01"},
            {"id": "m2", "cost": 2, "coverage": {"b": 1}, "created_at": "2025-01-02"},
        ]
    )
    rep = union_report(pkg, "ext", 10)
    assert rep.package_opt_value == pytest.approx(2.0)
    assert rep.value == pytest.approx(3.0)
    assert rep.package_ratio == pytest.approx(1.5)
    assert rep.union_ratio == pytest.approx(1.0)
    note = next(n for n in rep.notes if "above 1" in n)
    assert "cheaper than any package candidate" in note and "m1" in note
    assert "union ratio" in note


def test_package_ratio_not_above_one_has_no_such_note() -> None:
    pkg = _pkg([{"id": "m1", "cost": 12, "coverage": {"a": 0.5}, "created_at": "2025-01-01"}])
    rep = union_report(pkg, "ext", 20)
    assert rep.package_ratio is not None and rep.package_ratio < 1
    assert not any("above 1" in n for n in rep.notes)


def test_deleted_memories_are_not_part_of_the_store() -> None:
    mems = [
        {"id": "m1", "cost": 2, "coverage": {"a": 0.5}, "created_at": "2025-01-01"},
        {
            "id": "gone",
            "cost": 1,
            "coverage": {"a": 1, "b": 1},
            "created_at": "2025-01-05",
            "status": "deleted",
        },
        {
            "id": "old",
            "cost": 2,
            "coverage": {"b": 0.5},
            "created_at": "2025-01-02",
            "status": "superseded",
        },
    ]
    pkg = _pkg(mems)
    for budget in (1, 2, 4, 10):
        rep = union_report(pkg, "ext", budget)
        assert "gone" not in rep.kept and "gone" not in rep.upper.selected
        assert "gone" not in rep.union_opt.selected
        assert rep.upper_value == pytest.approx(brute_union(pkg, "ext", budget, package=False))
        assert rep.union_opt_value == pytest.approx(brute_union(pkg, "ext", budget))
        assert rep.deleted == ("gone",) and rep.superseded == ("old",)
        assert [r.id for r in rep.memory_rows] == ["m1", "old"]
        assert any("deleted" in n and "gone" in n for n in rep.notes)
        assert any("superseded" in n and "old" in n for n in rep.notes)
        # score() agrees (same store as kept, same union package).
        ev = score(pkg, budget, store_id="ext")
        assert "gone" not in ev.selected and "gone" not in ev.opt_selected
        assert ev.value == pytest.approx(rep.value)
        assert ev.opt_value == pytest.approx(rep.union_opt_value)
    rep = union_report(pkg, "ext", 10)
    assert rep.n_memories == 2 and rep.store_cost == 4
    assert set(rep.kept) == {"m1", "old"}  # superseded memories are kept (and count)


def test_recency_and_salience_pruning() -> None:
    mems = [
        {
            "id": "m1",
            "cost": 3,
            "coverage": {"a": 1},
            "created_at": "2025-01-01",
            "salience": 0.9,
            "meta": {"importance": {"score": 1}},
        },
        {
            "id": "m2",
            "cost": 3,
            "coverage": {"b": 0.2},
            "created_at": "2025-01-03",
            "salience": 0.1,
            "meta": {"importance": {"score": 9}},
        },
        {"id": "m3", "cost": 2, "coverage": {"b": 1}, "created_at": "2025-01-02", "salience": 0.5},
    ]
    pkg = _pkg(mems)
    rep = union_report(pkg, "ext", 5)
    assert rep.over_budget and rep.keep_rule == "recency"
    assert rep.recency.kept == ("m2", "m3") and rep.recency.dropped == ("m1",)
    assert rep.salience.kept == ("m1", "m3") and rep.salience.dropped == ("m2",)
    assert rep.salience.value == pytest.approx(3.0)
    assert rep.recency.value == pytest.approx(1.0)
    assert rep.upper_value == pytest.approx(3.0)
    assert rep.salience.selection == pytest.approx(1.0)
    assert rep.kept == ("m2", "m3")
    by_salience = union_report(pkg, "ext", 5, keep="salience")
    assert by_salience.keep_rule == "salience" and set(by_salience.kept) == {"m1", "m3"}
    # A named meta field: m2 first (9), then m1 (1); m3 has none and goes last.
    field = union_report(pkg, "ext", 5, salience_field="importance.score")
    assert field.salience.kept == ("m2",) or field.salience.kept[0] == "m2"
    assert any("no salience" in n for n in field.notes)
    with pytest.raises(UnknownNameError):
        union_report(pkg, "ext", 5, keep="random")


def test_no_salience_means_no_salience_selection() -> None:
    pkg = _pkg(
        [
            {"id": "m1", "cost": 3, "coverage": {"a": 1}, "created_at": "2025-01-01"},
            {"id": "m2", "cost": 3, "coverage": {"b": 1}, "created_at": "2025-01-02"},
        ]
    )
    rep = union_report(pkg, "ext", 4)
    assert rep.recency is not None and rep.salience is None
    assert any("no salience-pruned selection" in n for n in rep.notes)
    assert rep.to_dict()["salience_pruned"] is None


def test_unannotated_store_scores_zero_and_says_so() -> None:
    pkg = _pkg([{"id": "m1", "cost": 3, "coverage": {}, "created_at": "2025-01-01"}])
    rep = union_report(pkg, "ext", 20)
    assert rep.value == 0 and rep.upper_value == 0 and rep.selection is None
    assert any("needs annotation" in n for n in rep.notes)


def test_zero_budget_ratios_are_na() -> None:
    pkg = _pkg([{"id": "m1", "cost": 3, "coverage": {"a": 1}, "created_at": "2025-01-01"}])
    rep = union_report(pkg, "ext", 0)
    assert rep.union_ratio is None and rep.package_ratio is None
    assert rep.extraction is None and rep.selection is None
    assert rep.union_ratio_text == "n/a"


def test_non_external_store_is_refused() -> None:
    pkg = load_package(REPO / "sample_packages" / "veg-to-pescatarian.json")
    with pytest.raises(MemAuditError, match="score"):
        union_report(pkg, "fact-only", 12)
    with pytest.raises(UnknownNameError):
        union_report(pkg, "nope", 12)


# --------------------------------------------------------------------------- union_curve


def test_union_curve_matches_union_report() -> None:
    pkg = load_package(DEMO)
    budgets = [6, 18, 24, 48]
    rows = union_curve(pkg, budgets=budgets)
    assert [(r.store_id, r.budget) for r in rows] == [
        (s, float(b)) for s in ("mem0", "letta", "amem") for b in budgets
    ]
    for row in rows:
        rep = union_report(pkg, row.store_id, row.budget)
        assert row.kept_value == pytest.approx(rep.value)
        assert row.upper_value == pytest.approx(rep.upper_value)
        assert row.union_opt_value == pytest.approx(rep.union_opt_value)
        assert row.package_opt_value == pytest.approx(rep.package_opt_value)
        assert row.cost_effect == rep.cost_effect
        assert row.kept_value <= row.upper_value + TOL <= row.union_opt_value + 2 * TOL
    # Monotone in the budget: the exact bound and both optima never decrease.
    for sid in ("mem0", "letta", "amem"):
        ups = [r.upper_value for r in rows if r.store_id == sid]
        assert ups == sorted(ups)
    # The result model: the rows at one budget (a float off by noise still matches), counts,
    # the projector's text rows, and its JSON.
    at_18 = rows.at_budget(18.000000000001)
    assert [r.store_id for r in at_18] == ["mem0", "letta", "amem"]
    assert all(r.budget == 18.0 for r in at_18) and rows.at_budget(19.0) == ()
    assert rows.n_unproven == sum(1 for r in rows if not r.certified) == 0
    shown = rows.present_rows(18.0, "words")
    assert [d["store"] for d in shown] == [r.label or r.store_id for r in at_18]
    assert shown[0]["kept F"] == f"{at_18[0].kept_value:.3f}"
    assert len(rows.present_rows(19.0, "words")) == len(rows)  # no point there: every point
    assert rows.to_dict()["rows"] == [r.to_dict() for r in rows]


# --------------------------------------------------------------------------- demo sample


def test_demo_sample_tells_its_story() -> None:
    pkg = load_package(DEMO)
    budget = pkg.default_budget()
    reps = {s.id: union_report(pkg, s.id, budget) for s in pkg.stores}
    assert set(reps) == {"mem0", "letta", "amem"}
    # Mem0's short facts beat the package-only optimum (and the page explains why).
    mem0 = reps["mem0"]
    assert mem0.package_ratio > 1
    assert any("cheaper than any package candidate" in n for n in mem0.notes)
    assert mem0.deleted == ("m5",) and mem0.superseded == ("m1",)
    # Letta: recency keeps worse memories than the exact upper-pruned subset (selection loss).
    assert reps["letta"].selection < 0.9
    # A-Mem: long notes, a cost effect at the tight budgets.
    for b in (6, 12, 18):
        rep = union_report(pkg, "amem", b)
        assert rep.cost_effect and rep.value == 0
        assert any("cost effect" in n for n in rep.notes)
    assert not reps["amem"].cost_effect
    # Cross-check the demo at its default budget with the brute force on the memories alone.
    for sid, rep in reps.items():
        assert rep.upper_value == pytest.approx(brute_union(pkg, sid, budget, package=False))


# --------------------------------------------------------------------------- annotation


def test_annotation_round_trip_and_log() -> None:
    pkg = _pkg(
        [
            {
                "id": "m1",
                "text": "user is pescatarian now",
                "cost": 4,
                "coverage": {},
                "created_at": "2025-01-01",
            },
            {
                "id": "m2",
                "text": "vegetarian no longer current",
                "cost": 4,
                "coverage": {"b": 0.8},
                "created_at": "2025-01-02",
            },
        ]
    )
    store = pkg.store("ext")
    grid = annotation_grid(pkg, store)
    assert grid.unit_ids == ("a", "b")
    assert grid.rows[1].cells == {"a": "none", "b": "0.8"}
    assert "0.8" in grid.options["b"] and grid.options["a"] == ("full", "partial", "none")
    changes = coverage_changes(
        store,
        {"m1": {"a": "full", "b": "none"}, "m2": {"b": "partial"}},
        who="ann",
        when="2025-06-01T00:00:00+00:00",
    )
    assert [(c.memory_id, c.unit_id, c.old, c.new) for c in changes] == [
        ("m1", "a", 0.0, 1.0),
        ("m2", "b", 0.8, 0.5),
    ]
    new_store = apply_annotations(store, changes)
    assert new_store.memories[0].coverage == {"a": 1.0}
    assert new_store.memories[1].coverage == {"b": 0.5}
    log = new_store.meta["annotation_log"]
    assert [entry["who"] for entry in log] == ["ann", "ann"]
    assert AnnotationChange.from_dict(log[0]) == changes[0]
    new_pkg = with_store(pkg, new_store)
    assert new_pkg.content_hash() != pkg.content_hash()
    assert union_report(new_pkg, "ext", 8).value == pytest.approx(2.0 + 0.5)
    # The original package object is untouched, and the log survives a save / load.
    assert pkg.store("ext").memories[0].coverage == {}
    again = parse_package(json.loads(dumps_package(new_pkg)))
    assert again.store("ext").meta["annotation_log"] == log
    # Removing coverage (none) drops the cell.
    undo = coverage_changes(new_store, {"m1": {"a": "none"}}, who="ann")
    assert apply_annotations(new_store, undo).memories[0].coverage == {}


def test_suggestions_are_not_counted_until_confirmed() -> None:
    pkg = load_package(REPO / "sample_packages" / "veg-to-pescatarian.json")
    store_doc = {
        "id": "ext",
        "system": "mem0",
        "memories": [
            {
                "id": "x1",
                "text": "The user is pescatarian now, fish is fine",
                "cost": 8,
                "coverage": {},
            },
        ],
    }
    doc = json.loads(dumps_package(pkg))
    doc["stores"].append(store_doc)
    pkg2 = parse_package(doc)
    assert union_report(pkg2, "ext", 12).value == 0  # a suggestion alone counts nothing
    grid = annotation_grid(pkg2, pkg2.store("ext"))
    assert grid.rows[0].suggestion  # shown...
    changes = suggestion_changes(pkg2, pkg2.store("ext"), who="ann", when="t")
    assert changes and all(c.via == "suggestion confirmed" and c.suggested for c in changes)
    # The grid's suggestions, passed in (the app does), give the same decisions.
    shown = {r.memory_id: r.suggestion for r in grid.rows}
    reused = suggestion_changes(pkg2, pkg2.store("ext"), who="ann", when="t", suggestions=shown)
    assert reused == changes
    confirmed = with_store(pkg2, apply_annotations(pkg2.store("ext"), changes))
    assert union_report(confirmed, "ext", 12).value > 0  # ...counted once confirmed


def test_parse_coverage_rejects_bad_values() -> None:
    assert parse_coverage("partial") == 0.5 and parse_coverage(1) == 1.0
    for bad in ("lots", 1.5, -0.1, True):
        with pytest.raises(MemAuditError):
            parse_coverage(bad)


def test_with_store_validates() -> None:
    pkg = _pkg([{"id": "m1", "cost": 3, "coverage": {"a": 1}}])
    bad = apply_annotations(
        pkg.store("ext"),
        [AnnotationChange("x", "t", "ext", "m1", "no-such-unit", 0.0, 1.0)],
    )
    with pytest.raises(PackageError):
        with_store(pkg, bad)


# --------------------------------------------------------------------------- CLI

UNION_KEYS = (
    "union_ratio",
    "package_ratio",
    "upper_pruned",
    "extraction",
    "selection",
    "recency_pruned",
    "salience_pruned",
    "notes",
)


def test_cli_score_external_store_json_keys(capsys) -> None:
    assert main(["score", str(DEMO), "--store", "mem0", "--budget", "24", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in UNION_KEYS:
        assert key in out, key
    rep = union_report(load_package(DEMO), "mem0", 24)
    assert out["union_ratio"] == pytest.approx(rep.union_ratio)
    assert out["package_ratio"] == pytest.approx(rep.package_ratio) and out["package_ratio"] > 1
    assert out["upper_pruned"]["value"] == pytest.approx(rep.upper_value)
    assert out["extraction"] == pytest.approx(rep.extraction)
    assert out["selection"] == pytest.approx(rep.selection)
    assert out["recency_pruned"]["kept"] == list(rep.recency.kept)
    assert out["salience_pruned"] is None
    assert any("above 1" in n for n in out["notes"])


def test_cli_score_external_store_human(capsys) -> None:
    assert main(["score", str(DEMO), "--store", "amem", "--budget", "12"]) == 0
    text = capsys.readouterr().out
    for label in ("union ratio", "package ratio", "upper-pruned", "extraction", "selection"):
        assert label in text
    assert "cost effect, not a content effect" in text


def test_cli_score_export_prints_union_metrics(tmp_path, capsys) -> None:
    export = tmp_path / "mem0.json"
    export.write_text(
        json.dumps(
            {
                "results": [
                    {
                        "id": "a1",
                        "memory": "Pescatarian now",
                        "created_at": "2025-05-03T10:00:00Z",
                        "metadata": {"units": ["u:meal:current"]},
                    },
                    {
                        "id": "a2",
                        "memory": "Window seat",
                        "created_at": "2025-05-01T10:00:00Z",
                        "metadata": {"units": ["u:seat"]},
                    },
                ]
            }
        )
    )
    args = [
        "score",
        str(REPO / "sample_packages" / "veg-to-pescatarian.json"),
        "--external",
        str(export),
        "--format",
        "mem0",
        "--budget",
        "4",
        "--json",
    ]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    for key in UNION_KEYS:
        assert key in out, key
    assert out["external_store"]["memories"] == 2
    assert out["upper_pruned"]["value"] == pytest.approx(3.0)  # both fit: 2 + 1
    assert out["package_ratio"] > 1
    assert main(args[:-1]) == 0
    assert "union ratio" in capsys.readouterr().out


# --------------------------------------------------------------------------- the page (AppTest)


def _page(package_key: str, budget: float | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    at.query_params["package"] = package_key
    if budget is not None:
        at.query_params["budget"] = str(budget)
    at.run()
    at.switch_page("pages/4_External_stores.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_page_shows_union_metrics_of_the_demo() -> None:
    at = _page("sample:external-stores-demo")
    assert not at.error
    rep = union_report(load_package(DEMO), "mem0", 24)
    assert _metric(at, "Union ratio") == rep.union_ratio_text
    assert _metric(at, "Package ratio") == rep.package_ratio_text == "1.053"
    assert _metric(at, "Extraction") == rep.extraction_text
    assert _metric(at, "Selection") == rep.selection_text
    assert any("package ratio above 1" in i.value for i in at.info)
    assert any("cheaper than any package candidate" in t.value for t in at.text)
    at.selectbox(key="w_ext_store").set_value("amem").run()
    at.slider(key="w_budget").set_value(12.0).run()
    assert not at.exception
    assert _metric(at, "Union ratio") == "0.000" and _metric(at, "Selection") == "n/a"
    assert any("Cost effect" in w.value for w in at.warning)


def test_page_confirming_suggestions_is_logged_and_rescored() -> None:
    at = _page("sample:external-stores-demo", budget=36)
    before = _metric(at, "Kept F(Y')")
    at.button(key="w_ext_confirm").click().run()
    assert not at.exception and not at.error
    logs = at.session_state["ma_ann_logs"]
    ((key, entries),) = logs.items()
    assert key.endswith(":mem0") and entries
    assert all(e["via"] == "suggestion confirmed" and e["suggested"] for e in entries)
    assert _metric(at, "Kept F(Y')") != before
    # The sample file itself is untouched.
    assert (
        load_package(DEMO).content_hash()
        == union_report(load_package(DEMO), "mem0", 36).content_hash
    )


def test_page_bad_export_lists_problems_without_traceback() -> None:
    at = _page("sample:veg-to-pescatarian")
    assert any("no external stores" in i.value for i in at.info)
    at.file_uploader(key="w_ext_upload").upload(
        "export.json", b'{"results": [{"id": "m1"}, {"memory": 3}]}', "application/json"
    ).run()
    assert not at.exception
    (error,) = at.error
    text = error.value  # the problems are code spans: verbatim
    assert "export\\.json was not loaded** as mem0" in text  # the heading is Markdown
    # The record without an id has its text checked too (it has none): three problems.
    assert "3 problem(s)" in text
    assert "export.json: $.results[0]" in text and "export.json: $.results[1]" in text


def test_page_loads_an_export_next_to_the_package() -> None:
    at = _page("sample:veg-to-pescatarian")
    data = json.dumps(
        {
            "results": [
                {
                    "id": "a1",
                    "memory": "User is pescatarian now; fish is fine",
                    "created_at": "2025-05-03T10:00:00Z",
                },
            ]
        }
    ).encode()
    at.file_uploader(key="w_ext_upload").upload("mem0.json", data, "application/json").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="w_ext_store").value == "mem0"
    assert _metric(at, "Kept F(Y')") == "0"  # not annotated yet: suggestions do not count
    at.button(key="w_ext_confirm").click().run()
    assert not at.exception
    assert float(_metric(at, "Kept F(Y')")) > 0


def test_a_cost_rule_in_other_units_than_the_package_is_named() -> None:
    """QA: --cost-rule chars against a package in words compared chars with words silently."""
    from dataclasses import replace as dc_replace

    mems = [{"id": "n1", "cost": 3, "coverage": {"a": 1}, "created_at": "2025-01-01"}]
    pkg = _pkg(mems)
    assert pkg.cost_unit == "words"

    def with_rule(rule: str):
        store = dc_replace(pkg.stores[0], meta={"cost_rule": rule})
        return replace_package(pkg, stores=(store,))

    chars = union_report(with_rule("chars"), "ext", 12)
    note = next(n for n in chars.notes if n.startswith("Units differ"))
    assert "chars" in note and "words" in note
    words = union_report(with_rule("words"), "ext", 12)
    assert not any(n.startswith("Units differ") for n in words.notes)


def _tz_package(first: str, second: str):
    return parse_package(
        {
            "memaudit": 1,
            "id": "tz",
            "experiences": [{"id": "e1", "time": 0}],
            "units": [{"id": "old_fact", "weight": 1.0}, {"id": "new_fact", "weight": 1.0}],
            "candidates": [
                {"id": "c", "experience": "e1", "type": "raw_span", "cost": 5,
                 "coverage": {"new_fact": 1.0}}
            ],
            "stores": [
                {"id": "ext", "system": "mem0", "memories": [
                    {"id": "m_old", "cost": 2, "coverage": {"old_fact": 1.0}, "created_at": first},
                    {"id": "m_new", "cost": 2, "coverage": {"new_fact": 1.0}, "created_at": second},
                ]}
            ],
        }
    )  # fmt: skip


def test_recency_compares_times_not_strings():
    """Library QA: 11:00-07:00 (18:00Z) sorted before 17:00+00:00 as text, so recency pruning
    kept the older memory (EXPORT_FORMATS.md: Mem0 versions wrote different offsets)."""
    pkg = _tz_package("2024-05-01T17:00:00+00:00", "2024-05-01T11:00:00-07:00")
    assert union_report(pkg, "ext", 2).kept == ("m_new",)
    assert score(pkg, 2, store_id="ext").selected == ("m_new",)
    # A time without an offset is read as UTC, and the note says so when the kinds are mixed.
    mixed = _tz_package("2024-05-01T17:30:00", "2024-05-01T11:00:00-07:00")
    ev = score(mixed, 2, store_id="ext")
    assert ev.selected == ("m_new",)
    assert any("times without an offset read as UTC" in n for n in ev.notes)


def test_an_unreadable_created_at_is_a_package_error():
    with pytest.raises(PackageError) as info:
        _tz_package("yesterday", "2024-9-30")
    assert [(p.path, p.rule) for p in info.value.problems] == [
        ("$.stores[0].memories[0].created_at", "iso-8601"),
        ("$.stores[0].memories[1].created_at", "iso-8601"),
    ]


def test_a_memory_that_copies_a_package_candidate_is_marked_in_opt() -> None:
    # m1 is e1:raw under another name (same coverage, same cost): OPT over P+ at budget 10 is
    # worth 2 with either; the solver's choice among the two is arbitrary, the row must not be.
    pkg = _pkg(
        [{"id": "m1", "cost": 10, "coverage": {"a": 1}, "created_at": "2025-01-01"}], budget=10
    )
    rep = union_report(pkg, "ext", 10)
    assert rep.union_opt_value == pytest.approx(2.0)
    assert rep.value == pytest.approx(2.0)
    (row,) = rep.memory_rows
    assert row.kept and row.in_union_opt
    # A memory worth less than the candidate it competes with stays out.
    pkg = _pkg(
        [{"id": "m1", "cost": 10, "coverage": {"a": 0.5}, "created_at": "2025-01-01"}], budget=10
    )
    (row,) = union_report(pkg, "ext", 10).memory_rows
    assert row.kept and not row.in_union_opt
