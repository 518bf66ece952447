"""The greedy-family writers at scale: the priority-queue rows against the vectorised rows.

``memaudit_core.writers._greedy_rows`` runs the global cost-benefit greedy (writers
``greedy``, ``fact_only``, ``summary_only``) either as vectorised passes over every candidate
at every step (``heap=False``: the code before the twenty-first session, kept for small
packages) or as one priority queue per row (``heap=True``); ``auto`` (the default) chooses by
``GREEDY_HEAP_MIN_CANDIDATES`` and ``GREEDY_HEAP_READ_SHARE``. The three run in the same
process, interleaved, each on a freshly compiled instance (so each pays its own per-instance
caches), and every case checks that they pick the same stores.

Cases (the rows ``run_writers`` builds: the three greedy writers at the package's default
budget, seed 2):

- a memaudit-small slice: seeds 0..``--small-seeds``-1 x budgets 2, 4, 8, 16 (the writer
  part of issue 7 target 1's sweep), each package's 12 rows in one call;
- the break-even: ``random_coverage`` (target 2's package is 200 groups x 4), the stress
  families ``redundancy_heavy`` and ``summary_tradeoff``, and ``event_graph`` at growing sizes
  up to 5,000 experiences (16,612 candidates);
- ``event_graph`` at 20,000 experiences (66,177 candidates), the ``greedy`` row only, one run
  (the vectorised side takes about 20 s);
- ``--solve``: the wall time of ``memaudit solve <20,000-experience event graph>
  --time-limit 5`` in this tree and in a git worktree of ``--baseline-rev`` (subprocesses of
  the same run), where HiGHS is stopped with no store and the greedy writer's store is kept.

Run: ``.venv/bin/python bench/bench_greedy_scale.py [--repeats N] [--small-seeds N] [--solve]
[--baseline-rev REV]``. Output: ``bench/out/greedy_scale.json`` and a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, median, save  # noqa: E402

from memaudit_core import writers as W  # noqa: E402
from memaudit_core.compiled import compile_package  # noqa: E402
from memaudit_core.generators import generate  # noqa: E402
from memaudit_core.package import save_package  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
#: The commit before the priority-queue rows (twentieth session's last commit).
DEFAULT_BASELINE = "6453cda"
GREEDY_WRITERS = ("greedy", "fact_only", "summary_only")
SMALL_BUDGETS = (2, 4, 8, 16)


def greedy_rows(inst, budgets: list[float], writers=GREEDY_WRITERS):
    """The (budget, allowed pool) rows ``run_writers`` builds for the greedy writers."""
    types = W._prep(inst).types
    rows_b, rows_a = [], []
    for name in writers:
        pool_type = W._GREEDY_POOLS[name]
        for b in budgets:
            rows_b.append(b)
            rows_a.append(None if pool_type is None else types == pool_type)
    return rows_b, rows_a


def compare(make_rows, repeats: int, paths=("vectorised", "heap", "auto")) -> dict:
    """Median seconds of each path, interleaved, each run on freshly compiled instances.

    ``make_rows()`` compiles the instances and returns [(inst, budgets, pools)] (untimed); a
    path's time includes the per-instance caches it builds, as a first call pays them.
    """
    force = {"vectorised": False, "heap": True, "auto": None}
    times: dict[str, list[float]] = {p: [] for p in paths}
    picks: dict[str, list] = {}
    for _ in range(repeats):
        for path in paths:
            rows = make_rows()
            t0 = time.perf_counter()
            out = [W._greedy_rows(inst, b, a, heap=force[path]) for inst, b, a in rows]
            times[path].append(time.perf_counter() - t0)
            picks[path] = out
    same = all(picks[p] == picks[paths[0]] for p in paths)
    n_picks = sum(len(s) for row in picks[paths[0]] for s in row)
    inst = rows[0][0]
    return {
        "s": {p: median(t) for p, t in times.items()},
        "identical": same,
        "picks": n_picks,
        "candidates": inst.n_candidates,
        "reread": W._greedy_reread(inst),
    }


def case_family(family: str, params: dict, repeats: int, writers=GREEDY_WRITERS) -> dict:
    """The greedy writers at the package's default budget."""
    pkg = generate(family, seed=2, **params)
    budget = pkg.default_budget()

    def make_rows():
        inst = compile_package(pkg)
        return [(inst, *greedy_rows(inst, [budget], writers))]

    return {**compare(make_rows, repeats), "budget": budget, "writers": list(writers)}


def case_small(seeds: int, repeats: int) -> dict:
    pkgs = [generate("memaudit-small", seed=seed) for seed in range(seeds)]

    def make_rows():
        rows = []
        for pkg in pkgs:
            inst = compile_package(pkg)
            rows.append((inst, *greedy_rows(inst, list(SMALL_BUDGETS))))
        return rows

    return {**compare(make_rows, repeats), "packages": seeds}


def solve_run(tree: Path, package: Path, time_limit: float) -> dict:
    """``memaudit solve package --time-limit --json`` run from ``tree``: wall time and result.

    A value equal to the greedy writer's store means HiGHS was stopped with no store and the
    greedy floor was kept (the case this benchmark is about); otherwise HiGHS had a store.
    """
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = "import sys; from memaudit_core.cli import main; sys.exit(main(sys.argv[1:]))"
    args = ["solve", str(package), "--time-limit", str(time_limit), "--json"]
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    res = json.loads(out.stdout)
    return {"wall_s": wall, "solve_time_s": res["time_s"], "value": res["value"]}


