"""Engine ``bnb``: the product's own exact branch-and-bound.

The search enumerates stores as sets of *items* — one candidate per group (or, for group
capacity k > 1, one subset of at most k candidates per group) — in group order: a node is a
partial store S plus the first group still open, and its children add one item from that group
or any later one (discarding the groups in between). This is the "discard, or take one candidate
of the next group" tree with its chains of discards collapsed into single steps; every store is
reached exactly once. Groups are searched in a heuristic order (best F({u})^2 / c_u first) that
changes speed only; ``order="arrival"`` gives the plain arrival order.

Ingredients, in the order they run:

* **Presolve**: drop units of zero weight and units nobody covers; candidates over
  budget; candidates whose singleton value F({u}) is at most the zero-gain floor
  (:func:`gain_floor`; their F alone, summed, is added to the reported bound); and, for
  capacity 1, candidates dominated inside their group (an earlier sibling — lower (cost, id) —
  covers at least as much on every unit and has a smaller id or costs less beyond the tie
  tolerance of any store). None of these can be in the tie-break winner.
* **Zero-gain floor** (:func:`gain_floor`): the search never branches on, and its bounds
  leave out, an item whose marginal gain is at most ``eps = min(1e-12, 1e-10 x LB /
  (n_groups x k))``, LB the best affordable candidate's F alone (a proven lower bound on OPT),
  k the group capacity. At most one such gain is dropped per group along any path, so the
  store returned is within ``n_groups x eps <= 1e-10 x OPT`` of the optimum and the bound can
  be low by as much; presolve's left-out candidates, at most k per group, add at most as much
  again to the bound: far inside the 1e-9 relative tolerance certification compares in. A
  fixed 1e-12 dropped 2000 gains of 1e-12 after a shared unit was covered, 2e-9 of OPT
  (review s50 #2).
* **Incumbent**: the better of a cost-benefit greedy and the best singleton — on larger
  instances also a value greedy and add / swap local search — or the caller's
  ``incumbent_idx`` when that is better.
* **Bound** at each node (valid for every concave h with h(0) = 0), the minimum of:
  (a) a multiple-choice knapsack over the node's *marginal gains* — by submodularity the gain of
  a set is at most the sum of its members' gains — bounded by the Lagrangian dual of its LP
  relaxation (``lam * b + sum_g max(0, max_u gain_u - lam c_u)`` for a grid of ``lam``) and,
  when costs are small integers (after scaling), by the exact knapsack DP; (b) the suffix
  max-coverage bound ``sum_r w_r (h(z_r + M_r) - h(z_r))`` with ``M_r`` the sum over later
  groups of the largest ``a_ur``; and at the root (c) the combined bound
  ``sum_r (1 - theta_r) Phi_r + knapsack(sum_r theta_r g_ur)`` with per-unit multipliers
  ``theta`` fitted by subgradient steps, whose optimum matches the MILP's LP relaxation.
  Child bounds reuse the parent's gains (gains only shrink deeper), so every child is tested
  before any work is spent on it.
* **Pruning and tie-break** (matches :mod:`.enum`): among the stores tied with the highest
  value, the cheapest, then the smallest tuple of candidate ids, values and costs tied within
  1e-12 relative (:func:`~.enum.tied`; ties are not transitive, so the incumbent is the
  winner of :class:`~.enum.TieBest` over every store met). A subtree is pruned when its bound
  is below the highest value met (beyond the tie tolerance and a 1e-11 relative guard against
  rounding in the bound): none of its stores can even tie the optimum. One whose bound can
  only *tie* the incumbent is explored only while its cheapest possible store does not cost
  more than the incumbent beyond a tie (a store that can at best tie the value and costs more
  loses, as long as the incumbent ties the optimum: when a store found later unties it, the
  search runs again, every incumbent then tied with the optimum), and only for
  :data:`TIE_NODE_CAP` such subtrees (counting those whose bound exceeds the incumbent by at
  most the rounding guard): where the budget does not bind, thousands of stores can share the
  optimal value, and a search for the cheapest of them ran for minutes after the value was
  proven at the root.
  Past the cap the value stays proven (no skipped subtree can beat the incumbent by more than
  1e-11 relative) and the proof says that the tie-break was not finished.
* **Limits**: a node or time limit stops the search with status ``"limit"``; the reported bound
  is the maximum of the incumbent and the bounds of every subtree left open. When that bound
  meets the incumbent (zero gap, :func:`~memaudit_core.solvers.relative_gap`) the value is
  proven and the status is ``"optimal"``: only the tie-break among equally good stores was
  cut short, so the store may not be the lowest-cost / lowest-id one a full search returns.
* **Left-out candidates**: the candidates presolve drops for a value at or below the floor are
  added to the bound (:func:`_skipped_value`). The floor keeps them within 1e-10 of OPT; were
  the bound so widened no longer to meet the store within 1e-9 relative, the status would be
  ``"unproven"`` (``detail["unproven"] = "skipped_value"``), never ``"optimal"``.

Examples
--------
>>> from memaudit_core.generators import generate
>>> from memaudit_core.compiled import compile_package
>>> raw = solve_bnb(compile_package(generate("update_chain")), 6)
>>> round(raw.value, 6), raw.status
(7.735, 'optimal')
"""

from __future__ import annotations

import itertools
import math
import sys
import time
import weakref
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from .. import heartbeat
from ..compiled import CompiledInstance, budget_with_tolerance, fits_limit, search_limit
from ..errors import SolverError, UnknownNameError, cut_repr
from ..objective import GAIN_EPS, get_saturation
from ..saturation_caches import instance_cache
from . import RawSolution, register_engine, relative_gap
from .enum import TieBest, selection_key, tie_tol, tied

