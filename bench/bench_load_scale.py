"""Loading large packages: JSON text -> validated Package, and the compile step after it.

Times ``loads_package`` (decode + validate) and ``compile_package`` on generated event-graph
packages of growing size, median of ``--repeats`` runs. To compare two versions of the code,
run it from each checkout in the same session (the twenty-first session's figures in
``bench/RESULTS.md`` were taken that way, against a ``git worktree`` of the previous commit).

Usage::

    .venv/bin/python bench/bench_load_scale.py [--sizes 5000 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

from memaudit_core.compiled import compile_package
from memaudit_core.generators import generate
from memaudit_core.package import loads_package, package_to_dict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    for n in args.sizes:
        data = json.dumps(package_to_dict(generate("event_graph", seed=2, n_experiences=n)))
        raw = data.encode("utf-8")
        load_s, compile_s = [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            pkg = loads_package(raw, source=f"event_graph_{n}.json")
            t1 = time.perf_counter()
            compile_package(pkg)
            t2 = time.perf_counter()
            load_s.append(t1 - t0)
            compile_s.append(t2 - t1)
        print(
            f"event_graph n_experiences={n}: {len(raw) / 1e6:.1f} MB, "
            f"load+validate {statistics.median(load_s):.3f} s, "
            f"compile {statistics.median(compile_s):.3f} s (median of {args.repeats})"
        )


if __name__ == "__main__":
    main()
