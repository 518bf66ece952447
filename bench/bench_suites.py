"""Issue 8 benchmark: a sweep suite over 1,000 generated packages on three backends.

Suite: memaudit-small seeds 0..N-1 (default 1,000) at budgets 2, 4, 8, 16, every reference
writer and both ablations (no_validity, generic), run by :func:`memaudit_core.suites.sweep_suite`
with ``--workers 1`` (the baseline), ``--workers 2`` (local process pool) and a local Dask
cluster (``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)`` on 127.0.0.1,
dashboard off). Each run writes to a fresh output folder (journal, CSV, Parquet, report; no
figures, so kaleido's start-up is not timed) and starts from an empty journal.

Reported: wall time, throughput (packages / s), speed-up against ``--workers 1`` measured in
the same run, CPU seconds of the whole process tree (main, pool workers, Dask scheduler and
workers; the overhead of parallel execution, unaffected by other load on the machine), the
load average before and after, and whether all three give byte-identical ``rows.csv``. The
Dask cluster's start-up is timed separately and not counted.

Run: ``.venv/bin/python bench/bench_suites.py [--seeds N] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import machine, save  # noqa: E402

from memaudit_core.suites import sweep_suite  # noqa: E402
from memaudit_core.writers import WRITERS  # noqa: E402

BUDGETS = [2, 4, 8, 16]
ABLATIONS = ["no_validity", "generic"]


class CpuMeter:
    """CPU seconds (user + system) of this process and all its descendants during a block.

    Sampled every 0.1 s from a thread, so workers that exit at the end still count (up to
    their last sample). On a machine shared with other work, wall time measures contention as
    much as our code; CPU seconds do not.
    """

    def __init__(self) -> None:
        import psutil

        self.psutil = psutil
        self.seen: dict[int, float] = {}
        self.base: dict[int, float] = {}
        self.stop = threading.Event()

    def sample(self, into: dict[int, float]) -> None:
        me = self.psutil.Process()
        for p in [me, *me.children(recursive=True)]:
            try:
                t = p.cpu_times()
            except self.psutil.Error:
                continue
            into[p.pid] = t.user + t.system

    def loop(self) -> None:
        while not self.stop.wait(0.1):
            self.sample(self.seen)

    def __enter__(self) -> CpuMeter:
        self.sample(self.base)
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sample(self.seen)
        self.stop.set()
        self.thread.join()

    @property
    def seconds(self) -> float:
        return sum(v - self.base.get(pid, 0.0) for pid, v in self.seen.items())


def run(label: str, family: str, out: Path, **backend) -> dict:
    if out.exists():
        shutil.rmtree(out)
    meter = CpuMeter()
    t0 = time.perf_counter()
    with meter:
        res = sweep_suite(
            families=[family],
            budgets=BUDGETS,
            ablations=ABLATIONS,
            out=out,
            figures=False,
            resume=False,
            **backend,
        )
    wall = time.perf_counter() - t0
    digest = hashlib.sha256((out / "rows.csv").read_bytes()).hexdigest()
    row = {
        "backend": label,
        "described": res.backend,
        "packages": res.n_sources,
        "tasks": res.n_tasks,
        "rows": len(res.rows),
        "wall_s": wall,
        "packages_per_s": res.n_sources / wall,
        "cpu_s": meter.seconds,
        "packages_per_cpu_s": res.n_sources / meter.seconds,
        "rows_csv_sha256": digest,
        "all_certified": all(r.certified for r in res.rows),
    }
    print(
        f"{label:>10}: {wall:7.2f} s  {row['packages_per_s']:7.1f} packages/s  "
        f"cpu {meter.seconds:7.2f} s  "
        f"{res.n_tasks} tasks  rows.csv {digest[:12]}",
        flush=True,
    )
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1000)
    ap.add_argument("--out", default=None, help="scratch folder (default: a temporary one)")
    args = ap.parse_args()
    family = f"memaudit-small:0-{args.seeds - 1}"
    scratch = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="memaudit-bench-"))
    print(f"machine: {machine()}")
    load_before = os.getloadavg()
    print(f"load average before: {load_before[0]:.2f} (other work on the machine slows every run)")
    print(
        f"suite: {family}, budgets {BUDGETS}, {len(WRITERS)} writers + {len(ABLATIONS)} ablations"
    )
    rows = [run("workers=1", family, scratch / "w1", workers=1)]
    rows.append(run("workers=2", family, scratch / "w2", workers=2))

    from dask.distributed import Client, LocalCluster

    t0 = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    )
    client = Client(cluster)
    startup = time.perf_counter() - t0
    print(f"dask LocalCluster start-up: {startup:.2f} s (not counted)")
    try:
        rows.append(run("dask(2)", family, scratch / "dask", scheduler=client))
    finally:
        client.close()
        cluster.close()

    base = rows[0]["wall_s"]
    for r in rows:
        r["speedup_vs_workers1"] = base / r["wall_s"]
        r["cpu_vs_workers1"] = r["cpu_s"] / rows[0]["cpu_s"]
    identical = len({r["rows_csv_sha256"] for r in rows}) == 1
    print(
        "\n| backend | wall (s) | packages/s | speed-up vs workers=1 | CPU (s) | CPU vs workers=1 |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['backend']} | {r['wall_s']:.2f} | {r['packages_per_s']:.1f} | "
            f"{r['speedup_vs_workers1']:.2f}x | {r['cpu_s']:.1f} | {r['cpu_vs_workers1']:.2f}x |"
        )
    print(f"\nidentical rows.csv across backends: {identical}")
    path = save(
        "bench_suites",
        {
            "machine": machine(),
            "suite": family,
            "budgets": BUDGETS,
            "writers": list(WRITERS),
            "ablations": ABLATIONS,
            "dask_startup_s": startup,
            "load_average_before": load_before[0],
            "load_average_after": os.getloadavg()[0],
            "runs": rows,
            "identical": identical,
        },
    )
    print(f"saved {path}")
    if not args.out:
        shutil.rmtree(scratch, ignore_errors=True)
    if not identical:
        raise SystemExit("backends gave different results")


if __name__ == "__main__":
    main()
