"""Baseline for issue 7 target 1: the memaudit-small sweep computed plainly in pure Python.

What it computes is what ``analysis.sweep`` computes for the speed benchmark: for every package
and budget, the optimum over the full candidate pool, over the pool without validity types
(tombstone, compound_update) and over the generic types (raw_span, atomic_fact, summary), and
the stores of the writers gvt, density, greedy, fact_only, summary_only and recency_raw — with
the rules of DESIGN.md sections 5-6 and ``memaudit_core.writers``.

How: a straightforward implementation, written to be correct and readable, not fast and not
deliberately slow. Candidates and coverage are plain dicts read from the package; F is
recomputed from those dicts; every optimum is a depth-first enumeration over groups (take
nothing, or one candidate that fits the remaining budget) with F recomputed at every complete
store; every writer runs once per budget. No numpy, no caching across budgets or pools.
This is the baseline the issue names, and target 1's ratio is against it.

A second variant, ``incremental`` (:class:`Incremental`), is as plain but carries the
coverage sums down the depth-first search (each step adds the candidate's units and its gain)
and computes a writer's gains over the candidate's own units only. Same rules, same numbers;
it is there so that target 1 also reports how far the product is ahead of a pure-Python
search that does not recompute F at every leaf (QA s48: 2-2.5x faster than ``issue``).

Run alone: ``.venv/bin/python bench/baseline_pure_python.py [--seeds N] [--variant V]``
prints its time (500 seeds: about 35-90 s CPU for ``issue`` on the 2-core bench machines,
depending on the host); ``bench/bench_speed.py`` imports :func:`run` and checks its values,
optima, writer stores and store costs against the fast path.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memaudit_core.generators import generate  # noqa: E402

BUDGETS = (2.0, 4.0, 8.0, 16.0)
WRITERS = ("gvt", "density", "greedy", "fact_only", "summary_only", "recency_raw")
VALIDITY = {"tombstone", "compound_update"}
GENERIC = {"raw_span", "atomic_fact", "summary"}
POOLS = {
    "full": lambda t: True,
    "no_validity": lambda t: t not in VALIDITY,
    "generic": lambda t: t in GENERIC,
}
GAIN_EPS = 1e-12
TIE = 1e-12


def tied(a: float, b: float) -> bool:
    return abs(a - b) <= TIE * max(1.0, abs(a), abs(b))


class Plain:
    """One package as dicts: groups in arrival order, candidates by (cost, id) inside."""

    def __init__(self, package):
        self.weight = package.unit_weights()
        exps = sorted(package.experiences, key=lambda e: (e.time, e.id))
        self.time = {e.id: e.time for e in exps}
        self.cand = {c.id: c for c in package.candidates}
        self.groups = [
            sorted(
                (c.id for c in package.candidates if c.experience == e.id),
                key=lambda cid: (self.cand[cid].cost, cid),
            )
            for e in exps
        ]
        self.cov = {
            cid: {u: a for u, a in c.coverage.items() if a > 0} for cid, c in self.cand.items()
        }
        self.cost = {cid: c.cost for cid, c in self.cand.items()}

    # ------------------------------------------------------------------ objective
    def F(self, store) -> float:
        z: dict[str, float] = {}
        for cid in store:
            for u, a in self.cov[cid].items():
                z[u] = z.get(u, 0.0) + a
        return sum(self.weight[u] * min(1.0, zu) for u, zu in z.items())

    def gain(self, store, cid) -> float:
        return self.F([*store, cid]) - self.F(store)

    # ------------------------------------------------------------------ optimum
    def opt(self, budget: float, pool: str = "full") -> float:
        """Depth-first enumeration: per group nothing or one candidate that still fits."""
        limit = budget * (1 + 1e-9)
        allowed = POOLS[pool]
        groups = [[c for c in g if allowed(self.cand[c].type)] for g in self.groups]
        best = 0.0

        def dfs(g: int, store: list[str], spent: float) -> None:
            nonlocal best
            if g == len(groups):
                best = max(best, self.F(store))
                return
            dfs(g + 1, store, spent)
            for cid in groups[g]:
                if spent + self.cost[cid] <= limit:
                    store.append(cid)
                    dfs(g + 1, store, spent + self.cost[cid])
                    store.pop()

        dfs(0, [], 0.0)
        return best

    # ------------------------------------------------------------------ writers
    def gvt(self, budget: float) -> list[str]:
        limit = budget * (1 + 1e-9)
        dens = sorted(
            (self.F([c]) / self.cost[c] for c in self.cost if self.cost[c] <= limit), reverse=True
        )
        thresholds: list[float] = []
        for t in [*dens, 0.0]:
            if t >= 0.0 and (not thresholds or not tied(thresholds[-1], t)):
                thresholds.append(t)
        best = None  # (value, cost, threshold index, store)
        for t_idx, tau in enumerate(thresholds):
            store: list[str] = []
            spent = 0.0
            for group in self.groups:
                choice, key = None, None
                for cid in group:
                    c = self.cost[cid]
                    g = self.gain(store, cid)
                    if g <= GAIN_EPS or spent + c > limit or g / c < tau - TIE * max(1.0, tau):
                        continue
                    k = (g, -c)
                    if choice is None or self.better(k, key, cid, choice):
                        choice, key = cid, k
                if choice is not None:
                    store.append(choice)
                    spent += self.cost[choice]
            value = self.F(store)
            if (
                best is None
                or (value > best[0] and not tied(value, best[0]))
                or (tied(value, best[0]) and (spent, t_idx) < (best[1], best[2]))
            ):
                best = (value, spent, t_idx, store)
        return best[3]

    @staticmethod
    def better(key, best_key, cid, best_cid) -> bool:
        """key beats best_key lexicographically with tolerant ties; full tie: smaller id."""
        for a, b in zip(key, best_key, strict=True):
            if not tied(a, b):
                return a > b
        return cid < best_cid

    def density(self, budget: float) -> list[str]:
        limit = budget * (1 + 1e-9)
        store: list[str] = []
        spent = 0.0
        for group in self.groups:
            choice, key = None, None
            for cid in group:
                c = self.cost[cid]
                g = self.gain(store, cid)
                if g <= GAIN_EPS or spent + c > limit:
                    continue
                k = (g / c, g, -c)
                if choice is None or self.better(k, key, cid, choice):
                    choice, key = cid, k
            if choice is not None:
                store.append(choice)
                spent += self.cost[choice]
        return store

    def greedy(self, budget: float, types: set[str] | None = None) -> list[str]:
        limit = budget * (1 + 1e-9)
        group_of = {cid: k for k, g in enumerate(self.groups) for cid in g}
        store: list[str] = []
        used: set[int] = set()
        spent = 0.0
        while True:
            cands = []
            for cid, c in self.cost.items():
                if group_of[cid] in used or (types and self.cand[cid].type not in types):
                    continue
                if spent + c > limit:
                    continue
                g = self.gain(store, cid)
                if g > GAIN_EPS:
                    cands.append((cid, (g / c, g, -c)))
            if not cands:
                return store
            # Lexicographic maximum with tolerant ties, key by key; then the smallest id.
            for k in range(3):
                top = max(key[k] for _, key in cands)
                cands = [
                    (cid, key) for cid, key in cands if key[k] >= top - TIE * max(1.0, abs(top))
                ]
            pick = min(cid for cid, _ in cands)
            store.append(pick)
            spent += self.cost[pick]
            used.add(group_of[pick])

    def recency_raw(self, budget: float) -> list[str]:
        limit = budget * (1 + 1e-9)
        raw = [cid for cid, c in self.cand.items() if c.type == "raw_span"]
        raw.sort(key=lambda cid: (-self.time[self.cand[cid].experience], self.cost[cid], cid))
        store: list[str] = []
        used: set[str] = set()
        spent = 0.0
        for cid in raw:
            exp = self.cand[cid].experience
            if exp in used or spent + self.cost[cid] > limit or self.gain(store, cid) <= GAIN_EPS:
                continue
            store.append(cid)
            spent += self.cost[cid]
            used.add(exp)
        return store

    def writer(self, name: str, budget: float) -> list[str]:
        if name == "gvt":
            return self.gvt(budget)
        if name == "density":
            return self.density(budget)
        if name == "greedy":
            return self.greedy(budget)
        if name == "fact_only":
            return self.greedy(budget, {"atomic_fact"})
        if name == "summary_only":
            return self.greedy(budget, {"summary"})
        if name == "recency_raw":
            return self.recency_raw(budget)
        raise KeyError(name)


class Incremental(Plain):
    """The same search and writers with coverage sums carried along instead of F recomputed.

    Still dicts and plain loops, no caching across budgets or pools: the depth-first search
    keeps z (summed coverage per unit) and the value of the partial store, adding each
    candidate's units on the way down and restoring them on the way back; a writer's gain
    is computed over the candidate's own units.
    """

    def gain(self, store, cid) -> float:
        z: dict[str, float] = {}
        for s in store:
            for u, a in self.cov[s].items():
                z[u] = z.get(u, 0.0) + a
        w = self.weight
        return sum(
            w[u] * (min(1.0, z.get(u, 0.0) + a) - min(1.0, z.get(u, 0.0)))
            for u, a in self.cov[cid].items()
        )

    def opt(self, budget: float, pool: str = "full") -> float:
        limit = budget * (1 + 1e-9)
        allowed = POOLS[pool]
        groups = [[c for c in g if allowed(self.cand[c].type)] for g in self.groups]
        w, cov, cost = self.weight, self.cov, self.cost
        z: dict[str, float] = {}
        best = 0.0

        def dfs(g: int, spent: float, value: float) -> None:
            nonlocal best
            if g == len(groups):
                best = max(best, value)
                return
            dfs(g + 1, spent, value)
            for cid in groups[g]:
                if spent + cost[cid] <= limit:
                    added = 0.0
                    before = []
                    for u, a in cov[cid].items():
                        zu = z.get(u, 0.0)
                        before.append((u, zu))
                        added += w[u] * (min(1.0, zu + a) - min(1.0, zu))
                        z[u] = zu + a
                    dfs(g + 1, spent + cost[cid], value + added)
                    for u, zu in before:
                        z[u] = zu

        dfs(0, 0.0, 0.0)
        return best


VARIANTS = {"issue": Plain, "incremental": Incremental}


class Row(NamedTuple):
    """One baseline row: F of the method's store (a pool's optimum for an ablation), the full
    optimum, and for a writer its store (candidate ids in the order chosen) and cost."""

    value: float
    opt: float
    store: tuple[str, ...] | None = None
    cost: float | None = None


def run(packages, budgets=BUDGETS, variant: str = "issue") -> dict[tuple[str, float, str], Row]:
    """{(package id, budget, method): Row} like the rows of ``analysis.sweep``."""
    cls = VARIANTS[variant]
    out = {}
    for package in packages:
        p = cls(package)
        for b in budgets:
            opt = p.opt(b)
            for name in WRITERS:
                store = p.writer(name, b)
                out[(package.id, b, name)] = Row(
                    p.F(store), opt, tuple(store), math.fsum(p.cost[c] for c in store)
                )
            out[(package.id, b, "no_validity_opt")] = Row(p.opt(b, "no_validity"), opt)
            out[(package.id, b, "generic_opt")] = Row(p.opt(b, "generic"), opt)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=500)
    ap.add_argument(
        "--variant",
        choices=tuple(VARIANTS),
        default="issue",
        help="issue: F recomputed at every complete store (target 1's baseline); "
        "incremental: coverage sums carried down the search",
    )
    args = ap.parse_args()
    packages = [generate("memaudit-small", seed=s) for s in range(args.seeds)]
    t0, c0 = time.perf_counter(), time.process_time()
    rows = run(packages, variant=args.variant)
    print(
        f"pure-Python baseline ({args.variant}): {len(rows)} rows, "
        f"{time.perf_counter() - t0:.2f} s wall, {time.process_time() - c0:.2f} s CPU"
    )


if __name__ == "__main__":
    main()
