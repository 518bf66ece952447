"""A total time shared by a computation's engine runs (solvers.timeshare) and its users:
solve_certified, solve_budgets, sweep, budget_curve, family_band and ablation_curve.

Time limits are checked as what each run is *given* (recorded at the engine boundary), never
as wall-clock measurements."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from memaudit_core import analysis, curves, robustness
from memaudit_core.analysis import compile_cached, opt_at, sweep
from memaudit_core.errors import MemAuditError
from memaudit_core.generators import generate
from memaudit_core.package import load_package
from memaudit_core.solvers import certify, solve
from memaudit_core.solvers.budgets import better_of, refine_unproven, solve_budgets
from memaudit_core.solvers.timeshare import (
    MIN_RUN_S,
    TimeShare,
    active_share,
    check_total_time_limit,
    run_time_limit,
    shared_time,
    skip_runs,
)

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"


def _clock(*times: float):
    """A fake clock returning ``times`` in order, then the last one forever."""
    seq = list(times)

    def now() -> float:
        return seq.pop(0) if len(seq) > 1 else seq[0]

    return now


@pytest.fixture
def given_limits(monkeypatch) -> list[float | None]:
    """Every engine run's time limit, as solve_certified hands it to the engine."""
    seen: list[float | None] = []
    real = certify.run_engine

    def recording(engine, inst, budget, *, time_limit=None, **kwargs):
        seen.append(time_limit)
        return real(engine, inst, budget, time_limit=time_limit, **kwargs)

    monkeypatch.setattr(certify, "run_engine", recording)
    return seen


# --------------------------------------------------------------------------- the share itself


def test_each_run_gets_its_fair_share_of_what_is_left() -> None:
    share = TimeShare(12.0, 4, clock=_clock(0.0, 0.0, 0.5, 9.0, 11.0))
    assert share.run_limit(None) == pytest.approx(3.0)  # 12 s for 4 runs
    assert share.run_limit(None) == pytest.approx(11.5 / 3)  # 0.5 s used, 3 runs left
    assert share.run_limit(None) == pytest.approx(1.5)  # 3 s for the last 2
    assert share.run_limit(None) == pytest.approx(1.0)  # the last run gets the rest
    assert share.runs_made == 4 and share.pending == 0


def test_a_runs_own_limit_caps_its_share() -> None:
    share = TimeShare(100.0, 2, clock=_clock(0.0))
    assert share.run_limit(5.0) == 5.0
    assert share.run_limit(None) == pytest.approx(100.0)


def test_skipped_runs_leave_their_time_to_the_others() -> None:
    share = TimeShare(10.0, 5, clock=_clock(0.0))
    share.skip(3)
    assert share.run_limit(None) == pytest.approx(5.0)


def test_a_spent_total_still_gives_each_run_a_floor() -> None:
    share = TimeShare(1.0, 3, clock=_clock(0.0, 0.0, 5.0))
    share.run_limit(None)
    assert share.remaining_s() == 0.0
    assert share.run_limit(None) == MIN_RUN_S


def test_runs_beyond_the_estimate_get_what_is_left() -> None:
    share = TimeShare(6.0, 1, clock=_clock(0.0, 0.0, 2.0))
    assert share.run_limit(None) == pytest.approx(6.0)
    assert share.run_limit(None) == pytest.approx(4.0)


def test_spare_time_is_a_share_beside_the_runs_still_expected() -> None:
    share = TimeShare(9.0, 2, clock=_clock(0.0))
    assert share.spare_s() == pytest.approx(3.0)
    assert share.spare_s(4) == pytest.approx(6.0)  # a part that made 4 runs: 4 of 6 shares
    share.skip(2)
    assert share.spare_s() == pytest.approx(9.0)


