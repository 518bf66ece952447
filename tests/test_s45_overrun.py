"""QA s45: callers that take a total time limit say when it was far overrun, and label no
unproven value OPT: union_curve, certification_report and the cost-rule, capacity and noise
sensitivities (sweep and budget_curve already did, tests/test_s44_libapi.py).

The clock of every shared total is a fake one that moves 100 s per reading, so the total is
spent before the first run and the overrun is certain (no timing assert): each run gets the
floor MIN_RUN_S of real time. Optima labelled OPT are checked against unlimited solves.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from memaudit_core import curves, robustness, union
from memaudit_core.analysis import compile_cached
from memaudit_core.errors import ResultError
from memaudit_core.package import load_package
from memaudit_core.results import read_result
from memaudit_core.solvers import solve

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
HARD = SAMPLES / "event-graph-500.json"  # not proven in MIN_RUN_S at these budgets
DEMO = SAMPLES / "external-stores-demo.json"
TOTAL = 1e-9


@pytest.fixture(scope="module")
def hard():
    pkg = load_package(HARD)
    return pkg, [pkg.budget_grid()[3]]


def _overrun(notes) -> list[str]:
    return [n for n in notes if f"shared a total of {TOTAL:g} s; it took" in n]


def _optimum(inst, budget: float) -> float:
    """The exact optimum, with no limit (the oracle for any value labelled OPT)."""
    res = solve(inst, budget, "bnb")
    assert res.certified
    return res.value


def _round_trip(res) -> None:
    saved = json.loads(json.dumps(res.to_dict()))
    assert read_result(saved) == res
    old = {k: v for k, v in saved.items() if k != "notes"}  # saved before notes existed
    assert read_result(old) == replace(res, notes=())


# --------------------------------------------------------------------------- union curve


def test_union_curve_says_its_total_was_overrun(late_clock):
    curve = union.union_curve(load_package(DEMO), budgets=[6, 24], total_time_limit=TOTAL)
    assert len(_overrun(curve.notes)) == 1
    assert curve.to_dict()["notes"] == list(curve.notes)
    # Every point shown as OPT is the unlimited union report's optimum.
    for row in curve:
        if row.certified:
            exact = union.union_report(load_package(DEMO), row.store_id, row.budget)
            assert row.union_opt_value == pytest.approx(exact.union_opt_value, rel=1e-9)


def test_union_curve_without_a_total_has_no_note():
    curve = union.union_curve(load_package(DEMO), budgets=[6])
    assert curve.notes == () and curve.to_dict()["notes"] == []


def test_an_unproven_union_point_is_not_headed_opt_on_a_projector():
    curve = union.union_curve(load_package(DEMO), budgets=[6])
    assert "OPT over P+" in curve.present_rows(6, "words")[0]
    limited = curve.replace(rows=[replace(curve[0], certified=False), *curve[1:]])
    shown = limited.present_rows(6, "words")
    assert all("OPT over P+" not in row for row in shown)
    assert [row["proven"] for row in shown] == ["no (incumbent)"] + ["yes"] * (len(curve) - 1)
    assert shown[0]["best over P+"] == f"{curve[0].union_opt_value:.3f}"


# --------------------------------------------------------------------------- certification


def test_certification_report_says_its_total_was_overrun(late_clock, hard):
    pkg, grid = hard
    rep = curves.certification_report(pkg, grid, total_time_limit=TOTAL)
    assert len(_overrun(rep.notes)) == 1
    inst = compile_cached(pkg)
    for row in rep.rows:
        if row.certified:
            assert row.run("bnb").value == pytest.approx(_optimum(inst, row.budget), rel=1e-9)
        else:  # a stopped run carries incumbent, bound and gap
            stopped = [e for e in row.runs if e.applicable and e.hit_limit]
            assert stopped and all(e.bound is not None and e.gap is not None for e in stopped)
    assert rep.n_certified < len(rep.rows)  # the fake clock left something unproven
    assert rep.banner()[0] != "success"
    _round_trip(rep)


def test_certification_report_without_a_total_has_no_note():
    rep = curves.certification_report(load_package(SAMPLES / "update_chain.json"), [6])
    assert rep.notes == ()


# --------------------------------------------------------------------------- sensitivities


def test_cost_rule_sensitivity_says_its_total_was_overrun(late_clock, hard):
    pkg, grid = hard
    sens = robustness.cost_rule_sensitivity(
        pkg, grid, ["as_stored", "words"], ["density"], total_time_limit=TOTAL
    )
    assert len(_overrun(sens.notes)) == 1
    rows = [row for r in sens.rules for row in r.rows]
    assert sens.n_unproven > 0
    inst = compile_cached(pkg)
    for row in rows:
        if row.certified:
            if row.rule == "as_stored":
                assert row.opt == pytest.approx(_optimum(inst, row.budget), rel=1e-9)
        else:  # the incumbent with its proven bound, never OPT
            assert row.opt_bound is not None and row.opt_bound > row.opt
    _round_trip(sens)


def test_capacity_sensitivity_says_its_total_was_overrun(late_clock, hard):
    pkg, grid = hard
    cap = robustness.capacity_sensitivity(pkg, grid, total_time_limit=TOTAL)
    assert len(_overrun(cap.notes)) == 1
    for p in cap.points:
        statuses = dict(p.engine_status)
        assert (p.label == "OPT") == ("optimal" in statuses.values())
        if not p.certified_1:
            assert p.label_1 == "incumbent"
            assert "OPT(k=1)" not in cap.table_rows()[0]
    saved = json.loads(json.dumps(cap.to_dict()))
    assert read_result(saved) == cap


def test_noise_sensitivity_says_its_total_was_overrun(late_clock, hard):
    pkg, grid = hard
    ns = robustness.noise_sensitivity(
        pkg, "shrink", 0.2, draws=1, budgets=grid, writers=["density"], total_time_limit=TOTAL
    )
    assert len(_overrun(ns.notes)) == 1
    assert ns.n_unproven > 0
    _round_trip(ns)


def test_sensitivities_without_a_total_have_no_overrun_note():
    pkg = load_package(SAMPLES / "update_chain.json")
    sens = robustness.cost_rule_sensitivity(pkg, [6], ["as_stored", "words"], ["density"])
    cap = robustness.capacity_sensitivity(pkg, [6])
    ns = robustness.noise_sensitivity(pkg, "shrink", 0.2, draws=1, budgets=[6])
    assert sens.notes == () and ns.notes == ()
    assert _overrun(cap.notes) == [] and all("shared a total" not in n for n in cap.notes)
    rows = [row for r in sens.rules for row in r.rows]
    assert all(row.certified for row in rows)
    assert [row.opt_bound for row in rows] == pytest.approx([row.opt for row in rows], rel=1e-9)


def test_a_cost_rule_row_bound_below_its_opt_is_refused():
    pkg = load_package(SAMPLES / "update_chain.json")
    saved = robustness.cost_rule_sensitivity(pkg, [6], ["as_stored"], ["density"]).to_dict()
    row = saved["rules"][0]["rows"][0]
    row["opt_bound"] = row["opt"] - 1.0
    with pytest.raises(ResultError, match="opt_bound") as caught:
        read_result(saved)
    assert caught.value.rule == "inconsistent"


def test_show_prints_the_overrun_note(late_clock, hard, tmp_path):
    from cli_utils import run_cli

    pkg, grid = hard
    ns = robustness.noise_sensitivity(
        pkg, "shrink", 0.2, draws=1, budgets=grid, writers=["density"], total_time_limit=TOTAL
    )
    path = tmp_path / "noise.json"
    path.write_text(json.dumps(ns.to_dict()))
    code, out, _ = run_cli("show", str(path))
    assert code == 0
    assert f"note: The solves of every draw shared a total of {TOTAL:g} s; it took" in out
    assert "optima (clean and noisy) a time limit left unproven" in out
