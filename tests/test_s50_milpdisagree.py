"""QA s50 (exactness findings 5 and 6): HiGHS's 1e-9 feasibility tolerance on a coverage row
lets y_r reach 1 on coverage 0.999999999, so the MILP reports the optimum beside a store worth
1e-9 relative less. Its own check refuses that report (uncertified), yet with enum
cross-checking, the store difference was called a disagreement between exact engines and
``solve --solver milp`` aborted with "please report it". The proven store must be returned, the
MILP run uncertified with its reason, and a lone MILP never labelled OPT.

Expected optima come from a brute force over every store written here (one candidate per
experience, cost within the budget's 1e-9 relative tolerance, F under cap1).
"""

from __future__ import annotations

import itertools
import json
import math

from cli_utils import run_cli

from memaudit_core.compiled import compile_package
from memaudit_core.package import parse_package
from memaudit_core.solvers import solve

RTOL = 1e-9

# Fuzz seed 932: one unit, tiny costs, coverage 1.0 beside 0.999999999 at the same cost.
# HiGHS takes c1_2 (0.999999999) with y = 1; the package does not shrink and keep that.
P932_WEIGHTS = {"u0": 1.0975124833514887}
P932_BUDGET = 4.823900356162322e-99
P932 = [
    ("c0_0", "e0", 2.3152876422140432e-99, {"u0": 1e-09}),
    ("c0_1", "e0", 2.4119501853170114e-99, {}),
    ("c0_2", "e0", 1.607966790211341e-99, {"u0": 1.0}),
    ("c1_0", "e1", 1.607966790211341e-99, {"u0": 1.0}),
    ("c1_1", "e1", 1.607966790211341e-99, {}),
    ("c1_2", "e1", 1.607966790211341e-99, {"u0": 0.999999999}),
    ("c2_0", "e2", 2.4119501853170114e-99, {}),
    ("c2_1", "e2", 1.607966790211341e-99, {}),
    ("c2_2", "e2", 8.039833951056705e-100, {}),
    ("c3_0", "e3", 1.607966790211341e-99, {}),
    ("c3_1", "e3", 1.3866211873667355e-99, {"u0": 0.7149775232190896}),
    ("c3_2", "e3", 2.4119501853170114e-99, {"u0": 0.8691235952227692}),
    ("c4_0", "e4", 9.127189898543194e-100, {}),
    ("c4_1", "e4", 1.7642658730096522e-99, {"u0": 1e-09}),
    ("c5_0", "e5", 8.039833951056705e-100, {}),
]

# Fuzz seed 2650, cut to two candidates: c2 covers u1 0.999999999, and c0 tops it up to 1
# (2.5e-59 more, 1e-9 relative), which HiGHS's y_u1 = 1 on c2 alone hides.
P2650_WEIGHTS = {"u0": 5.020393907840468e-50, "u1": 2.510196953920234e-50}
P2650_BUDGET = 6.093573285629897
P2650 = [
    ("c0", "e0", 1.4322827026005958, {"u1": 0.10589872208008433}),
    ("c2", "e2", 3.0, {"u0": 1e-09, "u1": 0.999999999}),
]


def _package(cands: list, weights: dict[str, float], budget: float) -> dict:
    exps = sorted({c[1] for c in cands})
    return {
        "memaudit": 1,
        "id": "milp-disagree",
        "title": "t",
        "cost_unit": "words",
        "objective": {"saturation": "cap1"},
        "budget": budget,
        "experiences": [{"id": e, "time": i, "text": "x"} for i, e in enumerate(exps)],
        "units": [{"id": u, "kind": "fact", "text": "u", "weight": w} for u, w in weights.items()],
        "queries": [],
        "candidates": [
            {"id": i, "experience": e, "type": "atomic_fact", "text": "t", "cost": c, "coverage": v}
            for i, e, c, v in cands
        ],
    }


def _f(cands: list, weights: dict[str, float], ids: list[str] | tuple[str, ...]) -> float:
    cov = {c[0]: c[3] for c in cands}
    z: dict[str, list[float]] = {}
    for i in ids:
        for u, v in cov[i].items():
            z.setdefault(u, []).append(v)
    return math.fsum(weights[u] * min(1.0, math.fsum(vs)) for u, vs in z.items())


def _brute(cands: list, weights: dict[str, float], budget: float) -> float:
    groups: dict[str, list] = {}
    for c in cands:
        groups.setdefault(c[1], []).append(c)
    best = 0.0
    for combo in itertools.product(*[[None, *g] for g in groups.values()]):
        sel = [c for c in combo if c is not None]
        if math.fsum(c[2] for c in sel) <= budget * (1 + RTOL):
            best = max(best, _f(cands, weights, [c[0] for c in sel]))
    return best


