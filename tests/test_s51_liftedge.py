"""Exactness QA s51: two edges of the engines' value scale (``CompiledInstance.value_scale_at``).

1. **Lift trigger.** Values were lifted by a power of two only when the best candidate that
   fits alone (a proven lower bound on OPT) was worth under 2^-10 in the engines' units. Just
   above it, their absolute 1e-12 (ties of values below 1, zero gains) is up to 1.02e-9 of OPT,
   above certification's 1e-9: a store 0.99e-12 better than a cheaper one "tied" with it, and
   auto, bnb and enum certified OPT 1.0e-9 relative low.
2. **Overflow.** A unit of weight 1e300 that only an unaffordable candidate reaches, beside
   affordable units of about 1e-200: the scale for the affordable units (2^663) took the
   weight 1e300 to inf, bnb reported NaN and ``memaudit solve`` (auto) exited 1 with "exact
   solvers disagree ... please report it".

Expected optima come from a brute force written here: every store (one candidate or none per
experience) enumerated in plain Python, F and cost summed with ``math.fsum``, independent of
the product's code.
"""

from __future__ import annotations

import itertools
import json
import math
import random

import pytest
from cli_utils import run_cli

import memaudit_core as ma

RTOL = 1e-9
LO = 2.0**-10
H = {"cap1": lambda z: min(1.0, z), "linear": lambda z: z, "log1p": math.log1p}


def _doc(units: dict[str, float], cands: list[tuple], saturation: str = "cap1") -> dict:
    exps = sorted({e for _, e, _, _ in cands}, key=lambda e: int(e[1:]))
    return {
        "memaudit": 1,
        "id": "lift-edge",
        "objective": {"saturation": saturation},
        "experiences": [{"id": e, "time": int(e[1:])} for e in exps],
        "units": [{"id": u, "kind": "fact", "weight": w} for u, w in units.items()],
        "queries": [],
        "candidates": [
            {"id": cid, "experience": e, "type": "atomic_fact", "cost": c, "coverage": cov}
            for cid, e, c, cov in cands
        ],
    }


def _brute(doc: dict, budget: float) -> float:
    """OPT at ``budget`` over every store (one candidate or none per experience)."""
    h = H[doc["objective"]["saturation"]]
    weight = {u["id"]: u["weight"] for u in doc["units"]}
    groups: dict[str, list] = {}
    for c in doc["candidates"]:
        groups.setdefault(c["experience"], [None]).append(c)
    limit = budget * (1 + 1e-9)
    best = 0.0
    for choice in itertools.product(*groups.values()):
        sel = [c for c in choice if c is not None]
        if math.fsum(c["cost"] for c in sel) > limit:
            continue
        z: dict[str, list[float]] = {}
        for c in sel:
            for u, a in c["coverage"].items():
                z.setdefault(u, []).append(a)
        best = max(best, math.fsum(weight[u] * h(math.fsum(a)) for u, a in z.items()))
    return best


def _best_single(doc: dict, budget: float) -> float:
    h = H[doc["objective"]["saturation"]]
    weight = {u["id"]: u["weight"] for u in doc["units"]}
    limit = budget * (1 + 1e-9)
    return max(
        [
            math.fsum(weight[u] * h(a) for u, a in c["coverage"].items())
            for c in doc["candidates"]
            if c["cost"] <= limit
        ]
        or [0.0]
    )


def _near_floor_doc(rnd: random.Random) -> tuple[dict, float]:
    """A package whose best affordable single candidate is worth just above 2^-10 (units A,
    B), with small units (weights mostly 0.93e-12..1e-12, some up to 1e-9) and, in half of
    them, a unit S of weight 1e-10..3e-9 that many candidates cover partly."""
    units = {"A": LO * rnd.uniform(1.0001, 1.02)}
    if rnd.random() < 0.5:
        units["B"] = units["A"] * rnd.uniform(0.3, 0.6)
    for j in range(rnd.randint(4, 12)):
        near = rnd.random() < 0.7
        units[f"s{j}"] = 10 ** (rnd.uniform(-12.03, -12.0) if near else rnd.uniform(-12.3, -9))
    shared = rnd.random() < 0.5
    if shared:
        units["S"] = 10 ** rnd.uniform(-10, -8.5)
    big = [u for u in units if u in ("A", "B")]
    small = [u for u in units if u.startswith("s")]
    cands = []
    for g in range(rnd.randint(3, 6)):
        for k in range(rnd.randint(1, 3)):
            cov: dict[str, float] = {}
            if rnd.random() < 0.5:
                cov[rnd.choice(big)] = rnd.choice([1.0, 0.5, 0.25, 1.0])
            for u in rnd.sample(small, rnd.randint(0, 4)):
                cov[u] = rnd.choice([1.0, 0.5, 0.3])
            if shared and rnd.random() < 0.8:
                cov["S"] = 10 ** rnd.uniform(-3, 0)
            cands.append((f"c{g}_{k}", f"e{g}", rnd.choice([1.0, 2.0, 3.0, 1.5]), cov))
    doc = _doc(units, cands, rnd.choice(sorted(H)))
    total = sum(c[2] for c in cands)
    return doc, total * rnd.choice([0.2, 0.35, 0.5, 0.7])


