"""Certification at the edge of HiGHS's tolerances (QA pass s19c).

Found by the s19c oracle sweep (random package 1425, the ``no_validity`` pool at B = 5): HiGHS
proved 1.5 with an objective of 1.500000001 (its 1e-9 feasibility tolerance lets y_r exceed
its coverage) and a dual bound of 1.5000000015. Its own gap (3.3e-10) and the distance between
its objective and the store's F (6.7e-10) were each within the 1e-9 the certificate allows,
and enumeration agreed on 1.5, yet the optimum was refused: the bound was measured against the
recomputed F, so the two allowances added up to "a gap of 1e-09".
"""

from __future__ import annotations

import pytest
from test_s19c_oracle import close, oracle_opt

from memaudit_core.analysis import ablation_opt
from memaudit_core.compiled import compile_package
from memaudit_core.package import parse_package
from memaudit_core.solvers import ENGINES, RawSolution, solve

DOC = {
    "memaudit": 1,
    "id": "s19c-1425",
    "objective": {"saturation": "cap1"},
    "experiences": [
        {"id": "e0", "time": 3},
        {"id": "e1", "time": 1},
        {"id": "e2", "time": 0},
        {"id": "e3"},
    ],
    "units": [
        {"id": "u0", "kind": "preference", "weight": 0.0},
        {"id": "u1", "kind": "invalidation", "weight": 2.0},
    ],
    "queries": [],
    "candidates": [
        {
            "id": "c0",
            "experience": "e1",
            "type": "compound_update",
            "cost": 2.0,
            "coverage": {"u0": 0.75, "u1": 0.25},
        },
        {
            "id": "c1",
            "experience": "e1",
            "type": "raw_span",
            "cost": 5.0,
            "coverage": {"u0": 1.0, "u1": 0.75},
        },
        {
            "id": "c2",
            "experience": "e2",
            "type": "graph_edge",
            "cost": 4.0,
            "coverage": {"u0": 1.0},
        },
        {
            "id": "c3",
            "experience": "e2",
            "type": "graph_edge",
            "cost": 5.0,
            "coverage": {"u0": 0.5, "u1": 0.75},
        },
        {"id": "c4", "experience": "e3", "type": "atomic_fact", "cost": 3.0, "coverage": {}},
    ],
}
NO_VALIDITY = {"raw_span", "atomic_fact", "summary", "graph_edge"}


def test_milp_optimum_within_its_tolerances_is_certified():
    inst = compile_package(parse_package(DOC))
    want = oracle_opt(DOC, 5.0, types=NO_VALIDITY)[0]
    for solver in ("milp", "auto", "bnb", "enum"):
        res = ablation_opt(inst, "no_validity", 5.0, solver)
        assert res.certified, (solver, res.certificate.reason)
        assert close(res.value, want)


def _engine(value_shift, bound_shift):
    real = ENGINES["enum"]

    def engine(inst, budget, **kw):
        raw = real(inst, budget, **kw)
        return RawSolution(
            tuple(raw.selected_idx), raw.value + value_shift, raw.value + bound_shift, "optimal"
        )

    return engine


@pytest.mark.parametrize(
    "value_shift,bound_shift,certified",
    [
        (6e-10, 1.2e-9, True),  # each allowance within 1e-9 (the HiGHS case above)
        (0.0, 2e-9, False),  # the engine's own gap above 1e-9
        (2e-9, 2e-9, False),  # its value is not the store's F
        (-6e-10, 6e-10, True),  # under-reported value, but the bound is within 1e-9 of the F
        (-6e-10, 1.2e-9, False),  # ... and not when it is not
    ],
)
def test_gap_is_the_engines_own_claim(monkeypatch, value_shift, bound_shift, certified):
    """A store worth 1.5 (relative allowances, 1e-9 of 1.5): the certificate holds the
    engine's bound to the larger of its value and the store's F, and that value to the F,
    each within 1e-9 (so OPT <= bound <= F (1 + 2e-9) at worst)."""
    inst = compile_package(parse_package(DOC))
    solve(inst, 5.0, "enum")  # registers the engines
    scale = 1.5
    monkeypatch.setitem(ENGINES, "enum", _engine(value_shift * scale, bound_shift * scale))
    res = solve(inst.pool_instance("no_validity"), 5.0, "enum", cross_check=False)
    assert res.value == 1.5
    assert res.certified is certified, res.certificate.reason
    if not certified:
        assert res.label != "OPT"
