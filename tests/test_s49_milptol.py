"""QA s49 (exactness, finding 1): ``--solver milp`` certified OPT with gap 0 on a store worth
about 1e-9 less than the optimum when values were below 1 (2.3e-9 and 5.4e-9 relative, more
than the 1e-9 relative the README promises). HiGHS prunes every store that beats its incumbent
by at most its feasibility tolerance in objective units, an absolute 1e-9; with the enum
cross-check on, the same solve ended in "exact solvers disagree ... please report it".

Every expected value here comes from a brute force written in this file over the package JSON
(every product of "none or one candidate" per experience, stores fitting when the fsum of their
costs is at most B + 1e-9 B), never from memaudit's engines.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from cli_utils import run_cli

from memaudit_core.compiled import compile_package
from memaudit_core.package import parse_package
from memaudit_core.solvers import solve

RTOL = 1e-9


def _qa_package(r5_weight: float, r5_cov: float, r2_weight: float) -> dict[str, Any]:
    """The QA's shrunk package (gen.py seed 206): a unit of weight ~1e-9 on a cost-3 candidate
    next to a unit worth ~0.4, with two zero-value candidates (needed to trigger the loss)."""
    return {
        "memaudit": 1,
        "id": "adv-206",
        "objective": {"saturation": "cap1"},
        "experiences": [{"id": "e0", "time": 3}, {"id": "e1", "time": 1}, {"id": "e2", "time": 1}],
        "units": [
            {"id": "r2", "kind": "fact", "weight": r2_weight},
            {"id": "r5", "kind": "current_truth", "weight": r5_weight},
        ],
        "queries": [],
        "candidates": [
            {
                "id": "e0c0",
                "experience": "e0",
                "type": "atomic_fact",
                "cost": 3,
                "coverage": {"r5": r5_cov},
            },
            {
                "id": "e0c1",
                "experience": "e0",
                "type": "summary",
                "cost": 0.3333333333333333,
                "coverage": {},
            },
            {"id": "e1c0", "experience": "e1", "type": "raw_span", "cost": 0.1, "coverage": {}},
            {
                "id": "e2c0",
                "experience": "e2",
                "type": "raw_span",
                "cost": 0.3,
                "coverage": {"r2": 0.3333333333333333},
            },
        ],
        "budget": 3.7333333333333334,
    }


QA_PACKAGES = {
    "min206": _qa_package(1e-09, 0.999999999, 1.3295282162907385),
    "min-milp": _qa_package(9e-10, 1.0, 0.5),
}


def _oracle(doc: dict[str, Any]) -> tuple[float, tuple[str, ...]]:
    """(OPT, an optimal store's ids) by enumerating every store of ``doc`` (cap1 or linear)."""
    linear = doc.get("objective", {}).get("saturation") == "linear"
    weight = {u["id"]: float(u["weight"]) for u in doc["units"]}
    groups: dict[str, list[dict[str, Any]]] = {}
    for c in doc["candidates"]:
        groups.setdefault(c["experience"], []).append(c)
    limit = doc["budget"] + 1e-9 * doc["budget"]
    best, best_ids = 0.0, ()
    for combo in itertools.product(*([None, *g] for g in groups.values())):
        chosen = [c for c in combo if c is not None]
        if math.fsum(float(c["cost"]) for c in chosen) > limit:
            continue
        z: dict[str, float] = {}
        for c in chosen:
            for r, a in c["coverage"].items():
                z[r] = z.get(r, 0.0) + float(a)
        value = math.fsum(weight[r] * (v if linear else min(1.0, v)) for r, v in z.items())
        if value > best:
            best, best_ids = value, tuple(sorted(c["id"] for c in chosen))
    return best, best_ids


def _random_package(seed: int, scale: float) -> dict[str, Any]:
    """2-5 experiences of 1-3 candidates (some covering nothing), units worth 0.05-0.9 next to
    units of about 1e-9, all weights times ``scale``."""
    rng = random.Random(seed)
    n_exp = rng.randint(2, 5)
    units = []
    for k in range(rng.randint(2, 4)):
        big = rng.uniform(0.05, 0.9)
        tiny = rng.choice([1e-9, 2e-9, 9e-10, 3e-9, 1.5e-9]) * rng.uniform(0.5, 1.5)
        units.append({"id": f"r{k}", "weight": rng.choice([big, tiny]) * scale})
    cands = []
    for e in range(n_exp):
        for j in range(rng.randint(1, 3)):
            cov = {}
            if rng.random() < 0.7:
                for u in rng.sample(units, rng.randint(1, len(units))):
                    cov[u["id"]] = rng.choice([1.0, 0.5, rng.uniform(0.1, 1.0)])
            cost = rng.choice([0.1, 0.3, 1.0, 2.0, 3.0, rng.uniform(0.1, 3)])
            cands.append(
                {
                    "id": f"e{e}c{j}",
                    "experience": f"e{e}",
                    "type": "atomic_fact",
                    "cost": cost,
                    "coverage": cov,
                }
            )
    total = sum(c["cost"] for c in cands)
    return {
        "memaudit": 1,
        "id": f"s{seed}",
        "experiences": [{"id": f"e{e}"} for e in range(n_exp)],
        "units": units,
        "candidates": cands,
        # Off every subset sum by far more than the budget tolerance.
        "budget": round(rng.uniform(0.3, 0.8) * total, 3) + 0.0007,
    }


def _assert_exact(doc: dict[str, Any], res: Any) -> None:
    opt, _ = _oracle(doc)
    assert res.certified and res.label == "OPT"
    assert abs(res.value - opt) <= RTOL * opt, (doc["id"], res.value, opt)
    assert res.bound >= opt * (1 - RTOL), (doc["id"], res.bound, opt)
    f_selected, _ = _oracle(
        {**doc, "candidates": [c for c in doc["candidates"] if c["id"] in res.selected]}
    )
    assert abs(f_selected - res.value) <= RTOL * opt


@pytest.mark.parametrize("name", sorted(QA_PACKAGES))
def test_qa_packages_milp_alone_is_exact(name: str) -> None:
    doc = QA_PACKAGES[name]
    opt, store = _oracle(doc)
    assert store == ("e0c0", "e2c0")
    res = solve(compile_package(parse_package(doc)), doc["budget"], "milp", cross_check=False)
    assert tuple(sorted(res.selected)) == store
    _assert_exact(doc, res)


@pytest.mark.parametrize("name", sorted(QA_PACKAGES))
def test_qa_packages_milp_with_cross_check_agrees(name: str) -> None:
    doc = QA_PACKAGES[name]
    res = solve(compile_package(parse_package(doc)), doc["budget"], "milp")
    _assert_exact(doc, res)


def test_cli_milp_without_cross_check_reports_true_optimum(tmp_path: Path) -> None:
    # 15 zero-value one-candidate experiences: 2^15 x 6 stores, too many for the enum
    # cross-check, so the CLI's milp result stands alone (on the base commit it certified
    # e2c0 alone, 1e-9 short).
    doc = json.loads(json.dumps(QA_PACKAGES["min206"]))
    for j in range(15):
        doc["experiences"].append({"id": f"p{j}", "time": 1})
        doc["candidates"].append(
            {
                "id": f"p{j}c0",
                "experience": f"p{j}",
                "type": "raw_span",
                "cost": 0.01,
                "coverage": {},
            }
        )
    doc["budget"] += 0.15
    path = tmp_path / "pad206.json"
    path.write_text(json.dumps(doc))
    rc, out, err = run_cli("solve", str(path), "--solver", "milp", "--json")
    assert rc == 0, err
    got = json.loads(out)
    opt, _ = _oracle(QA_PACKAGES["min206"])  # the padding adds no value
    assert got["label"] == "OPT"
    assert abs(got["value"] - opt) <= RTOL * opt, (got["value"], opt)
    assert set(got["selected"]) >= {"e0c0", "e2c0"}


@pytest.mark.parametrize("scale", [1.0, 1e6, 1e9])
def test_random_small_packages_milp_exact_to_relative_tolerance(scale: float) -> None:
    # At scale 1 values are below 1 with units of ~1e-9 (seeds 23, 33 and 37 lost 1.5e-9 to
    # 2e-9 relative on the base commit); 1e6 and 1e9 check large values are unaffected.
    for seed in range(60):
        doc = _random_package(seed, scale)
        res = solve(compile_package(parse_package(doc)), doc["budget"], "milp", cross_check=False)
        _assert_exact(doc, res)
