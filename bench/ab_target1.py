"""Target 1's sweep in one process at whatever ``memaudit_core`` is first on ``sys.path``.

For comparing two commits in one sitting (the host's speed drifts by 2x between days and by
50% within minutes): check each out with ``git worktree add``, then run alternately, e.g.::

    for i in 1 2 3; do for w in /tmp/old /tmp/new; do
        PYTHONPATH=$w .venv/bin/python bench/ab_target1.py --repeats 5 >> ab.jsonl
    done; done

Each run prints one JSON line: the code's path, every sweep's wall and CPU seconds, their
medians and the row count (16,000 at the defaults: the memaudit-small seeds 0-499 at budgets
2, 4, 8, 16, OPT, two ablations and six writers, as ``bench_speed.py --targets 1``).
``--workers 2`` times the sweep on a process pool (the CPU seconds are then this process's
only); its first sweep, which starts the forkserver, is run untimed (``--warmup``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import memaudit_core
from memaudit_core.analysis import sweep
from memaudit_core.generators import generate

WRITERS = ["gvt", "density", "greedy", "fact_only", "summary_only", "recency_raw"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=500)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--warmup", type=int, default=None, help="untimed sweeps first (default: 1 with workers)"
    )
    args = parser.parse_args()
    packages = [generate("memaudit-small", seed=s) for s in range(args.seeds)]
    budgets, ablations = [2.0, 4.0, 8.0, 16.0], ["no_validity", "generic"]
    warmup = args.warmup if args.warmup is not None else int(args.workers > 1)
    for _ in range(warmup):
        sweep(packages, budgets, WRITERS, ablations=ablations, workers=args.workers)
    walls, cpus, rows = [], [], 0
    for _ in range(args.repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        res = sweep(packages, budgets, WRITERS, ablations=ablations, workers=args.workers)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        rows = len(res.rows)
    print(
        json.dumps(
            {
                "code": memaudit_core.__file__,
                "workers": args.workers,
                "walls": [round(w, 3) for w in walls],
                "cpus": [round(c, 3) for c in cpus],
                "median": round(statistics.median(walls), 3),
                "cpu_median": round(statistics.median(cpus), 3),
                "rows": rows,
            }
        )
    )


if __name__ == "__main__":
    main()
