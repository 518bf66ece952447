"""Certified optima against an independent brute-force oracle, every saturation (QA pass s19c).

For every saturation of the registry and every solver (``auto``, ``bnb``, ``milp``, ``enum``),
on hundreds of small random packages (weights from units or from queries, fractional coverage,
dominated siblings, shuffled experience times): a certified value equals the oracle's OPT
(exact rationals for cap1 / linear), the returned store is feasible and its F, recomputed by
the oracle, is the reported value. The same for many budgets at once (``solve_budgets``,
whose ``auto`` answers from one decomposition), for group capacity 2 (the sensitivity
analysis's k = 2) and for packages in units far out of band (rescaled internally).

The oracle is :mod:`test_s19c_oracle` (written from DESIGN.md, never from the core's objective).
"""

from __future__ import annotations

import copy
import math
import random
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_s19c_oracle import (
    close,
    feasible,
    interesting_budgets,
    oracle_opt,
    oracle_value,
    random_package,
)

from memaudit_core.compiled import compile_package
from memaudit_core.errors import SolverError
from memaudit_core.package import parse_package
from memaudit_core.saturations import SATURATIONS
from memaudit_core.solvers import solve, solve_budgets

SOLVERS = ("auto", "bnb", "milp", "enum")


def _check(doc, budget, res, opt, k=1):
    ctx = f"{doc['id']} sat={doc['objective']['saturation']} B={budget} solver={res.solver}"
    assert feasible(doc, res.selected, budget, k), ctx
    assert close(res.value, oracle_value(doc, res.selected)), ctx
    assert res.certified, (ctx, res.certificate.reason)
    assert res.label == "OPT"
    assert close(res.value, opt), (ctx, res.value, float(opt))


def test_registry_is_what_the_oracle_knows():
    """A saturation added to the registry must be added to the oracle (and to these tests)."""
    assert set(SATURATIONS) == {"cap1", "linear", "log1p"}


@pytest.mark.parametrize("saturation", sorted(SATURATIONS))
def test_certified_equals_oracle_every_solver(saturation):
    for seed in range(60):
        doc = random_package(seed, saturation=saturation)
        inst = compile_package(parse_package(doc))
        rng = random.Random(seed)
        for budget in interesting_budgets(doc, rng, 3):
            opt, _ = oracle_opt(doc, budget)
            for solver in SOLVERS:
                if solver == "milp" and saturation == "log1p":
                    with pytest.raises(SolverError, match="saturations cap1, linear only"):
                        solve(inst, budget, solver)
                    continue
                for cross in (None, True):
                    _check(doc, budget, solve(inst, budget, solver, cross_check=cross), opt)


@pytest.mark.parametrize("saturation", sorted(SATURATIONS))
def test_solve_budgets_equals_oracle(saturation):
    for seed in range(60):
        doc = random_package(seed + 1000, saturation=saturation, n_exp=(2, 6), n_cand=(1, 3))
        inst = compile_package(parse_package(doc))
        budgets = interesting_budgets(doc, random.Random(seed), 6)
        opts = {b: oracle_opt(doc, b)[0] for b in budgets}
        for solver in SOLVERS:
            if solver == "milp" and saturation == "log1p":
                continue
            for cross in ("sample", True):
                results = solve_budgets(inst, budgets[::-1], solver, cross_check=cross)
                for b, res in zip(budgets[::-1], results, strict=True):
                    assert res.budget == b
                    _check(doc, b, res, opts[b])


@pytest.mark.parametrize("saturation", sorted(SATURATIONS))
def test_group_capacity_two_equals_oracle(saturation):
    for seed in range(40):
        doc = random_package(seed + 2000, saturation=saturation, n_exp=(1, 4), n_cand=(1, 3))
        inst = compile_package(parse_package(doc)).with_capacity(2)
        budgets = interesting_budgets(doc, random.Random(seed), 4)
        for solver in SOLVERS:
            if solver == "milp" and saturation == "log1p":
                continue
            results = solve_budgets(inst, budgets, solver)
            for b, res in zip(budgets, results, strict=True):
                _check(doc, b, res, oracle_opt(doc, b, k=2)[0], k=2)


def _scaled(doc, ws, cs):
    d = copy.deepcopy(doc)
    for u in d["units"]:
        if "weight" in u:
            u["weight"] *= ws
    for q in d["queries"]:
        q["weight"] = q.get("weight", 1) * ws
    for c in d["candidates"]:
        c["cost"] *= cs
    return d


def _rclose(a, b, rtol=1e-9):
    a, b = Fraction(a), Fraction(b)
    return a == b or abs(a - b) <= Fraction(rtol) * max(abs(a), abs(b))


@pytest.mark.parametrize(
    "ws,cs", [(2.0**-45, 1.0), (1e-13, 1.0), (1.0, 1e12), (1e-11, 1e-9), (1e15, 1.0), (3e-7, 7e20)]
)
def test_out_of_band_units_every_saturation(ws, cs):
    """Values relative to the package's own scale: a package in units of 1e-13 is solved as
    exactly as one in units of 1 (README), for every saturation and solver."""
    for seed in range(30):
        base = random_package(seed + 3000, n_exp=(2, 5), n_cand=(1, 3))
        doc = _scaled(base, ws, cs)
        inst = compile_package(parse_package(doc))
        sat = doc["objective"]["saturation"]
        for b in [x * cs for x in interesting_budgets(base, random.Random(seed), 3)]:
            opt = oracle_opt(doc, b)[0]
            for solver in SOLVERS:
                if solver == "milp" and sat == "log1p":
                    continue
                res = solve(inst, b, solver)
                assert res.certified, res.certificate.reason
                assert feasible(doc, res.selected, b)
                assert _rclose(res.value, oracle_value(doc, res.selected))
                assert _rclose(res.value, opt), (seed, ws, cs, b, solver, res.value, float(opt))


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 10**9),
    saturation=st.sampled_from(sorted(SATURATIONS)),
    style=st.sampled_from(["dyadic", "int", "decimal"]),
    budget_pick=st.integers(0, 10**6),
)
def test_hypothesis_certified_equals_oracle(seed, saturation, style, budget_pick):
    doc = random_package(seed, saturation=saturation, style=style, n_exp=(1, 5), n_cand=(0, 3))
    inst = compile_package(parse_package(doc))
    budgets = interesting_budgets(doc, random.Random(budget_pick), 8)
    budget = budgets[budget_pick % len(budgets)]
    opt = oracle_opt(doc, budget)[0]
    for solver in SOLVERS:
        if solver == "milp" and saturation == "log1p":
            continue
        _check(doc, budget, solve(inst, budget, solver), opt)
    assert math.isfinite(float(opt))