def test_shared_time_is_scoped_and_nests_inside_the_enclosing_total() -> None:
    assert active_share() is None and run_time_limit(7.0) == 7.0
    with shared_time(None, 3) as none:
        assert none is None and active_share() is None
    with shared_time(100.0, 10) as outer:
        assert active_share() is outer
        with shared_time(1000.0, 2) as inner:
            assert active_share() is inner and inner.total_s <= 100.0
            run_time_limit(None)
            run_time_limit(None)
        assert active_share() is outer and outer.pending == 8  # the inner runs counted
        with shared_time(1000.0, 1) as inner:
            with inner.extra_runs():
                run_time_limit(None)  # not an expected run: the outer keeps its count
        assert outer.pending == 8
        skip_runs(3)
        assert outer.pending == 5
    assert active_share() is None
    skip_runs(2)  # without a share: nothing to do


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "10", True])
def test_a_bad_total_is_refused(bad) -> None:
    with pytest.raises(MemAuditError, match="total time limit"):
        check_total_time_limit(bad)


def test_a_total_with_worker_processes_is_refused() -> None:
    with pytest.raises(MemAuditError, match="one worker"):
        check_total_time_limit(10.0, workers=2)
    pkg = generate("update_chain")
    with pytest.raises(MemAuditError, match="one worker"):
        sweep([pkg, pkg], [3.0], ["gvt"], total_time_limit=5.0, workers=2)
    inst = compile_cached(pkg)
    with shared_time(5.0, 2), pytest.raises(MemAuditError, match="one worker"):
        solve_budgets(inst, [3.0, 6.0], "bnb", workers=2)


# --------------------------------------------------------------------------- solver runs


def test_solves_inside_a_share_are_given_their_share(given_limits) -> None:
    inst = compile_cached(generate("update_chain"))
    with shared_time(8.0, 4):
        res = solve(inst, 3.0, "bnb", cross_check=False)
    assert res.certified
    assert given_limits and 0 < given_limits[0] <= 8.0 / 4
    given_limits.clear()
    solve(inst, 3.0, "bnb", cross_check=False, time_limit=1.5)  # outside: its own limit
    assert given_limits == [1.5]


def test_a_curve_under_a_total_never_gives_a_run_more_than_the_total(given_limits) -> None:
    pkg = generate("temporal_interval")
    curve = curves.budget_curve(pkg, [3, 6, 13], ["writer:gvt"], solver="bnb", total_time_limit=4.0)
    assert given_limits and all(t is not None and 0 < t <= 4.0 for t in given_limits)
    # Everything is proven well within it: the same values as without a total.
    plain = curves.budget_curve(pkg, [3, 6, 13], ["writer:gvt"], solver="bnb")
    assert [p.value for p in curve.opt] == pytest.approx([p.value for p in plain.opt])
    assert all(p.certified for p in curve.opt)


def test_an_unproven_optimum_under_a_total_is_an_incumbent_with_its_bound() -> None:
    # B&B cannot close event-graph-500 at B = 655 in well under a second (MILP proves it).
    pkg = load_package(SAMPLES / "event-graph-500.json")
    curve = curves.budget_curve(
        pkg, [655], ["writer:gvt"], ablations=(), solver="bnb", total_time_limit=0.3
    )
    (opt,) = curve.opt
    assert not opt.certified and opt.label == "incumbent" and opt.bound > opt.value > 0
    assert any("within the 0.3 s shared" in n for n in curve.notes)
    exact = solve(compile_cached(pkg), 655, "milp")
    assert exact.certified and opt.value <= exact.value + 1e-9 <= opt.bound + 2e-9
    (gvt,) = [p for p in curve.points if p.method_key == "writer:gvt"]
    assert gvt.opt == opt.value  # the ratio is against the incumbent the curve shows


def test_a_limited_result_under_a_share_is_not_cached_for_the_full_limit() -> None:
    inst = compile_cached(load_package(SAMPLES / "event-graph-500.json"))
    with shared_time(0.2, 1):
        short = opt_at(inst, 655, "bnb", time_limit=30.0)
    assert not short.certified
    again = opt_at(inst, 655, "bnb", time_limit=0.1)  # a different limit: solved anyway
    assert again is not short
    key = (inst.fingerprint, 655.0, "bnb", 30.0)
    assert key not in analysis._opt_cache  # a 30 s page must not get the 0.2 s answer


