"""Store evaluation (score), loss attribution, union packages, ablations and sweeps."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from memaudit_core.analysis import (
    ABLATIONS,
    KIND_ORDER,
    StoreEvaluation,
    ablation_opt,
    compile_cached,
    kind_sort_key,
    opt_at,
    ratio_text,
    score,
    sweep,
)
from memaudit_core.errors import MemAuditError, UnknownNameError
from memaudit_core.generators import generate
from memaudit_core.package import Package, load_package, parse_package, replace_package
from memaudit_core.solvers.brute import brute_force


def build(experiences, candidates, units, stores=(), pid="t", meta=None) -> Package:
    """experiences: [(id, time)]; candidates: [(id, exp, type, cost, cov)];
    units: [(id, kind, weight)]; stores: raw store dicts."""
    doc = {
        "memaudit": 1,
        "id": pid,
        "experiences": [{"id": e, "time": t} for e, t in experiences],
        "units": [{"id": u, "kind": k, "weight": w, "text": f"text of {u}"} for u, k, w in units],
        "candidates": [
            {"id": c, "experience": e, "type": ty, "cost": cost, "coverage": cov}
            for c, e, ty, cost, cov in candidates
        ],
        "stores": list(stores),
    }
    if meta:
        doc["meta"] = meta
    return parse_package(doc)


def _independent_unit_values(pkg: Package, selected_ids) -> dict[str, float]:
    """w * min(1, z) per unit straight from the package objects (cap1)."""
    cov = {c.id: c.coverage for c in pkg.candidates}
    for store in pkg.stores:
        cov.update({m.id: m.coverage for m in store.memories})
    z: dict[str, float] = {}
    for cid in selected_ids:
        for u, a in cov[cid].items():
            z[u] = z.get(u, 0.0) + a
    weights = pkg.unit_weights()
    return {u: weights[u] * min(1.0, z.get(u, 0.0)) for u in weights}


# --------------------------------------------------------------------------- attribution


@pytest.mark.parametrize("writer", ["density", "recency_raw", "gvt"])
@pytest.mark.parametrize("budget", [4, 8])
def test_unit_rows_sum_to_store_value_and_opt(writer, budget):
    pkg = generate("memaudit-small", seed=5)
    ev = score(pkg, budget, writer=writer)
    assert ev.source_kind == "writer" and ev.label == writer and ev.writer == writer
    assert sum(r.store_value for r in ev.unit_rows) == pytest.approx(ev.value, abs=1e-9)
    assert sum(r.opt_value for r in ev.unit_rows) == pytest.approx(ev.opt_value, abs=1e-9)
    assert sum(r.lost for r in ev.unit_rows) == pytest.approx(ev.opt_value - ev.value, abs=1e-9)
    assert sum(k.store_value for k in ev.kind_rows) == pytest.approx(ev.value, abs=1e-9)
    assert sum(k.lost for k in ev.kind_rows) == pytest.approx(ev.opt_value - ev.value, abs=1e-9)
    # Per-unit values agree with a computation from the package objects alone.
    store_vals = _independent_unit_values(pkg, ev.selected)
    opt_vals = _independent_unit_values(pkg, ev.opt_selected)
    for row in ev.unit_rows:
        assert row.store_value == pytest.approx(store_vals[row.unit_id], abs=1e-12)
        assert row.opt_value == pytest.approx(opt_vals[row.unit_id], abs=1e-12)
        assert row.text  # unit text carried through from the package
    # The denominator is the exact optimum (independent brute force).
    brute, _ = brute_force(compile_cached(pkg), budget)
    assert ev.opt_value == pytest.approx(brute, abs=1e-9)
    assert ev.ratio == pytest.approx(ev.value / brute)
    assert ev.opt_certified and ev.opt_label == "OPT"


def test_kind_rows_order_and_coverage_columns():
    pkg = generate("temporal_interval")
    ev = score(pkg, 6, writer="density")
    kinds = [k.kind for k in ev.kind_rows]
    assert kinds == ["current_truth", "invalidation", "temporal_interval", "stale", "fact"]
    assert sorted(["zeta", "stale", "alpha", "current_truth"], key=kind_sort_key) == [
        "current_truth",
        "stale",
        "alpha",
        "zeta",
    ]
    assert KIND_ORDER[:2] == ("current_truth", "invalidation")
    weights = pkg.unit_weights()
    assert {r.unit_id: r.weight for r in ev.unit_rows} == pytest.approx(weights)
    # Raw coverage z is reported unclipped.
    pkg2 = build(
        [("e1", 0), ("e2", 1)],
        [
            ("e1_a", "e1", "atomic_fact", 1, {"u": 0.75}),
            ("e2_a", "e2", "atomic_fact", 1, {"u": 0.75}),
        ],
        [("u", "fact", 2.0)],
        stores=[{"id": "both", "select": ["e1_a", "e2_a"]}],
    )
    ev2 = score(pkg2, 2, store_id="both")
    (row,) = ev2.unit_rows
    assert row.store_coverage == pytest.approx(1.5) and row.store_value == pytest.approx(2.0)


def test_lost_can_be_negative_where_store_covers_what_opt_skips():
    pkg = build(
        [("e1", 0), ("e2", 1)],
        [
            ("e1_a", "e1", "atomic_fact", 1, {"big": 1}),
            ("e2_a", "e2", "atomic_fact", 1, {"small": 1}),
        ],
        [("big", "current_truth", 3.0), ("small", "stale", 1.0)],
        stores=[{"id": "s", "select": ["e2_a"]}],
    )
    ev = score(pkg, 1, store_id="s")
    lost = {r.unit_id: r.lost for r in ev.unit_rows}
    assert lost == pytest.approx({"big": 3.0, "small": -1.0})
    assert ev.ratio == pytest.approx(1 / 3) and ev.ratio_text == "0.333"


# --------------------------------------------------------------------------- undefined ratio


def test_ratio_is_none_when_opt_is_zero():
    pkg = build(
        [("e1", 0)],
        [("e1_a", "e1", "atomic_fact", 1, {"u": 1})],
        [("u", "fact", 0.0), ("v", "context", 0.0)],
        stores=[{"id": "s", "select": ["e1_a"]}],
    )
    for ev in (score(pkg, 5, writer="gvt"), score(pkg, 5, store_id="s")):
        assert ev.opt_value == 0.0
        assert ev.ratio is None and ev.ratio_text == "n/a"
        assert any("undefined" in n and "n/a" in n for n in ev.notes)
    assert ratio_text(None) == "n/a" and ratio_text(1.0) == "1.000"


def test_zero_budget_gives_undefined_ratio():
    ev = score(generate("update_chain"), 0, writer="gvt")
    assert ev.ratio is None and ev.selected == () and ev.opt_selected == ()


# --------------------------------------------------------------------------- package stores


def _four_step_package(costs=(2, 2, 2, 2)):
    exps = [(f"e{t}", t) for t in range(4)]
    cands = [(f"e{t}_fact", f"e{t}", "atomic_fact", costs[t], {f"u{t}": 1}) for t in range(4)]
    units = [(f"u{t}", "fact", 1.0) for t in range(4)]
    store = {"id": "all", "label": "Keeps everything", "select": [c[0] for c in cands]}
    return build(exps, cands, units, stores=[store])


def test_store_within_budget_is_not_pruned():
    ev = score(_four_step_package(), 8, store_id="all")
    assert ev.source_kind == "store" and ev.label == "Keeps everything" and ev.store_id == "all"
    assert not ev.over_budget and ev.pruned is None and ev.dropped == ()
    assert ev.ratio == pytest.approx(1.0) and ev.cost == 8


def test_over_budget_store_is_recency_pruned_with_a_note():
    ev = score(_four_step_package(), 5, store_id="all")
    assert ev.over_budget and ev.pruned == "recency"
    assert set(ev.selected) == {"e3_fact", "e2_fact"}  # newest experiences first
    assert set(ev.dropped) == {"e1_fact", "e0_fact"}
    assert ev.store_cost == 8 and ev.cost == 4
    assert ev.value == pytest.approx(2.0)
    note = " ".join(ev.notes)
    assert "pruned by recency" in note and "e1_fact" in note and "8" in note


def test_pruning_keeps_later_items_that_still_fit():
    # Newest e3 (2) fits, e2 (3) does not, e1 (1) still fits, e0 (2) does not.
    ev = score(_four_step_package(costs=(2, 1, 3, 2)), 3, store_id="all")
    assert set(ev.selected) == {"e3_fact", "e1_fact"}
    assert set(ev.dropped) == {"e2_fact", "e0_fact"}


def test_score_argument_errors():
    pkg = _four_step_package()
    with pytest.raises(MemAuditError):
        score(pkg, 3)
    with pytest.raises(MemAuditError):
        score(pkg, 3, writer="gvt", store_id="all")
    with pytest.raises(UnknownNameError):
        score(pkg, 3, writer="nope")
    with pytest.raises(UnknownNameError):
        score(pkg, 3, store_id="nope")
    with pytest.raises(MemAuditError):
        score(pkg, -1, writer="gvt")


# --------------------------------------------------------------------------- external stores


def _union_package():
    return build(
        [("e1", 0), ("e2", 1)],
        [
            ("e1_raw", "e1", "raw_span", 4, {"a": 1, "b": 1}),
            ("e1_fact", "e1", "atomic_fact", 2, {"a": 1}),
            ("e2_fact", "e2", "atomic_fact", 2, {"b": 1}),
        ],
        [("a", "current_truth", 2.0), ("b", "invalidation", 1.0)],
        stores=[
            {
                "id": "mem0",
                "label": "Mem0 export",
                "system": "mem0",
                "memories": [
                    {"id": "m1", "text": "everything", "cost": 1, "coverage": {"a": 1, "b": 1}}
                ],
            },
            {
                "id": "dated",
                "memories": [
                    {
                        "id": "m_new",
                        "cost": 2,
                        "coverage": {"b": 1},
                        "created_at": "2024-06-01T00:00:00Z",
                    },
                    {
                        "id": "m_old",
                        "cost": 2,
                        "coverage": {"a": 1},
                        "created_at": "2024-01-01T00:00:00Z",
                    },
                ],
            },
            {
                "id": "undated",
                "memories": [
                    {"id": "first", "cost": 2, "coverage": {"a": 1}},
                    {"id": "second", "cost": 2, "coverage": {"b": 0.5}},
                ],
            },
            {
                "id": "mixed",
                "select": ["e1_fact"],
                "memories": [{"id": "mx", "cost": 1, "coverage": {"b": 1}}],
            },
        ],
    )


def test_union_store_can_beat_the_package_only_optimum_and_says_why():
    pkg = _union_package()
    ev = score(pkg, 2, store_id="mem0")
    assert ev.source_kind == "external" and ev.label == "Mem0 export"
    assert ev.selected == ("m1",) and ev.value == pytest.approx(3.0)
    # Union optimum may use the memory itself: the union ratio is 1.
    assert ev.opt_value == pytest.approx(3.0) and ev.ratio == pytest.approx(1.0)
    # Package-only optimum at B = 2 is one atomic fact (a, weight 2).
    assert ev.package_opt_value == pytest.approx(2.0)
    assert ev.package_ratio == pytest.approx(1.5) and ev.package_ratio_text == "1.500"
    notes = " ".join(ev.notes)
    assert "outside the package's candidate pool" in notes and "m1" in notes
    assert "union package" in notes


def test_external_store_without_gain_over_package_has_no_beat_note():
    pkg = _union_package()
    ev = score(pkg, 4, store_id="undated")
    assert ev.package_ratio is not None and ev.package_ratio <= 1
    assert not any("outside the package's candidate pool" in n for n in ev.notes)


def test_external_pruning_by_created_at_then_by_list_order():
    pkg = _union_package()
    dated = score(pkg, 3, store_id="dated")
    assert dated.selected == ("m_new",) and dated.dropped == ("m_old",) and dated.over_budget
    assert any("created_at" in n for n in dated.notes)
    undated = score(pkg, 3, store_id="undated")
    assert undated.selected == ("second",) and undated.dropped == ("first",)
    assert any("last listed first" in n for n in undated.notes)


def test_store_with_selected_candidates_and_memories():
    pkg = _union_package()
    ev = score(pkg, 3, store_id="mixed")
    assert set(ev.selected) == {"e1_fact", "mx"} and not ev.over_budget
    assert ev.value == pytest.approx(3.0) and ev.ratio == pytest.approx(1.0)
    # Over budget: the external memory is treated as the most recent item.
    ev = score(pkg, 2, store_id="mixed")
    assert ev.selected == ("mx",) and ev.dropped == ("e1_fact",)


def test_deleted_memories_are_not_part_of_the_store():
    pkg = build(
        [("e1", 0)],
        [("e1_fact", "e1", "atomic_fact", 2, {"a": 1})],
        [("a", "current_truth", 2.0), ("b", "invalidation", 1.0)],
        stores=[
            {
                "id": "exp",
                "memories": [
                    {"id": "gone", "cost": 1, "coverage": {"a": 1, "b": 1}, "status": "deleted"},
                    {"id": "kept", "cost": 1, "coverage": {"b": 1}, "status": "superseded"},
                ],
            }
        ],
    )
    ev = score(pkg, 3, store_id="exp")
    assert ev.selected == ("kept",) and ev.value == pytest.approx(1.0)
    union = compile_cached(pkg)  # the package alone has no external candidates
    assert "gone" not in union.candidate_ids
    assert ev.opt_value == pytest.approx(3.0)  # e1_fact + kept; the deleted memory is no candidate
    assert any("deleted" in n for n in ev.notes)


def test_evaluations_serialise_to_json():
    pkg = _union_package()
    for ev in (score(pkg, 2, store_id="mem0"), score(generate("update_chain"), 6, writer="gvt")):
        assert isinstance(ev, StoreEvaluation)
        d = json.loads(json.dumps(ev.to_dict()))
        assert d["ratio_text"] == ev.ratio_text
        assert len(d["unit_rows"]) == len(ev.unit_rows) and d["opt"]["value"] == pytest.approx(
            ev.opt_value
        )


# --------------------------------------------------------------------------- caching / optima


def test_compile_cached_reuses_by_content_hash():
    a = compile_cached(generate("memaudit-small", seed=1))
    assert compile_cached(generate("memaudit-small", seed=1)) is a
    assert compile_cached(generate("memaudit-small", seed=2)) is not a


def test_opt_at_and_ablation_opt_against_brute_force():
    inst = compile_cached(generate("update_chain"))
    for budget in (3, 6, 13):
        assert opt_at(inst, budget).value == pytest.approx(brute_force(inst, budget)[0])
        for method, pool in ABLATIONS.items():
            expected = brute_force(inst.pool_instance(pool), budget)[0]
            assert ablation_opt(inst, method, budget).value == pytest.approx(expected)
            assert ablation_opt(inst, pool, budget).value == pytest.approx(expected)
    with pytest.raises(UnknownNameError):
        ablation_opt(inst, "no_tombstones", 3)


# --------------------------------------------------------------------------- sweep


def _zero_package():
    return build(
        [("e1", 0)],
        [("e1_a", "e1", "atomic_fact", 1, {"u": 1})],
        [("u", "fact", 0.0)],
        pid="zero",
    )


def test_sweep_rows_summary_counts_and_order():
    packages = [
        generate("memaudit-small", seed=0),
        generate("memaudit-small", seed=1),
        # In memaudit-small's unit: a summary line is over one cost unit (QA s44).
        replace_package(_zero_package(), cost_unit="words"),
    ]
    calls = []
    res = sweep(
        packages,
        [6, 2, 6],
        ["density", "gvt"],
        ablations=["generic_opt", "no_validity_opt"],
        progress=lambda done, total: calls.append((done, total)),
    )
    assert res.budgets == (2.0, 6.0)
    assert res.methods == ("density", "gvt", "generic_opt", "no_validity_opt")
    assert len(res.rows) == 3 * 2 * 4
    assert calls[-1] == (6, 6) and len(calls) == 6
    assert [(s.method, s.budget) for s in res.summary] == [
        (m, b) for m in res.methods for b in (2.0, 6.0)
    ]
    for s in res.summary:
        assert s.n == 2 and s.n_undefined == 1  # the zero package has OPT = 0
        assert s.min_ratio <= s.mean_ratio <= s.max_ratio
        assert s.ci_low is None and s.ci_high is None  # below MIN_CI_N ratios (QA s46)
    by_key = {(r.package_id, r.budget, r.method): r for r in res.rows}
    zero = by_key[("zero", 2.0, "gvt")]
    assert zero.ratio is None and zero.opt == 0.0 and zero.seed is None and zero.family is None
    row = by_key[("memaudit-small-s1", 6.0, "gvt")]
    assert row.seed == 1 and row.family == "memaudit-small" and row.certified
    # The sweep's ratios agree with score() (independent code path for the store).
    ev = score(packages[1], 6, writer="density")
    assert by_key[("memaudit-small-s1", 6.0, "density")].ratio == pytest.approx(ev.ratio)
    csv_rows = res.to_csv_rows()
    assert len(csv_rows) == len(res.rows) and set(csv_rows[0]) >= {"method", "ratio", "seed"}
    json.dumps(res.to_dict())


def test_sweep_notes_repeated_instances_and_records_its_settings():
    """Library QA: the CLI warned about copies of one instance, the library did not, and a
    saved sweep did not say under which limits it ran."""
    # Three files of one instance under three ids (the library built update_chain seeds
    # 0-2 as three files until s52; a seed-invariant family now builds one).
    base = generate("update_chain")
    copies = [replace_package(base, id=f"update_chain-copy{s}") for s in range(3)]
    assert len({p.content_hash() for p in copies}) == 3
    res = sweep(copies, [6], ["gvt"], time_limit=5.0)
    repeated = [n for n in res.notes if "distinct optimisation instance" in n]
    assert repeated == [n for n in res.notes if "the 3 sources hold only 1 " in n] != []
    out = res.to_dict()
    assert out["settings"] == {
        "solver": "auto",
        "time_limit": 5.0,
        "total_time_limit": None,
        "cross_check": "sample",
        "workers": 1,
    }
    seeded = sweep([generate("random_coverage", s, n_groups=4) for s in range(2)], [6], ["gvt"])
    assert not any("distinct optimisation instance" in n for n in seeded.notes)


def test_every_result_model_says_its_version():
    from memaudit_core import audit, curves, explain, reports, robustness, suites, union
    from memaudit_core.compiled import compile_package
    from memaudit_core.solvers import solve
    from memaudit_core.versions import RESULT_VERSION
    from memaudit_core.writers import run_writer

    pkg = generate("update_chain")
    demo = load_package(Path(__file__).parent.parent / "sample_packages/external-stores-demo.json")
    results = [
        solve(compile_package(pkg), 6),
        score(pkg, 6, writer="gvt"),
        sweep([pkg], [6], ["gvt"]),
        run_writer("gvt", compile_package(pkg), 6),
        curves.budget_curve(pkg, [3, 6], ["gvt"]),
        curves.certification_report(pkg, [6]),
        robustness.ablation_curve(pkg, [6], preset="generic"),
        explain.compare_view(pkg, 6, writer="gvt"),
        explain.evidence_view(pkg, 6, writer="gvt"),
        union.union_report(demo, "mem0", demo.default_budget()),
        reports.package_stats(pkg),
        reports.overview(pkg, 6),
        audit.audit(families=["update_chain"], budgets=[6], figures=False),
        suites.sweep_suite(families=["update_chain"], budgets=[6], writers=["gvt"], figures=False),
    ]
    for result in results:
        assert next(iter(result.to_dict().items())) == ("result_version", RESULT_VERSION), result


def test_sweep_summary_single_package_has_no_ci_and_all_undefined():
    res = sweep([generate("update_chain")], [6], ["density"])
    (s,) = res.summary
    # One value says nothing about spread: no interval (CLI QA: "[0.730, 0.730]").
    assert s.n == 1 and s.mean_ratio == pytest.approx(5.65 / 7.735)
    assert s.ci_low is None and s.ci_high is None
    res = sweep([_zero_package()], [3], ["gvt"])
    (s,) = res.summary
    assert s.n == 0 and s.n_undefined == 1 and s.mean_ratio is None and s.ci_low is None


def test_sweep_bootstrap_is_seeded_and_reproducible():
    packages = [generate("memaudit-small", seed=s) for s in range(12)]
    a = sweep(packages, [4], ["density"]).summary[0]
    b = sweep(packages, [4], ["density"]).summary[0]
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert a.ci_low < a.mean_ratio < a.ci_high


def test_sweep_stores_and_errors():
    union = _union_package()
    res = sweep([union, _four_step_package()], [2], ["gvt"], stores=["mem0", "all"])
    assert res.methods == ("gvt", "mem0", "all")
    mem0 = [r for r in res.rows if r.method == "mem0"]
    assert len(mem0) == 1 and mem0[0].ratio == pytest.approx(1.0)  # union ratio, as in score()
    all_rows = [r for r in res.rows if r.method == "all"]
    assert len(all_rows) == 1 and all_rows[0].cost == 2  # pruned to what fits
    assert all_rows[0].ratio == pytest.approx(score(_four_step_package(), 2, store_id="all").ratio)
    with pytest.raises(UnknownNameError):
        sweep([union], [2], ["gvt"], stores=["letta"])
    with pytest.raises(UnknownNameError):
        sweep([union], [2], ["gvt"], ablations=["no_such_pool"])
    # Pool names are accepted as well as method names (the CLI says --ablations no_validity).
    by_pool = sweep([union], [2], ["gvt"], ablations=["no_validity"])
    by_method = sweep([union], [2], ["gvt"], ablations=["no_validity_opt"])
    assert [r.to_dict() for r in by_pool.rows] == [r.to_dict() for r in by_method.rows]
    with pytest.raises(UnknownNameError):
        sweep([union], [2], ["gtv"])


def test_sweep_spreads_packages_over_workers_with_the_same_result():
    """workers=2 with several packages runs whole packages on a process pool; rows, summary
    and failures equal the in-process sweep's, in package order, and progress reaches total."""
    packages = [generate("memaudit-small", seed=s) for s in range(9)]
    packages += [_union_package(), _four_step_package(), _zero_package()]
    kwargs = {
        "stores": ["mem0", "all"],
        "ablations": ["no_validity", "generic"],
    }
    writers = ["gvt", "density", "greedy", "recency_raw"]
    serial = sweep(packages, [2, 6], writers, **kwargs)
    calls = []
    pooled = sweep(
        packages, [6, 2], writers, workers=2, progress=lambda d, n: calls.append((d, n)), **kwargs
    )
    assert pooled.rows == serial.rows
    assert pooled.summary == serial.summary and pooled.errors == serial.errors
    assert [r.package_id for r in pooled.rows][:1] == ["memaudit-small-s0"]
    assert calls[-1] == (24, 24) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert any(r.method == "mem0" for r in pooled.rows)  # the external store's union optimum
    with pytest.raises(MemAuditError, match="workers must be an integer"):
        sweep(packages, [2], ["gvt"], workers=0)


