"""What the Evidence explorer's distinct labels cost, against the code before reviewer s48's
finding 2.

``memaudit_ui.figures.distinct_cuts`` (graph labels, timeline ticks, heatmap columns) checked
every cut it tried against every other id, and ``graph_geometry`` called it once per label
length tried. The baseline is ``memaudit_ui/figures.py`` as it was at ``--old-commit`` (read
with ``git show`` and loaded beside the current module), measured in the same run on the same
inputs:

* ``graph_geometry`` on the app's graphs whose labels are cut (speaker QA's link on the
  projector; sample packages; travel-assistant's 84 nodes with a long shared tail added to
  every id), with how often each asks ``distinct_cuts``;
* one ``distinct_cuts`` call on 200 adversarial ids: shared heads and tails around a short
  middle, twins differing in one middle character, one long shared tail.

Every new result must equal the old one (layouts whole, labels exactly); the script stops
otherwise. Times are the fastest of ``--repeats`` runs.

Usage::

    .venv/bin/python bench/bench_labels.py [--old-commit 58c5bca] [--repeats 3]
        [--out labels.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, save  # noqa: E402

from memaudit_core.explain import GraphData, evidence_view  # noqa: E402
from memaudit_ui import figures  # noqa: E402
from memaudit_ui.sources import load_by_key  # noqa: E402

SUFFIX = ":observed_in_the_long_running_conversation"


def old_figures(commit: str) -> types.ModuleType:
    """``memaudit_ui/figures.py`` at ``commit``, as a module of its own."""
    try:
        source = subprocess.run(
            ["git", "show", f"{commit}:memaudit_ui/figures.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"bench_labels: cannot read memaudit_ui/figures.py at {commit} with git: {exc}")
    module = types.ModuleType("figures_before")
    module.__file__ = f"figures.py@{commit}"
    sys.modules[module.__name__] = module  # dataclasses look their module up by name
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def graphs() -> list[tuple[str, GraphData, bool]]:
    out = []
    qa = evidence_view(
        load_by_key("gen:memaudit-small:3"), 6.0, writer="density", graph_scope="all"
    )
    out.append(("QA link gen:memaudit-small:3 B6 (43 nodes), projector", qa.graph, True))
    for key in ("sample:event-graph-50", "sample:temporal_interval"):
        pkg = load_by_key(key)
        graph = evidence_view(pkg, pkg.budget, writer="density", graph_scope="all").graph
        out.append((f"{key} ({graph.n_nodes} nodes), projector", graph, True))
    pkg = load_by_key("sample:travel-assistant")
    graph = evidence_view(pkg, pkg.budget, writer="density", graph_scope="all").graph
    long = dataclasses.replace(graph, node_labels=tuple(t + SUFFIX for t in graph.node_labels))
    for present in (False, True):
        mode = "projector" if present else "normal"
        out.append((f"travel-assistant + long shared tail (84 nodes), {mode}", long, present))
    return out


def id_sets() -> list[tuple[str, list[str]]]:
    rng = random.Random(48)
    heads = ["".join(rng.choices("ab:", k=10)) for _ in range(4)]
    tails = ["".join(rng.choices("ab:", k=10)) for _ in range(4)]
    shared: set[str] = set()
    while len(shared) < 200:
        middle = "".join(rng.choices("ab", k=rng.randint(0, 14)))
        shared.add(rng.choice(heads) + middle + rng.choice(tails))
    out = [("shared heads and tails, short middle", sorted(shared))]
    for head, length in (("", 60), ("observed_in_conversation:", 100)):
        twins = []
        for _ in range(100):
            core = "".join(rng.choices("abc" if not head else "ab", k=length))
            m = length // 2
            flip = "b" if core[m] != "b" else "a"
            twins += [head + core, head + core[:m] + flip + core[m + 1 :]]
        name = "twins, one middle character apart" + (f", shared head {head!r}" if head else "")
        out.append((name, twins))
    tail = [f"stale:pref:{i % 7}:observed_{i}_in_the_long_running_conversation" for i in range(200)]
    out.append(("one long shared tail", tail))
    return out


def best(call: Callable[[], object], repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - t0)
    return min(times), result


def asks(module: types.ModuleType, graph: GraphData, present: bool) -> int:
    """How often ``module.graph_geometry`` calls its ``distinct_cuts`` on ``graph``."""
    real, count = module.distinct_cuts, [0]

    def counting(texts, limit):
        count[0] += 1
        return real(texts, limit)

    module.distinct_cuts = counting
    try:
        module.graph_geometry(graph, present)
    finally:
        module.distinct_cuts = real
    return count[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old-commit", default="58c5bca", help="the baseline's commit")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default="labels.json", help="name of the JSON in bench/out/")
    args = ap.parse_args()
    old = old_figures(args.old_commit)
    print(f"machine: {machine()}; baseline: figures.py at {args.old_commit}")

    rows: list[dict] = []
    print("\n| graph_geometry on | asks before / now | before (s) | now (s) | ratio |")
    print("|---|---|---|---|---|")
    for name, graph, present in graphs():
        t_old, g_old = best(lambda g=graph, p=present: old.graph_geometry(g, p), args.repeats)
        t_new, g_new = best(lambda g=graph, p=present: figures.graph_geometry(g, p), args.repeats)
        if dataclasses.asdict(g_old) != dataclasses.asdict(g_new):
            sys.exit(f"bench_labels: the layout of {name} changed")
        n_old, n_new = asks(old, graph, present), asks(figures, graph, present)
        rows.append(
            {"case": name, "kind": "graph_geometry", "asks_before": n_old, "asks_now": n_new}
            | {"before_s": t_old, "now_s": t_new, "ratio": t_old / t_new}
        )
        print(f"| {name} | {n_old} / {n_new} | {t_old:.4f} | {t_new:.4f} | {t_old / t_new:.0f}x |")

    print("\n| distinct_cuts on 200 ids, limit 12 | before (s) | now (s) | ratio |")
    print("|---|---|---|---|")
    for name, ids in id_sets():
        t_old, l_old = best(lambda i=ids: old.distinct_cuts(i, 12), args.repeats)
        t_new, l_new = best(lambda i=ids: figures.distinct_cuts(i, 12), args.repeats)
        if l_old != l_new:
            sys.exit(f"bench_labels: the labels of {name} changed")
        rows.append(
            {"case": name, "kind": "distinct_cuts", "n_ids": len(ids)}
            | {"before_s": t_old, "now_s": t_new, "ratio": t_old / t_new}
        )
        print(f"| {name} | {t_old:.3f} | {t_new:.4f} | {t_old / t_new:.0f}x |")

    path = save(args.out, {"machine": machine(), "old_commit": args.old_commit, "rows": rows})
    print(f"\nall results equal the baseline's; saved {path}")


if __name__ == "__main__":
    main()
