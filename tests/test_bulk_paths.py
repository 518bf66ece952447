"""Bulk paths (issue 7) give exactly what the one-at-a-time paths give.

- ``writers.run_writers`` (batched greedy rows, one value pass) equals ``run_writer`` per budget
  for every reference writer, on random packages of every saturation and group capacity 2;
- the Python-float state used by the single-pass writers on small instances makes the same
  choices as the numpy ``CoverageState`` path;
- ``analysis.sweep`` gives the same rows whatever its ``cross_check`` mode, and the same rows as
  per-budget ``solve`` / ``run_writer`` calls.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memaudit_core import writers as W
from memaudit_core.analysis import ABLATIONS, sweep
from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.package import parse_package
from memaudit_core.solvers import solve

REFERENCE = list(W.WRITERS)
HYPO = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TYPES = ("raw_span", "atomic_fact", "summary", "tombstone", "compound_update")


@st.composite
def packages(draw):
    """(instance, budgets): 1..6 groups of 1..4 typed candidates over 1..6 units."""
    saturation = draw(st.sampled_from(["cap1", "linear", "log1p"]))
    n_units = draw(st.integers(1, 6))
    nice = draw(st.booleans())  # dyadic numbers make exact ties (tie rules) likely
    weight = (
        st.sampled_from([0.0, 0.5, 1.0, 2.0])
        if nice
        else st.floats(0.0, 3.0, allow_subnormal=False)
    )
    cover = st.sampled_from([0.25, 0.5, 1.0]) if nice else st.floats(0.01, 1.0)
    cost = st.integers(1, 4).map(float) if nice else st.floats(0.1, 5.0)
    candidates = []
    n_groups = draw(st.integers(1, 6))
    for g in range(n_groups):
        for k in range(draw(st.integers(1, 4))):
            units = draw(st.lists(st.integers(0, n_units - 1), max_size=3, unique=True))
            candidates.append(
                {
                    "id": f"g{g}c{k}",
                    "experience": f"e{g}",
                    "type": draw(st.sampled_from(TYPES)),
                    "cost": draw(cost),
                    "coverage": {f"u{r}": draw(cover) for r in units},
                }
            )
    doc = {
        "memaudit": 1,
        "id": "bulk",
        "objective": {"saturation": saturation},
        "experiences": [{"id": f"e{g}", "time": draw(st.integers(0, 3))} for g in range(n_groups)],
        "units": [{"id": f"u{r}", "weight": draw(weight)} for r in range(n_units)],
        "candidates": candidates,
    }
    inst = compile_package(parse_package(doc))
    if draw(st.booleans()):
        inst = inst.with_capacity(2)
    total = inst.total_cost
    budgets = draw(st.lists(st.floats(0.0, total + 1.0), min_size=1, max_size=4))
    return inst, [*budgets, 0.0]


@HYPO
@given(case=packages())
def test_run_writers_equals_run_writer(case):
    inst, budgets = case
    bulk = W.run_writers(REFERENCE, inst, budgets)
    assert list(bulk) == REFERENCE or set(bulk) == set(REFERENCE)
    for name in REFERENCE:
        for b, res in zip(budgets, bulk[name], strict=True):
            assert res == W.run_writer(name, inst, b), (name, b)


@HYPO
@given(case=packages())
def test_python_state_matches_numpy_state(case):
    inst, budgets = case
    py = {
        name: [W.WRITERS[name].fn(inst, b) for b in budgets]
        for name in ("gvt", "density", "recency_raw", "no_validity_gvt")
    }
    old = W._PY_STATE_MAX_UNITS
    W._PY_STATE_MAX_UNITS = -1  # force the numpy CoverageState path
    try:
        for name, sels in py.items():
            assert [W.WRITERS[name].fn(inst, b) for b in budgets] == sels, name
    finally:
        W._PY_STATE_MAX_UNITS = old


def test_greedy_rows_equal_single_runs():
    inst = compile_package(generate("memaudit-small", seed=3))
    types = W._prep(inst).types
    budgets = [1, 2, 5, 8, 16, 40]
    allowed = [None, types == "atomic_fact", types == "summary"]
    rows = W._greedy_rows(inst, budgets * 3, [a for a in allowed for _ in budgets])
    k = 0
    for a in allowed:
        for b in budgets:
            assert rows[k] == W._greedy_over(inst, b, a)
            k += 1


def test_run_writers_reports_invalid_budget():
    inst = compile_package(generate("update_chain"))
    with pytest.raises(Exception, match="budget"):
        W.run_writers(["gvt"], inst, [3, -1])


@pytest.mark.parametrize("mode", [True, False, None])
def test_sweep_rows_do_not_depend_on_cross_check_mode(mode):
    pkgs = [generate("memaudit-small", seed=s) for s in range(4)] + [generate("update_chain")]
    budgets = [2, 6, 13]
    writers = ["gvt", "density", "greedy", "recency_raw"]
    ablations = list(ABLATIONS)
    ref = sweep(pkgs, budgets, writers, ablations=ablations)  # default: "sample"
    other = sweep(pkgs, budgets, writers, ablations=ablations, cross_check=mode)
    assert other.rows == ref.rows
    assert all(r.certified for r in ref.rows)


def test_sweep_equals_one_budget_at_a_time():
    pkgs = [generate("memaudit-small", seed=s) for s in (5, 6)]
    budgets = [2, 4, 8, 16]
    res = sweep(pkgs, budgets, ["gvt", "fact_only"], ablations=["no_validity"])
    by_key = {(r.package_id, r.budget, r.method): r for r in res.rows}
    for pkg in pkgs:
        inst = compile_package(pkg)
        pool = inst.pool_instance("no_validity")
        for b in budgets:
            opt = solve(inst, b)
            for name in ("gvt", "fact_only"):
                row = by_key[(pkg.id, float(b), name)]
                assert row.value == W.run_writer(name, inst, b).value
                assert row.opt == pytest.approx(opt.value, abs=1e-12)
            row = by_key[(pkg.id, float(b), "no_validity_opt")]
            assert row.value == pytest.approx(solve(pool, b).value, abs=1e-12)
