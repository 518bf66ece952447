"""Sweep-like app computations on a hard package: a per-run limit against a shared total.

The app's Budget sweep page computes :func:`memaudit_core.curves.budget_curve` and the
Ablations page :func:`memaudit_core.robustness.ablation_curve`. With only a per-run time limit
(the app's 20 s before the shared total), a package whose optima are hard to prove takes that
limit once per hard (budget, pool); with ``total_time_limit`` every solve of the computation
shares one total (:mod:`memaudit_core.solvers.timeshare`). Both are run here on the same
package in the same run, with the optimum cache emptied before each computation, and the
wall time, the number of certified optima and the largest gap are recorded.

Run: ``.venv/bin/python bench/bench_page_time.py [--package-seed 0] [--limit 20]
[--totals 10,20,60]``; results in ``bench/out/page-time.json``.
"""

from __future__ import annotations

import argparse
import time

from common import machine, save, timed

from memaudit_core import analysis, curves, robustness
from memaudit_core.generators import generate


def _curve(pkg, grid, kw):
    curve = curves.budget_curve(
        pkg, grid, ["writer:gvt", "writer:density"], ablations=("no_validity_opt",), **kw
    )
    return [(p.budget, p.value, p.bound, p.gap, p.certified) for p in curve.opt]


def _ablation(pkg, grid, kw):
    curve = robustness.ablation_curve(pkg, grid, preset="generic", **kw)
    return [(p.budget, p.full_opt, None, None, p.certified) for p in curve.points]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package-seed", type=int, default=0)
    ap.add_argument("--limit", type=float, default=20.0, help="per-run limit of the baseline")
    ap.add_argument("--totals", default="10,20,60", help="shared totals to run, seconds")
    args = ap.parse_args()
    pkg = generate("random_coverage", seed=args.package_seed)
    grid = pkg.budget_grid()
    totals = [float(t) for t in args.totals.split(",") if t]
    print(f"# {machine()}")
    print(f"# package {pkg.id}, budgets {', '.join(f'{b:.10g}' for b in grid)}")
    print("| computation | time rule | wall s | certified | largest gap |")
    print("|---|---|---:|---:|---:|")
    rows = []
    for name, fn in (("budget_curve", _curve), ("ablation_curve", _ablation)):
        settings = [(f"{args.limit:g} s per run (baseline)", {"time_limit": args.limit})]
        settings += [(f"{t:g} s shared", {"total_time_limit": t}) for t in totals]
        for rule, kw in settings:
            analysis._opt_cache.clear()  # each computation solves for itself
            wall, points = timed(lambda fn=fn, kw=kw: fn(pkg, grid, kw))
            gaps = [p[3] for p in points if p[3] is not None]
            n_cert = sum(1 for p in points if p[4])
            largest = max(gaps) if gaps else None
            rows.append(
                {
                    "computation": name,
                    "rule": rule,
                    "wall_s": wall,
                    "certified": n_cert,
                    "n_budgets": len(points),
                    "largest_gap": largest,
                }
            )
            # An ablation point records no bound: its gap is unknown, not zero (QA s39).
            unknown = any(p[3] is None and not p[4] for p in points)
            gap_text = (
                "n/a (no bound)"
                if unknown and largest is None
                else "-"
                if largest is None
                else f"{largest:.3%}" + (" (+ points without a bound)" if unknown else "")
            )
            print(f"| {name} | {rule} | {wall:.1f} | {n_cert}/{len(points)} | {gap_text} |")
    save(
        "page-time",
        {
            "machine": machine(),
            "when": time.strftime("%Y-%m-%d %H:%M"),
            "package": pkg.id,
            "budgets": list(grid),
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
