"""QA s49 review (findings 2, 4 and 5) of HiGHS's objective scaling and of the bound given in
place of HiGHS's on ill-conditioned costs.

- ``--solver milp`` raised an uncaught OverflowError on a valid package whose best single
  candidate is worth a subnormal amount (weight 1e-160 x coverage 1e-160): the scale's exponent
  came from ``1024 / best`` = inf. Nothing capped the scaled objective below HiGHS's infinite
  cost (1e20) either.
- A limited run's bound was only ever tested on unlimited solves, so a bound not mapped back
  from the scaled objective would have gone unnoticed.
- Certification took a cross-check's bound for the result even when that check's own report
  was refused, and read-back no longer compared such a result's bound with any check.

Expected values come from the package JSON (total unit weight, candidates' own values) or
from the rule as documented, never from the function under test.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from test_s48_milpill import BUDGET as ILL_BUDGET
from test_s48_milpill import _package as ill_package

from memaudit_core.compiled import compile_package
from memaudit_core.errors import ResultError
from memaudit_core.objective import evaluate
from memaudit_core.package import parse_package
from memaudit_core.results import read_result
from memaudit_core.solvers import RawSolution, run_engine, solve
from memaudit_core.solvers.certify import finish
from memaudit_core.solvers.milp import objective_scale

FLOOR = 1024.0  # the documented floor of the best single candidate's scaled value
CEILING = 1e15  # the documented cap on a scaled objective coefficient


def _one_candidate(weight: float, coverage: float, cost: float = 1.0) -> dict[str, Any]:
    return {
        "memaudit": 1,
        "id": "one",
        "experiences": [{"id": "e0"}, {"id": "e1"}],
        "units": [{"id": "r", "weight": weight}, {"id": "s", "weight": weight}],
        "candidates": [
            {
                "id": "c0",
                "experience": "e0",
                "type": "atomic_fact",
                "cost": cost,
                "coverage": {"r": coverage},
            },
            {
                "id": "c1",
                "experience": "e1",
                "type": "atomic_fact",
                "cost": cost,
                "coverage": {"s": coverage},
            },
        ],
        "budget": 2 * cost,
    }


def _expected_scale(best: float, top: float | None = None) -> float:
    """The documented rule, by counting: the smallest power of two 2^e, e >= 0, with
    best * 2^e >= 1024, then halved while top * 2^e > 1e15 (never below 1)."""
    scale = 1.0
    while best * scale < FLOOR:
        scale *= 2.0
    while top is not None and scale > 1.0 and top * scale > CEILING:
        scale /= 2.0
    return scale


@pytest.mark.parametrize("weight", [0.44, 0.001, 3.0, 1024.0, 5000.0])
def test_objective_scale_follows_its_rule(weight: float) -> None:
    inst = compile_package(parse_package(_one_candidate(weight, 1.0)))
    assert objective_scale(inst, 2) == _expected_scale(weight)


def test_objective_scale_hand_values() -> None:
    inst = compile_package(parse_package(_one_candidate(0.44, 1.0)))
    assert objective_scale(inst, 2) == 4096.0  # 0.44 x 2048 = 901 < 1024 <= 0.44 x 4096
    big = compile_package(parse_package(_one_candidate(1024.0, 1.0)))
    assert objective_scale(big, 2) == 1.0
    # Nothing affordable, and affordable candidates worth nothing.
    assert objective_scale(inst, 0.5) == 1.0
    zero = compile_package(parse_package(_one_candidate(0.44, 0.0)))
    assert objective_scale(zero, 2) == 1.0


def test_objective_scale_is_capped_below_highs_infinite_cost() -> None:
    inst = compile_package(parse_package(_one_candidate(0.44, 1.0)))
    for top in (1e14, 1e13, 2.5e11, 1e15, 1e17):
        got = objective_scale(inst, 2, np.array([top, 0.44]))
        assert got == _expected_scale(0.44, top)
        assert got == 1.0 or top * got <= CEILING


@pytest.mark.parametrize(("weight", "coverage"), [(1e-160, 1e-160), (1e-10, 1e-300)])
def test_subnormal_values_solve_without_a_crash(weight: float, coverage: float) -> None:
    inst = compile_package(parse_package(_one_candidate(weight, coverage)))
    scale = objective_scale(inst, 2)  # base: OverflowError
    assert scale == 1.0
    res = solve(inst, 2, "milp", cross_check=False)
    assert res.value >= weight * coverage > 0
    assert res.bound >= res.value


def _padded_package() -> dict[str, Any]:
    """60 experiences of 3 random candidates over 40 units weighing 0.001-0.01 each: the best
    single candidate is worth well under 1024, so HiGHS's objective is scaled."""
    rng = random.Random(7)
    n_e, n_u = 60, 40
    units = [
        {"id": f"u{i}", "kind": "fact", "weight": rng.uniform(0.001, 0.01)} for i in range(n_u)
    ]
    cands = [
        {
            "id": f"e{e}c{k}",
            "experience": f"e{e}",
            "type": "atomic_fact",
            "cost": rng.randint(1, 9),
            "coverage": {f"u{j}": rng.random() for j in rng.sample(range(n_u), 4)},
        }
        for e in range(n_e)
        for k in range(3)
    ]
    return {
        "memaudit": 1,
        "id": "pad",
        "objective": {"saturation": "cap1"},
        "experiences": [{"id": f"e{e}", "time": e} for e in range(n_e)],
        "units": units,
        "queries": [],
        "candidates": cands,
        "budget": 40,
    }


