"""QA s42 round 3 (HIGH, exactness): one feasibility predicate at the float edge of the budget.

A store fits iff the correctly rounded sum of its costs is <= B (1 + 1e-9) (math.fsum, as
CompiledInstance.selection_cost, score and the result read-back use). QA's packages have a store
whose correctly rounded cost equals that limit exactly while the engines' running sum lands one
ulp above it: bnb and enum dropped the store and certified OPT 9.4 (5.4), ``score --store all``
kept it (F 10 > OPT, ratio 1.064) and a saved sweep was refused on read-back ("above the
certified optimum").

The reference predicate here is computed without the code under test: the exact (Fraction) sum
of the JSON costs, rounded once to a float (``float(Fraction)`` rounds correctly, as fsum does),
compared with the documented limit ``B + 1e-9 |B|``. Note that on QA's two packages the exact
rational sum lies below half an ulp *above* the limit: the store fits by its correctly rounded
cost, which is the product's documented rule.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
from cli_utils import run_cli

import memaudit_core as ma
from memaudit_core.solvers.bnb import solve_bnb
from memaudit_core.solvers.enum import enum_all_budgets, solve_enum
from memaudit_core.solvers.frontier import frontier_all_budgets

#: QA's rep_tol58_pkg.json (copied; cap1, costs about 1e-14) and its budget.
TOL58 = json.loads(
    '{"memaudit": 1, "id": "tol58", "objective": {"saturation": "cap1"}, "experiences": '
    '[{"id": "e0", "time": 0}, {"id": "e1", "time": 1}, {"id": "e2", "time": 2}, '
    '{"id": "e3", "time": 3}], "units": [{"id": "u0", "weight": 1.0}, {"id": "u1", "weight": '
    '2.0}, {"id": "u2", "weight": 3.0}, {"id": "u3", "weight": 4.0}], "candidates": [{"id": '
    '"c0", "experience": "e0", "type": "atomic_fact", "cost": 2.83e-14, "coverage": {"u0": '
    '1.0}}, {"id": "c1", "experience": "e1", "type": "atomic_fact", "cost": '
    '2.0670000000000002e-14, "coverage": {"u1": 1.0}}, {"id": "c2", "experience": "e2", '
    '"type": "atomic_fact", "cost": 2.2959999999999998e-14, "coverage": {"u2": 1.0}}, {"id": '
    '"c3", "experience": "e3", "type": "atomic_fact", "cost": 2.0219999999999998e-14, '
    '"coverage": {"u3": 1.0}}, {"id": "d0", "experience": "e0", "type": "summary", "cost": '
    '1.415e-14, "coverage": {"u0": 0.4}}, {"id": "d1", "experience": "e1", "type": '
    '"summary", "cost": 1.0335000000000001e-14, "coverage": {"u1": 0.4}}, {"id": "d2", '
    '"experience": "e2", "type": "summary", "cost": 1.1479999999999999e-14, "coverage": '
    '{"u2": 0.4}}, {"id": "d3", "experience": "e3", "type": "summary", "cost": '
    '1.0109999999999999e-14, "coverage": {"u3": 0.4}}], "stores": [{"id": "all", "select": '
    '["c0", "c1", "c2", "c3"]}]}'
)
TOL58_BUDGET = 9.214999990784999e-14
TOL58_F = 10.0  # u0..u3 fully covered: 1 + 2 + 3 + 4


def _tol285() -> dict:
    """QA's rep_tol285_pkg.json (linear, three experiences, costs about 1e-3), copied."""
    costs = {"c0": 0.000597, "c1": 0.001181, "c2": 0.00271}
    costs.update({"d0": 0.0002985, "d1": 0.0005905, "d2": 0.001355})
    doc = json.loads(json.dumps(TOL58))
    doc["id"] = "tol285"
    doc["objective"] = {"saturation": "linear"}
    doc["experiences"] = doc["experiences"][:3]
    doc["units"] = doc["units"][:3]
    doc["candidates"] = [c for c in doc["candidates"] if c["id"] in costs]
    for c in doc["candidates"]:
        c["cost"] = costs[c["id"]]
    doc["stores"] = [{"id": "all", "select": ["c0", "c1", "c2"]}]
    return doc


TOL285_BUDGET = 0.0044879999955119996
TOL285_F = 6.0  # u0, u1, u2 fully covered: 1 + 2 + 3


def _limit(budget: float) -> float:
    """The documented limit B + 1e-9 |B| (README), written out independently."""
    return budget + 1e-9 * abs(budget)


def _fits(costs: list[float], budget: float) -> bool:
    """Reference predicate: the exact sum rounded once (as fsum) <= the limit."""
    return float(sum((Fraction(c) for c in costs), Fraction(0))) <= _limit(budget)