def test_sweep_with_a_runtime_plugin_writer_keeps_packages_in_process():
    """A writer registered in this process is unknown to pool workers: with it in the sweep,
    workers=2 runs the packages here (still correct) instead of failing in a worker."""
    from memaudit_core.plugins import register_module_writer

    info = register_module_writer("plugin_fixtures.fixture_writers:oracle_gvt")
    packages = [generate("memaudit-small", seed=s) for s in range(3)]
    res = sweep(packages, [4], [info.name, "gvt"], workers=2)
    by = {(r.package_id, r.method): r.value for r in res.rows}
    assert not res.errors
    for p in packages:
        assert by[(p.id, info.name)] == pytest.approx(by[(p.id, "gvt")])


# --------------------------------------------------------------------------- the optimum cache


@pytest.fixture
def count_solves(monkeypatch):
    """Counts the solves ``opt_at`` runs (``analysis.solve``), with an empty cache."""
    from memaudit_core import analysis

    monkeypatch.setattr(analysis, "_opt_cache", type(analysis._opt_cache)())
    calls: list[tuple[float, float | None, tuple[int, ...] | None]] = []
    real = analysis.solve

    def counting(inst, budget, solver="auto", **kw):
        calls.append((budget, kw.get("time_limit"), kw.get("incumbent_idx")))
        return real(inst, budget, solver, **kw)

    monkeypatch.setattr(analysis, "solve", counting)
    return calls


