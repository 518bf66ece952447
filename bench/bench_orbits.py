"""Packages that repeat blocks: ``auto`` with the count model against ``auto`` without it.

The count model (``memaudit_core/solvers/orbits.py``) solves the MILP over how many copies of
each interchangeable block take each configuration. The baseline, measured in the same run, is
the same ``solve(..., solver="auto")`` with the count model switched off, which is what the
code before it ran (the 0/1 model). Every instance is solved with a time limit; a run counts as
certified only when its result is. The two optima must agree wherever both are certified, and
the script stops with an error otherwise.

Cases: the family scan's instances that ``auto`` did not close (redundancy_heavy with 300 and
1,000 experiences, ``bench/RESULTS.md``, twenty-third session) and the other generated families
with repeated blocks at 1,000 experiences, budgets 0.5-10% of groups x mean cost.

Usage::

    .venv/bin/python bench/bench_orbits.py [--time-limit 60] [--out orbits.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, save  # noqa: E402

from memaudit_core.compiled import compile_package  # noqa: E402
from memaudit_core.generators import generate  # noqa: E402
from memaudit_core.solvers import orbits, solve  # noqa: E402

CASES = [
    ("redundancy_heavy", {"n_experiences": 300}, (15, 25, 41.25)),
    ("redundancy_heavy", {"n_experiences": 1000}, (13.75, 55, 137.5, 275)),
    ("density_trap", {"n_experiences": 1000}, None),
    ("summary_tradeoff", {"n_episodes": 1000}, None),
    ("abstention_hard", {"n_experiences": 1000}, None),
]
FRACTIONS = (0.005, 0.02, 0.05, 0.1)


def run_one(inst, budget: float, time_limit: float, counted: bool) -> dict:
    real = orbits.aggregate
    if not counted:
        orbits.aggregate = lambda *args, **kwargs: None
    try:
        t0 = time.perf_counter()
        res = solve(inst, budget, time_limit=time_limit)
        wall = time.perf_counter() - t0
    finally:
        orbits.aggregate = real
    return {
        "time_s": wall,
        "value": res.value,
        "bound": res.bound,
        "certified": res.certified,
        "proof": res.certificate.proof,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--out", default="orbits.json", help="name of the JSON in bench/out/")
    args = ap.parse_args()
    rows = []
    for family, params, budgets in CASES:
        inst = compile_package(generate(family, seed=0, **params))
        if budgets is None:
            mean_cost = float(inst.cost.mean())
            budgets = tuple(round(f * inst.n_groups * mean_cost, 2) for f in FRACTIONS)
        for budget in budgets:
            base = run_one(inst, budget, args.time_limit, counted=False)
            new = run_one(inst, budget, args.time_limit, counted=True)
            if base["certified"] and new["certified"]:
                if abs(base["value"] - new["value"]) > 1e-9 * max(1.0, abs(new["value"])):
                    raise SystemExit(f"optima differ on {family} {params} at {budget}")
            if not new["certified"]:
                raise SystemExit(f"count model not certified on {family} {params} at {budget}")
            row = {
                "family": family,
                **params,
                "budget": budget,
                "baseline": base,
                "counted": new,
                "ratio": base["time_s"] / new["time_s"],
            }
            rows.append(row)
            print(
                f"{family:17s} {list(params.values())[0]:>5} B={budget:<8g} "
                f"baseline {base['time_s']:7.2f} s {'OPT' if base['certified'] else 'gap ':4s}"
                f" {base['value']:.6g} (bound {base['bound']:.6g}) | counts "
                f"{new['time_s']:6.3f} s OPT {new['value']:.6g} | {row['ratio']:.1f}x",
                flush=True,
            )
    both = [r["ratio"] for r in rows if r["baseline"]["certified"]]
    summary = {
        "instances": len(rows),
        "baseline_certified": sum(r["baseline"]["certified"] for r in rows),
        "counted_certified": sum(r["counted"]["certified"] for r in rows),
        "baseline_total_s": sum(r["baseline"]["time_s"] for r in rows),
        "counted_total_s": sum(r["counted"]["time_s"] for r in rows),
        "median_ratio_both_certified": statistics.median(both) if both else None,
        "time_limit_s": args.time_limit,
    }
    print(summary)
    save(args.out, {"machine": machine(), "summary": summary, "rows": rows})


if __name__ == "__main__":
    main()