def _store_costs(doc: dict, ids: list[str]) -> list[float]:
    cost = {c["id"]: c["cost"] for c in doc["candidates"]}
    return [cost[i] for i in ids]


CASES = [
    pytest.param(TOL58, TOL58_BUDGET, TOL58_F, id="tol58"),
    pytest.param(_tol285(), TOL285_BUDGET, TOL285_F, id="tol285"),
]


@pytest.mark.parametrize("doc, budget, store_f", CASES)
def test_store_at_the_limit_fits_by_the_reference_predicate(doc, budget, store_f) -> None:
    """Regression guard (checks the inputs, not the code): QA's store fits by its correctly
    rounded cost while its running sum is over the limit."""
    costs = _store_costs(doc, doc["stores"][0]["select"])
    assert _fits(costs, budget)
    # The float edge itself: the left-to-right running sum is over the limit.
    assert sum(costs) > _limit(budget)


@pytest.mark.parametrize("solver", ["auto", "bnb", "enum"])
@pytest.mark.parametrize("doc, budget, store_f", CASES)
def test_certified_optimum_is_not_beaten_by_a_store_that_fits(doc, budget, store_f, solver) -> None:
    inst = ma.compile_package(ma.parse_package(doc))
    res = ma.solve(inst, budget, solver)
    assert res.value >= store_f - 1e-9
    assert _fits(list(inst.cost[list(res.selected_idx)]), budget)


@pytest.mark.parametrize("doc, budget, store_f", CASES)
def test_score_ratio_of_the_edge_store_is_at_most_one(doc, budget, store_f) -> None:
    s = ma.score(ma.parse_package(doc), budget, store_id="all").to_dict()
    assert s["value"] == pytest.approx(store_f)
    assert s["ratio"] <= 1.0 + 1e-9


@pytest.mark.parametrize("doc, budget, store_f", CASES)
def test_sweep_with_the_edge_store_reads_back(doc, budget, store_f) -> None:
    r = ma.sweep([ma.parse_package(doc)], [budget], ["gvt"], stores=["all"])
    back = ma.read_result(json.loads(json.dumps(r.to_dict())))
    rows = {row.method: row for row in back.rows}
    assert rows["all"].value == pytest.approx(store_f)
    assert rows["all"].opt >= store_f - 1e-9


def test_cli_solve_score_and_sweep_show_agree(tmp_path) -> None:
    for doc, budget, store_f in ((TOL58, TOL58_BUDGET, TOL58_F), (_tol285(), TOL285_BUDGET, 6.0)):
        pkg = tmp_path / f"{doc['id']}.json"
        pkg.write_text(json.dumps(doc))
        b = repr(budget)
        code, out, err = run_cli("solve", str(pkg), "--budget", b, "--json")
        assert code == 0, err
        assert json.loads(out)["value"] == pytest.approx(store_f)
        code, out, err = run_cli("score", str(pkg), "--budget", b, "--store", "all", "--json")
        assert code == 0, err
        assert json.loads(out)["ratio"] <= 1.0 + 1e-9
        saved = tmp_path / f"{doc['id']}_sweep.json"
        code, out, err = run_cli("sweep", str(pkg), "--budgets", b, "--stores", "all", "--json")
        assert code == 0, err
        saved.write_text(out)
        code, out, err = run_cli("show", str(saved))
        assert code == 0, err
        assert "above the certified optimum" not in out + err


# ---------------------------------------------------------------- property-style check


def _random_package(rng: random.Random, k: int) -> dict:
    scale = rng.choice([1e-14, 1e-3, 1.0, 37.0, 1e6])
    n_units = rng.randint(2, 4)
    cands = []
    for e in range(k):
        for j in range(rng.randint(1, 2)):
            cov = {f"u{r}": rng.choice([0.3, 0.5, 1.0]) for r in rng.sample(range(n_units), 2)}
            cost = round(rng.uniform(1.0, 3.0), rng.randint(3, 7)) * scale
            cands.append(
                {
                    "id": f"c{e}_{j}",
                    "experience": f"e{e}",
                    "type": "atomic_fact" if j == 0 else "summary",
                    "cost": cost,
                    "coverage": cov,
                }
            )
    return {
        "memaudit": 1,
        "id": "edge",
        "objective": {"saturation": rng.choice(["cap1", "linear"])},
        "experiences": [{"id": f"e{e}", "time": e} for e in range(k)],
        "units": [{"id": f"u{r}", "weight": float(r + 1)} for r in range(n_units)],
        "candidates": cands,
    }