def test_overview_with_a_time_limit_solves_the_optimum_once(count_solves):
    # The app's pages pass a time limit and score every writer and store against one optimum;
    # a limited score starts from its store, which must not cost one solve per store.
    from memaudit_core.reports import overview

    pkg = generate("event_graph", seed=1, n_experiences=60)
    ov = overview(pkg, pkg.budget, time_limit=20.0)
    assert ov.opt.certified
    assert len(ov.evaluations) >= 6
    assert [c[0] for c in count_solves] == [pkg.budget]
    assert all(
        ev.opt_value == ov.opt.value for ev in ov.evaluations if ev.source_kind != "external"
    )
    # The same optimum answers calls without a limit too: it is certified.
    assert opt_at(compile_cached(pkg), pkg.budget) is ov.opt
    assert len(count_solves) == 1


def test_a_limited_optimum_below_the_start_is_solved_again_from_it(count_solves):
    import dataclasses

    from memaudit_core import analysis

    pkg = generate("update_chain")
    inst = compile_cached(pkg)
    budget = 6.0
    best = opt_at(inst, budget)  # certified: cached under the certified slot
    assert best.certified and len(count_solves) == 1
    analysis._opt_cache.clear()
    # A limited result worth less than a store, as a short time limit can leave.
    weak = dataclasses.replace(
        best, value=0.0, selected=(), selected_idx=(), status="limit", certificate=None
    )
    assert not weak.certified
    analysis._opt_cache[(inst.fingerprint, budget, "auto", 5.0)] = weak
    assert opt_at(inst, budget, time_limit=5.0) is weak  # same limit, no start: reused
    assert len(count_solves) == 1
    store = tuple(best.selected_idx)
    again = opt_at(inst, budget, time_limit=5.0, incumbent_idx=store)
    assert again is not weak and again.value >= best.value - 1e-9
    assert count_solves[-1] == (budget, 5.0, store)
    # A start worth no more than the cached limited value reuses it.
    assert opt_at(inst, budget, time_limit=7.0) is not weak  # another limit: its own entry
    analysis._opt_cache.clear()
    analysis._opt_cache[(inst.fingerprint, budget, "auto", 5.0)] = weak
    assert opt_at(inst, budget, time_limit=5.0, incumbent_idx=()) is weak