@pytest.mark.parametrize("node_limit", [1, 2])
def test_limited_milp_bound_is_mapped_back(node_limit: int) -> None:
    doc = _padded_package()
    # cap1: no store is worth more than every unit's full weight.
    ceiling = sum(u["weight"] for u in doc["units"])
    inst = compile_package(parse_package(json.loads(json.dumps(doc))))
    assert objective_scale(inst, 40) > 1.0
    raw, _ = run_engine("milp", inst, 40, node_limit=node_limit)
    assert raw.status == "limit"
    # HiGHS's own bound, before any cap to F of every candidate: a bound left in the scaled
    # objective's units would be thousands of times the total weight.
    engine_bound = raw.detail.get("engine_bound", raw.bound)
    assert raw.value <= engine_bound <= ceiling
    res = solve(inst, 40, "milp", node_limit=node_limit, cross_check=False)
    assert res.value <= res.bound <= ceiling


def _ill_finish(second: RawSolution | None, *, primary_report: float | None = None) -> Any:
    """finish() on the s48 package's HiGHS result with ``second`` as bnb's cross-check, HiGHS's
    reported value replaced by ``primary_report`` when given."""
    inst = compile_package(parse_package(ill_package()))
    raw, t1 = run_engine("milp", inst, ILL_BUDGET)
    if primary_report is not None:
        raw = replace(raw, value=primary_report, bound=primary_report)
    cross = None if second is None else (replace(second, selected_idx=raw.selected_idx), 0.1)
    return finish(inst, ILL_BUDGET, "milp", raw, t1, second="bnb", second_raw=cross)


def _ill_ceiling() -> float:
    """F of every affordable candidate of the s48 package (linear saturation): each unit's
    weight times its summed coverage, every candidate fitting the budget alone."""
    doc = ill_package()
    weight = {u["id"]: u["weight"] for u in doc["units"]}
    return sum(
        weight[u] * c
        for cand in doc["candidates"]
        if cand["cost"] <= ILL_BUDGET
        for u, c in cand["coverage"].items()
    )


def _store_f() -> float:
    inst = compile_package(parse_package(ill_package()))
    raw, _ = run_engine("milp", inst, ILL_BUDGET)
    return evaluate(inst, raw.selected_idx)


def test_refused_cross_check_bound_is_not_given() -> None:
    store_f = _store_f()
    # HiGHS and bnb both report 3 x their store's F: both reports are refused (the engines are
    # then held to their stores only), so bnb's bound, the store's F, proves nothing.
    bogus = RawSolution((), 3 * store_f, store_f, "optimal")
    res = _ill_finish(bogus, primary_report=3 * store_f)
    assert "bnb reported" in res.certificate.reason
    # Not bnb's bound (the store's F, 1e9 + 0.5) but a ceiling at least the JSON's.
    assert res.bound >= _ill_ceiling() > 1.4 * store_f  # base: the store's F
    assert res.certificate.reason.endswith("F of every affordable candidate")


def test_limited_cross_check_bound_is_named_and_checked_on_read_back() -> None:
    store_f = _store_f()
    tighter = store_f * (1 + 1e-3)
    res = _ill_finish(RawSolution((), store_f, tighter, "limit"))
    assert res.bound == tighter
    assert res.certificate.reason.endswith("bnb's")
    doc = res.to_dict()
    assert read_result(doc).bound == tighter
    # An edited bound above bnb's (here F of every affordable candidate) with its gap.
    edited = json.loads(json.dumps(doc))
    loose = _ill_ceiling()
    edited["bound"] = loose
    edited["gap"] = (loose - edited["value"]) / edited["value"]
    with pytest.raises(ResultError, match=r"\$\.bound"):  # base: read back
        read_result(edited)
