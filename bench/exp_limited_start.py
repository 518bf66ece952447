"""Limited MILP runs with and without the heuristic start (``milp.HEURISTIC_START_MAX_COLUMNS``).

Eleventh session of issue 7: a library QA pass found a time-limited sweep whose OPT column was
a writer's own store, because HiGHS, stopped at 0.5 s, had found nothing better; the B&B's
root heuristic (greedy + local search, ``bnb.heuristic_store``) finds a store 7% better in
0.08 s. Limited ``milp`` runs on models of up to 8,000 candidate columns now start from it.

This script runs both variants in the same process on target 2's family (``random_instance``
of ``tests/test_solver_contract.py``: 200 groups x 4, 400 units, budget 10% of groups x mean
cost) and on ``random_coverage`` with 300 groups of 6, at several time limits, and prints per
instance: limit, incumbent and gap without and with the start, and the heuristic's value::

    .venv/bin/python bench/exp_limited_start.py bench/out/limited-start.json

The incumbent at a time limit depends on the machine's speed and load; the ratios between
the two variants in one run are the result. How long: 8 instances x 3 limits x 2 variants,
each run at most its limit (0.2, 0.5, 2 s), plus model building: about 1-2 minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_solver_contract import random_instance  # noqa: E402

from memaudit_core.compiled import compile_package  # noqa: E402
from memaudit_core.generators import generate  # noqa: E402
from memaudit_core.objective import evaluate  # noqa: E402
from memaudit_core.solvers import milp, relative_gap, run_engine  # noqa: E402
from memaudit_core.solvers.bnb import heuristic_store  # noqa: E402


def instances():
    for seed in range(5):
        yield f"target2-200x4-s{seed}", *random_instance(seed, 200, 400, 0.10)
    for seed in range(3):
        pkg = generate(
            "random_coverage", seed=seed, n_groups=300, candidates_per_group=6, max_cover=20
        )
        yield f"rc-300x6-s{seed}", compile_package(pkg), pkg.default_budget()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", type=Path, help="JSON file for the rows (optional)")
    args = ap.parse_args()
    rows = []
    shipped = milp.HEURISTIC_START_MAX_COLUMNS
    try:
        for name, inst, budget in instances():
            best_known = evaluate(inst, heuristic_store(inst, budget))
            for limit in (0.2, 0.5, 2.0):
                row = {"instance": name, "limit_s": limit, "heuristic": round(best_known, 4)}
                for variant, cap in (("without", 0), ("with", shipped)):
                    milp.HEURISTIC_START_MAX_COLUMNS = cap
                    raw = run_engine("milp", inst, budget, time_limit=limit)[0]
                    row[f"{variant}_value"] = round(raw.value, 4)
                    row[f"{variant}_gap"] = round(relative_gap(raw.value, raw.bound), 5)
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        milp.HEURISTIC_START_MAX_COLUMNS = shipped
    if args.out is not None:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
