"""Reference writers and ablation optima against an independent oracle (QA pass s19c).

- Every reference writer (``gvt``, ``density``, ``greedy``, ``fact_only``, ``summary_only``,
  ``recency_raw``, ``no_validity_gvt``), alone and in the bulk form (``run_writers``), returns
  a store that keeps the budget and one candidate per experience, whose F (oracle) is the
  reported value, and that never scores above the certified OPT.
- On cap1 / linear packages each writer's store is exactly what DESIGN.md section 6 describes,
  re-implemented below in exact rationals (ties: larger key, then the smaller candidate id).
- Ablation optima (``no_validity``: without tombstone / compound_update; ``generic``: only
  raw_span / atomic_fact / summary, as the README defines them) equal the oracle's optimum over
  the filtered pool, for every solver, and keep only pool candidates.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from test_s19c_oracle import (
    GENERIC,
    TYPES,
    VALIDITY,
    budget_limit,
    close,
    feasible,
    interesting_budgets,
    oracle_opt,
    oracle_value,
    random_package,
)

from memaudit_core.analysis import ablation_opt
from memaudit_core.compiled import compile_package
from memaudit_core.package import parse_package
from memaudit_core.solvers import solve
from memaudit_core.writers import BUILTIN_WRITERS, run_writer, run_writers

EPS = Fraction(1, 10**12)


class Ctx:
    def __init__(self, doc: dict, budget: float, types: set[str] | None = None):
        self.doc = doc
        self.limit = budget_limit(budget)
        times = {}
        for pos, e in enumerate(doc["experiences"]):
            times[e["id"]] = Fraction(e["time"]) if "time" in e else Fraction(pos)
        self.times = times
        self.cands = [c for c in doc["candidates"] if types is None or c["type"] in types]
        self.cost = {c["id"]: Fraction(c["cost"]) for c in self.cands}
        self.exp = {c["id"]: c["experience"] for c in self.cands}
        # Groups in arrival order (time, id); inside a group by (cost, id).
        order = sorted(doc["experiences"], key=lambda e: (times[e["id"]], e["id"]))
        self.groups = [
            sorted(
                (c["id"] for c in self.cands if c["experience"] == e["id"]),
                key=lambda i: (self.cost[i], i),
            )
            for e in order
        ]

    def F(self, store) -> Fraction:
        return Fraction(oracle_value(self.doc, list(store)))

    def gain(self, store, cid) -> Fraction:
        return self.F([*store, cid]) - self.F(store)


def _better(key_a, id_a, key_b, id_b) -> bool:
    """a beats b: larger key, then smaller id."""
    if key_a != key_b:
        return key_a > key_b
    return id_a < id_b


def gvt(doc, budget, types=None):
    ctx = Ctx(doc, budget, types)
    fits = [c for c in ctx.cost if ctx.cost[c] <= ctx.limit]
    thresholds = sorted({ctx.F([c]) / ctx.cost[c] for c in fits} | {Fraction(0)}, reverse=True)
    best = None  # (value, cost, threshold index, store)
    for t_idx, tau in enumerate(thresholds):
        store, spent = [], Fraction(0)
        for group in ctx.groups:
            choice, ckey = None, None
            for c in group:
                if spent + ctx.cost[c] > ctx.limit:
                    continue
                g = ctx.gain(store, c)
                if g <= EPS or g / ctx.cost[c] < tau:
                    continue
                key = (g, -ctx.cost[c])
                if choice is None or _better(key, c, ckey, choice):
                    choice, ckey = c, key
            if choice is not None:
                store.append(choice)
                spent += ctx.cost[choice]
        v = ctx.F(store)
        cand = (v, spent, t_idx, tuple(sorted(store)))
        if best is None or v > best[0] or (v == best[0] and (spent, t_idx) < (best[1], best[2])):
            best = cand
    return best[3]


def density(doc, budget):
    ctx = Ctx(doc, budget)
    store, spent = [], Fraction(0)
    for group in ctx.groups:
        choice, ckey = None, None
        for c in group:
            if spent + ctx.cost[c] > ctx.limit:
                continue
            g = ctx.gain(store, c)
            if g <= EPS:
                continue
            key = (g / ctx.cost[c], g, -ctx.cost[c])
            if choice is None or _better(key, c, ckey, choice):
                choice, ckey = c, key
        if choice is not None:
            store.append(choice)
            spent += ctx.cost[choice]
    return tuple(sorted(store))


def greedy(doc, budget, only_type=None):
    ctx = Ctx(doc, budget, None if only_type is None else {only_type})
    store, spent, used = [], Fraction(0), set()
    while True:
        choice, ckey = None, None
        for c in ctx.cost:
            if ctx.exp[c] in used or spent + ctx.cost[c] > ctx.limit:
                continue
            g = ctx.gain(store, c)
            if g <= EPS:
                continue
            key = (g / ctx.cost[c], g, -ctx.cost[c])
            if choice is None or _better(key, c, ckey, choice):
                choice, ckey = c, key
        if choice is None:
            return tuple(sorted(store))
        store.append(choice)
        spent += ctx.cost[choice]
        used.add(ctx.exp[choice])


def recency_raw(doc, budget):
    ctx = Ctx(doc, budget, {"raw_span"})
    order = sorted(ctx.cost, key=lambda c: (-ctx.times[ctx.exp[c]], ctx.cost[c], c))
    store, spent, used = [], Fraction(0), set()
    for c in order:
        if ctx.exp[c] in used or spent + ctx.cost[c] > ctx.limit:
            continue
        if ctx.gain(store, c) <= EPS:
            continue
        store.append(c)
        spent += ctx.cost[c]
        used.add(ctx.exp[c])
    return tuple(sorted(store))


SPEC = {
    "gvt": lambda d, b: gvt(d, b),
    "density": density,
    "greedy": lambda d, b: greedy(d, b),
    "fact_only": lambda d, b: greedy(d, b, "atomic_fact"),
    "summary_only": lambda d, b: greedy(d, b, "summary"),
    "recency_raw": recency_raw,
    "no_validity_gvt": lambda d, b: gvt(d, b, {c["type"] for c in d["candidates"]} - VALIDITY),
}


def test_every_builtin_writer_has_a_spec():
    assert set(BUILTIN_WRITERS) == set(SPEC)


def _writer_checks(seeds, make, exact_spec):
    names = list(SPEC)
    for seed in seeds:
        doc = make(seed)
        inst = compile_package(parse_package(doc))
        budgets = interesting_budgets(doc, random.Random(seed), 4)
        bulk = run_writers(names, inst, budgets)
        for k, budget in enumerate(budgets):
            opt = oracle_opt(doc, budget)[0]
            certified = solve(inst, budget)
            assert certified.certified and close(certified.value, opt)
            for name in names:
                res = run_writer(name, inst, budget)
                ctx = (doc["id"], budget, name)
                assert bulk[name][k].selected == res.selected and bulk[name][k].value == res.value
                assert feasible(doc, res.selected, budget), ctx
                assert close(res.value, oracle_value(doc, res.selected)), ctx
                assert Fraction(res.value) <= Fraction(opt) * (1 + Fraction(1, 10**9)), ctx
                assert res.value <= certified.value * (1 + 1e-9), ctx
                if exact_spec and doc["objective"]["saturation"] != "log1p":
                    want = tuple(sorted(SPEC[name](doc, budget)))
                    assert tuple(sorted(res.selected)) == want, (ctx, res.selected, want)


def test_writers_small_packages():
    _writer_checks(range(250), random_package, exact_spec=True)


def test_writers_wider_packages():
    _writer_checks(
        range(60),
        lambda s: random_package(s + 5000, n_exp=(4, 7), n_cand=(1, 3)),
        exact_spec=True,
    )


POOLS = {"no_validity": set(TYPES) - VALIDITY, "generic": GENERIC}


@pytest.mark.parametrize("pool", sorted(POOLS))
def test_ablation_optima_are_optima_of_the_ablated_problem(pool):
    types = POOLS[pool]
    for seed in range(120):
        doc = random_package(seed + 6000)
        inst = compile_package(parse_package(doc))
        sat = doc["objective"]["saturation"]
        kind = {c["id"]: c["type"] for c in doc["candidates"]}
        for budget in interesting_budgets(doc, random.Random(seed), 3):
            want = oracle_opt(doc, budget, types=types)[0]
            full = oracle_opt(doc, budget)[0]
            for solver in ("auto", "bnb", "milp", "enum"):
                if solver == "milp" and sat == "log1p":
                    continue
                for name in (pool, f"{pool}_opt"):
                    res = ablation_opt(inst, name, budget, solver)
                    ctx = (doc["id"], budget, pool, solver)
                    assert res.certified, (ctx, res.certificate.reason)
                    assert all(kind[c] in types for c in res.selected), ctx
                    assert feasible(doc, res.selected, budget), ctx
                    assert close(res.value, oracle_value(doc, res.selected)), ctx
                    assert close(res.value, want), (ctx, res.value, float(want))
                    assert Fraction(res.value) <= Fraction(full) * (1 + Fraction(1, 10**9))


def test_budget_limit_is_the_readme_tolerance():
    """The oracle's "fits" is the README's B (1 + 1e-9), exactly."""
    assert budget_limit(10.0) == Fraction(10) + Fraction(10, 10**9)
