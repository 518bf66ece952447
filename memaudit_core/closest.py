"""Among stores as good as an optimum, the one closest to a store being explained.

A package often has many optimal stores: interchangeable notes, or two facts of equal weight
and cost. A solver returns one of them, and explaining a store against that one says it
"missed" facts it holds in an equally good form (the twenty-sixth session's Compare page on
redundancy_heavy 1,000 at budget 55: gvt, ratio 0.995, "missed 21 units, losing 26.08").
:func:`closest_equivalent` moves the optimum towards the explained store by exact steps that
keep F and stay within the budget, so the differences that remain are differences that
matter:

1. whole blocks of interchangeable groups take one another's configuration
   (:func:`memaudit_core.solvers.orbits.align`);
2. then, one memory at a time, a memory the store lacks is exchanged for one the store holds,
   dropped when it adds nothing, or a memory of the store that adds nothing is added; each
   move must keep the group limit, fit the budget and leave F equal to the optimum's
   (recomputed after every move, within 1e-9 of the original F relative to the larger of F
   and the package's value unit, so rounding cannot accumulate).

3. then ties are broken by one rule, whichever optimum the solver returned (QA s40: on
   event-graph-50 at budget 125 the CLI's HiGHS run and the app's, started from gvt's store,
   returned two optima each one memory away from gvt's store, so Compare and ``memaudit
   score`` showed different optima and per-unit losses). Among the equally good stores
   compared, the one shown has, in this order: the fewest memories in exactly one of it and
   the reference; the most of the reference's experiences touched; the smallest cost (to 12
   significant digits); the lexicographically smallest tuple of sorted candidate ids. Against
   an empty store (one pruned to nothing, say) the first key is the number of memories (QA
   s44: the store was shown beside whichever optimum the solver returned). Which stores are
   compared is in :attr:`EquivalentStore.ties`:

   * ``"all"``: every store of the package with the start's F, when few stores fit the
     budget (at most :data:`TIE_ENUM_MAX` within the group limit, memories that cost more
     than B left out, and :data:`TIE_ENUM_CELLS` coverage cells), so the choice is the same
     from every optimum and no equally good store is closer;
   * otherwise those reached from the result of steps 1 and 2 by single exchanges, drops and
     additions that keep F, fit the budget and never add a difference, best first:
     ``"connected"`` when the search ran out of such stores, so the choice is the same from
     every optimum of one such connected set; ``"partial"`` when it stopped at
     :data:`TIE_MAX_STATES` stores expanded or :data:`TIE_MAX_PAIRS` moves tried (many
     differences on a large package), and the choice may then depend on the solver's optimum.
     Neither compares a store one memory exchanged for two away, so a closer optimum may
     exist; the score's notes say so (QA s43).

Every step keeps F, so the result is as good as the optimum it came from: optimal when that
was, and never presented as better. It depends on the store it is aligned to, which is why
the explanations that use it say so.

Examples
--------
>>> from memaudit_core.generators import generate
>>> from memaudit_core.compiled import compile_package
>>> inst = compile_package(generate("redundancy_heavy", seed=0, n_experiences=60))
>>> from memaudit_core.solvers import solve
>>> from memaudit_core.writers import run_writer
>>> # One of the package's many optima at B = 10 (which one a solver returns among equally
>>> # good stores is its own affair), and the gvt writer's store:
>>> optimum = inst.indices(
...     ["note_30_tail_fact", "note_31_tail_fact", "note_36_tail_fact", "note_37_raw_span"]
... )
>>> bool(abs(evaluate(inst, optimum) - solve(inst, 10).value) <= 1e-12)
True
>>> store = run_writer("gvt", inst, 10).selected_idx
>>> inst.ids(store)
('note_0_raw_span', 'note_1_tail_fact', 'note_5_tail_fact', 'note_8_tail_fact')
>>> near = closest_equivalent(inst, optimum, store, budget=10)
>>> inst.ids(near.selected_idx)
('note_1_tail_fact', 'note_5_tail_fact', 'note_8_tail_fact', 'note_10_raw_span')
>>> from memaudit_core.solvers.enum import tied  # equal F, up to the dot product's last bit
>>> same_f = tied(evaluate(inst, near.selected_idx), evaluate(inst, optimum))
>>> near.shared_before, near.shared_after, same_f
(0, 3, True)
>>> near.ties, near.tie_moves  # note_10_raw_span and note_37_raw_span tie: ids decide
('connected', 1)
"""

from __future__ import annotations

import heapq
import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from .compiled import (
    CompiledInstance,
    budget_with_tolerance,
    entry_positions,
    fits_limit,
    search_limit,
)
from .objective import coverage_of, evaluate, get_saturation
from .saturation_caches import instance_cache
from .solvers import value_unit
from .solvers.orbits import align

