"""The Overview's view at a series of budgets, at whatever ``memaudit_core`` is first on
``sys.path``: for comparing two commits in one sitting, as ``bench/ab_target1.py``::

    git worktree add /tmp/old <commit>
    for i in 1 2 3; do for w in /tmp/old /work/main; do
        (cd $w && /work/main/.venv/bin/python /work/main/bench/ab_overview.py) >> ab.jsonl
    done; done

(run from the checkout's folder: Python puts the script's folder first on ``sys.path``, and an
installed editable ``memaudit_core`` would otherwise win). One JSON line per run: the code's
path, and per package the median and total seconds of ``reports.overview`` (the Overview
page's core call, with every reference writer and the package's stores) over ``--budgets``
budgets evenly spaced from a quarter of the package's default budget to twice it, each budget
new to the process (the package is loaded, compiled and warmed at another budget first).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

import numpy as np  # noqa: E402

import memaudit_core  # noqa: E402
from memaudit_core import reports  # noqa: E402
from memaudit_core.package import load_package  # noqa: E402

SAMPLES = Path(__file__).resolve().parent.parent / "sample_packages"
DEFAULT_PACKAGES = ("travel-assistant", "event-graph-50", "veg-to-pescatarian")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", default=",".join(DEFAULT_PACKAGES))
    parser.add_argument("--budgets", type=int, default=15)
    args = parser.parse_args()
    out: dict[str, object] = {"code": memaudit_core.__file__}
    for name in args.packages.split(","):
        package = load_package(SAMPLES / f"{name}.json")
        reports.overview(package, package.budget * 3.0, time_limit=20.0)  # warm
        times = []
        for budget in np.linspace(0.25, 2.0, args.budgets) * package.budget:
            started = time.perf_counter()
            reports.overview(package, float(budget), time_limit=20.0)
            times.append(time.perf_counter() - started)
        out[name] = {
            "median_s": round(statistics.median(times), 4),
            "total_s": round(sum(times), 3),
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