def test_budget_curve_reuses_the_sweeps_unproven_optimum(monkeypatch) -> None:
    pkg = load_package(SAMPLES / "event-graph-500.json")
    calls = []
    monkeypatch.setattr(curves, "opt_at", lambda *a, **k: calls.append(a))
    curve = curves.budget_curve(
        pkg, [655], ["writer:gvt", "writer:density"], ablations=(), solver="bnb", time_limit=0.1
    )
    assert not curve.opt[0].certified
    assert calls == []  # it was solved again per budget (twice the wait on the app's page)


def test_ablation_curve_without_removed_candidates_solves_once(monkeypatch) -> None:
    solved = []
    real = analysis.solve
    monkeypatch.setattr(analysis, "solve", lambda *a, **k: solved.append(a[1]) or real(*a, **k))
    pkg = generate("update_chain")
    types = {c.type for c in pkg.candidates}
    absent = next(t for t in ["summary", "graph_edge", "atomic_fact", "raw_span"] if t not in types)
    analysis._opt_cache.clear()
    curve = robustness.ablation_curve(pkg, [3.0], [absent], solver="bnb", total_time_limit=5.0)
    assert curve.n_removed == 0 and curve.points[0].drop == 0.0
    assert solved == [3.0]


def test_refinement_spends_the_time_left_on_unproven_results() -> None:
    inst = compile_cached(load_package(SAMPLES / "event-graph-500.json"))
    first = solve(inst, 655, "bnb", time_limit=0.05)
    assert not first.certified
    results = [first]
    assert refine_unproven([(inst, results)], "bnb") == 0  # no share: nothing to do
    with shared_time(1.0, 0):
        assert refine_unproven([(inst, results)], "bnb") == 1
    better = results[0]
    assert better.value >= first.value and better.bound <= first.bound
    assert better.certified or better.gap <= first.gap


def test_better_of_keeps_a_proof_else_the_best_incumbent_and_tightest_bound() -> None:
    inst = compile_cached(load_package(SAMPLES / "event-graph-500.json"))
    limited = solve(inst, 655, "bnb", time_limit=0.05)
    proven = solve(inst, 655, "milp")
    assert better_of(limited, proven) is proven and better_of(proven, limited) is proven
    half = (limited.bound - limited.value) / 2
    low = replace(limited, value=limited.value - 1.0, bound=limited.bound - half)
    merged = better_of(low, limited)
    assert merged.value == limited.value and merged.bound == limited.bound - half
    assert merged.gap < limited.gap and not merged.certified


def test_union_curve_shares_its_total(given_limits) -> None:
    from memaudit_core.union import union_curve

    pkg = load_package(SAMPLES / "external-stores-demo.json")
    plain = union_curve(pkg)
    analysis._opt_cache.clear()
    given_limits.clear()
    shared = union_curve(pkg, total_time_limit=3.0)
    assert given_limits and all(t is not None and 0 < t <= 3.0 for t in given_limits)
    assert [r.to_dict() for r in shared] == [r.to_dict() for r in plain]
    with pytest.raises(MemAuditError, match="total time limit"):
        union_curve(pkg, total_time_limit=-2)


def test_a_band_counts_the_seeds_over_an_unproven_incumbent_and_draws_them_hollow() -> None:
    from memaudit_ui.figures import family_band_curve

    # 50 random groups at 10% of their cost take HiGHS over a minute to prove: 0.4 s cannot.
    band = curves.family_band(
        "random_coverage",
        [0, 1],
        {},
        [107.8],
        ["writer:gvt"],
        ablations=(),
        total_time_limit=0.4,
    )
    (row,) = band.rows
    assert row.n == 2 and row.n_unproven >= 1 and band.table_rows()[0]["seeds unproven"] >= 1
    assert any("within the 0.4 s shared by the band's solves" in n for n in band.notes)
    fig = family_band_curve(band, "band")
    symbols = [
        s for t in fig.data if t.marker and t.marker.symbol is not None for s in t.marker.symbol
    ]
    assert "circle-open" in symbols
    assert any(t.name == "some seeds over an unproven incumbent" for t in fig.data)
    proven = curves.family_band("memaudit-small", [0, 1], {}, [4], ["writer:gvt"], ablations=())
    assert proven.rows[0].n_unproven == 0
    names = [t.name for t in family_band_curve(proven, "band").data]
    assert "some seeds over an unproven incumbent" not in names


