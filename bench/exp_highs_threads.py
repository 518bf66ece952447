"""HiGHS at its default ``threads`` against one thread, each solve alone, on target 2's packages
(``--cases FRACTION:SEED,...``) or at target 3's budgets (``--cases t3:K,...``; the names are
``bench_speed.case_instance``'s).

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
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH.parent), str(BENCH)]

from common import machine, run_fresh, save  # noqa: E402

SETTINGS = ("default", "1")


def one(threads: str, case: str) -> dict:
    """One solve in this (fresh) process: wall, CPU, objective, status."""
    from bench_speed import case_instance, plain_highs

    from memaudit_core.solvers import milp

    milp.HIGHS_THREADS = None if threads == "default" else int(threads)
    wall, cpu, value, status = plain_highs(*case_instance(case))
    return {"wall_s": wall, "cpu_s": cpu, "value": value, "status": status}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cases", default="0.05:0,0.05:1,0.05:4,0.10:0,0.10:2")
    parser.add_argument("--out", help="save every measurement as bench/out/NAME.json")
    parser.add_argument("--one", nargs=2, metavar=("THREADS", "CASE"), help="internal")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return

    rows = []
    for case in args.cases.split(","):
        runs: dict[str, list[dict]] = {s: [] for s in SETTINGS}
        for rnd in range(args.rounds):
            for threads in SETTINGS if rnd % 2 == 0 else SETTINGS[::-1]:
                runs[threads].append(run_fresh([sys.executable, __file__, "--one", threads, case]))
        values = [r["value"] for found in runs.values() for r in found]
        agree = max(values) - min(values) <= 1e-6 * max(1.0, abs(max(values)))
        default = statistics.median(r["wall_s"] for r in runs["default"])
        single = statistics.median(r["wall_s"] for r in runs["1"])
        ratio = single / default
        rows.append(
            {
                "case": case,
                "runs": runs,
                "agree": agree,
                "default_over_one_thread": ratio,
            }
        )
        print(
            f"{case}: default {default:.2f} s, one thread {single:.2f} s: "
            f"the default {ratio:.2f}x as fast{'' if agree else '; OPTIMA DIFFER'}",
            flush=True,
        )
    if args.out:
        save(args.out, {"machine": machine(), "rows": rows})


if __name__ == "__main__":
    main()
