"""Brute-force oracle for tests: every feasible store, F computed from plain dicts.

Deliberately independent of the compiled arrays' objective code paths: it rebuilds coverage
rows as Python dicts and evaluates F directly (depth first, each unit's change as memories are
added and taken away), so it can check :mod:`.bnb` and :mod:`.milp`. Exponential; only for
small packages.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from ..compiled import CompiledInstance, budget_with_tolerance
from ..errors import InstanceTooLargeError, SolverError, count_text
from . import RawSolution, register_engine
from .enum import TieBest

MAX_COMBINATIONS = 2_000_000

_H = {
    "cap1": lambda z: min(1.0, z),
    "linear": lambda z: z,
    "log1p": math.log1p,
}


def brute_force(inst: CompiledInstance, budget: float) -> tuple[float, tuple[int, ...]]:
    """Best (value, selection) by exhaustive enumeration with plain-Python F.

    Among the stores tied with the highest value, the cheapest, then the smallest sorted
    candidate ids, with the engines' relative tie tolerance (:class:`~.enum.TieBest`: ties are
    not transitive, so each store is not simply compared with the best so far).
    """
    return brute_force_budgets(inst, [budget])[0]


def brute_force_budgets(
    inst: CompiledInstance, budgets: Sequence[float]
) -> list[tuple[float, tuple[int, ...]]]:
    """:func:`brute_force` at each budget, from one enumeration of the stores.

    F and cost are computed once per store and offered to every budget it fits, so an oracle
    over several budgets costs about as much as one (the planted-repeat tests check six).

    Examples
    --------
    >>> from memaudit_core.compiled import compile_package
    >>> from memaudit_core.generators import generate
    >>> inst = compile_package(generate("random_coverage", seed=0, n_groups=4))
    >>> both = brute_force_budgets(inst, [5.0, 20.0])
    >>> both == [brute_force(inst, 5.0), brute_force(inst, 20.0)]
    True
    """
    h = _H.get(inst.saturation)
    if h is None:
        # The oracle keeps its own table rather than reading the registry, so that it checks
        # the registry's functions instead of sharing their mistakes.
        raise SolverError(
            f"the 'brute' oracle knows saturations {', '.join(_H)} only; saturation "
            f"{inst.saturation!r} was added to the registry after it: use solver 'enum', "
            "'bnb' or 'auto'"
        )
    rows = []
    cov = inst.coverage
    for i in range(inst.n_candidates):
        lo, hi = cov.indptr[i], cov.indptr[i + 1]
        rows.append(
            {int(c): float(v) for c, v in zip(cov.indices[lo:hi], cov.data[lo:hi], strict=True)}
        )
    weights = [float(w) for w in inst.weight]
    cap = inst.group_capacity
    group_options = []
    for g in range(inst.n_groups):
        members = list(inst.group_slice(g))
        opts = []
        for k in range(0, min(cap, len(members)) + 1):
            opts.extend(itertools.combinations(members, k))
        group_options.append(opts)
    total = 1
    for opts in group_options:
        total *= len(opts)
    if total > MAX_COMBINATIONS:
        raise InstanceTooLargeError(
            f"brute force refuses {count_text(total)} combinations (max "
            f"{count_text(MAX_COMBINATIONS)}); use the 'bnb' or 'milp' solver"
        )
    limits = [budget_with_tolerance(budget) for budget in budgets]
    largest = max(limits, default=-math.inf)
    costs = [float(c) for c in inst.cost]
    ids = inst.candidate_ids
    bests = [TieBest() for _ in limits]
    z: dict[int, float] = {}
    chosen: list[int] = []

    def key_ids() -> tuple[str, ...]:  # built only when ids must decide
        return tuple(ids[i] for i in sorted(chosen))

    def offer(value: float, cost: float) -> None:
        for best, limit in zip(bests, limits, strict=True):
            if cost <= limit and value >= best.floor:
                best.offer(value, cost, key_ids, None)

    # Depth first over the groups: a store's F is the previous store's F plus the exact change
    # on the units the added memories touch (each unit's z summed in plain floats, h applied
    # to the new and old totals), undone on the way back.
    def visit(g: int, value: float, cost: float) -> None:
        if g == len(group_options):
            offer(value, cost)
            return
        for option in group_options[g]:
            option_cost = cost + sum(costs[i] for i in option)
            if option_cost > largest:
                continue
            saved = []
            gained = value
            for i in option:
                chosen.append(i)
                for r, a in rows[i].items():
                    before = z.get(r, 0.0)
                    saved.append((r, before))
                    z[r] = before + a
                    gained += weights[r] * (h(before + a) - h(before))
            visit(g + 1, gained, option_cost)
            for r, before in reversed(saved):
                z[r] = before
            del chosen[len(chosen) - len(option) :]

    visit(0, 0.0, 0.0)
    out = []
    for best in bests:
        value, _, key, _ = best.best()  # the empty store fits every budget
        out.append((max(value, 0.0), tuple(sorted(inst.candidate_idx(c) for c in key))))
    return out


@register_engine("brute")
def solve_brute(
    inst, budget, *, time_limit=None, node_limit=None, incumbent_idx=None
) -> RawSolution:
    value, chosen = brute_force(inst, budget)
    return RawSolution(chosen, value, value, "optimal", nodes=0, detail={"method": "exhaustive"})