#: Refuse capacity-k instances whose per-group subsets exceed this many items.
MAX_ITEMS = 200_000
#: Largest knapsack-DP capacity (cells) for integral costs; beyond it a grid is used.
DP_MAX_CELLS = 256
#: The knapsack DP runs only up to this many items (it costs a Python loop per item).
DP_MAX_ITEMS = 400
#: Group orders for the search (the result never depends on it).
GROUP_ORDERS = ("value_ratio", "ratio", "arrival")
#: Instances with at least this many items optimise the combined bound's multipliers.
THETA_MIN_ITEMS = 40
#: Multiplier steps taken whatever the clock says. Without them the root bound of a run whose
#: time was spent by the root heuristics is every unit's weight: a 0.05 s share on 100 random
#: groups gave the trivial 261.9 under load and about 246 on a quiet machine (each step is
#: about 0.1 ms there).
THETA_MIN_STEPS = 20
#: Most subtrees that can only tie the incumbent a search enters (see the module docstring).
TIE_NODE_CAP = 20_000
#: Positions (in descending ratio order) of the budget multipliers tried by the LP bound.
_LAMBDA_PICKS = np.array([0, 1, 2, 3, 4, 6, 8, 11, 15, 20, 27, 36, 48, 64, 90, 128, 256])
#: Extra budget multipliers tried between the best grid point's neighbours.
_LAMBDA_REFINE = 14
#: Largest suffix max-coverage matrix (groups x units) kept in memory.
MAX_SUFFIX_CELLS = 4_000_000
#: Share of OPT's proven lower bound that the gains the search drops may add up to, in all
#: (:func:`gain_floor`): ten times inside certification's 1e-9 relative tolerance.
DROP_RTOL = 1e-10
#: How far above its store's F a bound widened by left-out candidates (:func:`_skipped_value`)
#: may be for the run to stay ``"optimal"``: certification's 1e-9 relative tolerance,
#: :data:`~memaudit_core.solvers.certify.VALUE_RTOL` (repeated: certify imports milp, which
#: imports this module).
SKIPPED_RTOL = 1e-9
#: Scales tried to make costs integral (costs in halves, tenths, cents, ...).
_COST_SCALES = (1, 2, 4, 5, 10, 20, 100)


class _Limit(Exception):
    """Raised through the recursion when a node or time limit is hit."""

    def __init__(self, open_bound: float):
        super().__init__("limit")
        self.open_bound = open_bound


@dataclass
class _Model:
    """The presolved instance: items (options) by group, sparse coverage over kept units."""

    inst: CompiledInstance
    b_eff: float
    items: list[tuple[int, ...]]
    cost: np.ndarray
    group: np.ndarray
    gstart: np.ndarray
    indptr: np.ndarray
    cols: np.ndarray
    data: np.ndarray
    weight: np.ndarray
    stats: dict[str, Any] = field(default_factory=dict)
    #: The zero-gain floor (:func:`gain_floor`) presolve and the search use.
    eps: float = GAIN_EPS

    @property
    def n(self) -> int:
        return len(self.items)

    @property
    def n_groups(self) -> int:
        return len(self.gstart) - 1


_BASE_CACHE: weakref.WeakKeyDictionary = instance_cache()


def gain_floor(inst: CompiledInstance, budget: float) -> float:
    """The zero-gain floor of a search at ``budget``: GAIN_EPS (1e-12 in the engines' units),
    lowered to 1e-10 of the best affordable candidate's F alone (a proven lower bound on OPT)
    per group and per candidate a group may hold, so that what the floor lets go adds up to
    at most 1e-10 of OPT twice over: the gains at or below it the search drops, at most one
    item per group on any path, and the candidates presolve leaves out
    (:func:`_skipped_value`), at most ``group_capacity`` per group. Packages whose optimum is
    far above 1e-12 per group and candidate keep 1e-12.

    A floor per group alone let capacity 20 leave out 20 candidates of a group, 2e-9 of OPT:
    the store was that much short, the bound widened to cover them, and the run still said
    "optimal" (session 51).
    """
    lb = inst.best_single_at(budget)
    if not lb > 0.0:
        return GAIN_EPS
    return min(GAIN_EPS, DROP_RTOL * lb / (max(inst.n_groups, 1) * inst.group_capacity))


def _presolve(inst: CompiledInstance, b_eff: float, order: str, eps: float = GAIN_EPS) -> _Model:
    """The presolved model at budget ``b_eff`` (capacity 1: a cached base, filtered by cost).

    For capacity 1 nothing but the cost filter depends on the budget — a dominating sibling
    never costs more than the candidate it dominates — so the expensive part is built once
    per instance and group order, and budget sweeps only filter arrays.
    """
    if order not in GROUP_ORDERS:
        raise UnknownNameError(
            f"unknown group order {cut_repr(order)} (known: {', '.join(GROUP_ORDERS)})"
        )
    if inst.group_capacity > 1:
        return _build_model(inst, b_eff, order, eps)
    per_inst = _BASE_CACHE.setdefault(inst, {})
    base = per_inst.get((order, eps))
    if base is None:
        # Cached without the instance: a value holding its own weak key keeps it alive, and
        # every instance bnb ever solved stayed in memory (a leak found in QA s50).
        base = per_inst[(order, eps)] = replace(_build_model(inst, math.inf, order, eps), inst=None)
    return _restrict(base, b_eff, inst)


def _restrict(base: _Model, b_eff: float, inst: CompiledInstance) -> _Model:
    keep = base.cost <= b_eff
    stats = dict(base.stats)
    stats["over_budget"] = int(np.count_nonzero(inst.cost > b_eff))
    if keep.all():
        stats["items"], stats["groups"] = base.n, base.n_groups
        return replace(base, inst=inst, b_eff=b_eff, stats=stats)
    idx = np.flatnonzero(keep)
    old_group = base.group[idx]
    group = (
        np.cumsum(np.concatenate([[0], old_group[1:] != old_group[:-1]])) if idx.size else old_group
    )
    n_groups = int(group[-1]) + 1 if idx.size else 0
    lengths = np.diff(base.indptr)
    entries = np.repeat(keep, lengths)
    stats["items"], stats["groups"] = int(idx.size), n_groups
    return _Model(
        inst=inst,
        b_eff=b_eff,
        items=[base.items[i] for i in idx.tolist()],
        cost=base.cost[idx],
        group=group.astype(np.int64),
        gstart=np.concatenate([[0], np.cumsum(np.bincount(group, minlength=n_groups))]).astype(
            np.int64
        ),
        indptr=np.concatenate([[0], np.cumsum(lengths[idx])]).astype(np.int64),
        cols=base.cols[entries],
        data=base.data[entries],
        weight=base.weight,
        stats=stats,
        eps=base.eps,
    )


