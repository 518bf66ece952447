"""HiGHS at its default ``threads`` against one thread, each solve alone, on target 2's packages
(``--cases FRACTION:SEED,...``) or at target 3's budgets (``--cases t3:K,...``: the K-th of the 20
budgets of ``bench_speed.target_sweep``'s package, 1 the smallest, at its default "groups" scale).

HiGHS fixes its thread pool once per process, so each solve runs in a fresh interpreter
(``--one``) with ``memaudit_core.solvers.milp.HIGHS_THREADS`` set before the first model; the
model is ``bench_speed.plain_highs``'s. The two settings alternate within each round, so drift
in the host's speed falls on both. Optima must agree.

Run: ``.venv/bin/python bench/exp_highs_threads.py [--rounds 2]
[--cases 0.05:0,0.05:1,0.05:4,0.10:0,0.10:2] [--out NAME]`` (``bench/out/NAME.json``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH.parent), str(BENCH)]

from common import machine, save  # noqa: E402

SETTINGS = ("default", "1")


def one(threads: str, frac: float, seed: int) -> dict:
    """One solve in this (fresh) process: wall, CPU, objective, status."""
    from bench_speed import large_package, plain_highs

    from memaudit_core.compiled import compile_package
    from memaudit_core.generators import generate
    from memaudit_core.solvers import milp

    milp.HIGHS_THREADS = None if threads == "default" else int(threads)
    if frac < 0:  # target 3's package at its budget number ``seed``
        inst = compile_package(generate("random_coverage", seed=0, n_groups=100))
        grid = np.linspace(0.02, 0.20, 20) * (inst.n_groups * float(inst.cost.mean()))
        budget = float(grid[seed - 1])  # as target_sweep makes it, to the last bit
    else:
        pkg = large_package(frac, seed)
        inst, budget = compile_package(pkg), pkg.budget
    wall, cpu, value, status = plain_highs(inst, budget)
    return {"wall_s": wall, "cpu_s": cpu, "value": value, "status": status}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cases", default="0.05:0,0.05:1,0.05:4,0.10:0,0.10:2")
    parser.add_argument("--out", help="save every measurement as bench/out/NAME.json")
    parser.add_argument("--one", nargs=3, metavar=("THREADS", "FRACTION", "SEED"), help="internal")
    args = parser.parse_args()
    if args.one:
        threads, frac, seed = args.one
        print(json.dumps(one(threads, float(frac), int(seed))))
        return

    rows = []
    for case in args.cases.split(","):
        head, _, tail = case.partition(":")
        frac, seed = (-1.0 if head == "t3" else float(head)), int(tail)
        runs: dict[str, list[dict]] = {s: [] for s in SETTINGS}
        for rnd in range(args.rounds):
            for threads in SETTINGS if rnd % 2 == 0 else SETTINGS[::-1]:
                done = subprocess.run(
                    [sys.executable, __file__, "--one", threads, str(frac), str(seed)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                runs[threads].append(json.loads(done.stdout.strip().splitlines()[-1]))
        values = [r["value"] for found in runs.values() for r in found]
        agree = max(values) - min(values) <= 1e-6 * max(1.0, abs(max(values)))
        default = statistics.median(r["wall_s"] for r in runs["default"])
        single = statistics.median(r["wall_s"] for r in runs["1"])
        rows.append(
            {
                "budget_fraction": frac,
                "seed": seed,
                "runs": runs,
                "agree": agree,
                "default_over_one_thread": single / default,
            }
        )
        print(
            (f"target 3, budget {seed} of 20" if frac < 0 else f"f={frac:.2f} seed={seed}")
            + f": default {default:.2f} s, one thread {single:.2f} s: "
            f"the default {single / default:.2f}x as fast"
            f"{'' if agree else '; OPTIMA DIFFER'}",
            flush=True,
        )
    if args.out:
        save(args.out, {"machine": machine(), "rows": rows})


if __name__ == "__main__":
    main()
