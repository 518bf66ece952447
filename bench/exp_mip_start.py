"""A limited solve's heuristic MIP start: ``solve(auto)`` with a time limit as shipped, against
the same solve with the heuristic start not computed (so not handed to HiGHS).

A solve with a time limit (every app page passes one, and target 3's benchmark passes 900 s)
first runs the branch-and-bound's root heuristics (``bnb.heuristic_store_and_bound``) and hands
their store to HiGHS as a MIP start (``milp.solve_milp``). HiGHS's search then takes another
path. Each solve runs alone in a fresh process; the two ways alternate per instance. Optima must
agree.

``--cases t3:1-20`` are target 3's 20 budgets, ``FRACTION:SEED`` target 2's packages at their
budget (``bench_speed.case_instance``).

Run: ``.venv/bin/python bench/exp_mip_start.py [--cases t3:1-20] [--time-limit 900]
[--out NAME]`` (``bench/out/NAME.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH.parent), str(BENCH)]

from common import machine, run_fresh, save  # noqa: E402

WAYS = ("shipped", "no_heuristic_start")


def one(way: str, case: str, time_limit: float) -> dict:
    from bench_speed import case_instance

    from memaudit_core.solvers import milp, solve

    if way == "no_heuristic_start":
        milp.HEURISTIC_START_MAX_COLUMNS = 0
    inst, budget = case_instance(case)
    started = time.perf_counter()
    res = solve(inst, budget, "auto", time_limit=time_limit)
    return {
        "wall_s": time.perf_counter() - started,
        "value": res.value,
        "label": res.label,
        "nodes": res.nodes,
        "solver": res.solver,
    }


def cases_of(spec: str) -> list[str]:
    out = []
    for part in spec.split(","):
        head, _, tail = part.partition(":")
        if head == "t3" and "-" in tail:
            lo, hi = (int(x) for x in tail.split("-"))
            out += [f"t3:{k}" for k in range(lo, hi + 1)]
        else:
            out.append(part)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default="t3:1-20")
    parser.add_argument("--time-limit", type=float, default=900.0)
    parser.add_argument("--out", help="save every measurement as bench/out/NAME.json")
    parser.add_argument("--one", nargs=2, metavar=("WAY", "CASE"), help="internal")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1], args.time_limit)))
        return
    rows = []
    for k, case in enumerate(cases_of(args.cases)):
        found = {}
        for way in WAYS if k % 2 == 0 else WAYS[::-1]:
            limit = ["--time-limit", str(args.time_limit)]
            found[way] = run_fresh([sys.executable, __file__, "--one", way, case, *limit])
        a, b = found["shipped"], found["no_heuristic_start"]
        agree = abs(a["value"] - b["value"]) <= 1e-6 * max(1.0, abs(a["value"]))
        rows.append({"case": case, **found, "agree": agree})
        print(
            f"{case}: shipped {a['wall_s']:.2f} s ({a['nodes']} nodes, {a['label']}), "
            f"no heuristic start {b['wall_s']:.2f} s ({b['nodes']} nodes, {b['label']}); "
            f"{a['wall_s'] / b['wall_s']:.2f}x{'' if agree else '; OPTIMA DIFFER'}",
            flush=True,
        )
    total = {w: sum(r[w]["wall_s"] for r in rows) for w in WAYS}
    print(
        f"total: shipped {total['shipped']:.1f} s, no heuristic start "
        f"{total['no_heuristic_start']:.1f} s",
        flush=True,
    )
    if args.out:
        save(
            args.out,
            {"machine": machine(), "time_limit_s": args.time_limit, "rows": rows, "total_s": total},
        )


if __name__ == "__main__":
    main()