def _build_model(inst: CompiledInstance, b_eff: float, order: str, eps: float) -> _Model:
    h = get_saturation(inst.saturation).h
    n = inst.n_candidates
    units = np.flatnonzero(inst.weight > 0)
    cov = sp.csr_array(inst.coverage[:, units]) if units.size < inst.n_units else inst.coverage
    w = inst.weight[units]
    single = inst.singleton_values  # zero-weight units, left out of cov here, add 0 to it
    keep = (inst.cost <= b_eff) & (single > eps)
    stats = {
        "candidates": n,
        "over_budget": int(np.count_nonzero(inst.cost > b_eff)),
        "zero_value": int(np.count_nonzero((inst.cost <= b_eff) & (single <= eps))),
        "dominated": 0,
        "zero_weight_units": int(inst.n_units - units.size),
    }

    def row(i: int) -> dict[int, float]:
        lo, hi = cov.indptr[i], cov.indptr[i + 1]
        return dict(zip(cov.indices[lo:hi].tolist(), cov.data[lo:hi].tolist(), strict=True))

    cap = inst.group_capacity
    groups: list[list[tuple[tuple[int, ...], float, dict[int, float]]]] = []
    for g in range(inst.n_groups):
        members = [i for i in inst.group_slice(g) if keep[i]]
        if not members:
            continue
        rows_g = {i: row(i) for i in members}
        if cap == 1:
            # Canonical order inside a group is (cost, id), so an earlier survivor i that
            # covers at least as much makes every store with j worth no more than the same store
            # with i instead, at no lower cost. That store loses the tie-break only when it
            # costs more beyond a tie (whatever the store's cost, up to b_eff) or has larger
            # ids: the group's candidates are contiguous in canonical order, so swapping j for
            # i changes the id tuple in j's place only (QA s47: a candidate 2e-7 cheaper, its
            # cost tied, hid one with a smaller id). Dominance so defined is transitive, so
            # comparing against survivors only is enough.
            cost_margin = 2.0 * tie_tol(b_eff)  # twice: store costs are running sums
            ids, costs = inst.candidate_ids, inst.cost
            survivors: list[int] = []
            for j in members:
                rj = rows_g[j]
                if any(
                    (ids[i] < ids[j] or costs[j] - costs[i] > cost_margin)
                    and all(rows_g[i].get(r, 0.0) >= a for r, a in rj.items())
                    for i in survivors
                ):
                    stats["dominated"] += 1
                else:
                    survivors.append(j)
            items = [((i,), float(inst.cost[i]), rows_g[i]) for i in survivors]
        else:
            items = []
            for k in range(1, min(cap, len(members)) + 1):
                for combo in itertools.combinations(members, k):
                    c = float(sum(inst.cost[i] for i in combo))
                    if c > b_eff:
                        continue
                    merged: dict[int, float] = {}
                    for i in combo:
                        for r, a in rows_g[i].items():
                            merged[r] = merged.get(r, 0.0) + a
                    items.append((combo, c, merged))
            items.sort(key=lambda it: (it[1], selection_key(inst, it[0])))
        groups.append(items)
    total = sum(len(g) for g in groups)
    if total > MAX_ITEMS:
        raise SolverError(
            f"bnb: {total} group subsets at capacity {cap} exceed {MAX_ITEMS}; use 'milp'"
        )
    if order != "arrival" and groups:
        # Groups with the most valuable, cost-efficient items first: the subtrees that hold
        # good stores are searched early and the cheap tails are pruned by the bound.
        def score(it):
            # h on an array, the form registration checks (QA s50: h(float) broke a
            # per-element h that every other engine could run).
            hz = h(np.fromiter(it[2].values(), dtype=np.float64, count=len(it[2])))
            v = sum(w[r] * float(x) for r, x in zip(it[2], hz, strict=True))
            return v / it[1] if order == "ratio" else v * v / it[1]

        with np.errstate(over="ignore", divide="ignore"):  # a 5e-324 cost: density inf
            best = [max(score(it) for it in g) for g in groups]
        groups = [groups[k] for k in sorted(range(len(groups)), key=lambda k: -best[k])]
    used_units = sorted({r for g in groups for it in g for r in it[2]})
    remap = {r: k for k, r in enumerate(used_units)}
    items_list: list[tuple[int, ...]] = []
    cost_list: list[float] = []
    group_list: list[int] = []
    indptr = [0]
    cols: list[int] = []
    data: list[float] = []
    gstart = [0]
    for gpos, g in enumerate(groups):
        for idx, c, cv in g:
            items_list.append(idx)
            cost_list.append(c)
            group_list.append(gpos)
            for r, a in sorted(cv.items()):
                cols.append(remap[r])
                data.append(a)
            indptr.append(len(cols))
        gstart.append(len(items_list))
    stats["items"] = len(items_list)
    stats["groups"] = len(groups)
    stats["units"] = len(used_units)
    return _Model(
        inst=inst,
        b_eff=b_eff,
        items=items_list,
        cost=np.asarray(cost_list, dtype=np.float64),
        group=np.asarray(group_list, dtype=np.int64),
        gstart=np.asarray(gstart, dtype=np.int64),
        indptr=np.asarray(indptr, dtype=np.int64),
        cols=np.asarray(cols, dtype=np.int64),
        data=np.asarray(data, dtype=np.float64),
        weight=np.asarray(w[used_units] if used_units else [], dtype=np.float64),
        stats=stats,
        eps=eps,
    )


