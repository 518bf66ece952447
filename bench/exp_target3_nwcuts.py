"""Issue 7, target 3: per-unit Nemhauser-Wolsey cuts at the sweep's larger budgets (not adopted).

The cuts of ``bench/exp_target2.py`` (``CutLP``: for each unit, the most violated inequality
y_r <= f(S) + sum_j rho_j(S) x_j of the submodular f = min(1, sum_j a_rj x_j), rounds until
the LP bound stalls) hold at every budget: they involve no cost. Target 2's instances (5-10% of
groups x mean cost) ran 0.53x-0.88x with them. Target 3's largest budgets (up to 20%) fill
more units, where min(1, .) binds more often, so this checks whether the cuts pay there.

For each budget index in the arguments (of target 3's 20 budgets, 2-20% of groups x mean cost
on random_coverage with 100 groups, seed 0): the plain HiGHS model of ``bench_speed`` with
zero gaps, then the cut loop and HiGHS on the product's model with the cut rows (zero gaps).
Prints per budget: plain seconds and optimum, the LP bound before and after the cuts, the cut
loop's seconds, HiGHS's seconds and nodes with the cuts, and plain / (cut loop + HiGHS).

Usage: ``.venv/bin/python bench/exp_target3_nwcuts.py 12 13 14`` (1-2 min; index 19, the
largest budget, takes minutes on either side).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from bench_speed import plain_highs  # noqa: E402
from common import machine  # noqa: E402
from exp_target2 import CutLP  # noqa: E402

from memaudit_core.compiled import compile_package  # noqa: E402
from memaudit_core.generators import generate  # noqa: E402


def main(argv: list[str]) -> int:
    inst = compile_package(generate("random_coverage", seed=0, n_groups=100))
    base = inst.n_groups * float(inst.cost.mean())
    budgets = [float(b) for b in np.linspace(0.02, 0.20, 20) * base]
    print(machine())
    for k in [int(a) for a in argv or ["12", "13", "14"]]:
        budget = budgets[k]
        wall, _cpu, opt, status = plain_highs(inst, budget)
        lp = CutLP(inst, budget)
        started = time.perf_counter()
        first, res, n_cuts = lp.cut_loop()
        loop_s = time.perf_counter() - started
        none = np.zeros(lp.n_x, dtype=bool)
        cut_s, cut_opt, nodes = lp.reduced_milp(none, none, with_cuts=True)
        agree = abs(cut_opt - opt) <= 1e-6 * max(1.0, abs(opt))
        print(
            f"budget {k} ({budget:.1f}): plain {wall:.1f} s, OPT {opt:.6f} ({status}) | "
            f"LP {first:.4f} -> {res[0]:.4f} with {n_cuts} cuts in {loop_s:.2f} s | "
            f"HiGHS with the cuts {cut_s:.1f} s, {nodes} nodes, optimum "
            f"{'equal' if agree else f'DIFFERENT {cut_opt:.6f}'} | "
            f"plain / cuts {wall / (loop_s + cut_s):.2f}x",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