# --------------------------------------------------------------------------- overview


def test_overview_equals_scoring_each_writer_and_store_one_after_another():
    # The Overview runs the optimum on a thread while the writers run; the result must be
    # what scoring each writer and store by itself gives.
    from memaudit_core.reports import overview
    from memaudit_core.writers import WRITERS

    pkg = load_package(
        Path(__file__).resolve().parent.parent / "sample_packages" / "travel-assistant.json"
    )
    budget = pkg.budget
    ov = overview(pkg, budget)
    one_by_one = [score(pkg, budget, writer=name) for name in WRITERS]
    one_by_one += [score(pkg, budget, store_id=s.id) for s in pkg.stores]
    assert [e.to_dict() for e in ov.evaluations] == [e.to_dict() for e in one_by_one]
    assert ov.opt.value == opt_at(compile_cached(pkg), budget).value


def test_overview_refuses_a_bad_budget_before_any_work():
    from memaudit_core.reports import overview

    with pytest.raises(MemAuditError, match="budget"):
        overview(generate("update_chain"), -1.0)


def test_score_reuses_a_given_writer_result_and_checks_it_matches():
    from memaudit_core.writers import run_writer

    pkg = generate("temporal_interval")
    inst = compile_cached(pkg)
    given = run_writer("gvt", inst, 13.0)
    assert score(pkg, 13.0, writer="gvt", writer_result=given).to_dict() == (
        score(pkg, 13.0, writer="gvt").to_dict()
    )
    with pytest.raises(MemAuditError, match="not 'density' at 13"):
        score(pkg, 13.0, writer="density", writer_result=given)
    with pytest.raises(MemAuditError, match="not 'gvt' at 12"):
        score(pkg, 12.0, writer="gvt", writer_result=given)
    with pytest.raises(MemAuditError, match="goes with writer="):
        score(pkg, 13.0, store_id="anything", writer_result=given)


