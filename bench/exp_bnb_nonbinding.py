"""B&B on random_coverage at its default budget and at a budget that binds nothing (measured).

Tenth session of issue 7: with a budget of twice the total cost, B&B proved the value at the
root (its theta-fitted bound met the greedy incumbent) and then searched for minutes, because
child bounds are computed without theta and stayed above the incumbent. Children now inherit
their ancestors' bounds and near-ties are capped (``bnb.TIE_NODE_CAP``). Run this script with
the checkout to measure as its argument, once on the old code (a worktree) and once on the new:

    .venv/bin/python bench/exp_bnb_nonbinding.py /path/to/checkout out.json

It prints one line per instance: groups, seed, budget kind, seconds, nodes, status, value.
Each solve has a 20 s limit. Outputs of the tenth session: ``bench/out/bnb-nonbinding-*.txt``.
"""

from __future__ import annotations

import json
import sys
import time

sys.path.insert(0, sys.argv[1])

from memaudit_core.compiled import compile_package  # noqa: E402
from memaudit_core.generators import generate  # noqa: E402
from memaudit_core.solvers import solve  # noqa: E402

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
json.dump(rows, open(sys.argv[2], "w"))
