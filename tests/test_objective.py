"""Properties of the objective F for every saturation: normalised, monotone, submodular.

F is checked on random instances compiled from package dicts (so the same path as real
packages), against an independent plain-Python evaluation, and the incremental
:class:`~memaudit_core.objective.CoverageState` is checked against differences of F.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import BUILTIN_H

from memaudit_core.compiled import compile_package
from memaudit_core.objective import (
    SATURATIONS,
    CoverageState,
    evaluate,
    singleton_values,
    unit_values,
)
from memaudit_core.package import parse_package

SAT = sorted(SATURATIONS)


@st.composite
def instances(draw, saturation: str):
    """A compiled instance with 1..12 candidates in 1..5 groups over 1..6 units."""
    n_units = draw(st.integers(1, 6))
    n_groups = draw(st.integers(1, 5))
    weight = st.one_of(st.just(0.0), st.floats(0.05, 3.0))
    units = [{"id": f"u{r}", "weight": draw(weight)} for r in range(n_units)]
    cands = []
    for g in range(n_groups):
        for k in range(draw(st.integers(1, 3))):
            covered = draw(st.lists(st.integers(0, n_units - 1), max_size=n_units, unique=True))
            cov = {f"u{r}": draw(st.floats(0.01, 1.0)) for r in covered}
            cands.append(
                {
                    "id": f"g{g}c{k}",
                    "experience": f"e{g}",
                    "type": "atomic_fact",
                    "cost": draw(st.floats(0.1, 5.0)),
                    "coverage": cov,
                }
            )
    doc = {
        "memaudit": 1,
        "id": "prop",
        "objective": {"saturation": saturation},
        "experiences": [{"id": f"e{g}", "time": g} for g in range(n_groups)],
        "units": units,
        "candidates": cands,
    }
    return compile_package(parse_package(doc))


def plain_f(inst, selected) -> float:
    """F from scratch in plain Python (independent of objective.py's vectorised code)."""
    h = BUILTIN_H[inst.saturation]
    dense = inst.coverage.toarray()
    z = [sum(float(dense[i, r]) for i in selected) for r in range(inst.n_units)]
    return sum(float(w) * h(zr) for w, zr in zip(inst.weight, z, strict=True))


@st.composite
def nested_sets(draw, saturation: str):
    inst = draw(instances(saturation))
    n = inst.n_candidates
    order = draw(st.permutations(range(n)))
    t_size = draw(st.integers(0, n - 1))
    s_size = draw(st.integers(0, t_size))
    T = sorted(order[:t_size])
    S = sorted(order[:s_size])
    u = order[t_size]
    return inst, S, T, u


@pytest.mark.parametrize("saturation", SAT)
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_f_is_normalised_monotone_submodular(saturation, data):
    inst, S, T, u = data.draw(nested_sets(saturation))
    f = lambda X: evaluate(inst, X)  # noqa: E731
    assert f([]) == 0.0
    # Monotone: adding elements never lowers F.
    assert f(S) <= f(T) + 1e-9
    assert f(T) <= f(sorted([*T, u])) + 1e-9
    # Submodular: diminishing returns on nested sets.
    gain_s = f(sorted([*S, u])) - f(S)
    gain_t = f(sorted([*T, u])) - f(T)
    assert gain_s >= gain_t - 1e-9
    # Independent evaluation agrees.
    assert f(T) == pytest.approx(plain_f(inst, T), rel=1e-12, abs=1e-12)
    assert float(unit_values(inst, T).sum()) == pytest.approx(f(T), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("saturation", SAT)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_coverage_state_gains_match_differences_of_f(saturation, data):
    inst = data.draw(instances(saturation))
    order = data.draw(st.permutations(range(inst.n_candidates)))
    picks = order[: data.draw(st.integers(0, inst.n_candidates - 1))]
    state = CoverageState(inst)
    for i in picks:
        before = evaluate(inst, state.selected)
        gains = state.gains()
        expected = np.array(
            [evaluate(inst, [*state.selected, j]) - before for j in range(inst.n_candidates)]
        )
        np.testing.assert_allclose(gains, expected, rtol=1e-9, atol=1e-12)
        assert state.gain(i) == pytest.approx(expected[i], rel=1e-9, abs=1e-12)
        delta = state.add(i)
        assert delta == pytest.approx(expected[i], rel=1e-9, abs=1e-12)
        assert state.value == pytest.approx(evaluate(inst, state.selected), rel=1e-9, abs=1e-12)
    # Gains are never negative and singleton values are gains at the empty store.
    assert (state.gains() >= -1e-12).all()
    np.testing.assert_allclose(
        singleton_values(inst), [evaluate(inst, [j]) for j in range(inst.n_candidates)], atol=1e-12
    )


@pytest.mark.parametrize("saturation", SAT)
def test_saturations_are_concave_nondecreasing_with_h0_zero(saturation):
    h = SATURATIONS[saturation].h
    z = np.linspace(0.0, 5.0, 501)
    v = h(z)
    assert v[0] == 0.0
    assert (np.diff(v) >= -1e-15).all()
    assert (np.diff(v, 2) <= 1e-12).all()
    for x in (0.0, 0.3, 1.0, 2.5):
        assert SATURATIONS[saturation].h_scalar(x) == pytest.approx(float(h(np.array([x]))[0]))