@pytest.mark.parametrize("budget", ["12", True, np.bool_(True), None])
def test_score_refuses_a_budget_that_is_not_a_real_number(budget):
    with pytest.raises(MemAuditError, match="budget must be a real number, got "):
        score(generate("update_chain"), budget, writer="gvt")


def test_score_accepts_numpy_budgets():
    pkg = generate("update_chain")
    want = score(pkg, 6, writer="gvt").to_dict()
    assert score(pkg, np.float64(6), writer="gvt").to_dict() == want
    assert score(pkg, np.int64(6), writer="gvt").to_dict() == want


def test_unproven_zero_optimum_is_not_called_zero_and_shows_no_gap_percentage(monkeypatch):
    from memaudit_core import solvers

    def nothing_yet(inst, budget, **kwargs):  # a limit hit before any incumbent, bound 5
        return solvers.RawSolution((), 0.0, 5.0, "limit", nodes=1)

    monkeypatch.setitem(solvers.ENGINES, "bnb", nothing_yet)
    # Nothing fits 0.37, so F's ceiling alone would prove OPT = 0 (QA s43: limited bounds are
    # capped by it); lifted here so that the fake's bound of 5 stands for a package where
    # more can fit.
    monkeypatch.setattr(solvers, "value_ceiling", lambda inst, budget: np.inf)
    ev = score(generate("update_chain"), 0.37, writer="gvt", solver="bnb", time_limit=7.0)
    assert ev.ratio is None and not ev.opt_certified
    note = " ".join(ev.notes)
    assert "no feasible store has any value" not in note
    assert "gap n/a (incumbent 0)" in note and "%" not in note


