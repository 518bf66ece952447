"""QA s41, second round (certification rule): one label for one proof on every path.

Defect 1: a sweep's monotonicity shortcut carried a HiGHS proof made at B = 30 (affordable costs
well conditioned) to B = 1100 and judged HiGHS's conditioning there (costs spanning 1e7), so
``sweep`` and ``solve_budgets`` said "optimal (uncertified)" where ``solve`` said OPT.
Defect 2: ``certification_report`` compared engines with an absolute floor of 1, so on a
package in units of 1e-14 a MILP optimum 31% low "agreed" with B&B and enumeration.
Defect 3: ``certification_report`` certified a lone HiGHS proof on costs spanning more than a
factor 1e5, which ``solve`` leaves uncertified, and called it one "which certifies OPT on its
own".
Defect 4: asking for a cross-check where no second engine can run lowered OPT to "optimal
(uncertified)", against "asking for more checking never lowers it".

Inputs are QA's (/tmp/s41/qa2-c): mono.py's generator below, tiny.json, cs9.json, log14.json.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memaudit_core import curves, solve
from memaudit_core.analysis import sweep
from memaudit_core.compiled import compile_package
from memaudit_core.errors import SolverError
from memaudit_core.generators import generate
from memaudit_core.objective import evaluate
from memaudit_core.package import load_package, parse_package
from memaudit_core.solvers import RawSolution, certify, solve_budgets
from memaudit_core.solvers.milp import milp_ill_conditioned

FIX = Path(__file__).parent / "fixtures" / "s41_rule"


def _mono_package() -> dict[str, Any]:
    """QA's mono.py: 60 groups, costs 1-3, one candidate of 0.0001 and one of 1000."""
    r = random.Random(11)
    units = [
        {"id": f"u{j}", "kind": "fact", "text": "u", "weight": 1.0 + j * 0.1} for j in range(8)
    ]
    cands = []
    for i in range(60):
        for t in range(2):
            c = r.choice([1, 2, 3])
            if i == 0 and t == 0:
                c = 0.0001
            if i == 1 and t == 0:
                c = 1000
            cov = {f"u{j}": r.choice([0.5, 1.0]) for j in r.sample(range(8), 2)}
            cands.append(
                {
                    "id": f"e{i}:c{t}",
                    "experience": f"e{i}",
                    "type": "atomic_fact",
                    "text": "c",
                    "cost": c,
                    "coverage": cov,
                }
            )
    return {
        "memaudit": 1,
        "id": "mono",
        "title": "t",
        "description": "d",
        "cost_unit": "words",
        "objective": {"saturation": "cap1"},
        "experiences": [{"id": f"e{i}", "time": i, "text": "x"} for i in range(60)],
        "units": units,
        "queries": [],
        "candidates": cands,
    }


def test_monotone_result_keeps_the_certification_of_its_proof() -> None:
    """Defect 1: B = 1100 answered from the MILP proof at B = 30 is OPT, as solve() says."""
    pkg = parse_package(_mono_package())
    inst = compile_package(pkg)
    # The situation QA found: the proof is HiGHS's at 30, and only 1100 is ill-conditioned.
    assert not milp_ill_conditioned(inst, 30) and milp_ill_conditioned(inst, 1100)
    at30, at1100 = solve_budgets(inst, [30, 1100])
    assert at30.solver == "milp" and at30.label == "OPT"
    assert at1100.certificate.proof.startswith("monotonicity")
    assert at1100.label == "OPT" and at1100.certificate.reason == ""
    assert at1100.value == 10.8  # QA: `memaudit solve mono.json --budget 1100` -> OPT 10.8
    assert solve(inst, 1100).label == "OPT"
    rows = sweep([pkg], [30, 1100], ["gvt"]).rows
    assert [(r.budget, r.certified) for r in rows] == [(30.0, True), (1100.0, True)]


def _drop_last_pick(orig):
    """QA's p7.py: a faulty MILP that returns its store minus one pick as proven optimal."""

    def fake(engine, inst, budget, **kw):
        raw, t = orig(engine, inst, budget, **kw)
        if engine == "milp":
            sel = tuple(raw.selected_idx)[:-1]
            v = evaluate(inst, np.asarray(sel, dtype=np.int64))
            raw = RawSolution(sel, v, v, "optimal", nodes=raw.nodes, detail=raw.detail)
        return raw, t

    return fake


