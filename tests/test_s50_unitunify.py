"""Review s50 findings 1, 2 and 6: one value unit for every comparison of engines, no gains
dropped past certification's tolerance, and no unproven cross-check returned as "proved".

1. The audit and the Certification report compared in a unit of 1 where solve compared in the
   best affordable candidate's F: on the gaineps package (best single 0.002, 300 candidates of
   1e-12) a bnb store of 0.002 "agreed" with the MILP's 0.0020000003 (1.5e-7 relative apart).
2. bnb dropped marginal gains of at most 1e-12 during the search: 2000 candidates that each add
   1e-12 once a shared unit is covered were left out, 2e-9 of OPT.
6. A MILP refused by its own check returned the cross-check's store as "proved" without looking
   at the cross-check's own bound.

Expected optima are closed-form from the constructions (F monotone under cap1: every
candidate that fits joins the optimum).
"""

from __future__ import annotations

import json
import math

import pytest
from test_s50_gaineps import _closed_form, _package
from test_s50_milpdisagree import P2650, P2650_BUDGET, P2650_WEIGHTS
from test_s50_milpdisagree import _package as _milp_package

import memaudit_core.solvers as solvers
from memaudit_core import curves
from memaudit_core.audit import audit_instance
from memaudit_core.compiled import compile_package
from memaudit_core.errors import SolverDisagreementError
from memaudit_core.package import load_package, parse_package
from memaudit_core.solvers import RawSolution, certify, solve

RTOL = 1e-9


def _gaineps(tmp_path) -> tuple[dict, str]:
    """tests/test_s50_gaineps.py's slack package: a0 covers A (weight 0.002) alone; 300 t's
    costing 1e-3 each cover their own unit of weight 1e-12; the budget fits all of them."""
    k = 300
    d = _package(1, k, 1e-12)
    d["units"][0]["weight"] = 0.002
    for c in d["candidates"][1:]:
        c["cost"] = 1e-3
    d["budget"] = 1 + k * 1e-3 * 1.0000001
    path = tmp_path / "slack.json"
    path.write_text(json.dumps(d))
    return d, str(path)


def _bnb_without_the_tiny(orig):
    """bnb returning a0 alone as proven (what it returned before the floor was lowered): a
    store 1.5e-7 relative below OPT, which no comparison within 1e-9 of OPT may accept."""

    def fake(engine, inst, budget, **kw):
        raw, t = orig(engine, inst, budget, **kw)
        if engine == "bnb":
            a0 = list(inst.candidate_ids).index("a0")
            value = 0.002
            raw = RawSolution((a0,), value, value, "optimal", nodes=1, detail={})
        return raw, t

    return fake


def test_audit_does_not_call_a_pair_apart_by_more_than_1e9_of_opt_agree(tmp_path, monkeypatch):
    d, path = _gaineps(tmp_path)
    opt = _closed_form(d, 1)
    assert opt == pytest.approx(0.0020000003, rel=1e-12)
    inst = compile_package(load_package(path))
    monkeypatch.setattr(solvers, "run_engine", _bnb_without_the_tiny(solvers.run_engine))
    rec = audit_instance(inst, d["budget"])
    assert rec["bnb_value"] == 0.002
    assert abs(rec["milp_value"] - opt) <= RTOL * opt
    # The unit is at most the best affordable single (0.002), a lower bound on OPT.
    assert rec["value_unit"] <= 0.002
    assert rec["outcome"] == "disagree", rec


def test_certification_report_does_not_certify_the_pair(tmp_path, monkeypatch):
    d, path = _gaineps(tmp_path)
    monkeypatch.setattr(curves, "run_engine", _bnb_without_the_tiny(curves.run_engine))
    rep = curves.certification_report(load_package(path), [d["budget"]], engines=("bnb", "milp"))
    (row,) = rep.rows
    assert row.run("bnb").recomputed == 0.002
    assert row.disagreement and not row.certified
    assert not rep.all_certified


def _shared_unit_package(k: int, tiny: float) -> dict:
    """k experiences, one candidate each, costing 1: every candidate covers A (weight 1)
    fully and its own unit C_j of weight ``tiny``; the budget k fits all of them."""
    units = [{"id": "A", "kind": "fact", "text": "u", "weight": 1.0}]
    units += [{"id": f"C{j}", "kind": "fact", "text": "u", "weight": tiny} for j in range(k)]
    return {
        "memaudit": 1,
        "id": "shared-unit",
        "title": "t",
        "cost_unit": "words",
        "objective": {"saturation": "cap1"},
        "budget": float(k),
        "experiences": [{"id": f"e{j}", "time": j, "text": "x"} for j in range(k)],
        "units": units,
        "queries": [],
        "candidates": [
            {
                "id": f"c{j}",
                "experience": f"e{j}",
                "type": "atomic_fact",
                "text": "c",
                "cost": 1.0,
                "coverage": {"A": 1.0, f"C{j}": 1.0},
            }
            for j in range(k)
        ],
    }


@pytest.mark.parametrize("solver", ["bnb", "auto"])
def test_gains_at_the_old_floor_are_not_dropped_past_the_tolerance(solver):
    """After the first pick covers A, each candidate adds exactly 1e-12 (the old GAIN_EPS):
    dropping all 1999 of them is 2e-9 of OPT = 1 + 2000e-12, past the 1e-9 tolerance."""
    k, tiny = 2000, 1e-12
    opt = math.fsum([1.0] + [tiny] * k)
    inst = compile_package(parse_package(_shared_unit_package(k, tiny)))
    res = solve(inst, float(k), solver)
    assert res.label == "OPT"
    assert res.value >= opt * (1 - RTOL), (res.value, opt)
    assert res.bound >= opt * (1 - RTOL), (res.bound, opt)


def test_cross_check_store_needs_its_own_proof(monkeypatch):
    """The MILP's report fails its own check (test_s50_milpdisagree), and enum says "optimal"
    with a bound 1e-6 relative above its store: enum proved nothing, so its store is no
    "proved" answer to return; the difference stays a disagreement."""
    orig = certify.run_engine

    def fake(engine, inst, budget, **kw):
        raw, t = orig(engine, inst, budget, **kw)
        if engine == "enum":
            raw = RawSolution(
                raw.selected_idx, raw.value, raw.value * (1 + 1e-6), "optimal", nodes=raw.nodes
            )
        return raw, t

    monkeypatch.setattr(certify, "run_engine", fake)
    inst = compile_package(parse_package(_milp_package(P2650, P2650_WEIGHTS, P2650_BUDGET)))
    with pytest.raises(SolverDisagreementError):
        solve(inst, P2650_BUDGET, "milp")


def test_value_unit_at_a_budget_is_at_most_the_best_affordable_single(tmp_path):
    d, path = _gaineps(tmp_path)
    inst = compile_package(load_package(path))
    assert solvers.value_unit(inst, d["budget"]) == 0.002
    assert solvers.value_unit(inst) == 1.0
    assert not hasattr(solvers, "check_unit")  # one definition