def test_limited_sweep_rows_carry_the_bound_and_say_they_are_unproven():
    """QA: a time-limited sweep gave gvt ratio 1.0 (its own store was the best one found) with
    nothing but certified=False to warn; rows now carry the proven bound and a ratio range."""
    from memaudit_core.analysis import sweep

    pkg = generate("random_coverage", seed=3, n_groups=300, candidates_per_group=6, max_cover=20)
    res = sweep([pkg], [pkg.budget], ["gvt", "density"], time_limit=0.2)
    assert res.rows and all(not r.certified for r in res.rows)
    for row in res.rows:
        assert row.opt_bound is not None and row.opt_bound > row.opt
        assert row.ratio_low == pytest.approx(row.value / row.opt_bound)
        assert row.ratio_low < row.ratio <= 1.0
    assert [s.n_uncertified for s in res.summary] == [1, 1]
    assert res.notes and "not certified" in res.notes[0]
    assert res.to_dict()["notes"] == list(res.notes)
    certified = sweep([generate("update_chain")], [3.0, 6.0], ["gvt"])
    assert not certified.notes and all(s.n_uncertified == 0 for s in certified.summary)
    for row in certified.rows:
        assert row.certified and row.opt_bound == row.opt and row.ratio_low == row.ratio


def test_a_single_package_writer_or_budget_is_one_item_not_its_letters():
    """QA: sweep([p], [6], "gvt") said "unknown writer 'g'", sweep(p, ...) raised a TypeError.
    A lone budget is not one item: it is refused, as the other budget lists are (QA s47)."""
    from memaudit_core.analysis import sweep

    pkg = generate("update_chain")
    one = sweep(pkg, [6], "gvt")
    listed = sweep([pkg], [6], ["gvt"])
    assert [r.to_dict() for r in one.rows] == [r.to_dict() for r in listed.rows]
    with pytest.raises(MemAuditError, match="writers must be a list of names"):
        sweep([pkg], [6], 5)


