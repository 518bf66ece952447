"""QA s48 (certification, findings 1 and 2): a HiGHS result on ill-conditioned costs, which
``solve`` refuses to certify, counted as a proof agreeing with bnb in ``audit`` and on the
Certification page, and ``solve`` printed its bound as "proven bound ..., gap 0%".

The package is built here: one unit of weight 1e9 (``e0:c0``, cost 3), a cost-1e6 option of
half of it and a cost-3 option worth 0.5 in one group, and 16 zero-value groups so that more
than 20,000 stores fit (``solve --solver milp`` then runs no enumeration cross-check, and
``audit`` no enum). Affordable costs span 3 to 1e6, more than the factor 1e5 of the rule.
HiGHS returns ``e0:c0`` alone (1e9) as optimal with bound 1e9; the exact optimum, computed
below by a dynamic programme over exact fractions, is 1e9 + 0.5 — 5e-10 relative, inside the
1e-9 agreement tolerance, which is how the two "agreed". Since s49 HiGHS gets its objective
scaled up (its absolute 1e-9 had swallowed the 0.5, 2.3e-10 in the value-scaled view) and finds
1e9 + 0.5; its proof on these costs still counts for nothing, which is what is tested.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from cli_utils import run_cli

from memaudit_core import curves
from memaudit_core.audit import audit_instance
from memaudit_core.compiled import compile_package
from memaudit_core.package import parse_package

BUDGET = 1_000_000.0


def _package() -> dict[str, Any]:
    cands = [
        ("e0:c0", 3, {"big": 1}),
        ("e1:c0", 1e6, {"big": 0.5}),
        ("e1:c1", 3, {"small": 1}),
        *((f"p{j}:c0", 3, {}) for j in range(16)),
    ]
    return {
        "memaudit": 1,
        "id": "ill",
        "cost_unit": "words",
        "objective": {"saturation": "linear"},
        "budget": BUDGET,
        "experiences": [
            {"id": e, "time": i}
            for i, e in enumerate(dict.fromkeys(c[0].split(":")[0] for c in cands))
        ],
        "units": [
            {"id": "big", "kind": "fact", "weight": 1e9},
            {"id": "small", "kind": "fact", "weight": 0.5},
        ],
        "queries": [],
        "candidates": [
            {
                "id": i,
                "experience": i.split(":")[0],
                "type": "atomic_fact",
                "cost": c,
                "coverage": v,
            }
            for i, c, v in cands
        ],
    }


def _exact_optimum(pkg: dict[str, Any], budget: float) -> Fraction:
    """Multiple-choice knapsack by dynamic programming over exact fractions (linear
    saturation: a store's value is the sum of its candidates' weighted coverage)."""
    weight = {u["id"]: Fraction(u["weight"]) for u in pkg["units"]}
    groups: dict[str, list[tuple[Fraction, Fraction]]] = {}
    for c in pkg["candidates"]:
        value = sum((weight[u] * Fraction(a) for u, a in c["coverage"].items()), Fraction(0))
        groups.setdefault(c["experience"], []).append((Fraction(c["cost"]), value))
    cap = Fraction(budget)
    states = {Fraction(0): Fraction(0)}  # cost -> best value at that cost
    for options in groups.values():
        new = dict(states)
        for cost, value in states.items():
            for c, v in options:
                if cost + c <= cap and new.get(cost + c, Fraction(-1)) < value + v:
                    new[cost + c] = value + v
        states = new
    return max(states.values())


OPT = _exact_optimum(_package(), BUDGET)


@pytest.fixture(scope="module")
def inst():
    return compile_package(parse_package(_package()))


def test_audit_does_not_count_the_highs_proof(inst) -> None:
    # HiGHS claimed optimality for a store 0.5 below OPT here until s49 scaled its objective
    # (the value-scaled view put that 0.5 at 2.3e-10, under HiGHS's absolute 1e-9): it now
    # finds OPT, but its proof on these costs still counts for nothing.
    assert OPT == Fraction(2_000_000_001, 2)
    rec = audit_instance(inst, BUDGET)
    assert rec["bnb_status"] == "optimal" and Fraction(rec["bnb_value"]) == OPT
    assert rec["milp_status"] == "unproven" and rec["milp_bound"] is None
    assert rec["outcome"] == "unproven"
    assert any("milp's proof and bound not counted" in p for p in rec["problems"])


def test_audit_cli_says_nothing_was_checked(tmp_path: Path) -> None:
    path = tmp_path / "ill.json"
    path.write_text(json.dumps(_package()))
    code, out, _ = run_cli("audit", str(path), "--budgets", "1000000", "--quiet")
    assert code == 1
    assert out.startswith("NOTHING CHECKED: 0 of 1 checks")
    assert "milp unproven incumbent 1e+09 bound n/a" in out


def test_certification_page_says_one_engine_proof() -> None:
    rep = curves.certification_report(parse_package(_package()), [BUDGET])
    (row,) = rep.rows
    assert Fraction(row.run("bnb").recomputed) == OPT and row.run("bnb").certified
    milp = row.run("milp")
    assert not milp.certified and milp.bound is None and milp.gap is None
    assert not row.certified and row.agreement is None
    assert row.message.startswith("not cross-checked: milp found a store worth 1e+09, but its ")
    assert "bnb proved 1e+09 optimal, which certifies OPT on its own" in row.message
    level, (text,) = rep.banner()
    assert level == "warning" and "proved the same optimum" not in text
    assert "one engine proved the optimum" in text and "HiGHS's is not counted" in text
    # A saved report reads back whole.
    again = curves.CertificationReport.from_dict(json.loads(json.dumps(rep.to_dict())))
    assert again.rows[0].certified is False


def test_solve_does_not_call_the_highs_bound_proven(tmp_path: Path) -> None:
    path = tmp_path / "ill.json"
    path.write_text(json.dumps(_package()))
    code, out, _ = run_cli("solve", str(path), "--solver", "milp")
    assert code == 0
    (line,) = [ln for ln in out.splitlines() if ln.startswith("NOT certified")]
    assert "proven bound 1000000000," not in line and "gap 0%" not in line
    # QA s49: the bound given is one proven without HiGHS; HiGHS's is named beside it.
    # With the objective scaled (QA s49, milptol) HiGHS's own figure is 1000000000.5; either
    # way it is named as no proof, beside the bound proven without it.
    assert re.search(r"proven bound 15000000\d\d \(HiGHS's bound [0-9.]+ is no proof here\)", line)


def test_score_does_not_call_the_highs_bound_proven(tmp_path: Path) -> None:
    # density keeps e0:c0 and e1:c1, worth OPT itself (the oracle's). Before s49 HiGHS's bound
    # lay below it, and a note saying OPT "is at most the proven bound" or that the true ratio
    # is at least F / bound was false (lead, s48); the bound is still no proof on these costs.
    path = tmp_path / "ill.json"
    path.write_text(json.dumps(_package()))
    code, out, _ = run_cli("score", str(path), "--writer", "density", "--solver", "milp", "--json")
    assert code == 0
    doc = json.loads(out)
    # QA s49: the bound reported is proven without HiGHS, so at least OPT.
    assert Fraction(doc["value"]) == OPT <= Fraction(doc["opt"]["bound"])
    notes = " ".join(doc["notes"])
    assert "proven bound 1e+09" not in notes and "proven upper bound 1e+09" not in notes
    assert "F / bound = 1.000" not in notes
    assert "(HiGHS's bound 1e+09 is no proof here)" in notes
