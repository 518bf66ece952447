"""Fifty-seventh session: ``solve_budgets(workers>1)`` hands the budgets out largest first."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.solvers import budgets as budgets_module
from memaudit_core.solvers import milp, solve, solve_budgets


class _RecordingPool(ThreadPoolExecutor):
    """The budget sweep's pool in threads: records each budget as it is handed out. Its
    threads run the pool's initializer in this process, so the test replaces the part of it
    that sets up a worker process (HiGHS's scheduler and threads, signals, the parent watch):
    left in place, it put every later HiGHS run of the test session on one thread with a
    reset scheduler, and a later property test failed with HiGHS's "Solve error"."""

    handed_out: list[float] = []

    def __init__(self, max_workers=None, mp_context=None, initializer=None, initargs=(), **_):
        super().__init__(max_workers, initializer=initializer, initargs=initargs)

    def submit(self, fn, /, *args, **kwargs):
        type(self).handed_out.append(args[0])  # _solve_in_worker(budget, ...)
        return super().submit(fn, *args, **kwargs)


def test_pooled_budget_sweep_hands_out_budgets_largest_first(monkeypatch):
    """Larger budgets are the slower proofs, so they go first and the short ones fill both
    workers at the end (before: the two largest, then the others smallest first, which left
    one worker idle while the other finished a mid-size budget). Every value and tie-break is
    brute force's, in the order the budgets were given."""
    inst = compile_package(generate("random_coverage", seed=3, n_groups=5))
    budgets = [6.0, 30.0, 12.0, 24.0, 18.0, 9.0]
    monkeypatch.setattr(budgets_module, "SolverPool", _RecordingPool)
    monkeypatch.setattr(budgets_module, "pool_context", lambda: None)
    monkeypatch.setattr(budgets_module, "init_solver_worker", lambda: None)
    monkeypatch.setattr(budgets_module, "_WORKER_INST", None)
    threads = milp.HIGHS_THREADS
    monkeypatch.setattr(_RecordingPool, "handed_out", [])
    res = solve_budgets(inst, budgets, "bnb", cross_check=False, workers=2)
    order = _RecordingPool.handed_out
    assert len(order) >= 4  # most budgets were solved, not answered by a larger optimum
    assert order[0] == max(budgets)
    assert order == sorted(order, reverse=True)
    assert [r.budget for r in res] == budgets
    for b, r in zip(budgets, res, strict=True):
        ref = solve(inst, b, "brute")
        assert r.certified and r.value == ref.value and r.selected_idx == ref.selected_idx
    assert milp.HIGHS_THREADS == threads  # the test process kept its own HiGHS settings