#: F may differ from the original by this share of it, or of the package's value unit when F is
#: smaller (rounding of a different sum order; the rule of ``memaudit_core.solvers``).
REL_TOL = 1e-9
#: Moves are looked for only while (optimum-only) x (store-only) memories are at most this.
MAX_EXCHANGE_PAIRS = 250_000
#: Ties are settled over every store of the package when at most this many fit the budget and
#: the group limit (counted by a search that stops past it).
TIE_ENUM_MAX = 4096
#: ... and at most this many (combination, unit) coverage cells to hold at once.
TIE_ENUM_CELLS = 2_000_000
#: Otherwise the best-first search over equally good stores expands at most this many.
TIE_MAX_STATES = 32
#: ... and tries at most this many moves in all (pairs and single drops or additions), so that
#: Compare, which runs it on every budget change, stays fast on large packages.
TIE_MAX_PAIRS = 200_000


@dataclass(frozen=True)
class EquivalentStore:
    """A store with the F of the one it came from, as close as found to a reference store.

    Attributes
    ----------
    selected_idx : tuple of int
        Candidate positions, sorted.
    blocks_moved : int
        Blocks of interchangeable groups that took another block's configuration.
    moves : int
        Single moves: a memory exchanged for, or replaced by nothing, or one of the reference
        store's added.
    shared_before, shared_after : int
        Memories in common with the reference store before and after.
    differences_before, differences_after : int
        Memories in exactly one of the two stores, before and after.
    settled : bool
        The single moves ran until none applied: no exchange, drop or addition of one
        difference left keeps F within the budget. False when they were skipped (more than
        :data:`MAX_EXCHANGE_PAIRS` pairs to try) or the store was returned unchanged for
        another reason (``selected_idx`` over the budget).
    group_moves : int
        Exchanges (counted in ``moves`` too) of a memory of an experience the reference store
        does not touch for another form of an experience it holds: the memories in common do
        not change, the experiences in common grow by one.
    tie_moves : int
        Memories exchanged, after the moves above, to reach the store the tie rule picks among
        the equally good ones compared (the module docstring, step 3); 0 when it was already
        that store.
    ties : str
        Which equally good stores the tie rule compared: ``"all"`` (every store of the package
        with this F: the same result from every optimum), ``"connected"`` (every one reached
        by single moves that keep F without adding a difference), ``"partial"`` (the search
        stopped after :data:`TIE_MAX_STATES` stores or :data:`TIE_MAX_PAIRS` moves), or
        ``"none"`` (no search: the store was returned unchanged, or the reference itself is
        as good and is returned).
    """

    selected_idx: tuple[int, ...]
    blocks_moved: int
    moves: int
    shared_before: int
    shared_after: int
    differences_before: int
    differences_after: int
    settled: bool = False
    group_moves: int = 0
    tie_moves: int = 0
    ties: str = "none"

    @property
    def changed(self) -> bool:
        return (
            self.differences_after != self.differences_before
            or self.group_moves > 0
            or self.tie_moves > 0
        )