def _check_cross_checked(cands: list, weights: dict[str, float], budget: float) -> None:
    opt = _brute(cands, weights, budget)
    inst = compile_package(parse_package(_package(cands, weights, budget)))

    # Alone, the MILP's store is worth 1e-9 relative less than the optimum: never OPT.
    lone = solve(inst, budget, "milp", cross_check=False)
    assert lone.label != "OPT"
    assert lone.value == _f(cands, weights, lone.selected)
    assert opt - lone.value > RTOL * opt
    assert lone.bound >= opt * (1 - 1e-15)

    # Cross-checked by enum (the default for a tiny package): the proven store, uncertified
    # because the MILP's own report was refused; no disagreement raised.
    res = solve(inst, budget, "milp")
    assert res.solver == "milp"
    assert not res.certified
    assert res.label == "optimal (uncertified)"
    assert abs(res.value - opt) <= 1e-15 * opt
    assert abs(_f(cands, weights, res.selected) - opt) <= 1e-15 * opt
    assert abs(res.bound - opt) <= RTOL * opt
    cert = res.certificate
    assert cert.checks[0].engine == "milp"
    assert opt - cert.checks[0].recomputed_value > RTOL * opt
    assert f"milp reported {cert.checks[0].value!r} but the store's F is" in cert.reason
    assert "enum proved" in cert.reason


def test_p932_cross_checked_milp_returns_enum_optimum() -> None:
    _check_cross_checked(P932, P932_WEIGHTS, P932_BUDGET)


def test_p2650_cross_checked_milp_returns_enum_optimum() -> None:
    _check_cross_checked(P2650, P2650_WEIGHTS, P2650_BUDGET)


def test_cli_solve_milp_no_abort_and_reads_back(tmp_path) -> None:
    opt = _brute(P932, P932_WEIGHTS, P932_BUDGET)
    pkg = tmp_path / "p932.json"
    pkg.write_text(json.dumps(_package(P932, P932_WEIGHTS, P932_BUDGET)))
    rc, out, err = run_cli("solve", str(pkg), "--solver", "milp")
    assert rc == 0, err
    assert "please report" not in err
    assert "optimal (uncertified)" in out
    assert "enum proved" in out

    rc, out, err = run_cli("solve", str(pkg), "--solver", "milp", "--json")
    assert rc == 0, err
    saved = tmp_path / "solve.json"
    saved.write_text(out)
    data = json.loads(out)
    assert abs(data["value"] - opt) <= 1e-15 * opt
    assert data["certificate"]["certified"] is False
    rc, out, err = run_cli("show", str(saved))
    assert rc == 0, err
    assert "optimal (uncertified)" in out


def test_read_back_accepts_cross_check_store_far_above_milp_store(tmp_path) -> None:
    """A MILP store far below its report (HiGHS reporting inf, say) yields to enum's proven
    store the same way; read back, the result's F is the cross-check's store, which
    ``certificate.returned_check`` names (in a file saved before that field, the reason), and
    without that record it is refused."""
    pkg = tmp_path / "p932.json"
    pkg.write_text(json.dumps(_package(P932, P932_WEIGHTS, P932_BUDGET)))
    rc, out, err = run_cli("solve", str(pkg), "--solver", "milp", "--json")
    assert rc == 0, err
    data = json.loads(out)
    cert = data["certificate"]
    store_f = cert["checks"][0]["recomputed_value"]
    cert["checks"][0]["recomputed_value"] = 0.5
    cert["reason"] = cert["reason"].replace(f"store's F is {store_f!r}", "store's F is 0.5")
    far = tmp_path / "far.json"
    far.write_text(json.dumps(data))
    rc, out, err = run_cli("show", str(far))
    assert rc == 0, err
    assert "enum proved" in out

    assert cert["returned_check"] == 1
    cert["returned_check"] = 0
    unexplained = tmp_path / "unexplained.json"
    unexplained.write_text(json.dumps(data))
    rc, out, err = run_cli("show", str(unexplained))
    assert rc == 2
    assert "$.certificate.recomputed_value" in err

    # Saved before returned_check: the reason's wording says whose store is returned.
    del cert["returned_check"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    rc, out, err = run_cli("show", str(old))
    assert rc == 0, err
    cert["reason"] = cert["reason"].replace("enum proved", "enum found")
    old.write_text(json.dumps(data))
    rc, out, err = run_cli("show", str(old))
    assert rc == 2
    assert "$.certificate.recomputed_value" in err
