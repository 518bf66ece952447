"""B&B on random_coverage at its default budget and at a budget that binds nothing (measured).

Tenth session of issue 7: with a budget of twice the total cost, B&B proved the value at the
root (its theta-fitted bound met the greedy incumbent) and then searched for minutes, because
child bounds are computed without theta and stayed above the incumbent. Children now inherit
their ancestors' bounds and near-ties are capped (``bnb.TIE_NODE_CAP``). Run this script with
the checkout to measure as its argument, once on the old code (a worktree) and once on the new:

    .venv/bin/python bench/exp_bnb_nonbinding.py /path/to/checkout out.json

It prints one line per instance: groups, seed, budget kind, seconds, nodes, status, value.
Each solve has a 20 s limit: 30 solves, so at most 10 minutes (the current code answers each
in well under a second). Outputs of the tenth session: ``bench/out/bnb-nonbinding-*.txt``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog="Each solve has a 20 s limit (30 solves)."
    )
    ap.add_argument("checkout", type=Path, help="the MemAudit checkout whose code is measured")
    ap.add_argument("out", type=Path, help="JSON file for the rows")
    args = ap.parse_args()
    if not (args.checkout / "memaudit_core").is_dir():
        ap.error(f"{args.checkout} has no memaudit_core folder: not a MemAudit checkout")
    # The checkout's code, not the installed one: the point is to measure old against new.
    sys.path.insert(0, str(args.checkout))
    from memaudit_core.compiled import compile_package
    from memaudit_core.generators import generate
    from memaudit_core.solvers import solve

    rows = []
    for n in (12, 30, 50):
        for seed in range(5):
            pkg = generate("random_coverage", seed=seed, n_groups=n)
            inst = compile_package(pkg)
            for kind, budget in (("default", pkg.default_budget()), ("all", inst.total_cost * 2)):
                t = time.perf_counter()
                res = solve(inst, budget, "bnb", time_limit=20, cross_check=False)
                secs = round(time.perf_counter() - t, 3)
                rows.append((n, seed, kind, secs, res.nodes, res.status, round(res.value, 6)))
                print(*rows[-1], flush=True)
    args.out.write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
