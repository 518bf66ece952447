"""Issue 7, target 3: HiGHS threads in budget-sweep workers, default against one (A/B).

Runs ``solve_budgets(..., workers=2)`` on target 3's package (random_coverage, 100 groups,
seed 0, 20 budgets 2-20% of groups x mean cost, 60 s limit per solve) ``--repeats`` times per
setting, alternating, with the workers' HiGHS left at its default thread count or set to one
(what :func:`memaudit_core.parallel.init_solver_worker` does). Prints wall seconds and the
per-budget solve times of each run.

Usage: ``.venv/bin/python bench/exp_pool_threads.py [--budgets 20] [--repeats 2]``
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np

from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.solvers import budgets, milp, solve_budgets


def _init(threads: int | None, inst) -> None:
    budgets._WORKER_INST = inst
    milp.HIGHS_THREADS = threads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budgets", type=int, default=20, help="the first N of the 20 budgets")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    inst = compile_package(generate("random_coverage", seed=0, n_groups=100))
    base = inst.n_groups * float(inst.cost.mean())
    grid = [float(b) for b in np.linspace(0.02, 0.20, 20) * base][: args.budgets]
    for _ in range(args.repeats):
        for threads in (None, 1):
            budgets._init_worker = functools.partial(_init, threads)
            t0 = time.perf_counter()
            res = solve_budgets(inst, grid, time_limit=60, workers=2)
            wall = time.perf_counter() - t0
            per_budget = " ".join(f"{r.time_s:.1f}" for r in res)
            print(
                f"threads={threads or 'default'}: {wall:.1f} s wall, "
                f"{sum(r.certified for r in res)}/{len(res)} certified; per budget {per_budget}",
                flush=True,
            )


if __name__ == "__main__":
    main()