class _Search:
    """Depth-first branch-and-bound over a presolved :class:`_Model`."""

    def __init__(
        self,
        m: _Model,
        time_limit: float | None,
        node_limit: int | None,
        limit: float | None = None,
    ):
        self.m = m
        self.eps = m.eps
        # QA s42 round 3 (exactness): the model prunes by running cost sums against a slacked
        # limit (m.b_eff, :func:`search_limit`); a store is accepted only when its correctly
        # rounded cost fits the true ``limit``. Running costs at most ``exact_from`` are at
        # least the slack below it, so only stores near the limit pay for the math.fsum.
        self.limit = m.b_eff if limit is None else limit
        self.exact_from = self.limit - (m.b_eff - self.limit)
        self.h = get_saturation(m.inst.saturation).h
        self.wcol = m.weight[m.cols]
        self.nnz_start = m.indptr[:-1]
        self.deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        self.node_limit = node_limit
        self.nodes = 0
        self.tie_nodes = 0  # subtrees entered that can only tie the incumbent
        self.tie_cut = False
        # The incumbent is TieBest's winner (QA s47: comparing each store with the incumbent
        # drifted along a chain of ties); best_items is None when it is a caller's store.
        self.ties = TieBest()
        self.best_value = -math.inf
        self.best_cost = math.inf
        self.best_sel: tuple[int, ...] | None = None
        self.best_items: tuple[int, ...] | None = None
        # The lowest incumbent value a subtree was skipped against for its cost alone; such a
        # skip is sound only while that incumbent ties the highest value (see visit).
        self.cost_cut_value = math.inf
        n, G = m.n, m.n_groups
        # Exact knapsack DP when costs are (scaled) integers on a small grid; otherwise the
        # fractional knapsack bound (Lagrangian in the budget) alone.
        self.scale = None
        for s in _COST_SCALES:
            sc = m.cost * s
            if (
                # 1e-12 keeps the rounding error of all items far below the DP's 1e-7 slack.
                np.all(np.abs(sc - np.round(sc)) <= 1e-12 * np.maximum(1.0, sc))
                and m.b_eff * s <= DP_MAX_CELLS
            ):
                self.scale = float(s)
                self.cq = np.round(sc).astype(np.int64)
                break
        self.use_dp = self.scale is not None and n <= DP_MAX_ITEMS
        self.cost_list = m.cost.tolist()
        self.group_list = m.group.tolist()
        self.gstart_list = m.gstart.tolist()
        cmin = np.full(G + 1, math.inf)
        for g in range(G - 1, -1, -1):
            lo, hi = self.gstart_list[g], self.gstart_list[g + 1]
            cmin[g] = min(cmin[g + 1], float(m.cost[lo:hi].min()))
        self.cmin = cmin.tolist()
        R = m.weight.size
        self.suffix = None
        if (G + 1) * R <= MAX_SUFFIX_CELLS and n:
            gmax = np.zeros((G + 1, R))
            np.maximum.at(gmax, (np.repeat(m.group, np.diff(m.indptr)), m.cols), m.data)
            self.suffix = np.cumsum(gmax[::-1], axis=0)[::-1]
        self.item_cols = [m.cols[m.indptr[v] : m.indptr[v + 1]] for v in range(n)]
        self.item_data = [m.data[m.indptr[v] : m.indptr[v + 1]] for v in range(n)]

    # ------------------------------------------------------------------ incumbent
    def selection(self, items: tuple[int, ...] | list[int]) -> tuple[int, ...]:
        return tuple(sorted(i for v in items for i in self.m.items[v]))

    def offer(self, value: float, cost: float, items: list[int] | tuple[int, ...]) -> None:
        """Offer (value, cost, items) to the tie-break (:class:`~.enum.TieBest`) if it fits
        the budget by its correctly rounded cost (:func:`fits_limit`)."""
        if value < self.ties.floor:
            return
        sel = self.selection(items)
        if cost > self.exact_from and not fits_limit(
            self.m.inst.cost[list(sel)].tolist(), self.limit
        ):
            return
        self.offer_store(value, cost, sel, tuple(items))

    def offer_store(
        self, value: float, cost: float, sel: tuple[int, ...], items: tuple[int, ...] | None
    ) -> None:
        """Offer a feasible store (its candidate positions ``sel``; ``items`` None when it is
        not made of the model's items) and take the tie-break's winner as the incumbent."""
        inst = self.m.inst
        if self.ties.offer(value, cost, lambda: selection_key(inst, sel), (sel, items)):
            self.best_value, self.best_cost, _, (self.best_sel, self.best_items) = self.ties.best()

    def gain_entries(self, z: np.ndarray, s0: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-entry marginal gains w_r (h(z_r + a_ur) - h(z_r)) from item ``s0`` on."""
        m = self.m
        e0 = int(m.indptr[s0])
        cols = m.cols[e0:]
        zc = z[cols]
        h = self.h
        per = self.wcol[e0:] * (h(zc + m.data[e0:]) - h(zc))
        return per, cols, self.nnz_start[s0:] - e0

    def gains(self, z: np.ndarray, s0: int = 0) -> np.ndarray:
        per, _, starts = self.gain_entries(z, s0)
        return np.add.reduceat(per, starts)

    def greedy(self, by_ratio: bool) -> None:
        """Cost-benefit greedy (``by_ratio``) or plain greedy on the presolved items: the
        reference writers' incumbent (DESIGN section 5), computed here rather than through
        :mod:`memaudit_core.writers` because the items are the presolved ones (dominated
        candidates and zero-weight units gone), and under a group capacity k > 1 an item is a
        subset of up to k candidates."""
        m = self.m
        z = np.zeros(m.weight.size)
        used = np.zeros(m.n_groups, dtype=bool)
        cost, value, chosen = 0.0, 0.0, []
        while True:
            g = self.gains(z)
            ok = (~used[m.group]) & (m.cost <= m.b_eff - cost) & (g > self.eps)
            if not ok.any():
                break
            with np.errstate(over="ignore", divide="ignore"):  # a 5e-324 cost: density inf
                score = np.where(ok, g / m.cost if by_ratio else g, -np.inf)
            v = int(np.argmax(score))
            chosen.append(v)
            used[m.group[v]] = True
            cost += float(m.cost[v])
            value += float(g[v])
            z[self.item_cols[v]] += self.item_data[v]
        self.offer(value, cost, chosen)

    def best_singleton(self) -> None:
        m = self.m
        g = self.gains(np.zeros(m.weight.size))
        v = int(np.argmax(np.where(m.cost <= m.b_eff, g, -np.inf)))
        if g[v] > self.eps and m.cost[v] <= m.b_eff:
            self.offer(float(g[v]), float(m.cost[v]), [v])

    def local_search(self, max_rounds: int = 50) -> None:
        """Improve the incumbent by best-improvement add / swap moves (value must rise).

        A move removes at most one item and adds one from a group the store does not use (or
        from the removed item's group); each round evaluates every removal with one vectorised
        gain pass.
        """
        m = self.m
        if self.best_items is None or m.n == 0:
            return
        items = list(self.best_items)
        for _ in range(max_rounds):
            if self.out_of_time():
                break
            z = np.zeros(m.weight.size)
            for v in items:
                z[self.item_cols[v]] += self.item_data[v]
            base = float(np.dot(m.weight, self.h(z)))
            cost = float(sum(self.cost_list[v] for v in items))
            used = np.zeros(m.n_groups, dtype=bool)
            used[[self.group_list[v] for v in items]] = True
            best_gain, best_move = tie_tol(base), None
            for out in [None, *items]:
                zz, lost, c, free = z, 0.0, cost, used
                if out is not None:
                    zz = z.copy()
                    zz[self.item_cols[out]] -= self.item_data[out]
                    lost = base - float(np.dot(m.weight, self.h(zz)))
                    c = cost - self.cost_list[out]
                    free = used.copy()
                    free[self.group_list[out]] = False
                g = self.gains(zz)
                ok = (~free[m.group]) & (m.cost <= m.b_eff - c) & (g > self.eps)
                if out is not None:
                    ok[out] = False
                if not ok.any():
                    continue
                v = int(np.argmax(np.where(ok, g, -np.inf)))
                if g[v] - lost > best_gain:
                    best_gain, best_move = g[v] - lost, (out, v)
            if best_move is None:
                break
            out, v = best_move
            if out is not None:
                items.remove(out)
            items.append(v)
            items.sort()
            self.offer(
                self.value_of(tuple(items)), float(sum(self.cost_list[u] for u in items)), items
            )

    def value_of(self, items: tuple[int, ...]) -> float:
        z = np.zeros(self.m.weight.size)
        for v in items:
            z[self.item_cols[v]] += self.item_data[v]
        return float(np.dot(self.m.weight, self.h(z)))

    # ------------------------------------------------------------------ bounds
    def lp_bounds(self, prof, cost, seg_start, next_seg, b):
        """Fractional multiple-choice knapsack bounds via its Lagrangian dual in the budget.

        For any lam >= 0, lam * b + sum_g max(0, max_u (p_u - lam c_u)) bounds the knapsack
        optimum (weak duality), so a small grid of lam values, minimised per child, is valid.
        Items are the node's usable ones, grouped in segments; returns (bound for the whole
        suffix, bound for what the groups after each item's group can add at its residual).
        """
        ratio = np.sort(prof / cost)[::-1]
        lam = np.concatenate([ratio[_LAMBDA_PICKS[_LAMBDA_PICKS < ratio.size]], [0.0]])
        P = prof[:, None] - cost[:, None] * lam[None, :]
        gm = np.maximum.reduceat(P, seg_start, axis=0)
        np.maximum(gm, 0.0, out=gm)
        vals = lam * b + gm.sum(axis=0)
        # The dual is convex in lam: refine between the best grid point's neighbours, where
        # the minimum lies, so the node bound gets close to the exact LP value.
        k = int(np.argmin(vals))
        hi = lam[max(k - 1, 0)]
        lo = lam[min(k + 1, lam.size - 1)]
        if hi > lo:
            fine = np.linspace(lo, hi, _LAMBDA_REFINE + 2)[1:-1]
            lam = np.concatenate([lam, fine])
            Pf = prof[:, None] - cost[:, None] * fine[None, :]
            gf = np.maximum.reduceat(Pf, seg_start, axis=0)
            np.maximum(gf, 0.0, out=gf)
            gm = np.concatenate([gm, gf], axis=1)
        suf = np.zeros((gm.shape[0] + 1, lam.size))
        np.cumsum(gm[::-1], axis=0, out=suf[-2::-1])
        node_lp = float((lam * b + suf[0]).min())
        child = ((b - cost)[:, None] * lam[None, :] + suf[next_seg]).min(axis=1)
        return node_lp, child

    def dp_bounds(self, prof, cost, cq, seg_start, b):
        """Exact (integral-cost) multiple-choice knapsack bounds by dynamic programming.

        Segments are processed from the last group backwards; before a segment's own items
        enter the table, the table holds the best over later groups, which is each of its
        items' child bound.
        """
        qb = int(math.floor(b * self.scale + 1e-7))
        pl, cl, ql = prof.tolist(), cost.tolist(), cq.tolist()
        child = [0.0] * len(pl)
        bounds = [*seg_start.tolist(), len(pl)]
        prev = np.zeros(qb + 1)
        for j in range(len(bounds) - 2, -1, -1):
            lo, hi = bounds[j], bounds[j + 1]
            for k in range(lo, hi):
                child[k] = prev[int(math.floor((b - cl[k]) * self.scale + 1e-7))]
            cur = prev.copy()
            for k in range(lo, hi):
                c = ql[k]
                np.maximum(cur[c:], prev[: qb + 1 - c] + pl[k], out=cur[c:])
            prev = cur
        return float(prev[qb]), np.asarray(child)

    def node(self, g: int, z: np.ndarray, value: float, cost: float, theta: np.ndarray | None):
        """Usable items, their gains and child bounds, and the node bound for node (S, g).

        The child bound of item u is value + gain(u) + an upper bound on what the groups after
        u's group can add at the child's residual budget, computed from this node's gains
        (gains only shrink deeper, by submodularity, so the parent's numbers stay valid).
        Only items that fit the residual budget and have a positive gain are usable.
        """
        m = self.m
        s0 = self.gstart_list[g]
        b = m.b_eff - cost
        per, cols, starts = self.gain_entries(z, s0)
        gains = np.add.reduceat(per, starts)
        idx = np.flatnonzero((m.cost[s0:] <= b) & (gains > self.eps))
        if idx.size == 0:
            return idx, gains[:0], gains[:0], value
        c_ok = m.cost[s0 + idx]
        p_ok = gains[idx]
        t_ok = m.group[s0 + idx] - g
        seg_start = np.flatnonzero(np.concatenate([[True], t_ok[1:] != t_ok[:-1]]))
        next_seg = np.searchsorted(t_ok[seg_start], t_ok + 1)
        if self.use_dp and theta is None:
            # The exact integer knapsack is never above its LP relaxation: no LP needed.
            node_b, ext = self.dp_bounds(p_ok, c_ok, self.cq[s0 + idx], seg_start, b)
        else:
            node_b, ext = self.lp_bounds(p_ok, c_ok, seg_start, next_seg, b)
        if self.suffix is not None:
            h = self.h
            phi = m.weight * (h(z + self.suffix[g:]) - h(z))
            sc = phi.sum(axis=1)
            np.minimum(ext, sc[t_ok + 1], out=ext)
            node_b = min(node_b, float(sc[0]))
            if theta is not None:
                # Combined bound: sum_r (1 - theta_r) Phi_r + knapsack over theta-weighted gains.
                const = sc - phi @ theta
                prof = np.add.reduceat(per * theta[cols], starts)[idx]
                if self.use_dp:
                    nb, ch = self.dp_bounds(prof, c_ok, self.cq[s0 + idx], seg_start, b)
                else:
                    nb, ch = self.lp_bounds(prof, c_ok, seg_start, next_seg, b)
                np.minimum(ext, ch + const[t_ok + 1], out=ext)
                node_b = min(node_b, nb + float(const[0]))
        return idx, p_ok, value + p_ok + ext, value + node_b

    def optimize_theta(
        self, g: int, z: np.ndarray, cost: float, theta: np.ndarray, target: float, iterations: int
    ) -> tuple[float, np.ndarray]:
        """Subgradient descent on theta for the combined bound of node (S, g).

        L(theta, lam) = sum_r (1 - theta_r) Phi_r + lam b + sum_g max(0, max_u p_u - lam c_u),
        p_u = sum_r theta_r g_ur, bounds what groups g.. can add for every theta in [0, 1]^R
        and lam >= 0; its minimum equals the LP relaxation with coverage caps. Returns the best
        (bound on the extension, theta) seen; any theta is valid, so no convergence is needed.
        """
        m = self.m
        s0 = self.gstart_list[g]
        per, cols, starts = self.gain_entries(z, s0)
        phi = m.weight * (self.h(z + self.suffix[g]) - self.h(z))
        phi_sum = float(phi.sum())
        b = m.b_eff - cost
        gs = m.gstart[g:-1] - s0
        cost_s = m.cost[s0:]
        grp = m.group[s0:] - g
        ok0 = cost_s <= b
        entry_item = np.repeat(np.arange(cost_s.size), np.diff(m.indptr[s0:]))
        best, best_theta = math.inf, theta
        step, stall = 1.0, 0
        for step_idx in range(iterations):
            if step_idx >= THETA_MIN_STEPS and self.out_of_time():
                break
            prof = np.add.reduceat(per * theta[cols], starts)
            ok = ok0 & (prof > 0)
            if not ok.any():
                bound = phi_sum - float(phi @ theta)
                if bound < best:
                    best, best_theta = bound, theta
                break
            ratio = np.sort(prof[ok] / cost_s[ok])[::-1]
            lam = np.concatenate([ratio[_LAMBDA_PICKS[_LAMBDA_PICKS < ratio.size]], [0.0]])
            P = np.where(ok[:, None], prof[:, None] - cost_s[:, None] * lam[None, :], 0.0)
            gm = np.maximum(np.maximum.reduceat(P, gs, axis=0), 0.0)
            vals = lam * b + gm.sum(axis=0)
            k = int(np.argmin(vals))
            bound = float(vals[k]) + phi_sum - float(phi @ theta)
            if bound < best - 1e-9:
                best, best_theta, stall = bound, theta, 0
            else:
                stall += 1
                if stall >= 5:
                    step *= 0.6
                    stall = 0
            # Items attaining their group's maximum at the chosen lam form the subgradient.
            picked = ok & (P[:, k] >= gm[grp, k] - 1e-12) & (P[:, k] > 0)
            grad = -phi.copy()
            sel = picked[entry_item]
            np.add.at(grad, cols[sel], per[sel])
            nrm = float(grad @ grad)
            if nrm <= 1e-18 or bound <= target + 1e-9:
                break
            theta = np.clip(theta - step * (bound - target) / nrm * grad, 0.0, 1.0)
        return best, best_theta

    # ------------------------------------------------------------------ search
    def out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def check_limits(self, open_bound: float) -> None:
        if self.node_limit is not None and self.nodes >= self.node_limit:
            raise _Limit(open_bound)
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            raise _Limit(open_bound)

    def visit(
        self,
        g: int,
        z: np.ndarray,
        value: float,
        cost: float,
        chosen: list[int],
        theta,
        ub: float = math.inf,
    ) -> None:
        self.nodes += 1
        if not self.nodes & 255:
            heartbeat.beat()  # a long search in a sweep (memaudit_core.heartbeat)
            heartbeat.note(incumbent=self.best_value)  # the CLI's progress lines
        idx, gains, cb, node_bound = self.node(g, z, value, cost, theta if not chosen else None)
        # A subtree lies inside every ancestor's: their bounds (``ub``; the root's is the
        # tightest, fitted by theta) cap the children's, which are computed without theta.
        # Without the cap a search whose value was proven at the root kept descending.
        node_bound = min(node_bound, ub)
        cb = np.minimum(cb, node_bound)
        # Nothing below the highest value seen by more than a tie can tie the optimum, which
        # is at least as high (the incumbent may lie lower, inside the tie).
        top = self.ties.top
        keep = np.flatnonzero(cb >= top - tie_tol(top) - 1e-11 * max(1.0, abs(top)))
        if keep.size == 0:
            return
        keep = keep[np.argsort(-cb[keep], kind="stable")]
        s0 = self.gstart_list[g]
        G = self.m.n_groups
        b_eff = self.m.b_eff
        for k, cbk, gk in zip(
            (idx[keep] + s0).tolist(), cb[keep].tolist(), gains[keep].tolist(), strict=True
        ):
            top = self.ties.top
            floor = top - tie_tol(top) - 1e-11 * max(1.0, abs(top))
            if cbk < floor:
                break  # sorted by bound: nothing below can even tie the highest value
            v = k
            cv = cost + self.cost_list[v]
            vv = value + gk
            chosen.append(v)
            self.offer(vv, cv, chosen)
            gn = self.group_list[v] + 1
            if gn < G and self.cmin[gn] <= b_eff - cv:
                bv = self.best_value
                guard = 1e-11 * max(1.0, abs(bv))
                tol = tie_tol(bv)
                top = self.ties.top
                floor = top - tie_tol(top) - 1e-11 * max(1.0, abs(top))
                beat = cbk > bv + tol - guard
                tie = cbk >= floor and _cost_can_tie(cv + self.cmin[gn], self.best_cost)
                if not (beat or tie) and cbk >= floor:
                    # Skipped for its cost: its stores cost more than the incumbent beyond a
                    # tie, so they lose while the incumbent ties the optimum (solve_bnb checks
                    # that at the end and searches again if a higher store untied it).
                    self.cost_cut_value = min(self.cost_cut_value, bv)
                if (beat or tie) and cbk <= bv + tol + guard:
                    # It cannot beat the incumbent by more than the rounding guard (1e-11
                    # relative, far inside the certificate's 1e-9): a tie for every purpose.
                    if self.tie_nodes >= TIE_NODE_CAP:
                        self.tie_cut, beat, tie = True, False, False
                    else:
                        self.tie_nodes += 1
                if beat or tie:
                    try:
                        self.check_limits(cbk)
                        zn = z.copy()
                        zn[self.item_cols[v]] += self.item_data[v]
                        self.visit(gn, zn, vv, cv, chosen, theta, node_bound)
                    except _Limit as lim:
                        # What is left open here lies inside this node: its bound caps it.
                        lim.open_bound = min(node_bound, max(lim.open_bound, cbk))
                        raise
            chosen.pop()


def _cost_can_tie(lo: float, best_cost: float) -> bool:
    """Whether a store costing at least ``lo`` can cost less than ``best_cost`` or tie it.

    Ties are relative (:func:`~.enum.tied`): ``c`` ties a lower ``best_cost`` while
    ``c - TIE max(1, c) <= best_cost``, and the left side grows with ``c``, so when ``lo`` fails
    every dearer store fails too and the subtree can only lose the cost tie-break.
    """
    return lo <= best_cost + tie_tol(lo, best_cost)


def _limits(inst: CompiledInstance, budget: float) -> tuple[float, float]:
    """(the budget limit a store must fit by its correctly rounded cost, the slacked limit the
    search prunes against by running sums; QA s42 round 3: a store at exactly B (1 + 1e-9)
    was dropped by a running sum one ulp above it)."""
    limit = min(budget_with_tolerance(budget), budget_with_tolerance(float(inst.cost.sum())))
    return limit, search_limit(limit, inst.n_groups * inst.group_capacity)


def _root_heuristics(search: _Search, *, full: bool) -> None:
    """The root incumbent: greedy by density, the best single candidate and, when ``full``,
    greedy by gain and add / swap local search from the best of them."""
    search.offer(0.0, 0.0, [])
    if search.m.n:
        search.greedy(by_ratio=True)
        search.best_singleton()
        if full:
            search.greedy(by_ratio=False)
            search.local_search()


def heuristic_store(
    inst: CompiledInstance, budget: float, *, time_limit: float | None = None
) -> tuple[int, ...]:
    """A good feasible store fast: the branch-and-bound's root incumbent without the search.

    Greedy by density and by gain, the best single candidate, then add / swap local search
    (stopped at ``time_limit`` seconds between rounds). No optimality claim; the MILP engine
    hands it to HiGHS as a MIP start on limited runs, where HiGHS alone can stop far below it.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> from memaudit_core.objective import evaluate
    >>> inst = compile_package(generate("temporal_interval"))
    >>> sel = heuristic_store(inst, 13)
    >>> inst.is_feasible(sel, 13), round(evaluate(inst, sel), 3)  # OPT(13) = 10.635
    (True, 10.485)
    """
    return heuristic_store_and_bound(inst, budget, time_limit=time_limit)[0]


def heuristic_store_and_bound(
    inst: CompiledInstance, budget: float, *, time_limit: float | None = None
) -> tuple[tuple[int, ...], float]:
    """:func:`heuristic_store` and the branch-and-bound's root bound on OPT(budget).

    The bound is the root node's (fractional multiple-choice knapsack over the singleton
    gains, capped by what every unit can still add), without the subgradient refinement:
    one pass over the candidates. Limited MILP runs use it when HiGHS stops before its own
    root bound (a 1 ms limit on event-graph-500 reported a bound of 2159.9 where this one is
    573.5, OPT 572.96).

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("temporal_interval"))
    >>> sel, bound = heuristic_store_and_bound(inst, 13)
    >>> bound >= 10.635  # OPT(13)
    True
    """
    limit, b_eff = _limits(inst, budget)
    model = _presolve(inst, b_eff, "value_ratio", gain_floor(inst, budget))
    search = _Search(model, time_limit, None, limit)
    _root_heuristics(search, full=True)
    bound = search.best_value
    if model.n:
        bound = max(bound, search.node(0, np.zeros(model.weight.size), 0.0, 0.0, None)[3])
    store = () if search.best_sel is None else search.best_sel
    return store, float(bound)


@register_engine("bnb")
def solve_bnb(
    inst: CompiledInstance,
    budget: float,
    *,
    time_limit: float | None = None,
    node_limit: int | None = None,
    incumbent_idx: tuple[int, ...] | None = None,
    order: str = "value_ratio",
    theta_iterations: int = 150,
) -> RawSolution:
    """Exact branch-and-bound (see the module docstring).

    Parameters
    ----------
    inst : CompiledInstance
    budget : float
    time_limit : float, optional
        Seconds; on expiry the result has status ``"limit"`` and a proven bound.
    node_limit : int, optional
        Maximum number of search nodes (the root counts as one).
    incumbent_idx : tuple of int, optional
        A known feasible selection to start from (ignored if infeasible).
    order : {'value_ratio', 'ratio', 'arrival'}
        Group order of the search; it changes speed, never the result. ``value_ratio``
        (default) sorts groups by the best F({u})^2 / c_u, ``ratio`` by F({u}) / c_u.
    theta_iterations : int
        Subgradient steps for the root multipliers of the combined bound (larger instances).

    Returns
    -------
    RawSolution

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("temporal_interval"))
    >>> raw = solve_bnb(inst, 13)
    >>> round(raw.value, 6), inst.ids(raw.selected_idx)[:2]
    (10.635, ('interval_0_interval_fact', 'interval_1_summary'))
    """
    t0 = time.perf_counter()
    # A budget above the cost of every candidate together binds nothing; capping it there keeps
    # the dual bound's lam * b finite for budgets such as 1e308.
    limit, b_eff = _limits(inst, budget)
    model = _presolve(inst, b_eff, order, gain_floor(inst, budget))
    search = _Search(model, time_limit, node_limit, limit)
    detail: dict[str, Any] = {"presolve": model.stats, "order": order}
    _root_heuristics(search, full=model.n >= THETA_MIN_ITEMS)
    detail["greedy_value"] = search.best_value
    # The caller's incumbent lives outside the reduced model: keep it aside and compare at the end.
    given = None
    if incumbent_idx is not None and len(incumbent_idx) and inst.is_feasible(incumbent_idx, budget):
        from ..objective import evaluate

        sel = tuple(sorted(int(i) for i in incumbent_idx))
        given = (evaluate(inst, sel), inst.selection_cost(sel), sel)
        # The search prunes against it; it may not be representable as items.
        search.offer_store(given[0], given[1], sel, None)
    status, bound = "optimal", None
    if model.n:
        z0 = np.zeros(model.weight.size)
        root_bound = search.node(0, z0, 0.0, 0.0, None)[3]
        theta = None
        if (
            model.n >= THETA_MIN_ITEMS
            and search.suffix is not None
            and root_bound > search.best_value + tie_tol(search.best_value)
        ):
            tb, theta = search.optimize_theta(
                0, z0, 0.0, np.ones(model.weight.size), search.best_value, theta_iterations
            )
            root_bound = min(root_bound, tb)
        detail["root_bound"] = root_bound
        # One frame per chosen item. The limit is only ever raised, never restored, so that
        # concurrent searches (app threads) cannot lower it under each other.
        if sys.getrecursionlimit() < model.n_groups * 2 + 200:
            sys.setrecursionlimit(model.n_groups * 2 + 200)
        try:
            search.visit(0, z0, 0.0, 0.0, [], theta)
            while not tied(search.cost_cut_value, search.ties.top) and (
                search.cost_cut_value < search.ties.top
            ):
                # A subtree was skipped for its cost against an incumbent that a higher store
                # found later untied: search again, every incumbent now tied with the highest
                # value. Each pass starts higher, so this ends (in practice after one).
                search.cost_cut_value = math.inf
                search.visit(0, z0, 0.0, 0.0, [], theta)
            if search.tie_cut:
                detail["method"] = "bnb_tie_cut"
                detail["tie_nodes"] = search.tie_nodes
        except _Limit as lim:
            status = "limit"
            bound = max(min(lim.open_bound, root_bound), search.best_value)
            if relative_gap(search.best_value, bound) == 0.0:
                # Every subtree left open is bounded by the incumbent: its value is proven
                # optimal. Only the search among equally good stores (the tie-break) was cut.
                status = "optimal"
                detail["method"] = "bnb_limit"
    sel = search.best_sel
    if search.best_items is None:
        value = search.best_value  # the caller's store, its F from evaluate
    else:
        value = search.value_of(search.best_items)
    value = max(value, 0.0)
    if bound is None:
        bound = value
    bound = max(bound, value)
    skipped = _skipped_value(inst, b_eff, model.eps)
    if skipped > 0.0:
        # The search never saw these candidates: the bound must still cover them.
        bound += skipped
        detail["skipped_value"] = skipped
        if status == "optimal" and bound - value > SKIPPED_RTOL * value:
            # The widened bound no longer meets the store: what the search left out may be
            # worth more than certification's tolerance, so nothing is proven. gain_floor
            # keeps this from happening; a floor that let it happen must not say "optimal".
            status = "unproven"
            detail["unproven"] = "skipped_value"
    detail["time_s"] = time.perf_counter() - t0
    return RawSolution(sel, value, bound, status, nodes=search.nodes, detail=detail)


def _skipped_value(inst: CompiledInstance, b_eff: float, eps: float) -> float:
    """The most the candidates presolve leaves out for a value at or below the zero-gain floor
    ``eps`` (:func:`gain_floor`; but above 0) can add to any store: by submodularity a
    candidate adds at most its own F({u}), and a group holds at most ``group_capacity`` of them.

    The floor is absolute in the engines' units, so many such candidates could add up to more
    than the certification tolerance (exactness QA s50: 200 of 1e-12 beside an optimum of
    1e-5 were left out of store and bound alike, and OPT was certified 2e-5 relative low).
    """
    single = inst.singleton_values
    left_out = (inst.cost <= b_eff) & (single > 0.0) & (single <= eps)
    if not left_out.any():
        return 0.0
    top = np.zeros(inst.n_groups)
    np.maximum.at(top, inst.group_idx[left_out], single[left_out])
    counts = np.bincount(inst.group_idx[left_out], minlength=inst.n_groups)
    return float(np.dot(top, np.minimum(counts, inst.group_capacity)))
