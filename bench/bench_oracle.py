"""The brute-force oracle at several budgets: one depth-first pass against one pass per budget.

The tests check exact solvers against :func:`memaudit_core.solvers.brute.brute_force_budgets`
(every store enumerated, F from plain dicts). The workload here is the planted-repeat check of
``tests/test_orbits.py``: 40 packages of repeated blocks, each at six budgets (1, 2, 3 and
25%, 50%, 100% of the total cost), for both saturations it uses. Baseline in the same run: the
oracle as it was before the twenty-eighth session, frozen below (``itertools.product`` over the
groups, F and cost recomputed from scratch for every store, one enumeration per budget). Both
must give the same value and the same store (tie-break included) at every budget; the script
stops otherwise.

Usage::

    .venv/bin/python bench/bench_oracle.py [--seeds 40] [--out oracle.json]

How long: 5-6 minutes on the 2-core bench machine when quiet, over 10 under load, nearly all
of it in the frozen baseline (``--seeds 5`` for a quick check).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from common import machine, save  # noqa: E402
from test_orbits import planted_package  # noqa: E402

from memaudit_core.compiled import budget_with_tolerance, compile_package  # noqa: E402
from memaudit_core.package import parse_package  # noqa: E402
from memaudit_core.solvers.brute import brute_force_budgets  # noqa: E402

_H = {"cap1": lambda z: min(1.0, z), "linear": lambda z: z, "log1p": math.log1p}


def product_oracle(inst, budget: float) -> tuple[float, tuple[int, ...]]:
    """The baseline: the previous ``brute_force`` (one budget, every store from scratch)."""
    h = _H[inst.saturation]
    cov = inst.coverage
    rows = [
        {
            int(c): float(v)
            for c, v in zip(
                cov.indices[cov.indptr[i] : cov.indptr[i + 1]],
                cov.data[cov.indptr[i] : cov.indptr[i + 1]],
                strict=True,
            )
        }
        for i in range(inst.n_candidates)
    ]
    weights = [float(w) for w in inst.weight]
    group_options = []
    for g in range(inst.n_groups):
        members = list(inst.group_slice(g))
        opts = []
        for k in range(0, min(inst.group_capacity, len(members)) + 1):
            opts.extend(itertools.combinations(members, k))
        group_options.append(opts)
    limit = budget_with_tolerance(budget)
    best = (-1.0, math.inf, ())
    for combo in itertools.product(*group_options):
        chosen = tuple(sorted(i for part in combo for i in part))
        cost = sum(float(inst.cost[i]) for i in chosen)
        if cost > limit:
            continue
        z: dict[int, float] = {}
        for i in chosen:
            for r, a in rows[i].items():
                z[r] = z.get(r, 0.0) + a
        value = sum(weights[r] * h(zr) for r, zr in z.items())
        key_ids = tuple(inst.candidate_ids[i] for i in chosen)
        if value > best[0] + 1e-12 or (
            abs(value - best[0]) <= 1e-12
            and (cost < best[1] - 1e-12 or (abs(cost - best[1]) <= 1e-12 and key_ids < best[2]))
        ):
            best = (value, cost, key_ids)
    return max(best[0], 0.0), tuple(sorted(inst.candidate_idx(c) for c in best[2]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--out", default="oracle.json")
    args = ap.parse_args()
    rows = []
    for saturation in ("cap1", "linear"):
        baseline_s = one_pass_s = 0.0
        stores = 0
        for seed in range(args.seeds):
            inst = compile_package(parse_package(planted_package(seed, saturation)))
            total = float(inst.cost.sum())
            budgets = (1.0, 2.0, 3.0, 0.25 * total, 0.5 * total, total)
            t0 = time.perf_counter()
            old = [product_oracle(inst, b) for b in budgets]
            t1 = time.perf_counter()
            new = brute_force_budgets(inst, budgets)
            t2 = time.perf_counter()
            for b, (v_old, s_old), (v_new, s_new) in zip(budgets, old, new, strict=True):
                if abs(v_old - v_new) > 1e-12 or s_old != s_new:
                    raise SystemExit(f"seed {seed} budget {b}: {v_old} {s_old} != {v_new} {s_new}")
            baseline_s += t1 - t0
            one_pass_s += t2 - t1
            stores += math.prod(len(list(inst.group_slice(g))) + 1 for g in range(inst.n_groups))
        row = {
            "saturation": saturation,
            "packages": args.seeds,
            "budgets_each": 6,
            "stores_enumerated_per_budget_set": stores,
            "baseline_s": baseline_s,
            "one_pass_s": one_pass_s,
            "ratio": baseline_s / one_pass_s,
        }
        rows.append(row)
        print(
            f"{saturation}: {args.seeds} packages x 6 budgets, one pass per budget "
            f"{baseline_s:.1f} s, one depth-first pass {one_pass_s:.1f} s "
            f"({row['ratio']:.1f}x), identical values and stores",
            flush=True,
        )
    path = save(args.out, {"machine": machine(), "rows": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
