"""Reference writers on a large package, against the same code at an earlier commit.

Times every reference writer (``run_writer``, one budget) and all seven together
(``run_writers``, as the Overview and the sweeps call them) on the package the app's upload
benchmark uses: ``event_graph``, seed 0, 3,000 experiences (10,041 candidates), at its default
budget. The baseline is the same measurement run on a git checkout of ``--baseline-rev``
(default: the commit before the GVT tree stepped over groups), in a subprocess of the same run,
so both sides share the machine and its load. Each side also records the selections' hash:
equal hashes mean both versions chose the same stores.

Run: ``.venv/bin/python bench/bench_writers.py [--baseline-rev REV] [--repeats N]``
(``--baseline-rev ''`` measures the working tree only). Other packages and writers:
``--family random_coverage --param n_groups=2000 --writers gvt --out writers-rc2000``.
Output: ``bench/out/<out>.json`` and a markdown table on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, save  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FAMILY, SEED, PARAMS = "event_graph", 0, {"n_experiences": 3000}
#: The commit before the GVT tree's group skipping and in-place stores (seventh session).
DEFAULT_BASELINE = "6d9a785"


def measure(
    repeats: int,
    family: str = FAMILY,
    seed: int = SEED,
    params: dict | None = None,
    writers: list[str] | None = None,
    sweep: list[float] | None = None,
) -> dict:
    """Median seconds per writer and for all writers together; run in the code under test."""
    from memaudit_core.compiled import compile_package
    from memaudit_core.generators import generate
    from memaudit_core.writers import WRITERS, run_writer, run_writers

    pkg = generate(family, seed=seed, **(PARAMS if params is None else params))
    names = list(WRITERS) if writers is None else writers
    per_writer: dict[str, list[float]] = {n: [] for n in names}
    together: list[float] = []
    digest = hashlib.sha256()
    for rep in range(repeats):
        # A fresh compile each time: per-instance caches (singletons, prepared entries) are
        # part of what a first call pays.
        inst = compile_package(pkg)
        for name in names:
            t0 = time.perf_counter()
            res = run_writer(name, inst, pkg.budget)
            per_writer[name].append(time.perf_counter() - t0)
            if rep == 0:
                digest.update(f"{name}:{res.selected_idx}".encode())
        inst = compile_package(pkg)
        t0 = time.perf_counter()
        run_writers(names, inst, [pkg.budget * f for f in (sweep or [1.0])])
        together.append(time.perf_counter() - t0)
    return {
        "candidates": int(inst.n_candidates),
        "budget": pkg.budget,
        "sweep_budgets": [pkg.budget * f for f in (sweep or [1.0])],
        "per_writer_s": {n: statistics.median(v) for n, v in per_writer.items()},
        "run_writers_s": statistics.median(together),
        "selections_sha256": digest.hexdigest(),
    }


def measure_at(rev: str, repeats: int, setup: dict) -> dict:
    """:func:`measure` on a temporary git worktree of ``rev`` (a subprocess, same machine)."""
    with tempfile.TemporaryDirectory(prefix="memaudit-bench-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), rev],
            check=True,
        )
        try:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            code = (
                "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_writers as b; "
                "print(json.dumps(b.measure(int(sys.argv[2]), **json.loads(sys.argv[3]))))"
            )
            here = str(Path(__file__).resolve().parent)
            out = subprocess.run(
                [sys.executable, "-c", code, here, str(repeats), json.dumps(setup)],
                cwd=tree,
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            return json.loads(out.stdout.strip().splitlines()[-1])
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline-rev", default=DEFAULT_BASELINE)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--family", default=FAMILY)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument(
        "--param", action="append", default=[], help="generator parameter k=v (integer)"
    )
    ap.add_argument("--writers", default="", help="comma-separated names (default: all seven)")
    ap.add_argument(
        "--sweep",
        default="1",
        help="budgets of the run_writers row, as multiples of the package budget (e.g. 0.5,1,2)",
    )
    ap.add_argument("--out", default="writers", help="name of the JSON in bench/out/")
    args = ap.parse_args()
    params = dict(PARAMS) if not args.param else {}
    for item in args.param:
        key, _, value = item.partition("=")
        params[key] = int(value)
    writers = [w for w in args.writers.split(",") if w] or None
    sweep = [float(f) for f in args.sweep.split(",") if f]
    setup = {
        "family": args.family,
        "seed": args.seed,
        "params": params,
        "writers": writers,
        "sweep": sweep,
    }
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {machine()}; load {load}", flush=True)
    head = measure(args.repeats, **setup)
    base = None
    if args.baseline_rev:
        known = subprocess.run(
            [
                "git",
                "-C",
                str(ROOT),
                "rev-parse",
                "-q",
                "--verify",
                f"{args.baseline_rev}^{{commit}}",
            ],
            capture_output=True,
        )
        if known.returncode == 0:
            base = measure_at(args.baseline_rev, args.repeats, setup)
        else:  # e.g. a shallow clone: measure this tree alone rather than fail
            print(f"baseline {args.baseline_rev} is not in this clone: measuring this tree only")
    payload = {
        "machine": machine(),
        "load": load,
        "setup": setup,
        "head": head,
        "baseline_rev": args.baseline_rev,
    }
    payload["baseline"] = base
    shown_params = ", ".join(f"{k}={v:,}" for k, v in params.items())
    print(
        f"\n{args.family} seed {args.seed}, {shown_params} ({head['candidates']:,} candidates), "
        f"B = {head['budget']:g}; median of {args.repeats}\n"
    )
    print(f"| writer | this tree (s) | {args.baseline_rev or 'baseline'} (s) | ratio |")
    print("|---|---:|---:|---:|")
    rows = [(n, head["per_writer_s"][n]) for n in head["per_writer_s"]]
    at = "" if sweep == [1.0] else f" at {len(sweep)} budgets ({args.sweep} x B)"
    rows.append((f"all {len(rows)} together (`run_writers`{at})", head["run_writers_s"]))
    for name, t in rows:
        b = None
        if base is not None:
            b = base["run_writers_s"] if name.startswith("all") else base["per_writer_s"][name]
        ratio = f"{b / t:.1f}x" if b else "-"
        shown = "-" if b is None else f"{b:.3f}"
        print(f"| {name} | {t:.3f} | {shown} | {ratio} |")
    if base is not None:
        same = base["selections_sha256"] == head["selections_sha256"]
        print(f"\nSame selections in both trees: {same}.")
        payload["same_selections"] = same
    print("saved", save(args.out, payload))


if __name__ == "__main__":
    main()