def closest_equivalent(
    inst: CompiledInstance,
    selected_idx: Sequence[int],
    reference_idx: Sequence[int],
    budget: float,
) -> EquivalentStore:
    """A store with the F of ``selected_idx``, moved towards ``reference_idx`` by exact steps.

    Parameters
    ----------
    inst : CompiledInstance
    selected_idx : sequence of int
        The store to move, usually an optimum; it should fit ``budget``.
    reference_idx : sequence of int
        The store being explained.
    budget : float
        Every step keeps the result within it (:func:`budget_with_tolerance`).

    Returns
    -------
    EquivalentStore
        ``selected_idx`` itself (sorted) when no step applies.

    See the module docstring for the steps and the tie rule. Steps 1 and 2 are greedy: each
    move takes one difference away, but another order could end closer; the tie search of
    step 3 may then find a closer store, and on a small package (``ties == "all"``) it
    compares every store with this F, so the result is the closest of all.
    """
    start = tuple(sorted({int(i) for i in selected_idx}))
    reference = {int(i) for i in reference_idx}
    shared = len(reference.intersection(start))
    differences = len(reference.symmetric_difference(start))
    unchanged = EquivalentStore(start, 0, 0, shared, shared, differences, differences)
    # An empty store or an empty optimum still goes through the tie rule (QA s44: the store
    # pruned to nothing was shown beside whichever optimum the solver returned, so its missed
    # units changed with --solver); against an empty store the closest has fewest memories.
    if not inst.is_feasible(start, budget):
        return unchanged
    target = evaluate(inst, start)
    tol = REL_TOL * max(value_unit(inst, budget), abs(target))
    ref_sorted = tuple(sorted(reference))
    if inst.is_feasible(ref_sorted, budget) and abs(evaluate(inst, ref_sorted) - target) <= tol:
        # The reference is as good as the start: it is the closest such store. Single moves
        # could miss it (annotator QA: travel-assistant at budget 20, gvt's store is optimal
        # but two of its facts stand where the solver's optimum has one update, so Compare
        # listed units "lost" by an optimal store).
        return EquivalentStore(
            ref_sorted, 0, 0, shared, len(reference), differences, 0, settled=True
        )
    rank = _TieRank(inst, reference)
    small = _enumerate_ties(inst, budget, target, tol, rank)
    if small is not None:
        # Every store with this F compared: the choice does not depend on the start.
        return _finish(inst, start, small, reference, target, tol, budget, ties="all")
    blocks = align(inst, start, reference, budget)
    current = set(blocks.selected_idx)
    mover = _Mover(inst, current, budget, target, tol)
    moves = mover.run(reference)
    group_moves = 0
    while mover.settled and (taken := mover.to_reference_groups(reference)):
        # Another form of an experience the reference holds is closer than a memory of an
        # experience it does not touch (annotator QA: veg-to-pescatarian at budget 12, the
        # optimum kept e2:fact where an equal one keeps e5:fact, and the raw logger, which
        # holds e5:raw, was said to miss u:seat and to cover u:flight "in exchange").
        group_moves += taken
        moves += taken + mover.run(reference)
    result = tuple(sorted(current))
    if abs(evaluate(inst, result) - target) > tol or not inst.is_feasible(result, budget):
        return unchanged  # not reached when each step is right; exactness first
    best, ties, complete = _search_ties(inst, result, budget, target, tol, rank)
    settled = mover.settled
    if best != result and not complete:
        # The search stopped early: say "settled" only when no move applies from its pick.
        current = set(best)
        again = _Mover(inst, current, budget, target, tol)
        moves += again.run(reference)
        settled = again.settled
        best = tuple(sorted(current))
    if abs(evaluate(inst, best) - target) > tol or not inst.is_feasible(best, budget):
        best, ties = result, "partial"  # not reached; exactness first
    return EquivalentStore(
        best,
        blocks.moved,
        moves,
        shared,
        len(reference.intersection(best)),
        differences,
        len(reference.symmetric_difference(best)),
        settled or complete,
        group_moves,
        len(set(best) - set(result)),
        ties,
    )


class _TieRank:
    """The tie rule's key (module docstring, step 3) of stores, against one reference."""

    def __init__(self, inst: CompiledInstance, reference: set[int]) -> None:
        self.inst, self.reference = inst, reference
        self.ref_groups = {int(inst.group_idx[c]) for c in reference}
        # Comparing sorted positions by id rank is comparing the sorted id tuples.
        order = sorted(range(inst.n_candidates), key=lambda c: inst.candidate_ids[c])
        self.id_rank = np.empty(inst.n_candidates, dtype=np.int64)
        self.id_rank[order] = np.arange(inst.n_candidates)
        self.ref_mask = np.zeros(inst.n_candidates, dtype=bool)
        self.ref_mask[sorted(reference)] = True
        self.ref_group_mask = np.zeros(inst.n_groups, dtype=bool)
        self.ref_group_mask[sorted(self.ref_groups)] = True

    def key(self, sel: Sequence[int]) -> tuple:
        idx = np.asarray(sorted(sel), dtype=np.int64)
        shared = int(np.count_nonzero(self.ref_mask[idx]))
        touched = int(np.count_nonzero(self.ref_group_mask[np.unique(self.inst.group_idx[idx])]))
        cost = float(f"{self.inst.selection_cost(idx) if idx.size else 0.0:.12g}")
        return (
            len(self.reference) + idx.size - 2 * shared,
            -touched,
            cost,
            tuple(np.sort(self.id_rank[idx]).tolist()),
        )


def _finish(
    inst: CompiledInstance,
    start: tuple[int, ...],
    best: tuple[int, ...],
    reference: set[int],
    target: float,
    tol: float,
    budget: float,
    ties: str,
) -> EquivalentStore:
    shared = len(reference.intersection(start))
    differences = len(reference.symmetric_difference(start))
    if abs(evaluate(inst, best) - target) > tol or not inst.is_feasible(best, budget):
        best, ties = start, "partial"  # not reached: the enumeration checks both
    return EquivalentStore(
        best,
        0,
        0,
        shared,
        len(reference.intersection(best)),
        differences,
        len(reference.symmetric_difference(best)),
        True,
        0,
        len(set(best) - set(start)),
        ties,
    )