def test_an_overview_inside_a_share_solves_within_it(given_limits) -> None:
    from memaudit_core.reports import overview

    # The optimum is solved on a helper thread: the share must reach it.
    analysis._opt_cache.clear()
    with shared_time(3.0, 1):
        ov = overview(generate("update_chain"), 6, solver="bnb")
    assert ov.opt.certified
    assert given_limits and all(t is not None and 0 < t <= 3.0 for t in given_limits)


def test_a_pool_store_lifts_an_unproven_full_optimum_below_it() -> None:
    from memaudit_core.errors import SolverDisagreementError
    from memaudit_core.solvers.budgets import lift_store

    inst = compile_cached(load_package(SAMPLES / "event-graph-500.json"))
    limited = solve(inst, 655, "bnb", time_limit=0.05)
    proven = solve(inst, 655, "milp")  # stands in for a pool's better store (same ids)
    assert proven.value > limited.value
    lifted = lift_store(inst, proven, limited)
    assert lifted.value == pytest.approx(proven.value) and lifted.selected == proven.selected
    assert lifted.bound == limited.bound and not lifted.certified and lifted.gap > 0
    assert lift_store(inst, limited, proven) is proven  # nothing to learn from a worse store
    with pytest.raises(SolverDisagreementError):
        lift_store(inst, proven, replace(limited, bound=proven.value - 1.0))


def test_better_of_refuses_contradicting_runs() -> None:
    from memaudit_core.errors import SolverDisagreementError

    inst = compile_cached(load_package(SAMPLES / "event-graph-500.json"))
    limited = solve(inst, 655, "bnb", time_limit=0.05)
    wrong = replace(limited, value=limited.value - 2.0, bound=limited.value - 1.0)
    with pytest.raises(SolverDisagreementError):
        better_of(limited, wrong)


def test_no_ablation_ratio_above_one_under_a_short_share() -> None:
    pkg = generate("random_coverage", seed=0, n_groups=100)
    grid = pkg.budget_grid()[:4]
    curve = robustness.ablation_curve(pkg, grid, preset="no_validity", total_time_limit=1.0)
    assert all(p.drop is None or p.drop >= -1e-9 for p in curve.points)
    swept = sweep([pkg], grid, [], ablations=["no_validity_opt"], total_time_limit=1.0)
    assert all(r.ratio is None or r.ratio <= 1 + 1e-9 for r in swept.rows)


def test_the_note_says_how_long_a_call_took_past_its_total() -> None:
    late = TimeShare(5.0, 600, clock=_clock(0.0, 14.0))
    late.runs_made = 600
    text = late.overrun_text(writers=True)
    assert "took 14.0 s in all" in text and "600 solves" in text
    assert TimeShare(5.0, 6, clock=_clock(0.0, 5.2)).overrun_text(writers=True) == ""


def test_a_very_short_share_runs_branch_and_bound_for_its_root_bound() -> None:
    from memaudit_core.solvers.certify import choose

    pkg = generate("random_coverage", seed=0, n_groups=100)
    inst = compile_cached(pkg)
    budget = pkg.budget_grid()[3]
    assert choose(inst, budget) == "milp"
    with shared_time(0.05, 1):
        quick = solve(inst, budget, "auto")
    assert quick.solver == "bnb" and not quick.certified
    # B&B's root bound, not HiGHS's trivial one (every unit's weight).
    assert quick.value <= quick.bound < 0.99 * float(inst.weight.sum())


