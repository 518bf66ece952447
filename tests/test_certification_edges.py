"""Certification at its edges, where a loose tolerance would still pass the main contract
suite (each test here was found by mutation testing: a mutant survived every other test).

DESIGN.md section 5: a result is certified only with an optimal status and zero gap, the
engines agree within 1e-9 relative when both run, and the budget sweep's monotone shortcut
reuses an optimum only when it already reaches F's largest value.
"""

from __future__ import annotations

import itertools

import pytest

from memaudit_core.compiled import compile_package
from memaudit_core.errors import SolverDisagreementError
from memaudit_core.generators import generate
from memaudit_core.package import parse_package
from memaudit_core.solvers import ENGINES, RawSolution, solve, solve_budgets

# Near saturation. Two experiences, one candidate each, cost 1: a covers the heavy unit, b the light one.
NEAR_SATURATED = {
    "memaudit": 1,
    "id": "near-saturated",
    "experiences": [{"id": "e1", "time": 0}, {"id": "e2", "time": 1}],
    "units": [
        {"id": "heavy", "kind": "fact", "weight": 9999.0},
        {"id": "light", "kind": "fact", "weight": 1.0},
    ],
    "candidates": [
        {"id": "a", "experience": "e1", "type": "atomic_fact", "cost": 1, "coverage": {"heavy": 1}},
        {"id": "b", "experience": "e2", "type": "atomic_fact", "cost": 1, "coverage": {"light": 1}},
    ],
}


def _brute_opt(budget):
    weights = {u["id"]: u["weight"] for u in NEAR_SATURATED["units"]}
    cands = NEAR_SATURATED["candidates"]
    best = 0.0
    for k in range(len(cands) + 1):
        for combo in itertools.combinations(cands, k):
            if sum(c["cost"] for c in combo) > budget:
                continue
            z = {}
            for c in combo:
                for u, a in c["coverage"].items():
                    z[u] = z.get(u, 0.0) + a
            best = max(best, sum(weights[u] * min(1.0, v) for u, v in z.items()))
    return best


@pytest.mark.parametrize("solver", ["bnb", "milp", "enum"])
def test_near_saturated_optimum_is_not_reused_at_a_larger_budget(solver):
    res = solve_budgets(
        compile_package(parse_package(NEAR_SATURATED)), [1, 2], solver, cross_check=False
    )
    assert [r.value for r in res] == [_brute_opt(1), _brute_opt(2)] == [9999.0, 10000.0]
    assert res[1].certified
    assert not res[1].certificate.proof.startswith("monotonicity")


def _shifted(real, *, value_shift=0.0, bound_shift=0.0, status="optimal"):
    def engine(inst, budget, **kw):
        raw = real(inst, budget, **kw)
        return RawSolution(
            tuple(raw.selected_idx), raw.value + value_shift, raw.bound + bound_shift, status
        )

    return engine


def test_optimal_status_with_a_positive_gap_is_not_certified(monkeypatch):
    # Mutant M25 (certify.py: the "claims optimality with a gap" check dropped) survived.
    inst = compile_package(generate("update_chain"))
    honest = solve(inst, 6, "bnb", cross_check=False)
    assert honest.certified and honest.gap == 0.0
    # Same store, same (true) value, status "optimal", but a bound 1.0 above the value.
    monkeypatch.setitem(ENGINES, "bnb", _shifted(ENGINES["bnb"], bound_shift=1.0))
    res = solve(inst, 6, "bnb", cross_check=False)
    assert res.value == pytest.approx(honest.value)
    assert res.gap > 0.0
    assert not res.certified
    assert res.label != "OPT"
    assert "gap" in res.certificate.reason


def test_engines_disagreeing_by_1e_7_relative_raise(monkeypatch):
    # Mutant M27 (certify.py: agreement tolerance 1e-9 -> 1e-3) survived: the existing test
    # shifts the second engine by 0.5, far above any tolerance. DESIGN: agree within 1e-9.
    inst = compile_package(generate("temporal_interval"))
    solve(inst, 13, "enum")  # registers the engines
    # 11.135 (its optimum) vs 11.135 + 1e-6: relative difference ~9e-8 > 1e-9.
    monkeypatch.setitem(ENGINES, "enum", _shifted(ENGINES["enum"], value_shift=1e-6))
    with pytest.raises(SolverDisagreementError, match="disagree"):
        solve(inst, 13, "bnb", cross_check=True)