_TieTable = tuple[list[list[int]], np.ndarray, np.ndarray]
#: Per instance, the tables of its last :data:`TIE_TABLES_PER_INSTANCE` budgets: the Overview
#: explains every writer's store at one budget, and the table does not depend on the store.
#: Keyed by the budget and the limits in force (they decide whether a table is built); the
#: values depend on h, so a replaced saturation drops its instances' tables.
_TIE_TABLES: weakref.WeakKeyDictionary[
    CompiledInstance, OrderedDict[tuple[float, int, int], _TieTable | None]
]
_TIE_TABLES = instance_cache()
_TIE_TABLES_LOCK = threading.Lock()
TIE_TABLES_PER_INSTANCE = 4


def _tie_table(inst: CompiledInstance, budget: float) -> _TieTable | None:
    """Every store :func:`_fitting_stores` finds at ``budget``, with each one's cost and F
    (as NumPy sums: :func:`_enumerate_ties` checks its picks exactly); None when there are
    too many. Kept for the instance's last few budgets."""
    key = (budget, TIE_ENUM_MAX, TIE_ENUM_CELLS)
    with _TIE_TABLES_LOCK:
        tables = _TIE_TABLES.setdefault(inst, OrderedDict())
        if key in tables:
            tables.move_to_end(key)
            return tables[key]
    table = None
    combos = _fitting_stores(inst, budget, TIE_ENUM_MAX)
    # Too many, or few stores of very many units: the search is cheaper.
    if combos is not None and len(combos) * max(inst.n_units, 1) <= TIE_ENUM_CELLS:
        rows = np.repeat(np.arange(len(combos)), [len(c) for c in combos])
        cols = np.fromiter(itertools.chain.from_iterable(combos), dtype=np.int64, count=rows.size)
        pick = sparse.csr_matrix(
            (np.ones(rows.size), (rows, cols)), shape=(len(combos), inst.n_candidates)
        )
        cost = pick @ np.asarray(inst.cost, dtype=float)
        z = (pick @ inst.coverage).toarray()
        h = get_saturation(inst.saturation).h
        values = h(z) @ np.asarray(inst.weight, dtype=float)
        cost.setflags(write=False)
        values.setflags(write=False)
        table = (combos, cost, values)
    with _TIE_TABLES_LOCK:
        tables[key] = table
        while len(tables) > TIE_TABLES_PER_INSTANCE:
            tables.popitem(last=False)
    return table


def _enumerate_ties(
    inst: CompiledInstance, budget: float, target: float, tol: float, rank: _TieRank
) -> tuple[int, ...] | None:
    """The tie rule's pick among every store with F within ``tol`` of ``target`` that fits
    ``budget``; None when more than :data:`TIE_ENUM_MAX` stores fit (or their coverage cells
    exceed :data:`TIE_ENUM_CELLS`)."""
    table = _tie_table(inst, budget)
    if table is None:
        return None
    combos, cost, values = table
    b_eff = budget_with_tolerance(budget)
    near = np.flatnonzero((cost <= b_eff * (1 + 1e-12)) & (np.abs(values - target) <= 2 * tol))
    found = [
        tuple(sorted(combos[k]))
        for k in near.tolist()
        if abs(evaluate(inst, combos[k]) - target) <= tol and inst.is_feasible(combos[k], budget)
    ]
    if not found:
        return None  # not reached: the start itself is one of them
    return min(found, key=rank.key)


def _fitting_stores(inst: CompiledInstance, budget: float, cap: int) -> list[list[int]] | None:
    """Every store within the group limit whose running cost sum stays within the engines'
    :func:`~memaudit_core.compiled.search_limit` of the budget (a superset of those that fit;
    the caller checks each exactly), or None when there are more than ``cap``.

    Counted over the stores that fit, not over one memory or none per experience (QA s43: on
    travel-assistant at budget 20, 2,048 stores fit among 37.8 million combinations, most
    holding memories that cost more than B alone, so no optimum was compared with any other
    two exchanges away). Memories are tried cheapest first, so a branch stops at the first
    that does not fit and the work grows with the stores found, not with the package.
    """
    limit = budget_with_tolerance(budget)
    cost = np.asarray(inst.cost, dtype=float)
    alone = [c for c in range(inst.n_candidates) if fits_limit([cost[c]], limit)]
    items = sorted(alone, key=lambda c: (cost[c], c))
    bound = search_limit(limit, len(items))
    group = inst.group_idx
    if _surely_more_than(items, cost, group, inst.group_capacity, bound, cap):
        return None
    count = np.zeros(inst.n_groups, dtype=np.int64)
    stores: list[list[int]] = [[]]
    chosen: list[int] = []

    # Depth first with an explicit stack: a branch is as deep as its store is large, and a
    # recursion hit Python's limit of 1,000 frames on a 15,000-experience event graph whose
    # cheapest memories fit by the thousand (QA s43). Frame j holds the next memory to try
    # and the cost spent by the j memories chosen above it.
    frames: list[list[float]] = [[0, 0.0]]
    while frames:
        frame = frames[-1]
        k, spent = int(frame[0]), frame[1]
        if k >= len(items) or spent + cost[items[k]] > bound:
            # Every later memory costs at least as much: this branch is done.
            frames.pop()
            if chosen:
                c = chosen.pop()
                count[group[c]] -= 1
            continue
        frame[0] = k + 1
        c = items[k]
        if count[group[c]] >= inst.group_capacity:
            continue
        chosen.append(c)
        count[group[c]] += 1
        stores.append(sorted(chosen))
        if len(stores) > cap:
            return None
        frames.append([k + 1, spent + cost[c]])
    return stores


