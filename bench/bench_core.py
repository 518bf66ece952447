"""Issue 2 benchmark: certified solves on random packages, and the memaudit-small sweep.

Random packages: 25, 50, 100, 200 groups x 4 candidates, 2 units per group, each candidate
covering 3-12 units with values U(0.1, 1), costs U(1, 10), budgets 5% and 10% of
groups x mean cost (``random_coverage`` family, seeds 0..SEEDS-1). Engines: bnb, milp and auto
(which may add a cross-check). Baseline for the ratios: the plain MILP (``milp``) in the same run.

Sweep: memaudit-small seeds 0-499 at budgets 2, 4, 8, 16 with every reference writer and both
ablations (``analysis.sweep``), timed end to end.

Run: ``.venv/bin/python bench/bench_core.py [--seeds N] [--time-limit S]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import machine, median, save, timed  # noqa: E402

from memaudit_core.analysis import sweep  # noqa: E402
from memaudit_core.compiled import compile_package  # noqa: E402
from memaudit_core.generators import generate  # noqa: E402
from memaudit_core.solvers import solve  # noqa: E402
from memaudit_core.writers import WRITERS  # noqa: E402


def bench_random(seeds: int, time_limit: float) -> list[dict]:
    rows = []
    for n_groups in (25, 50, 100, 200):
        for frac in (0.05, 0.10):
            per_engine: dict[str, list[float]] = {"bnb": [], "milp": [], "auto": []}
            status: dict[str, list[str]] = {k: [] for k in per_engine}
            for seed in range(seeds):
                pkg = generate(
                    "random_coverage", seed=seed, n_groups=n_groups, budget_fraction=frac
                )
                inst = compile_package(pkg)
                values = {}
                for engine in per_engine:
                    dt, res = timed(
                        lambda e=engine, i=inst, b=pkg.budget: solve(
                            i, b, solver=e, time_limit=time_limit
                        )
                    )
                    per_engine[engine].append(dt)
                    status[engine].append("certified" if res.certified else res.status)
                    values[engine] = res.value
                certified = [v for e, v in values.items() if status[e][-1] == "certified"]
                if certified and max(certified) - min(certified) > 1e-7 * max(1.0, max(certified)):
                    raise SystemExit(
                        f"engines disagree on g={n_groups} f={frac} s={seed}: {values}"
                    )
            row = {
                "groups": n_groups,
                "budget_fraction": frac,
                "seeds": seeds,
                **{f"{e}_median_s": median(t) for e, t in per_engine.items()},
                **{f"{e}_certified": status[e].count("certified") for e in per_engine},
            }
            row["milp_over_bnb"] = row["milp_median_s"] / row["bnb_median_s"]
            row["milp_over_auto"] = row["milp_median_s"] / row["auto_median_s"]
            rows.append(row)
            print(
                f"G={n_groups:4d} B={frac:.0%}: bnb {row['bnb_median_s']:.3f}s "
                f"({row['bnb_certified']}/{seeds} cert), milp {row['milp_median_s']:.3f}s "
                f"({row['milp_certified']}/{seeds}), auto {row['auto_median_s']:.3f}s "
                f"({row['auto_certified']}/{seeds}); milp/auto x{row['milp_over_auto']:.2f}",
                flush=True,
            )
    return rows


def bench_sweep() -> dict:
    packages = [generate("memaudit-small", seed=s) for s in range(500)]
    dt, result = timed(
        lambda: sweep(packages, [2, 4, 8, 16], list(WRITERS), ablations=["no_validity", "generic"])
    )
    summary = {(s.method, s.budget): s.mean_ratio for s in result.summary}
    print(
        f"memaudit-small sweep, 500 seeds x 4 budgets, {len(WRITERS)} writers + 2 ablations: "
        f"{dt:.2f} s ({len(result.rows)} rows)"
    )
    for method in ("gvt", "density", "no_validity_opt", "generic_opt"):
        print(
            "  "
            + method
            + ": "
            + ", ".join(f"B{b}={summary[(method, b)]:.3f}" for b in (2, 4, 8, 16))
        )
    return {
        "seconds": dt,
        "rows": len(result.rows),
        "mean_ratio": {f"{m}@{b}": v for (m, b), v in summary.items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--skip-random", action="store_true")
    args = ap.parse_args()
    print("machine:", machine())
    payload = {"machine": machine()}
    payload["sweep"] = bench_sweep()
    if not args.skip_random:
        payload["random"] = bench_random(args.seeds, args.time_limit)
    print("saved", save("core", payload))


if __name__ == "__main__":
    main()
