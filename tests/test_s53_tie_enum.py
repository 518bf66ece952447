"""The tie rule's enumeration of fitting stores (``closest._fitting_stores``) gives up early
when its first branch alone proves more than ``cap`` stores (s53, Compare's budget change).

The oracle lists every store within the group limit by brute force over all subsets of the
memories and counts those whose cost sum (cheapest first, as the search adds them) stays
within the engines' search limit: the enumeration must return exactly those stores when
there are at most ``cap``, and None when there are more, for caps on both sides of the count.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from memaudit_core.closest import _fitting_stores, closest_equivalent
from memaudit_core.compiled import budget_with_tolerance, compile_package, search_limit
from memaudit_core.objective import evaluate
from memaudit_core.package import load_package, parse_package
from memaudit_core.solvers import solve


def _package(seed: int, n_groups: int, per_group: int) -> dict:
    rng = np.random.default_rng(seed)
    candidates = []
    for g in range(n_groups):
        for j in range(per_group):
            # Some equal costs, so the order among equals matters as in the search.
            cost = float(rng.choice([1.0, 1.5, 2.0, 0.7, 3.25]) if j % 2 else rng.uniform(0.3, 4))
            candidates.append(
                {
                    "id": f"c{g}_{j}",
                    "experience": f"e{g}",
                    "type": "fact",
                    "cost": cost,
                    "coverage": {f"u{int(rng.integers(0, 6))}": float(rng.uniform(0.2, 1))},
                }
            )
    return {
        "memaudit": 1,
        "id": f"tie-enum-{seed}",
        "experiences": [{"id": f"e{g}", "time": g} for g in range(n_groups)],
        "units": [{"id": f"u{u}", "kind": "fact", "weight": 1.0} for u in range(6)],
        "candidates": candidates,
    }


def _brute(inst, budget: float) -> list[tuple[int, ...]]:
    limit = budget_with_tolerance(budget)
    cost = np.asarray(inst.cost, dtype=float)
    items = sorted(
        (c for c in range(inst.n_candidates) if cost[c] <= limit), key=lambda c: (cost[c], c)
    )
    bound = search_limit(limit, len(items))
    found = []
    for r in range(len(items) + 1):
        for subset in itertools.combinations(items, r):  # in the search's order
            counts = Counter(int(inst.group_idx[c]) for c in subset)
            if any(n > inst.group_capacity for n in counts.values()):
                continue
            spent = 0.0
            for c in subset:
                spent = spent + cost[c]
            if spent <= bound:
                found.append(tuple(sorted(subset)))
    return found


CASES = [(seed, groups, per, k) for seed in range(6) for groups, per, k in ((6, 2, 1), (4, 3, 2))]


@pytest.mark.parametrize(("seed", "n_groups", "per_group", "capacity"), CASES)
def test_fitting_stores_against_brute_force(seed, n_groups, per_group, capacity) -> None:
    inst = compile_package(parse_package(_package(seed, n_groups, per_group)))
    inst = inst.with_capacity(capacity)
    total_cost = float(np.sum(inst.cost))
    checked = 0
    for budget in (0.5, 1.0, 2.0, 3.5, 5.0, 8.0, total_cost / 2, total_cost):
        want = _brute(inst, budget)
        count = len(want)
        for cap in sorted({1, 2, 3, count - 2, count - 1, count, count + 1, 4096}):
            if cap < 1:  # the caller's cap counts the empty store
                continue
            got = _fitting_stores(inst, budget, cap)
            if count > cap:
                assert got is None, (budget, cap, count)
            else:
                assert got is not None, (budget, cap, count)
                assert sorted(tuple(s) for s in got) == sorted(want), (budget, cap)
            checked += 1
    assert checked > 40


def test_power_of_two_counts_at_the_cap() -> None:
    """k memories of distinct experiences that all fit together: exactly 2**k stores, so a
    cap of 2**k is enough and 2**k - 1 is not (the shortcut's edge)."""
    for k in range(1, 7):
        doc = _package(0, k, 1)
        for c in doc["candidates"]:
            c["cost"] = 1.0
        inst = compile_package(parse_package(doc))
        got = _fitting_stores(inst, float(k), 2**k)
        assert got is not None and len(got) == 2**k
        assert _fitting_stores(inst, float(k), 2**k - 1) is None


def test_compare_sample_keeps_its_closest_store() -> None:
    """On the Compare page's sample (where the shortcut applies at every budget) the closest
    equivalent store is an optimum of the same F at each budget, as the slow path gave."""
    pkg = load_package(
        Path(__file__).resolve().parents[1] / "sample_packages" / "event-graph-50.json"
    )
    inst = compile_package(pkg)
    for budget in (126.0, 131.5, 140.0):
        assert _fitting_stores(inst, budget, 4096) is None
        res = solve(inst, budget)
        eq = closest_equivalent(inst, res.selected_idx, res.selected_idx[:-1], budget)
        assert inst.is_feasible(eq.selected_idx, budget)
        assert abs(evaluate(inst, eq.selected_idx) - res.value) <= 1e-9 * max(1.0, res.value)