def _surely_more_than(
    items: Sequence[int],
    cost: np.ndarray,
    group: np.ndarray,
    capacity: int,
    bound: float,
    cap: int,
) -> bool:
    """Whether :func:`_fitting_stores` would find more than ``cap`` stores, decided from its
    first branch alone: the memories that branch takes (cheapest first, each that fits the
    running sum and its group's limit) form a store whose every subset the search also
    reaches, so there are at least 2**k stores for k memories taken.

    The same float sums in the same order as the search (adding costs of at least 0 never
    lowers a rounded sum, so no subset's running sum exceeds the branch's), so the answer is
    the search's own: on the Compare page's event graph the search built 4,097 stores, 15 ms
    of each budget change, only to give up.
    """
    need = max(cap, 0).bit_length()  # the least k with 2**k > cap
    taken: dict[int, int] = {}
    spent = 0.0
    k = 0
    for c in items:
        if spent + cost[c] > bound:
            return False  # the branch ends here: fewer memories than needed were taken
        g = int(group[c])
        if taken.get(g, 0) >= capacity:
            continue
        taken[g] = taken.get(g, 0) + 1
        spent = spent + cost[c]
        k += 1
        if k >= need:
            return True
    return False


def _search_ties(
    inst: CompiledInstance,
    start: tuple[int, ...],
    budget: float,
    target: float,
    tol: float,
    rank: _TieRank,
) -> tuple[tuple[int, ...], str, bool]:
    """Best first over the stores reached from ``start`` by single exchanges, drops and
    additions that keep F, fit the budget and add no difference with the reference; returns
    the tie rule's pick, what was compared (``"connected"`` or ``"partial"``) and whether
    the search ran out of stores (not stopped by a limit)."""
    best_key = rank.key(start)
    heap: list[tuple[tuple, tuple[int, ...]]] = [(best_key, start)]
    seen = {start}
    best = start
    expanded = 0
    budget_left = TIE_MAX_PAIRS
    complete = True
    while heap:
        if expanded >= TIE_MAX_STATES or budget_left <= 0:
            complete = False
            break
        key, state = heapq.heappop(heap)
        if state != start and (
            abs(evaluate(inst, state) - target) > tol or not inst.is_feasible(state, budget)
        ):
            continue  # its F change was right only up to the prefilter's 2 tol
        expanded += 1
        if key < best_key:
            best, best_key = state, key
        found, whole, tried = _tie_neighbours(inst, state, budget, target, tol, rank, budget_left)
        budget_left -= tried
        complete = complete and whole
        for nxt_key, nxt in found:
            if nxt not in seen:
                seen.add(nxt)
                heapq.heappush(heap, (nxt_key, nxt))
    return best, ("connected" if complete else "partial"), complete


