"""Fifty-eighth session: the table of every store that fits a budget, which the tie rule of
:func:`memaudit_core.closest.closest_equivalent` compares, is built once per instance and
budget (the Overview explains every writer's store at one budget), not once per store."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from browser_utils import REPO_ROOT

from memaudit_core import closest, reports
from memaudit_core.analysis import compile_cached
from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.package import load_package
from memaudit_core.solvers import solve
from memaudit_core.writers import run_writer

TRAVEL = REPO_ROOT / "sample_packages" / "travel-assistant.json"
WRITERS = ("gvt", "density", "greedy", "fact_only", "summary_only", "recency_raw")


def _fresh() -> None:
    closest._TIE_TABLES.clear()


def _cases():
    """(instance, budget, optimum, store) for several packages, budgets and writers."""
    packages = [load_package(TRAVEL), *(generate("memaudit-small", seed=s) for s in range(6))]
    for package in packages:
        inst = compile_package(package)
        for budget in (package.budget * 0.5, package.budget, package.budget * 2):
            opt = tuple(solve(inst, budget, "auto").selected_idx)
            for writer in WRITERS:
                yield inst, budget, opt, tuple(run_writer(writer, inst, budget).selected_idx)


def test_results_equal_a_fresh_enumeration_for_each_store() -> None:
    """The oracle: the table thrown away before each call (the previous behaviour)."""
    cases = list(_cases())
    _fresh()
    shared = [closest.closest_equivalent(inst, opt, store, b) for inst, b, opt, store in cases]
    alone = []
    for inst, b, opt, store in cases:
        _fresh()
        alone.append(closest.closest_equivalent(inst, opt, store, b))
    assert shared == alone
    # The comparison covers the enumerated tie rule, not only its fallback search.
    assert sum(r.ties == "all" for r in shared) >= len(cases) // 2


def test_the_overview_enumerates_once_per_instance_and_budget(monkeypatch) -> None:
    calls: Counter = Counter()
    real = closest._fitting_stores

    def counted(inst, budget, cap):
        calls[(id(inst), budget)] += 1
        return real(inst, budget, cap)

    monkeypatch.setattr(closest, "_fitting_stores", counted)
    _fresh()
    package = load_package(TRAVEL)
    overview = reports.overview(package, package.budget, time_limit=20.0)
    assert len(overview.evaluations) >= 9  # six writers and the package's stores
    assert calls and set(calls.values()) == {1}


def test_each_instance_keeps_its_last_budgets_only() -> None:
    _fresh()
    inst = compile_cached(generate("memaudit-small", seed=1))
    budgets = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    for budget in budgets:
        closest._tie_table(inst, budget)
    held = closest._TIE_TABLES[inst]
    assert [key[0] for key in held] == budgets[-closest.TIE_TABLES_PER_INSTANCE :]
    closest._tie_table(inst, 3.0)  # used again: now the most recent
    assert list(held)[-1][0] == 3.0


def test_a_changed_limit_is_not_answered_from_an_older_table(monkeypatch) -> None:
    _fresh()
    inst = compile_cached(generate("memaudit-small", seed=2))
    assert closest._tie_table(inst, 8.0) is not None
    monkeypatch.setattr(closest, "TIE_ENUM_MAX", 1)
    assert closest._tie_table(inst, 8.0) is None


@pytest.mark.parametrize("seed", [0, 3])
def test_the_table_lists_every_fitting_store_with_its_cost_and_value(seed: int) -> None:
    """Against brute force over one candidate or none per group."""
    from memaudit_core.objective import evaluate

    _fresh()
    inst = compile_package(generate("memaudit-small", seed=seed))
    budget = 6.0
    combos, cost, values = closest._tie_table(inst, budget)
    groups = [list(inst.group_slice(g)) for g in range(inst.n_groups)]
    expected = {
        tuple(sorted(c for c in choice if c is not None))
        for choice in itertools.product(*([None, *g] for g in groups))
        if inst.is_feasible([c for c in choice if c is not None], budget)
    }
    listed = {tuple(c) for c in combos}
    assert expected <= listed  # a superset: the caller checks each pick exactly
    for combo, c, v in zip(combos, cost, values, strict=True):
        assert c == pytest.approx(inst.selection_cost(combo), rel=1e-12, abs=1e-12)
        assert v == pytest.approx(evaluate(inst, tuple(combo)), rel=1e-9, abs=1e-12)
    assert not cost.flags.writeable and not values.flags.writeable


def test_entries_gather_what_scipy_row_indexing_gives() -> None:
    """The tie search's direct gather of coverage rows, against scipy's ``[rows].tocoo()``
    (same entries in the same order, so F's changes are summed in the same order)."""
    import numpy as np

    inst = compile_package(generate("event_graph", seed=3, n_experiences=60))
    rng = np.random.default_rng(0)
    for size in [0, 1, 2, 5, 12] * 20:
        rows = rng.choice(inst.n_candidates, size=size, replace=False).astype(np.int64)
        expected = inst.coverage[rows].tocoo()
        row, col, amount = closest._entries(inst, rows)
        assert np.array_equal(row, expected.row)
        assert np.array_equal(col, expected.col)
        assert np.array_equal(amount, expected.data)
