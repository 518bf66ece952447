"""Scoring large external stores: a Mem0 export of N memories against a small LoCoMo package.

Each size runs in a fresh Python process (so its peak memory is its own): the export is
generated with a seed (memories of 6-9 words, each linked to one of the package's dialogue
ids; at the default budget of 10 words a store holds one memory, so optima tie across
thousands of memories and ``auto`` enumerates), then read with ``load_external_store`` and
scored with ``union_report`` at ``--budget``, which is what ``memaudit score PACKAGE
--external EXPORT --format mem0`` runs. Every optimum must come back certified; the script
stops with an error otherwise.

To compare two versions of the code, run it from each checkout in the same session (the
twenty-fifth session's figures in ``bench/RESULTS.md`` were taken that way, against a
``git worktree`` of the previous commit, with ``PYTHONPATH`` pointing at it).

Usage::

    .venv/bin/python bench/bench_store_scale.py [--sizes 1000 3000 10000 30000] [--budget 10]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT / "tests" / "fixtures" / "importers" / "locomo_small.json"


def export_doc(package, n_memories: int, seed: int) -> dict:
    """A Mem0 v1.1 ``{"results": [...]}`` export whose memories link to dialogue ids."""
    import numpy as np

    rng = np.random.default_rng(seed)
    dia_ids = sorted(u.id for u in package.units if u.id.startswith("D"))
    words = ["Ann", "moved", "to", "Lisbon", "cat", "Miso", "job", "Acme", "likes", "tea"]
    results = []
    for k in range(n_memories):
        text = " ".join(rng.choice(words, size=int(rng.integers(6, 10))))
        results.append(
            {
                "id": f"m{k}",
                "memory": text,
                "metadata": {"dia_id": str(rng.choice(dia_ids))},
                "created_at": f"2025-01-01T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z",
                "user_id": "ann",
            }
        )
    return {"results": results}


def one_size(n_memories: int, budget: float, seed: int) -> dict:
    from memaudit_core.importers import load_external_store
    from memaudit_core.importers.locomo import import_locomo
    from memaudit_core.union import union_report, with_store

    package = import_locomo(LOCOMO, instance="conv-a")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mem0.json"
        path.write_text(json.dumps(export_doc(package, n_memories, seed)))
        t0, c0 = time.perf_counter(), time.process_time()
        store = load_external_store(path, "mem0", package=package)
        union = with_store(package, store)
        t1, c1 = time.perf_counter(), time.process_time()
        report = union_report(union, store.id, budget)
        t2, c2 = time.perf_counter(), time.process_time()
    certified = report.union_opt.certified and report.upper.certified
    if not certified:
        raise SystemExit(f"{n_memories} memories: an optimum is not certified")
    return {
        "memories": n_memories,
        "budget": budget,
        "load_s": t1 - t0,
        "score_s": t2 - t1,
        # CPU time of this process: on a shared machine wall time also counts the waits.
        "load_cpu_s": c1 - c0,
        "score_cpu_s": c2 - c1,
        "union_opt": report.union_opt.value,
        "union_opt_solver": report.union_opt.solver,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 10000, 30000])
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300.0, help="per size, seconds")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help="name of the JSON in bench/out/")
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one_size(args.one, args.budget, args.seed)))
        return
    from common import machine, save

    print(f"# {machine()}")
    rows = []
    for n in args.sizes:
        cmd = [sys.executable, __file__, "--one", str(n), "--budget", str(args.budget)]
        cmd += ["--seed", str(args.seed)]
        t0 = time.perf_counter()
        try:
            done = subprocess.run(
                cmd, capture_output=True, text=True, timeout=args.timeout, check=True
            )
        except subprocess.TimeoutExpired:
            print(f"{n:>7} memories: over {args.timeout:.0f} s", flush=True)
            rows.append({"memories": n, "timeout_s": args.timeout})
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        row["process_s"] = time.perf_counter() - t0
        rows.append(row)
        print(
            f"{n:>7} memories: load {row['load_s']:.2f} s, score {row['score_s']:.2f} s "
            f"(CPU {row['load_cpu_s']:.2f} s, {row['score_cpu_s']:.2f} s) "
            f"(OPT_P+ {row['union_opt']:.4g} by {row['union_opt_solver']}), "
            f"peak {row['peak_rss_mb']:.0f} MB",
            flush=True,
        )
    if args.out:
        save(args.out, {"machine": machine(), "rows": rows})


if __name__ == "__main__":
    main()