def _tie_neighbours(
    inst: CompiledInstance,
    state: tuple[int, ...],
    budget: float,
    target: float,
    tol: float,
    rank: _TieRank,
    max_pairs: int,
) -> tuple[list[tuple[tuple, tuple[int, ...]]], bool, int]:
    """The stores one move from ``state`` whose F change (prefiltered within 2 tol) keeps F,
    that fit the budget and the group limit and are no further from the reference, with their
    keys: the :data:`TIE_MAX_STATES` best (no other could be expanded before the search
    stops). The flag is False when some were left out or there were more than ``max_pairs``
    moves to try; the count is the moves tried."""
    reference = rank.reference
    group = inst.group_idx
    current = set(state)
    mover = _Mover(inst, set(current), budget, target, tol)
    only = np.array(sorted(current - reference), dtype=np.int64)
    common = np.array(sorted(current & reference), dtype=np.int64)
    missing = np.array(sorted(reference - current), dtype=np.int64)
    others = np.setdiff1d(
        np.arange(inst.n_candidates, dtype=np.int64), np.array(sorted(current | reference))
    )
    # Moves that add no difference: exchange a shared memory for one the reference holds
    # (differences kept), one it lacks for one it holds (two fewer) or for any other (kept);
    # drop one it lacks, add one it holds (one fewer each).
    pairs = [(missing, common, 0), (missing, only, -2), (others, only, 0)]
    tried = sum(a.size * b.size for a, b, _ in pairs) + only.size + missing.size
    if tried > min(max_pairs, MAX_EXCHANGE_PAIRS):
        return [], False, 0
    empty = np.zeros(0, dtype=np.int64)
    drops: list[np.ndarray] = []
    adds: list[np.ndarray] = []
    change: list[np.ndarray] = []
    for ins, outs, step in pairs:
        if ins.size == 0 or outs.size == 0:
            continue
        _, _, pair = mover._deltas(ins, outs)
        s_pos, o_pos = np.nonzero(np.abs(mover.value + pair - target) <= 2 * tol)
        adds.append(ins[s_pos])
        drops.append(outs[o_pos])
        change.append(np.full(s_pos.size, step))
    if only.size:
        _, drop_delta, _ = mover._deltas(empty, only)
        keep = only[np.abs(mover.value + drop_delta - target) <= 2 * tol]
        adds.append(np.full(keep.size, -1))
        drops.append(keep)
        change.append(np.full(keep.size, -1))
    if missing.size:
        gain, _, _ = mover._deltas(missing, empty)
        keep = missing[np.abs(mover.value + gain - target) <= 2 * tol]
        adds.append(keep)
        drops.append(np.full(keep.size, -1))
        change.append(np.full(keep.size, -1))
    if not adds:
        return [], True, tried
    add, drop, diff = (np.concatenate(x).astype(np.int64) for x in (adds, drops, change))
    has_add, has_drop = add >= 0, drop >= 0
    cost = np.asarray(inst.cost, dtype=float)
    new_cost = mover.cost + np.where(has_add, cost[add], 0.0) - np.where(has_drop, cost[drop], 0.0)
    g_add, g_drop = group[np.maximum(add, 0)], group[np.maximum(drop, 0)]
    frees = has_add & has_drop & (g_add == g_drop)
    fits = new_cost <= budget_with_tolerance(budget) * (1 + 1e-12)
    fits &= ~has_add | frees | (mover.group_count[g_add] < inst.group_capacity)
    in_ref = rank.ref_group_mask
    # Touched reference experiences: one lost when a drop empties one, one gained when an
    # addition opens one (none either way when both are in the same experience).
    lost = has_drop & ~frees & in_ref[g_drop] & (mover.group_count[g_drop] == 1)
    gained = has_add & ~frees & in_ref[g_add] & (mover.group_count[g_add] == 0)
    touched = gained.astype(np.int64) - lost.astype(np.int64)
    ok = np.flatnonzero(fits)
    if ok.size == 0:
        return [], True, tried
    # The key of every move, vectorised (ids as the padded, sorted id ranks of the store),
    # then exact keys for the best few: only TIE_MAX_STATES stores are ever expanded.
    state_arr = np.asarray(state, dtype=np.int64)
    n_pad = inst.n_candidates  # after every rank: a shorter store sorts after a longer one
    ranks = np.tile(np.append(rank.id_rank[state_arr], n_pad), (ok.size, 1))
    pos = {c: k for k, c in enumerate(state)}
    drop_at = np.array([pos.get(int(c), state_arr.size) for c in drop[ok].tolist()])
    ranks[np.arange(ok.size), drop_at] = n_pad
    ranks[:, -1] = np.where(add[ok] >= 0, rank.id_rank[np.maximum(add[ok], 0)], n_pad)
    ranks.sort(axis=1)
    cost_key = np.round(new_cost[ok], 9)
    order = np.lexsort((*ranks.T[::-1], cost_key, -touched[ok], diff[ok]))
    whole = ok.size <= TIE_MAX_STATES
    found = []
    for k in ok[order[:TIE_MAX_STATES]].tolist():
        trial = set(current)
        if drop[k] >= 0:
            trial.discard(int(drop[k]))
        if add[k] >= 0:
            trial.add(int(add[k]))
        nxt = tuple(sorted(trial))
        found.append((rank.key(nxt), nxt))
    found.sort()
    return found[:TIE_MAX_STATES], whole, tried