def test_certification_report_compares_engines_in_the_value_unit(monkeypatch) -> None:
    """Defect 2: tiny.json (weights about 1e-14): the faulty MILP's 7.37e-14 against the
    others' 1.07e-13 is a disagreement, as it is on huge.json (weights about 1e13)."""
    monkeypatch.setattr(curves, "run_engine", _drop_last_pick(curves.run_engine))
    rep = curves.certification_report(
        load_package(FIX / "tiny.json"), [7], engines=("bnb", "milp", "enum")
    )
    (row,) = rep.rows
    # QA's numbers, for the scale: 31% apart, far below the old absolute floor of 1e-9.
    assert row.run("bnb").recomputed == pytest.approx(1.07256e-13, rel=1e-12)
    assert row.run("milp").recomputed == pytest.approx(7.3651e-14, rel=1e-12)
    assert row.disagreement and not row.certified
    assert row.message.startswith("DISAGREEMENT: ") and "milp" in row.message


def test_lone_milp_proof_on_ill_conditioned_costs_is_not_certified() -> None:
    """Defect 3: cs9.json at 1010, MILP alone: not certified, as `memaudit solve --solver milp`
    says; never "certifies OPT on its own". With B&B, B&B's proof certifies OPT on its own, and
    HiGHS's is no second one (QA s48: not "cross-checked")."""
    pkg = load_package(FIX / "cs9.json")
    inst = compile_package(pkg)
    assert milp_ill_conditioned(inst, 1010)
    alone = curves.certification_report(pkg, [1010], engines=("milp",))
    (row,) = alone.rows
    assert row.run("milp").status == "optimal"
    assert not row.certified and not alone.all_certified
    assert "certifies OPT on its own" not in row.message
    assert "more than a factor 100000" in row.message and "not counted" in row.message
    level, (text,) = alone.banner()
    assert level == "warning" and "that proof certifies OPT there" not in text
    assert "At budget 1010, HiGHS's proof is not counted" in text
    assert solve(inst, 1010, solver="milp", cross_check=False).label == "optimal (uncertified)"
    both = curves.certification_report(pkg, [1010], engines=("milp", "bnb"))
    assert not both.rows[0].certified and both.rows[0].message.startswith("not cross-checked: ")
    assert "bnb proved 15.486 optimal, which certifies OPT on its own" in both.rows[0].message


def test_cross_check_with_no_second_engine_keeps_opt() -> None:
    """Defect 4: log14.json (log1p, 8.4M stores: no enumeration, no MILP) at 12."""
    inst = compile_package(load_package(FIX / "log14.json"))
    plain = solve(inst, 12)
    asked = solve(inst, 12, cross_check=True)
    assert plain.label == "OPT" and asked.label == "OPT"
    assert asked.value == plain.value and asked.certificate.reason == ""
    assert asked.certificate.proof.endswith("; no second exact engine could check it")
    (swept,) = solve_budgets(inst, [12], cross_check=True)
    assert (
        swept.label == "OPT" and "no second exact engine could check it" in swept.certificate.proof
    )


def _second_fails(monkeypatch, failing: str) -> None:
    orig = certify.run_engine

    def fake(engine, inst, budget, **kw):
        if engine == failing:
            raise SolverError(f"{engine} broke (test)")
        return orig(engine, inst, budget, **kw)

    monkeypatch.setattr(certify, "run_engine", fake)


def test_cross_check_that_cannot_run_keeps_opt(monkeypatch) -> None:
    """Defect 4: the cross-check's engine failing is said in the proof, not held against a
    proof that certifies on its own."""
    inst = compile_package(generate("update_chain"))
    _second_fails(monkeypatch, "enum")  # the explicit check's engine here
    res = solve(inst, 13, solver="bnb", cross_check=True)
    assert res.certificate.checks[0].engine == "bnb" and len(res.certificate.checks) == 1
    assert res.label == "OPT" and res.certificate.reason == ""
    assert "cross-check by enum could not run: enum broke (test)" in res.certificate.proof


def test_ill_conditioned_milp_still_needs_its_cross_check(monkeypatch) -> None:
    """Regression guard (passes before the fix too): where the rule needs the cross-check (a
    HiGHS proof on costs spanning more than 1e5), its failing leaves the label uncertified,
    and the reason says both."""
    inst = compile_package(load_package(FIX / "cs9.json"))
    _second_fails(monkeypatch, "bnb")
    _second_fails(monkeypatch, "enum")
    res = solve(inst, 1010, solver="milp", cross_check=True)
    assert res.label == "optimal (uncertified)"
    assert "more than a factor 100000" in res.certificate.reason
    assert "could not run" in res.certificate.reason
