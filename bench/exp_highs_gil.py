"""Issue 7: does HiGHS release the GIL? Two budget solves one after the other, then in threads.

Not part of the product. Target 3's package (random_coverage, 100 groups, seed 0); budgets
``--ks`` (positions in the 20-budget grid of 2-20% of groups x mean cost), each solved by
``solve_milp`` alone. Prints the wall seconds of both runs and each solve's value, which must
agree.

Usage: ``.venv/bin/python bench/exp_highs_gil.py [--ks 11,12]``
"""

from __future__ import annotations

import argparse
import threading
import time

import numpy as np

from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.solvers import milp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ks", default="11,12")
    args = ap.parse_args()
    inst = compile_package(generate("random_coverage", seed=0, n_groups=100))
    base = inst.n_groups * float(inst.cost.mean())
    grid = np.linspace(0.02, 0.20, 20) * base
    ks = [int(k) for k in args.ks.split(",")]

    def run(k: int, out: dict) -> None:
        t0 = time.perf_counter()
        raw = milp.solve_milp(inst, float(grid[k]))
        out[k] = (time.perf_counter() - t0, raw.value, raw.status)

    for mode in ("sequential", "threads"):
        out: dict[int, tuple[float, float, str]] = {}
        t0 = time.perf_counter()
        if mode == "sequential":
            for k in ks:
                run(k, out)
        else:
            threads = [threading.Thread(target=run, args=(k, out)) for k in ks]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
        wall = time.perf_counter() - t0
        each = ", ".join(f"k={k}: {t:.2f} s F={v:.6f} {s}" for k, (t, v, s) in sorted(out.items()))
        print(f"{mode}: {wall:.2f} s wall ({each})", flush=True)


if __name__ == "__main__":
    main()
