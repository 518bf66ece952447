"""Exact OPT at every budget at once: component decomposition plus Pareto merging.

Two groups *interact* when some unit of positive weight is covered by candidates of both. F
splits into a sum over the connected components of that interaction graph, so a store is a
choice of one *part* per component, its value the sum of the parts' values and its cost the
sum of their costs. The method:

1. enumerates every option combination inside each component (one option per group: nothing,
   or a subset of at most ``group_capacity`` candidates) and computes its exact value F_k;
2. drops parts that are *dominated*: another part of the same component costs no more, is
   worth no less, and is better in one of them by more than the tie tolerance of the largest
   whole store (:func:`~memaudit_core.solvers.enum.tied`) — such a part is never in the
   tie-break winner, at any budget, because the same completion with the dominating part wins
   (a value higher by more than the tolerance, or the same value at a cost lower by more
   than it);
3. merges the components one by one (every pair of kept entries, sums over the largest
   budget dropped, dominated sums dropped again).

What is left holds every store that can still win at some budget up to the largest one, so
OPT(B) for *every* budget is read off one list, with the tie-break of
:func:`memaudit_core.solvers.enum.enumerate_best` (higher value, then lower cost, then the
smaller tuple of candidate ids; exact ties are all kept until then). It is an exhaustive
enumeration — dominance only removes stores that provably lose — so its results are proofs of
optimality. Components are tiny on most packages (facts and their updates interact with few
other experiences), so this is much cheaper than enumerating whole stores; the work is plain
Python, which beats numpy at these sizes.

It refuses (:class:`FrontierTooLarge`, a ``ValueError``) when one component has more than
:data:`FRONTIER_MAX_COMPONENT` combinations, a merge has more than
:data:`FRONTIER_MAX_ENTRIES` pairs (for example many exactly tied stores), or the whole
decomposition would take more than the caller's ``max_work`` combinations and pairs (a caller
with a cheaper way out, such as one MILP per budget, stops it early). Components are
enumerated largest first (by their number of option combinations before the budget cut), so
a component too large is usually met before any work is spent on the others.

Examples
--------
>>> from memaudit_core.generators import generate
>>> from memaudit_core.compiled import compile_package
>>> inst = compile_package(generate("update_chain"))
>>> [round(v, 6) for v, _ in frontier_all_budgets(inst, [3, 6, 13])]
[5.55, 7.735, 8.025]
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence

from ..compiled import CompiledInstance, budget_with_tolerance, search_limit
from ..errors import FrontierTooLarge
from ..objective import get_saturation, value_ceiling
from .enum import TIE, selection_key, tie_tol, tied

#: Largest number of option combinations enumerated inside one component.
FRONTIER_MAX_COMPONENT = 20_000
#: Largest number of pairs in one merge of two non-dominated lists.
FRONTIER_MAX_ENTRIES = 50_000

Entry = tuple[float, float, tuple[int, ...]]  # (cost, value, candidate positions)
_COST = operator.itemgetter(0)
_VALUE = operator.itemgetter(1)


def nondominated(
    entries: list[Entry], value_tol: float = TIE, cost_tol: float = TIE
) -> list[Entry]:
    """The entries no other entry dominates, in (cost, -value) order.

    Entry 1 is dominated when some entry 2 has ``c2 < c1 - cost_tol and v2 >= v1``, or
    ``c2 <= c1 and v2 > v1 + value_tol``. Ties (within the tolerances in both) are all kept.
    :class:`Frontier` passes the tie tolerance of the largest whole store (:func:`~.enum.tied`
    is relative), so a part dropped here loses the tie-break in every store it completes.

    Examples
    --------
    >>> nondominated([(2.0, 1.0, (0,)), (1.0, 1.0, (1,)), (3.0, 2.0, (2,)), (1.0, 1.0, (3,))])
    [(1.0, 1.0, (1,)), (1.0, 1.0, (3,)), (3.0, 2.0, (2,))]
    """
    # By cost ascending, then value descending (two stable sorts with C-level keys).
    entries = sorted(entries, key=_VALUE, reverse=True)
    entries.sort(key=_COST)
    n = len(entries)
    costs = [e[0] for e in entries]
    prefix = list(itertools.accumulate((e[1] for e in entries), max))
    out = []
    j = k = 0
    for c, v, sel in entries:
        while j < n and costs[j] < c - cost_tol:
            j += 1
        if j and prefix[j - 1] >= v:
            continue  # something cheaper beyond a tie is worth at least as much
        while k < n and costs[k] <= c:
            k += 1
        if prefix[k - 1] > v + value_tol:
            continue  # something no dearer is worth more beyond a tie
        out.append((c, v, sel))
    return out


class Frontier:
    """The non-dominated stores of an instance up to a budget (see the module docstring).

    Attributes
    ----------
    entries : list of (cost, value, selection)
    n_components : int
        Components with something of value.
    combinations : int
        Option combinations enumerated inside components, plus pairs formed by merges.

    Parameters
    ----------
    inst : CompiledInstance
    budget_eff : float
        The largest budget (with its tolerance) the frontier must answer.
    max_work : int, optional
        Refuse (:class:`FrontierTooLarge`) before ``combinations`` would exceed this.
    """

    def __init__(self, inst: CompiledInstance, budget_eff: float, max_work: int | None = None):
        if not math.isfinite(budget_eff):
            raise FrontierTooLarge("frontier needs a finite budget")
        self.inst = inst
        self.budget_eff = budget_eff
        # QA s42 round 3 (exactness): partial stores are pruned by running sums against a
        # slacked limit, so a store whose correctly rounded cost is exactly the limit (and whose
        # running sum lands an ulp above it) is kept; best() judges stores near a limit by
        # their exact costs.
        b = search_limit(budget_eff, inst.n_groups * inst.group_capacity)
        # Parts are compared by their own values and costs, but ties are decided on whole
        # stores, relative to their size (QA s47): dominance needs a margin no whole store's
        # tie tolerance exceeds, that of the most any store within the budget can be worth or
        # cost.
        value_tol = tie_tol(value_ceiling(inst, b))
        cost_tol = tie_tol(b)
        cov = inst.coverage
        indptr, indices, data = cov.indptr.tolist(), cov.indices.tolist(), cov.data.tolist()
        weight = inst.weight.tolist()
        cost = inst.cost.tolist()
        starts = inst.group_start.tolist()
        cap = inst.group_capacity
        hs = get_saturation(inst.saturation).h_scalar
        cap1 = inst.saturation == "cap1"
        linear = inst.saturation == "linear"

        # Per group with something of value: its options (candidate tuples within budget).
        groups: list[tuple[list[tuple[int, ...]], set[int]]] = []
        for g in range(inst.n_groups):
            members = [i for i in range(starts[g], starts[g + 1]) if cost[i] <= b]
            units = {
                indices[p]
                for i in members
                for p in range(indptr[i], indptr[i + 1])
                if weight[indices[p]] > 0
            }
            if not units:
                continue  # nothing of value: only "take nothing" can win here
            if cap == 1:
                opts = [(i,) for i in members]
            else:
                opts = [
                    o
                    for k in range(1, min(cap, len(members)) + 1)
                    for o in itertools.combinations(members, k)
                    if sum(cost[i] for i in o) <= b
                ]
            groups.append((opts, units))

        # Connected components of the interaction graph (union-find over shared units).
        parent = list(range(len(groups)))

        def find(a: int) -> int:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        owner: dict[int, int] = {}
        for k, (_, units) in enumerate(groups):
            for r in units:
                j = owner.setdefault(r, k)
                if j != k:
                    x, y = find(j), find(k)
                    if x != y:
                        parent[max(x, y)] = min(x, y)
        comps: dict[int, list[int]] = {}
        for k in range(len(groups)):
            comps.setdefault(find(k), []).append(k)
        # Largest first (option combinations before the budget cut; stable for equal sizes).
        ordered = sorted(comps.values(), key=lambda m: -math.prod(len(groups[k][0]) + 1 for k in m))
        work_cap = math.inf if max_work is None else max_work

        def spend(work: int) -> None:
            if self.combinations + work > work_cap:
                raise FrontierTooLarge(
                    f"frontier: more than {max_work} combinations and merge pairs in all"
                )

        self.n_components = len(comps)
        self.combinations = 0
        front: list[Entry] = [(0.0, 0.0, ())]
        for members in ordered:
            units = sorted(set().union(*(groups[k][1] for k in members)))
            loc = {r: q for q, r in enumerate(units)}
            w = [weight[r] for r in units]
            # Parts as (cost, coverage z, value, selection); values grow by exact marginal
            # gains w_r (h(z_r + a) - h(z_r)) over the option's entries only.
            parts: list[tuple[float, list[float], float, tuple[int, ...]]] = [
                (0.0, [0.0] * len(units), 0.0, ())
            ]
            for k in members:
                rows = []
                for o in groups[k][0]:
                    entries = [
                        (loc[indices[p]], data[p], w[loc[indices[p]]])
                        for i in o
                        for p in range(indptr[i], indptr[i + 1])
                        if indices[p] in loc
                    ]
                    rows.append((o, sum(cost[i] for i in o) if len(o) > 1 else cost[o[0]], entries))
                if len(parts) * (len(rows) + 1) > FRONTIER_MAX_COMPONENT:
                    raise FrontierTooLarge(
                        f"frontier: a component with more than {FRONTIER_MAX_COMPONENT} "
                        "combinations"
                    )
                spend(len(parts) * (len(rows) + 1))
                new = list(parts)
                for c, z, v, sel in parts:
                    for o, co, ent in rows:
                        cc = c + co
                        if cc > b:
                            continue
                        zz = list(z)
                        vv = v
                        for r, a, wr in ent:
                            zr = zz[r]
                            za = zr + a
                            if cap1:
                                vv += wr * ((za if za < 1.0 else 1.0) - (zr if zr < 1.0 else 1.0))
                            elif linear:
                                vv += wr * a
                            else:
                                vv += wr * (hs(za) - hs(zr))
                            zz[r] = za
                        new.append((cc, zz, vv, sel + o))
                parts = new
            self.combinations += len(parts)
            scored = [(c, v, sel) for c, _, v, sel in parts]
            part = nondominated(scored, value_tol, cost_tol)
            if len(front) * len(part) > FRONTIER_MAX_ENTRIES:
                raise FrontierTooLarge(
                    f"frontier: a merge of more than {FRONTIER_MAX_ENTRIES} partial stores"
                )
            spend(len(front) * len(part))
            self.combinations += len(front) * len(part)
            front = nondominated(
                [
                    (c1 + c2, v1 + v2, s1 + s2)
                    for c1, v1, s1 in front
                    for c2, v2, s2 in part
                    if c1 + c2 <= b
                ],
                value_tol,
                cost_tol,
            )
        self.entries = [(c, v, tuple(sorted(s))) for c, v, s in front]

    def best(self, budget: float) -> tuple[float, tuple[int, ...]]:
        """OPT and the tie-break winner at ``budget`` (at most the frontier's budget)."""
        b = budget_with_tolerance(budget)
        if b > self.budget_eff * (1 + 1e-15):
            raise ValueError(f"budget {budget!r} is above the frontier's {self.budget_eff!r}")
        cost = self.inst.cost
        window = max(
            1e-9 * abs(b),
            2 * (search_limit(b, self.inst.n_groups * self.inst.group_capacity) - b),
        )

        def exact(e: tuple[float, float, tuple[int, ...]]) -> float:
            # QA s42 round 2 #2: near the limit, the store's correctly rounded cost (math.fsum,
            # as selection_cost), not the merge's running sum, which kept a store at
            # 37.418418800000005 over the limit 37.4184188.
            if abs(e[0] - b) <= window:
                return math.fsum(cost[list(e[2])].tolist())
            return e[0]

        fits = [e for e in self.entries if exact(e) <= b]
        top = max(e[1] for e in fits)
        fits = [e for e in fits if tied(e[1], top)]
        cmin = min(e[0] for e in fits)
        fits = [e for e in fits if tied(e[0], cmin)]
        if len(fits) == 1:
            win = fits[0]
        else:
            win = min(fits, key=lambda e: selection_key(self.inst, e[2]))
        return max(win[1], 0.0), win[2]


def frontier_all_budgets(
    inst: CompiledInstance, budgets: Sequence[float]
) -> list[tuple[float, tuple[int, ...]]]:
    """OPT and its tie-break winner at each budget, from one decomposition.

    Raises
    ------
    FrontierTooLarge
        When a component or a merge is too large (a ``ValueError``).
    """
    if not len(budgets):
        return []
    fr = Frontier(inst, max(budget_with_tolerance(b) for b in budgets))
    return [fr.best(b) for b in budgets]


__all__ = [
    "FRONTIER_MAX_COMPONENT",
    "FRONTIER_MAX_ENTRIES",
    "Frontier",
    "FrontierTooLarge",
    "frontier_all_budgets",
    "nondominated",
]