# --------------------------------------------------------------------------- library QA


def test_score_checks_a_writer_result_it_is_handed():
    """A hand-built store scored ratio 1.054 against a certified OPT; another package's
    result was read as this package's positions."""
    from dataclasses import replace

    from memaudit_core.analysis import compile_cached, score
    from memaudit_core.errors import WriterError
    from memaudit_core.writers import run_writer

    pkg = generate("update_chain")
    inst = compile_cached(pkg)
    everything = tuple(range(inst.n_candidates))
    fake = run_writer("gvt", inst, 6)
    fake = replace(fake, selected_idx=everything, selected=inst.ids(everything), value=99.0)
    with pytest.raises(WriterError, match="it costs 51, over the budget 6"):
        score(pkg, 6, writer="gvt", writer_result=fake)
    other = run_writer("gvt", compile_cached(generate("temporal_interval")), 6)
    with pytest.raises(MemAuditError, match="not a store of package 'update_chain'"):
        score(pkg, 6, writer="gvt", writer_result=other)
    # A genuine result is scored with its value recomputed, as if the writer ran here.
    genuine = run_writer("gvt", inst, 6)
    assert score(pkg, 6, writer="gvt", writer_result=replace(genuine, value=99.0)) == score(
        pkg, 6, writer="gvt"
    )


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda pkg, inst: __import__("memaudit_core.solvers").solvers.solve(pkg, 6), "solve()"),
        (lambda pkg, inst: score("update_chain.json", 6, writer="gvt"), "expected a Package"),
        (
            lambda pkg, inst: __import__("memaudit_core.solvers").solvers.solve_budgets(inst, 6),
            r"for one budget: \[6\]",
        ),
        (lambda pkg, inst: load_package({"id": "x"}), "expected a file path"),
    ],
)
def test_wrong_argument_types_are_user_errors(call, match):
    """Library QA: AttributeError / TypeError tracebacks for everyday notebook slips."""
    from memaudit_core.compiled import compile_package

    pkg = generate("update_chain")
    with pytest.raises(MemAuditError, match=match):
        call(pkg, compile_package(pkg))


