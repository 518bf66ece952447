"""Issue 7: do two worker processes slow each other down? One budget solved alone, then twice.

Not part of the product. Target 3's package (random_coverage, 100 groups, seed 0), budget
``--k`` (position in the 20-budget grid of 2-20% of groups x mean cost), ``solve_milp`` without
a start in the workers of a 2-process pool set up as the product's pools are
(``parallel.pool_context``, ``parallel.init_solver_worker``: HiGHS on one thread). The same model
on the same thread count follows the same path (equal node counts are printed), so a longer
time in the pair is contention for the machine, not a different search.

Usage: ``.venv/bin/python bench/exp_pool_contention.py [--k 13] [--repeats 2]``
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.parallel import init_solver_worker, pool_context


def solve(k: int) -> tuple[float, float, int]:
    from memaudit_core.solvers import milp

    inst = compile_package(generate("random_coverage", seed=0, n_groups=100))
    grid = np.linspace(0.02, 0.20, 20) * inst.n_groups * float(inst.cost.mean())
    t0 = time.perf_counter()
    raw = milp.solve_milp(inst, float(grid[k]))
    return time.perf_counter() - t0, raw.value, raw.nodes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k", type=int, default=13)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    with ProcessPoolExecutor(2, mp_context=pool_context(), initializer=init_solver_worker) as pool:
        for fut in [pool.submit(solve, 0) for _ in range(2)]:
            fut.result()  # both workers started and warm
        for _ in range(args.repeats):
            t, value, nodes = pool.submit(solve, args.k).result()
            print(f"alone: {t:.2f} s, F = {value:.6f}, {nodes} nodes", flush=True)
            pair = [f.result() for f in [pool.submit(solve, args.k) for _ in range(2)]]
            print("pair:  " + ", ".join(f"{t:.2f} s ({n} nodes)" for t, _, n in pair), flush=True)


if __name__ == "__main__":
    main()