def test_branch_and_bound_keeps_its_root_bound_however_short_its_limit() -> None:
    # A limit spent before the multiplier steps of the root bound left every unit's weight as
    # the bound (the test above failed that way under load); a few steps are always taken.
    from memaudit_core.solvers.bnb import solve_bnb

    pkg = generate("random_coverage", seed=0, n_groups=100)
    inst = compile_cached(pkg)
    raw = solve_bnb(inst, pkg.budget_grid()[3], time_limit=1e-9)
    assert raw.status == "limit"
    assert raw.value <= raw.bound < 0.97 * float(inst.weight.sum())


def _without_times(value):
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if "time" not in k}
    if isinstance(value, (list, tuple)):
        return [_without_times(v) for v in value]
    return value


@pytest.mark.parametrize(
    "run",
    [
        lambda pkg, **kw: robustness.cost_rule_sensitivity(pkg, [3, 6], **kw).to_dict(),
        lambda pkg, **kw: robustness.capacity_sensitivity(pkg, [3, 6], 2, **kw).to_dict(),
        lambda pkg, **kw: robustness.noise_sensitivity(
            pkg, "flip", 0.2, 2, 0, [3, 6], **kw
        ).to_dict(),
    ],
    ids=["cost_rules", "capacity", "noise"],
)
def test_sensitivities_share_a_total(run, given_limits) -> None:
    pkg = generate("update_chain")
    plain = run(pkg)
    analysis._opt_cache.clear()
    given_limits.clear()
    shared = run(pkg, total_time_limit=4.0)
    assert given_limits and all(t is not None and 0 < t <= 4.0 for t in given_limits)
    # Everything but timings is the same when all is proven well within the total.
    assert _without_times(shared) == _without_times(plain)
    with pytest.raises(MemAuditError, match="total time limit"):
        run(pkg, total_time_limit=0)


def test_noise_sensitivity_counts_unproven_optima() -> None:
    pkg = generate("random_coverage", seed=0)
    ns = robustness.noise_sensitivity(
        pkg, "flip", 0.1, 1, 0, [107.8], solver="bnb", total_time_limit=0.2
    )
    assert 1 <= ns.n_unproven <= 2 and ns.to_dict()["n_unproven"] == ns.n_unproven


def test_a_union_curve_under_a_short_share_stays_consistent() -> None:
    from package_utils import random_groups_with_store

    from memaudit_core.union import union_curve

    hard = random_groups_with_store()
    rows = union_curve(hard, ["ext"], hard.budget_grid()[2:5], total_time_limit=1.0)
    assert not all(r.certified for r in rows)  # 1 s cannot prove 100 random groups
    tol = 1e-9
    for r in rows:
        # The union optimum is at least the upper-pruned store and the package's optimum (both
        # feasible in P+), and at most its proven bound.
        assert r.union_opt_value >= max(r.upper_value, r.package_opt_value) - tol
        assert r.union_opt_bound >= r.union_opt_value - tol
        assert r.upper_bound >= r.upper_value - tol >= r.kept_value - 2 * tol
        assert r.union_ratio <= 1 + tol and r.extraction <= 1 + tol


def test_extra_runs_keep_the_expected_runs_shares() -> None:
    share = TimeShare(12.0, 4, clock=_clock(0.0))
    with share.extra_runs():
        assert share.run_limit(None) == pytest.approx(12.0)  # all that is left, capped below
        assert share.run_limit(2.0) == 2.0
    assert share.pending == 4 and share.runs_made == 2
    assert share.run_limit(None) == pytest.approx(3.0)  # the 4 expected runs keep 12 / 4


def test_a_quick_looks_time_chart_names_the_shared_total_not_the_per_run_limit() -> None:
    from memaudit_ui.figures import engine_time_curve

    hard = curves.certification_report(
        generate("random_coverage", seed=0), [107.8], total_time_limit=0.5
    )
    names = [t.name for t in engine_time_curve(hard, "t").data]
    assert any(n and "stopped at its share of 0.5 s" in n for n in names)
    assert not any(n and n.startswith("time limit") for n in names)
    full = curves.certification_report(generate("update_chain"), [3], time_limit=30)
    assert "time limit (30 s)" in [t.name for t in engine_time_curve(full, "t").data]
