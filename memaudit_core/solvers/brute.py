"""Brute-force oracle for tests: every feasible store, F recomputed from plain dicts.

Deliberately independent of the compiled arrays' objective code paths: it rebuilds coverage
rows as Python dicts and evaluates F directly, so it can check :mod:`.bnb` and :mod:`.milp`.
Exponential; only for small packages.
"""

from __future__ import annotations

import itertools
import math

from ..compiled import CompiledInstance, budget_with_tolerance
from ..errors import InstanceTooLargeError, count_text
from . import RawSolution, register_engine

MAX_COMBINATIONS = 2_000_000

_H = {
    "cap1": lambda z: min(1.0, z),
    "linear": lambda z: z,
    "log1p": math.log1p,
}


def brute_force(inst: CompiledInstance, budget: float) -> tuple[float, tuple[int, ...]]:
    """Best (value, selection) by exhaustive enumeration with plain-Python F.

    Ties are broken by lower cost, then by the sorted candidate ids.
    """
    h = _H[inst.saturation]
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
    limit = budget_with_tolerance(budget)
    best = (-1.0, math.inf, ())
    for combo in itertools.product(*group_options):
        chosen = tuple(sorted(i for part in combo for i in part))
        cost = sum(float(inst.cost[i]) for i in chosen)
        if cost > limit:
            continue
        z: dict[int, float] = {}
        for i in chosen:
            for r, a in rows[i].items():
                z[r] = z.get(r, 0.0) + a
        value = sum(weights[r] * h(zr) for r, zr in z.items())
        key_ids = tuple(inst.candidate_ids[i] for i in chosen)
        if value > best[0] + 1e-12 or (
            abs(value - best[0]) <= 1e-12
            and (cost < best[1] - 1e-12 or (abs(cost - best[1]) <= 1e-12 and key_ids < best[2]))
        ):
            best = (value, cost, key_ids)
    chosen_idx = tuple(sorted(inst.candidate_idx(c) for c in best[2]))
    return max(best[0], 0.0), chosen_idx


@register_engine("brute")
def solve_brute(
    inst, budget, *, time_limit=None, node_limit=None, incumbent_idx=None
) -> RawSolution:
    value, chosen = brute_force(inst, budget)
    return RawSolution(chosen, value, value, "optimal", nodes=0, detail={"method": "exhaustive"})
