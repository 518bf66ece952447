"""Enumeration over thousands of groups runs its steps in batches (session 52, large external
stores): the rows it builds must be every affordable store, as step by step.

A batch is a run of group steps none of whose new rows can take an option of another step
of the run (cheapest open row + cheapest option + cheapest option over the budget). These
packages mix runs that qualify with steps that do not (a cheap candidate lets two fit), so a
batch that runs too far, or a row filed under the wrong step, loses or misreads stores.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_solver_contract import package_doc

from memaudit_core.compiled import budget_with_tolerance, compile_package
from memaudit_core.package import parse_package
from memaudit_core.solvers import enum as enum_mod
from memaudit_core.solvers.enum import _Enumeration, _slacked


def _instance(seed: int, n_groups: int, capacity: int = 1):
    """One or two candidates per group, costs 4..10, a few groups with a cheap candidate."""
    rng = np.random.default_rng(seed)
    groups = []
    for _ in range(n_groups):
        members = []
        for _ in range(int(rng.integers(1, 3))):
            cost = float(rng.uniform(1.0, 2.5) if rng.random() < 0.03 else rng.uniform(4, 10))
            cover = {int(u): float(rng.uniform(0.1, 1.0)) for u in rng.choice(12, 2, False)}
            members.append((cost, cover))
        groups.append(members)
    doc = package_doc(groups, [float(w) for w in rng.uniform(0.5, 2.0, 12)], "cap1")
    return compile_package(parse_package(doc)).with_capacity(capacity)


def _affordable_stores(inst, limit: float) -> set[tuple[int, ...]]:
    """Every store within ``limit`` (at most ``group_capacity`` per group), by brute force."""
    cost = inst.cost.tolist()
    options = []
    for g in range(inst.n_groups):
        members = [i for i in inst.group_slice(g) if cost[i] <= limit]
        opts = [
            combo
            for k in range(1, inst.group_capacity + 1)
            for combo in itertools.combinations(members, k)
            if sum(cost[i] for i in combo) <= limit
        ]
        if opts:
            options.append(opts)
    found = {()}
    frontier = [((), 0.0, 0)]
    while frontier:
        picked, spent, start = frontier.pop()
        for g in range(start, len(options)):
            for opt in options[g]:
                total = spent
                for i in opt:
                    total += cost[i]
                if total <= limit:
                    store = tuple(sorted(picked + opt))
                    found.add(store)
                    frontier.append((store, total, g + 1))
    return found


@pytest.mark.parametrize("cells", [enum_mod._BATCH_CELLS, 7])  # 7: batches cut by width
@pytest.mark.parametrize("seed", range(4))
def test_batched_enumeration_builds_every_affordable_store_once(seed, cells, monkeypatch):
    monkeypatch.setattr(enum_mod, "_BATCH_CELLS", cells)
    inst = _instance(seed, 150, capacity=2 if seed == 3 else 1)
    limit = _slacked(inst, budget_with_tolerance(11.0))
    en = _Enumeration(inst, limit, count=1000)  # the count bound is loose here: rows grow
    rows = en.selections(np.arange(en.cost.size))
    assert len(rows) == len(set(rows))  # no store twice
    assert set(rows) == _affordable_stores(inst, limit)
    # Each row's cost and coverage are its own store's, whichever batch built it.
    for row in np.random.default_rng(seed).choice(en.cost.size, 200, replace=False):
        sel = list(rows[row])
        assert en.cost[row] == pytest.approx(float(inst.cost[sel].sum()), abs=1e-12)
        z = np.asarray(inst.coverage[sel].sum(axis=0)).ravel() if sel else 0.0
        value = float(np.sum(np.minimum(z, 1.0) * inst.weight)) if sel else 0.0
        assert en.value[row] == pytest.approx(value, rel=1e-12, abs=1e-12)


def test_enumeration_of_a_large_store_agrees_with_milp():
    """3,000 one-candidate groups at a budget where one memory fits, unless a cheap one
    pairs: the shape of a large Mem0 export (batches of thousands of steps)."""
    from memaudit_core.solvers.milp import solve_milp

    inst = _instance(11, 3000)
    limit = budget_with_tolerance(6.0)
    en = _Enumeration(inst, _slacked(inst, limit), count=1000)
    assert (
        len(en._starts) > 1000
    )  # every group with an affordable memory added rows, in a few batches
    row = en.best_among(np.flatnonzero(en.cost <= limit))
    raw = solve_milp(inst, 6.0)
    assert float(en.value[row]) == pytest.approx(raw.value, rel=1e-9)
    assert inst.is_feasible(en.selection(row), 6.0)