def _check(inst, doc: dict, budget: float, solver: str) -> str | None:
    opt = _brute(doc, budget)
    res = ma.solve(inst, budget, solver)
    if res.label == "OPT" and abs(res.value - opt) > RTOL * opt:
        return f"{solver}: certified {res.value!r}, OPT {opt!r} ({(opt - res.value) / opt:.3g})"
    return None


@pytest.mark.parametrize("solver", ["auto", "bnb", "enum", "brute"])
def test_a_gain_just_under_1e_12_above_a_floor_just_over_2_to_the_minus_10(solver):
    # x and y share an experience; y adds 0.99e-12 to x's F = 1.01 * 2^-10 for one more unit
    # of cost. Not lifted, 0.99e-12 tied the two and the cheaper x was certified, 1.0e-9 low.
    w = LO * 1.01
    doc = _doc(
        {"A": w, "s": 0.99e-12},
        [("x", "e0", 1.0, {"A": 1.0}), ("y", "e0", 2.0, {"A": 1.0, "s": 1.0})],
    )
    opt = _brute(doc, 2.0)
    assert opt == math.fsum([w, 0.99e-12])
    inst = ma.compile_package(ma.parse_package(doc))
    res = ma.solve(inst, 2.0, solver)
    assert res.label == "OPT"
    assert res.selected == ("y",), (res.selected, res.value, opt)
    assert abs(res.value - opt) <= RTOL * opt


@pytest.mark.parametrize("block", range(2))
def test_random_packages_with_a_floor_just_over_2_to_the_minus_10(block):
    """Seeded fuzz against the brute force: 1.0e-9 relative low values on BASE."""
    bad, tried = [], 0
    for seed in range(block * 450, block * 450 + 450):
        doc, budget = _near_floor_doc(random.Random(f"lift-{seed}"))
        if not LO < _best_single(doc, budget) < 1.02 * LO:
            continue  # the edge: the floor just above the old trigger
        tried += 1
        inst = ma.compile_package(ma.parse_package(doc))
        bad += [(seed, msg) for s in ("auto", "enum") if (msg := _check(inst, doc, budget, s))]
    assert tried > 150
    assert bad == []


# ---------------------------------------------------------------------- 2. overflow
def _overflow_doc(big: float = 1e300, small: float = 1e-200) -> dict:
    """x (cost 100) alone covers U (weight ``big``); c0..c2 (cost 1) cover s0..s2 (weights
    ``small`` x 1, 2, 3)."""
    cands = [("x", "e0", 100.0, {"U": 1.0})]
    units = {"U": big}
    for i in range(3):
        units[f"s{i}"] = small * (1 + i)
        cands.append((f"c{i}", f"e{i + 1}", 1.0, {f"s{i}": 1.0}))
    return _doc(units, cands)


@pytest.mark.parametrize("solver", ["auto", "bnb"])
@pytest.mark.parametrize("budget", [1.0, 2.0, 3.0])
def test_a_huge_unit_only_an_unaffordable_candidate_reaches(tmp_path, solver, budget):
    doc = _overflow_doc()
    path = tmp_path / "overflow.json"
    path.write_text(json.dumps(doc))
    opt = _brute(doc, budget)
    assert opt == pytest.approx(1e-200 * {1.0: 3, 2.0: 5, 3.0: 6}[budget], rel=1e-12)
    rc, out, err = run_cli(
        "solve", str(path), "--budget", repr(budget), "--solver", solver, "--json"
    )
    assert "please report" not in err
    assert rc == 0, err
    got = json.loads(out)
    assert got["certified"] is True and got["label"] == "OPT", got["certificate"]
    assert abs(got["value"] - opt) <= RTOL * opt, (got["value"], opt)
    assert {c["engine"]: c["value"] for c in got["certificate"]["checks"]}
    for check in got["certificate"]["checks"]:
        assert abs(check["value"] - opt) <= RTOL * opt, check


def test_the_scaled_view_gives_an_unreachable_unit_weight_zero_not_inf():
    doc = _overflow_doc()
    inst = ma.compile_package(ma.parse_package(doc))
    view, scale, _ = inst.scaled_view_at(2.0)
    assert scale > 2.0**600  # values of 1e-200 brought into band
    assert bool(all(math.isfinite(w) for w in view.weight))
    u = inst.unit_index["U"]
    assert view.weight[u] == 0.0
    # Every other weight is the package's times the scale, exactly.
    others = [r for r in range(inst.n_units) if r != u]
    assert [view.weight[r] for r in others] == [inst.weight[r] * scale for r in others]
    # Where x fits, U sets the scale as before and keeps its weight.
    view_all, scale_all, _ = inst.scaled_view_at(100.0)
    assert view_all.weight[u] == inst.weight[u] * scale_all