def _brute(doc: dict, budget: float) -> float:
    """OPT by listing every store (at most one candidate per experience) under the reference
    predicate, with F written out (cap1: min(1, z); linear: z)."""
    by_exp: dict[str, list[dict]] = {}
    for c in doc["candidates"]:
        by_exp.setdefault(c["experience"], []).append(c)
    weight = {u["id"]: u["weight"] for u in doc["units"]}
    cap1 = doc["objective"]["saturation"] == "cap1"
    best = 0.0
    for pick in itertools.product(*([None, *cs] for cs in by_exp.values())):
        chosen = [c for c in pick if c is not None]
        if not _fits([c["cost"] for c in chosen], budget):
            continue
        z: dict[str, float] = {}
        for c in chosen:
            for u, a in c["coverage"].items():
                z[u] = z.get(u, 0.0) + a
        best = max(best, sum(weight[u] * (min(1.0, a) if cap1 else a) for u, a in z.items()))
    return best


def _edge_budgets(doc: dict, rng: random.Random) -> list[float]:
    """Budgets at a random store's correctly rounded cost c: B = c, and the B whose limit
    B (1 + 1e-9) is c itself (or the floats on either side of it)."""
    by_exp: dict[str, list[float]] = {}
    for c in doc["candidates"]:
        by_exp.setdefault(c["experience"], []).append(c["cost"])
    costs = [rng.choice(cs) for cs in by_exp.values()]
    c = float(sum((Fraction(x) for x in costs), Fraction(0)))
    b = c / (1 + 1e-9)
    while _limit(b) > c:
        b = math.nextafter(b, 0.0)
    while _limit(math.nextafter(b, math.inf)) <= c:
        b = math.nextafter(b, math.inf)
    return [c, b, math.nextafter(b, math.inf)]


def _property_cases(n: int) -> list[tuple[dict, list[float]]]:
    rng = random.Random(4242)
    out = []
    for _ in range(n):
        doc = _random_package(rng, rng.randint(3, 4))
        out.append((doc, _edge_budgets(doc, rng)))
    return out


PROPERTY_CASES = _property_cases(300)


def test_property_cases_hit_the_float_edge() -> None:
    """Regression guard: the random budgets do hit stores whose running sum and correctly
    rounded cost fall on either side of the limit (else the test below proves little)."""
    hits = 0
    for doc, budgets in PROPERTY_CASES:
        for b in budgets:
            per_exp = [
                [c["cost"] for c in doc["candidates"] if c["experience"] == e["id"]]
                for e in doc["experiences"]
            ]
            for pick in itertools.product(*per_exp):
                hits += _fits(list(pick), b) != (sum(pick) <= _limit(b))
    assert hits >= 20


def test_every_engine_matches_the_exact_brute_force() -> None:
    """bnb, enum (one and many budgets), the frontier and solve_budgets all give the OPT of a
    brute force under the reference predicate at budgets on the float edge."""
    wrong = []
    for n, (doc, budgets) in enumerate(PROPERTY_CASES):
        inst = ma.compile_package(ma.parse_package(doc))
        expected = [_brute(doc, b) for b in budgets]
        got = {
            "bnb": [solve_bnb(inst, b).value for b in budgets],
            "enum": [solve_enum(inst, b).value for b in budgets],
            "enum_all_budgets": [v for v, _ in enum_all_budgets(inst, budgets)],
            "frontier": [v for v, _ in frontier_all_budgets(inst, budgets)],
            "solve_budgets": [r.value for r in ma.solve_budgets(inst, budgets)],
        }
        for name, values in got.items():
            for b, v, e in zip(budgets, values, expected, strict=True):
                if abs(v - e) > 1e-9 * max(1.0, e):
                    wrong.append((n, name, b, v, e))
    assert wrong == []


def test_engine_stores_fit_by_the_reference_predicate() -> None:
    """Regression guard: the slacked pruning never lets an engine return a store over the
    limit (QA s42 round 2 #2's direction of the same edge)."""
    over = []
    for n, (doc, budgets) in enumerate(PROPERTY_CASES[:100]):
        inst = ma.compile_package(ma.parse_package(doc))
        for b in budgets:
            for name, sel in (
                ("bnb", solve_bnb(inst, b).selected_idx),
                ("enum", solve_enum(inst, b).selected_idx),
                ("frontier", frontier_all_budgets(inst, [b])[0][1]),
            ):
                if not _fits([float(inst.cost[i]) for i in sel], b):
                    over.append((n, name, b))
    assert over == []


def test_readme_states_the_one_feasibility_test():
    """QA s42 round 3 (#4): stores over the exact limit by less than a float step were
    certified silently; the README now states the rule every part of the product applies."""
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    assert (
        "a store fits when the correctly rounded sum of its costs (`math.fsum`) is at most the "
        "double nearest to B + 1e-9·B (`compiled.budget_with_tolerance`)" in readme
    )