def test_an_unannotated_external_store_says_why_it_scores_zero():
    from memaudit_core.package import ExternalMemory, Store
    from memaudit_core.union import with_store

    pkg = generate("update_chain")
    store = Store("blank", system="mem0", memories=(ExternalMemory("m1", 2.0, {}, "text"),))
    ev = score(with_store(pkg, store), 6, store_id="blank")
    assert ev.value == 0 and any("covers any evidence unit yet" in n for n in ev.notes)


def test_a_store_given_one_id_as_a_string_selects_that_id():
    from memaudit_core.package import PackageError, Store
    from memaudit_core.union import with_store

    pkg = generate("update_chain")
    assert Store("mine", select="update_1_tombstone").select == ("update_1_tombstone",)
    assert score(with_store(pkg, Store("mine", select="update_1_tombstone")), 6, store_id="mine")
    with pytest.raises(PackageError) as info:
        with_store(pkg, Store("mine", select=("nope",)))
    assert "store(s) 'mine' added in memory" in info.value.source


def test_a_limited_optimum_found_from_a_start_is_shared(count_solves, monkeypatch):
    """App QA: Compare (solved from gvt's store) and Overview (solved again without a start)
    showed two different incumbents for one package and budget."""
    import dataclasses

    from memaudit_core import analysis
    from memaudit_core.writers import run_writer

    pkg = generate("update_chain")
    inst = compile_cached(pkg)
    real = analysis.solve

    def limited(inst, budget, solver="auto", **kw):  # a run that stops at its limit
        res = real(inst, budget, solver, **kw)
        return dataclasses.replace(res, status="limit", certificate=None)

    monkeypatch.setattr(analysis, "solve", limited)
    store = tuple(run_writer("density", inst, 6.0).selected_idx)
    first = opt_at(inst, 6.0, time_limit=5.0, incumbent_idx=store)
    assert not first.certified
    assert opt_at(inst, 6.0, time_limit=5.0) is first  # no start: the same incumbent
    assert opt_at(inst, 6.0, time_limit=5.0, incumbent_idx=store) is first


def test_a_sweep_records_how_its_intervals_were_drawn():
    """The recorded bootstrap (resamples, seed) is enough to recompute every CI from the rows
    with numpy alone (review: the seed was a hidden constant)."""
    import numpy as np

    from memaudit_core.analysis import sweep
    from memaudit_core.generators import generate

    packages = [generate("memaudit-small", seed=s) for s in range(12)]
    res = sweep(packages, [4.0], writers=["density"])
    boot = res.to_dict()["bootstrap"]
    ratios = np.array([r.ratio for r in res.rows if r.method == "density"], dtype=float)
    # The draws index the ratios in ascending order, not row order (QA s51 M1).
    assert boot["order"] == "ascending ratios"
    ratios = np.sort(ratios)
    draws = np.random.default_rng(boot["seed"]).integers(
        0, ratios.size, size=(boot["resamples"], ratios.size)
    )
    low, high = np.percentile(ratios[draws].mean(axis=1), [2.5, 97.5])
    (row,) = [s for s in res.summary if s.method == "density"]
    assert (row.ci_low, row.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert row.ci_low < row.ci_high