def _entries(inst: CompiledInstance, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """(row position in ``rows``, unit, amount) of every coverage entry of ``rows``, in the
    order of ``inst.coverage[rows].tocoo()``, gathered directly (scipy's row indexing was a
    third of the Overview's tie search on event-graph-50)."""
    cov = inst.coverage
    pos, lens = entry_positions(cov.indptr, rows)
    return np.repeat(np.arange(rows.size), lens), cov.indices[pos], cov.data[pos]


#: At most this many (added entry, dropped entry) pairs are corrected in one vectorised pass
#: of the exchange deltas (a unit's block alone is at most MAX_EXCHANGE_PAIRS): memories that
#: cover hundreds of shared units would otherwise list millions at once.
SHARED_PAIRS_PER_PASS = 1_000_000


def _shared_entry_pairs(
    in_col: np.ndarray, out_col: np.ndarray, max_pairs: int | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every (added entry, dropped entry) pair on the same unit: their positions in
    ``in_col`` / ``out_col`` and the unit, ordered by unit, then added entry, then dropped entry
    (a per-unit loop over ``np.ix_`` blocks was half of the Overview's tie search). Yielded in
    passes of whole units, at most ``max_pairs`` pairs each unless one unit has more.

    >>> [tuple(a.tolist() for a in p)
    ...  for p in _shared_entry_pairs(np.array([4, 7, 4]), np.array([7, 4, 9, 7]))]
    [([0, 2, 1, 1], [1, 1, 0, 3], [4, 4, 7, 7])]
    >>> len(list(_shared_entry_pairs(np.array([4, 7, 4]), np.array([7, 4, 9, 7]), 2)))
    2
    """
    max_pairs = SHARED_PAIRS_PER_PASS if max_pairs is None else max_pairs
    shared = np.intersect1d(in_col, out_col)
    in_sel = np.flatnonzero(np.isin(in_col, shared))
    out_sel = np.flatnonzero(np.isin(out_col, shared))
    in_sel = in_sel[np.argsort(in_col[in_sel], kind="stable")]
    out_sel = out_sel[np.argsort(out_col[out_sel], kind="stable")]
    n_in = np.bincount(np.searchsorted(shared, in_col[in_sel]), minlength=shared.size)
    n_out = np.bincount(np.searchsorted(shared, out_col[out_sel]), minlength=shared.size)
    in_first = np.cumsum(n_in) - n_in
    out_first = np.cumsum(n_out) - n_out
    per_unit = n_in * n_out
    done = np.cumsum(per_unit)  # pairs up to and including each unit
    start = 0
    while start < shared.size:
        before = done[start] - per_unit[start]
        stop = max(start + 1, int(np.searchsorted(done, before + max_pairs, side="right")))
        per = per_unit[start:stop]
        k = start + np.repeat(np.arange(per.size), per)
        local = np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
        in_at = in_sel[in_first[k] + local // n_out[k]]
        out_at = out_sel[out_first[k] + local % n_out[k]]
        yield in_at, out_at, shared[k]
        start = stop


class _Mover:
    """Single moves on ``current`` (changed in place) that keep F within ``tol`` of ``target``."""

    def __init__(
        self, inst: CompiledInstance, current: set[int], budget: float, target: float, tol: float
    ) -> None:
        self.inst, self.current, self.target, self.tol = inst, current, target, tol
        self.h = get_saturation(inst.saturation).h
        self.z = coverage_of(inst, sorted(current))
        self.value = evaluate(inst, sorted(current))
        self.cost = inst.selection_cost(sorted(current))
        self.b_eff = budget_with_tolerance(budget)
        self.group_count = np.bincount(
            inst.group_idx[sorted(current)], minlength=inst.n_groups
        ).astype(np.int64)
        self.settled = False  # set when a round finds no move left to take

    def _row(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        cov = self.inst.coverage
        lo, hi = cov.indptr[c], cov.indptr[c + 1]
        return cov.indices[lo:hi], cov.data[lo:hi]

    def _try(self, drop: int | None, add: int | None) -> bool:
        """Apply the move (drop and/or add one memory) if it is allowed and keeps F."""
        inst = self.inst
        cost = self.cost - (inst.cost[drop] if drop is not None else 0.0)
        cost += inst.cost[add] if add is not None else 0.0
        if cost > self.b_eff:
            return False
        if add is not None:
            g_add = int(inst.group_idx[add])
            frees = drop is not None and int(inst.group_idx[drop]) == g_add
            if not frees and self.group_count[g_add] >= inst.group_capacity:
                return False
        rows = [(self._row(c), sign) for c, sign in ((drop, -1.0), (add, 1.0)) if c is not None]
        units = np.unique(np.concatenate([r[0] for r, _ in rows]))
        z_before = self.z[units]
        z_after = z_before.copy()
        for (row_units, amounts), sign in rows:
            z_after[np.searchsorted(units, row_units)] += sign * amounts
        delta = float(self.inst.weight[units] @ (self.h(z_after) - self.h(z_before)))
        if abs(self.value + delta - self.target) > 2 * self.tol:
            return False
        trial = (self.current - {drop}) | ({add} if add is not None else set())
        new_value = evaluate(inst, sorted(trial))  # the move is taken on the full F only
        if abs(new_value - self.target) > self.tol:
            return False
        for c, sign in ((drop, -1), (add, 1)):
            if c is not None:
                self.group_count[int(inst.group_idx[c])] += sign
        self.current.clear()
        self.current.update(trial)
        self.z[units] = z_after
        self.value = new_value
        self.cost = inst.selection_cost(sorted(trial))
        return True

    def _deltas(self, ins: np.ndarray, outs: np.ndarray) -> tuple[np.ndarray, ...]:
        """F's change for adding each of ``ins`` (gain), dropping each of ``outs`` (-loss), and
        exchanging each pair (a matrix: disjoint supports add, shared units corrected)."""
        inst, h, z, w = self.inst, self.h, self.z, self.inst.weight
        in_row, in_col, in_amt = _entries(inst, ins)
        out_row, out_col, out_amt = _entries(inst, outs)
        gain = np.bincount(in_row, w[in_col] * (h(z[in_col] + in_amt) - h(z[in_col])), ins.size)
        loss = np.bincount(
            out_row, w[out_col] * (h(z[out_col]) - h(z[out_col] - out_amt)), outs.size
        )
        pair = gain[:, None] - loss[None, :]
        # Pairs come unit by unit, so each cell sums its units' corrections in unit order.
        for in_at, out_at, unit in _shared_entry_pairs(in_col, out_col):
            s_amt, o_amt, z_u = in_amt[in_at], out_amt[out_at], z[unit]
            correction = h(z_u - o_amt + s_amt) - h(z_u + s_amt) - h(z_u - o_amt) + h(z_u)
            np.add.at(pair, (in_row[in_at], out_row[out_at]), w[unit] * correction)
        return gain, -loss, pair

    def to_reference_groups(self, reference: set[int]) -> int:
        """Exchanges of a memory whose experience the reference does not touch for a form of
        an experience the reference holds and ``current`` does not; F kept. Returns how many
        were taken. Each takes one more of the reference's experiences, so rounds end."""
        group = self.inst.group_idx
        ref_groups = {int(group[c]) for c in reference}
        cur_groups = {int(group[c]) for c in self.current}
        outs = np.array(
            sorted(c for c in self.current - reference if int(group[c]) not in ref_groups),
            dtype=np.int64,
        )
        open_groups = np.array(sorted(ref_groups - cur_groups), dtype=np.int64)
        if outs.size == 0 or open_groups.size == 0:
            return 0
        ins = np.flatnonzero(np.isin(group, open_groups)).astype(np.int64)
        if ins.size * outs.size > MAX_EXCHANGE_PAIRS:
            return 0
        _, _, pair = self._deltas(ins, outs)
        s_pos, o_pos = np.nonzero(np.abs(self.value + pair - self.target) <= 2 * self.tol)
        taken = 0
        for k in np.lexsort((o_pos, s_pos)).tolist():
            s, o = int(ins[s_pos[k]]), int(outs[o_pos[k]])
            # s's experience still open (an earlier exchange this round may have filled it).
            if o in self.current and self.group_count[group[s]] == 0 and self._try(o, s):
                taken += 1
        return taken

    def run(self, reference: set[int]) -> int:
        """Rounds of moves until none applies: exchanges, then drops, then additions.

        Each round lists the moves whose F change (from the current coverage) keeps F; each is
        taken if it still does when its turn comes (checked on the full F). Returns the number
        taken.
        """
        group = self.inst.group_idx
        done = 0
        self.settled = False
        while True:
            ins = np.array(sorted(reference - self.current), dtype=np.int64)
            outs = np.array(sorted(self.current - reference), dtype=np.int64)
            if ins.size == 0 and outs.size == 0:
                self.settled = True
                return done
            if ins.size * outs.size > MAX_EXCHANGE_PAIRS:
                return done
            gain, drop_delta, pair = self._deltas(ins, outs)
            keeps = np.abs(self.value + pair - self.target) <= 2 * self.tol
            s_pos, o_pos = np.nonzero(keeps)
            # Same experience first: another form of the same memory is the closest exchange.
            order = np.lexsort((o_pos, s_pos, group[ins[s_pos]] != group[outs[o_pos]]))
            taken = 0
            for k in order.tolist():
                s, o = int(ins[s_pos[k]]), int(outs[o_pos[k]])
                if s not in self.current and o in self.current and self._try(o, s):
                    taken += 1
            for o_k in np.flatnonzero(
                np.abs(self.value + drop_delta - self.target) <= 2 * self.tol
            ):
                o = int(outs[o_k])
                if o in self.current and self._try(o, None):
                    taken += 1
            for s_k in np.flatnonzero(np.abs(self.value + gain - self.target) <= 2 * self.tol):
                s = int(ins[s_k])
                if s not in self.current and self._try(None, s):
                    taken += 1
            if taken == 0:
                self.settled = True
                return done
            done += taken


__all__ = [
    "MAX_EXCHANGE_PAIRS",
    "REL_TOL",
    "TIE_ENUM_CELLS",
    "TIE_ENUM_MAX",
    "TIE_MAX_PAIRS",
    "TIE_MAX_STATES",
    "EquivalentStore",
    "closest_equivalent",
]