def case_solve(baseline_rev: str, repeats: int, time_limit: float = 5.0) -> dict:
    """``memaudit solve`` of the 20,000-experience event graph, this tree and the baseline."""
    pkg = generate("event_graph", seed=2, n_experiences=20000)
    greedy_value = W.run_writer("greedy", compile_package(pkg), pkg.default_budget()).value
    with tempfile.TemporaryDirectory(prefix="memaudit-bench-") as tmp:
        package = Path(tmp) / "event_graph_20000.json"
        save_package(pkg, package)
        base_tree = Path(tmp) / "tree"
        subprocess.run(
            [
                "git",
                "-C",
                str(ROOT),
                "worktree",
                "add",
                "--detach",
                "-q",
                str(base_tree),
                baseline_rev,
            ],
            check=True,
        )
        runs: dict[str, list[dict]] = {"head": [], "baseline": []}
        try:
            for _ in range(repeats):
                for side, tree in (("head", ROOT), ("baseline", base_tree)):
                    run = solve_run(tree, package, time_limit)
                    run["greedy_floor"] = abs(run["value"] - greedy_value) <= 1e-9 * greedy_value
                    runs[side].append(run)
                    print(f"  solve, {side}: {json.dumps(run)}", flush=True)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_tree)],
                check=False,
            )
    # HiGHS sometimes stops at its limit on its own with no store and no floor is run (an
    # empty store, value 0, on both sides): only runs that kept the greedy floor compare.
    return {
        "head_s": median([r["wall_s"] for r in runs["head"] if r["greedy_floor"]]),
        "baseline_s": median([r["wall_s"] for r in runs["baseline"] if r["greedy_floor"]]),
        "runs": runs,
        "greedy_value": greedy_value,
        "time_limit": time_limit,
        "baseline_rev": baseline_rev,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--small-seeds", type=int, default=100)
    ap.add_argument("--solve", action="store_true", help="also time the CLI solve (about 1 min)")
    ap.add_argument("--baseline-rev", default=DEFAULT_BASELINE)
    ap.add_argument("--solve-repeats", type=int, default=2)
    ap.add_argument("--solve-only", action="store_true", help="skip the writer cases")
    ap.add_argument("--out", default="greedy_scale")
    args = ap.parse_args()
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {machine()}; load {load}", flush=True)
    cases: dict[str, dict] = {}

    def run(label: str, fn) -> None:
        cases[label] = fn()
        c = cases[label]
        print(f"  {label}: {json.dumps(c['s'])} identical={c['identical']}", flush=True)

    if not args.solve_only:
        run(
            f"memaudit-small, {args.small_seeds} seeds x 4 budgets",
            lambda: case_small(args.small_seeds, args.repeats),
        )
        sizes = [
            ("random_coverage", "n_groups", (50, 100, 200, 400, 1000)),
            ("redundancy_heavy", "n_experiences", (50, 200)),
            ("summary_tradeoff", "n_episodes", (50, 200)),
            ("event_graph", "n_experiences", (50, 100, 200, 300, 500, 1000, 5000)),
        ]
        for family, param, values in sizes:
            for v in values:
                run(
                    f"{family} {v:,}",
                    lambda f=family, p=param, v=v: case_family(f, {p: v}, args.repeats),
                )
        run(
            "event_graph 20,000 (greedy row)",
            lambda: case_family("event_graph", {"n_experiences": 20000}, 1, ("greedy",)),
        )
    payload = {
        "machine": machine(),
        "load": load,
        "cases": cases,
        "heap_read_share": W.GREEDY_HEAP_READ_SHARE,
    }
    if args.solve or args.solve_only:
        payload["solve"] = case_solve(args.baseline_rev, args.solve_repeats)
    save(args.out, payload)
    print(
        f"\n{machine()}; load at start {load}; median of {args.repeats} "
        "(event_graph 20,000: one run)\n"
    )
    print(
        "| case | candidates | vectorised (s) | heap (s) | auto (s) | vectorised / auto "
        "| same picks |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    for label, c in cases.items():
        s = c["s"]
        print(
            f"| {label} | {c['candidates']:,} | {s['vectorised']:.3f} | {s['heap']:.3f} "
            f"| {s['auto']:.3f} | {s['vectorised'] / s['auto']:.2f}x | {c['identical']} |"
        )
    if "solve" in payload:
        sv = payload["solve"]
        print(
            f"\n`memaudit solve` (event_graph 20,000, --time-limit {sv['time_limit']:g}), "
            "median wall of the runs that kept the greedy floor: "
            f"{sv['head_s']:.1f} s here, "
            f"{sv['baseline_s']:.1f} s at {sv['baseline_rev']} "
            f"({sv['baseline_s'] / sv['head_s']:.2f}x); greedy floor kept: "
            f"{[r['greedy_floor'] for r in sv['runs']['head']]} here, "
            f"{[r['greedy_floor'] for r in sv['runs']['baseline']]} at the baseline"
        )


if __name__ == "__main__":
    main()
