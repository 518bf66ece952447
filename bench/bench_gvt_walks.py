"""The two walks of the GVT tree, and the rule that chooses between them.

``memaudit_core.writers._gvt_many`` runs every (budget, threshold) pass of ``gvt`` and
``no_validity_gvt`` as one tree, walked either depth first in Python floats (``depth_first``)
or one group at a time for all live stores in numpy (``breadth_first``); ``auto`` (the
default) chooses by ``_GVT_BREADTH_MIN_GROUPS`` and ``_GVT_BREADTH_MIN_PASSES`` (the passes,
thresholds summed over budgets, bound how many stores stay apart) and hands a depth-first
walk over when it proves wider than ``_GVT_WIDE_NODES_PER_GROUP`` nodes per group.

Per family (seed 2, the size given) and per number of budgets K (evenly spaced from 2% to 50%
of the total candidate cost; K = 1 is the package's own budget), the three walks run in the
same process, interleaved, and every case checks that they pick the same stores. The number
of thresholds of the largest budget is printed beside them.

Run: ``.venv/bin/python bench/bench_gvt_walks.py [--repeats N] [--ks 1,2,4,20]``. Output:
``bench/out/gvt_walks.json`` and a markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, save  # noqa: E402

#: (family, size parameter, size): structured families with few thresholds, then the wide ones.
CASES = [
    ("redundancy_heavy", "n_experiences", 2000),
    ("density_trap", "n_experiences", 2000),
    ("summary_tradeoff", "n_episodes", 2000),
    ("abstention_hard", "n_experiences", 3000),
    ("scope_shift", "n_scopes", 1000),
    ("event_graph", "n_experiences", 1000),
    ("event_graph", "n_experiences", 5000),
    ("random_coverage", "n_groups", 1000),
]
WALKS = ("depth_first", "breadth_first", "auto")


def run_case(family: str, key: str, size: int, k: int, repeats: int) -> dict:
    import memaudit_core.writers as W
    from memaudit_core.compiled import budget_with_tolerance, compile_package
    from memaudit_core.generators import generate

    pkg = generate(family, seed=2, **{key: size})
    inst = compile_package(pkg)
    if k == 1:
        budgets = [float(pkg.budget)]
    else:
        budgets = [float(b) for b in np.linspace(0.02, 0.5, k) * inst.total_cost]
    times: dict[str, list[float]] = {w: [] for w in WALKS}
    picks: dict[str, list] = {}
    try:
        for _ in range(repeats):
            for walk in WALKS:
                W._GVT_WALK = walk
                W._PREP.pop(inst, None)  # each walk pays the per-instance caches
                t0 = time.perf_counter()
                picks[walk] = W._gvt_many(inst, budgets)
                times[walk].append(time.perf_counter() - t0)
    finally:
        W._GVT_WALK = "auto"
    # The largest budget's thresholds, built as _gvt_many builds them.
    single = W._prep(inst).singletons(inst)
    fits = inst.cost <= budget_with_tolerance(max(budgets))
    thresholds: list[float] = []
    for t in [*np.sort(single[fits] / inst.cost[fits])[::-1].tolist(), 0.0]:
        if t >= 0.0 and (not thresholds or not W._tied(thresholds[-1], t)):
            thresholds.append(t)
    return {
        "family": family,
        key: size,
        "groups": int(inst.n_groups),
        "budgets": k,
        "thresholds_of_largest_budget": len(thresholds),
        "median_s": {w: statistics.median(v) for w, v in times.items()},
        "same_stores": picks["depth_first"] == picks["breadth_first"] == picks["auto"],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ks", default="1,2,4,20", help="numbers of budgets")
    ap.add_argument("--out", default="gvt_walks", help="name of the JSON in bench/out/")
    args = ap.parse_args()
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {machine()}; load {load}", flush=True)
    rows = []
    for family, key, size in CASES:
        for k in (int(x) for x in args.ks.split(",")):
            row = run_case(family, key, size, k, args.repeats)
            rows.append(row)
            t = row["median_s"]
            print(
                f"  {family} {key}={size} K={k}: depth {t['depth_first']:.2f} s, "
                f"breadth {t['breadth_first']:.2f} s, auto {t['auto']:.2f} s, "
                f"same {row['same_stores']}",
                flush=True,
            )
    print(f"\nMedian of {args.repeats}, seconds; K budgets from 2% to 50% of the total cost.\n")
    print("| family | size | thresholds | K | depth first | breadth first | auto | same stores |")
    print("|---|---:|---:|---:|---:|---:|---:|:--:|")
    for row in rows:
        t = row["median_s"]
        size = next(v for n, v in row.items() if n.startswith("n_"))
        print(
            f"| {row['family']} | {size:,} | {row['thresholds_of_largest_budget']:,} | "
            f"{row['budgets']} | {t['depth_first']:.2f} | {t['breadth_first']:.2f} | "
            f"{t['auto']:.2f} | {'yes' if row['same_stores'] else '**no**'} |"
        )
    print("saved", save(args.out, {"machine": machine(), "load": load, "rows": rows}))


if __name__ == "__main__":
    main()
