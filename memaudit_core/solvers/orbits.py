"""Interchangeable blocks: the MILP over counts of identical pieces of a package.

Packages often repeat one structure many times: redundancy_heavy with 300 experiences is 150
pairs of notes of six kinds, each pair sharing a context unit and every note the core fact.
HiGHS on the 0/1 model must then separate stores that differ only in which copy they took, and
with an odd budget over even costs that is a parity argument its tree does not make: at budget
25 it had not closed a 2.4% gap after 60 s. Counting how many copies of each block take each
configuration removes that symmetry, and the same instance is proven optimal in 0.01 s
(``bench/RESULTS.md``, issue 7, twenty-sixth session).

Blocks are the connected components of groups joined by units that at most ``H`` groups cover
(a block's *private* units); units covered by more groups are *hubs*. ``H`` is the largest
value whose blocks have at most :data:`MAX_BLOCK_CONFIGS` configurations each (one option or
none per group) and number at least :data:`MIN_BLOCKS`. F of a store is the sum over blocks of
the value of the block's private units plus the hub terms, which depend on hub coverage summed
over blocks; a store's cost is the sum of its blocks' costs. So F and cost depend only on each
block's configuration, and blocks with equal configuration tables can be counted instead of
told apart.

Two blocks are put in one class only when their canonical descriptions are equal: every
affordable candidate's cost and every coverage entry (hub units by index, private units
relabelled in order of first appearance, with their weights), groups and candidates in a
sorted order. Equal descriptions define an isomorphism that keeps costs, weights and coverage,
hence equal configuration tables. Isomorphic blocks whose descriptions differ (ties in the
order) only stay apart: aggregation is lost, never exactness.

The model over counts, for classes ``k`` with ``m_k`` blocks and kept configurations ``c``::

    max  sum_{k,c} v_kc n_kc + sum_h w_h y_h
    s.t. y_h - sum_{k,c} a_kch n_kc <= 0      for every hub unit h (cap1)
         sum_{k,c} c_kc n_kc         <= B     (the knapsack row, as in the 0/1 model)
         sum_c n_kc                  <= m_k   for every class k
         n_kc integer >= 0, 0 <= y_h <= 1

Configurations that cost more than the budget are dropped, and among configurations with the
same hub coverage only those of strictly more private value at more cost are kept. It is used
only when the classes number at most :data:`MAX_CLASS_SHARE` of the blocks and the model has
at most :data:`MAX_COUNT_COLUMNS` count columns: weakly repeating packages make count models
HiGHS solves slower than the 0/1 one. Order-independent hashes of groups (blind to unit
identity) and of blocks reject packages without repeats in milliseconds, before any block is
described.

Examples
--------
>>> from memaudit_core.generators import generate
>>> from memaudit_core.compiled import compile_package
>>> pkg = generate("redundancy_heavy", seed=0, n_experiences=60)
>>> agg = aggregate(compile_package(pkg), 25)
>>> agg.n_blocks, agg.n_classes, agg.n_hubs
(30, 6, 1)
"""

from __future__ import annotations

import itertools
import math
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..compiled import CompiledInstance, budget_with_tolerance
from ..objective import evaluate, get_saturation
from ..saturation_caches import instance_cache
from . import value_unit

#: A block may have at most this many configurations (product over its groups of options + 1).
MAX_BLOCK_CONFIGS = 256
#: Aggregate only when the classes number at most this share of the blocks. A weakly
#: repeating package makes a count model HiGHS solves slower than the 0/1 one: a
#: 20,000-experience event graph at budget 10 has 8,494 classes of 18,530 one-group blocks, and
#: its count model was not solved in 60 s where the 0/1 model takes 15 s.
MAX_CLASS_SHARE = 0.2
#: ... and the count model has at most this many count columns.
MAX_COUNT_COLUMNS = 5000
#: ... and there are at least this many blocks.
MIN_BLOCKS = 4


@dataclass(frozen=True)
class Aggregation:
    """The count model of a package at one budget and how to read a store back from it.

    ``model`` has the layout of :func:`memaudit_core.solvers.milp.build_model` (count columns
    first, then one y column per hub unit under cap1) without ``presolve_rule_off``.
    ``members[k]`` lists class ``k``'s blocks, each as its groups' candidate positions in the
    canonical order; ``columns[j]`` is (class, option position per group, -1 for none).
    """

    model: dict = field(repr=False)
    members: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = field(repr=False)
    columns: tuple[tuple[int, tuple[int, ...]], ...] = field(repr=False)
    n_blocks: int
    n_hubs: int
    hub_threshold: int

    @property
    def n_classes(self) -> int:
        return len(self.members)

    def expand(self, counts: np.ndarray) -> tuple[int, ...]:
        """The store whose blocks take the configurations the counts say, first blocks first."""
        used = [0] * len(self.members)
        chosen: list[int] = []
        for j, (k, options) in enumerate(self.columns):
            n = int(round(float(counts[j])))
            for block in self.members[k][used[k] : used[k] + n]:
                chosen.extend(block[g][o] for g, o in enumerate(options) if o >= 0)
            used[k] += n
        return tuple(sorted(chosen))

    def summary(self) -> dict:
        return {
            "blocks": self.n_blocks,
            "classes": self.n_classes,
            "hub_units": self.n_hubs,
            "hub_threshold": self.hub_threshold,
            "count_columns": self.model["n_x"],
        }


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 (wrapping arithmetic)."""
    x = x.astype(np.uint64, copy=True)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _distinct(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (by sorting: numpy's hash-based unique took 0.2 s on 80,000)."""
    a = np.sort(a, kind="stable")
    return a[np.concatenate([[True], a[1:] != a[:-1]])] if a.size else a


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def _block_labels(
    n_groups: int, pair_unit: np.ndarray, pair_group: np.ndarray, hub_mask: np.ndarray
) -> np.ndarray:
    """Component of each group, groups joined by non-hub units (unit u is node n_groups + u)."""
    from scipy.sparse.csgraph import connected_components  # 0.09 s to import: when needed

    keep = ~hub_mask[pair_unit]
    n_units = hub_mask.size
    graph = sp.coo_array(
        (np.ones(int(keep.sum())), (pair_group[keep], n_groups + pair_unit[keep])),
        shape=(n_groups + n_units, n_groups + n_units),
    )
    _, labels = connected_components(graph, directed=False)
    return labels[:n_groups]


def _find_blocks(
    inst: CompiledInstance, cand: np.ndarray, entry_cand: np.ndarray, entry_unit: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(hub mask over units, block label per group, H), or None when no H fits the cap."""
    n_groups = inst.n_groups
    groups_of_entry = inst.group_idx[cand[entry_cand]]
    pairs = _distinct(entry_unit.astype(np.int64) * n_groups + groups_of_entry)
    pair_unit, pair_group = pairs // n_groups, pairs % n_groups
    groups_per_unit = np.bincount(pair_unit, minlength=inst.n_units)
    options = np.bincount(inst.group_idx[cand], minlength=n_groups)
    log_configs = np.log(options + 1.0)
    cap = math.log(MAX_BLOCK_CONFIGS) + 1e-9

    def fits(h: int) -> tuple[np.ndarray, np.ndarray] | None:
        hub_mask = groups_per_unit > h
        labels = _block_labels(n_groups, pair_unit, pair_group, hub_mask)
        per_block = np.bincount(labels, weights=log_configs)
        # Blocks with an affordable option (log(options + 1) > 0); too few to count: no use.
        enough = np.count_nonzero(per_block > 0) >= MIN_BLOCKS
        return (hub_mask, labels) if per_block.max() <= cap and enough else None

    thresholds = _distinct(np.concatenate([[1], groups_per_unit[groups_per_unit >= 2]]))
    lo, hi, best = 0, thresholds.size - 1, None
    while lo <= hi:  # the largest threshold that fits: blocks only grow and merge with it
        mid = (lo + hi) // 2
        found = fits(int(thresholds[mid]))
        if found is None:
            hi = mid - 1
        else:
            best, lo = (*found, int(thresholds[mid])), mid + 1
    return best


def _describe(
    inst: CompiledInstance,
    groups: list[int],
    cand_of_group: dict[int, list[int]],
    entries: dict[int, list[tuple[int, float]]],
    hub_mask: np.ndarray,
) -> tuple[tuple, tuple[tuple[int, ...], ...], list[float]]:
    """(canonical description, candidates per group in its order, private weights by label)."""
    weight = inst.weight
    if len(groups) == 1 and len(cand_of_group[groups[0]]) == 1:
        # One group of one candidate (every memory of a store is one): the steps below with
        # nothing to order. Sorting (key, unit, cov) is sorting by (key, unit), as below: equal
        # keys are equal entries.
        (c,) = cand_of_group[groups[0]]
        labels: dict[int, int] = {}
        label_weight: list[float] = []
        entry_desc = []
        keyed = sorted(
            ((0, u, 0.0, a) if hub_mask[u] else (1, 0, float(weight[u]), a), u, a)
            for u, a in entries[c]
        )
        for key, unit, cov in keyed:
            if key[0] == 0:
                entry_desc.append(key)
                continue
            if unit not in labels:
                labels[unit] = len(labels)
                label_weight.append(key[2])
            entry_desc.append((1, labels[unit], key[2], cov))
        return (((float(inst.cost[c]), tuple(entry_desc)),),), ((c,),), label_weight

    def entry_key(unit: int, cov: float) -> tuple:
        return (0, unit, 0.0, cov) if hub_mask[unit] else (1, 0, float(weight[unit]), cov)

    cand_key = {
        c: (float(inst.cost[c]), tuple(sorted(entry_key(u, a) for u, a in entries[c])))
        for g in groups
        for c in cand_of_group[g]
    }
    ordered = []
    for g in groups:
        cands = sorted(cand_of_group[g], key=lambda c: (cand_key[c], c))
        ordered.append((tuple(cand_key[c] for c in cands), g, tuple(cands)))
    ordered.sort()
    labels: dict[int, int] = {}
    label_weight: list[float] = []
    desc = []
    for _, _, cands in ordered:
        group_desc = []
        for c in cands:
            entry_desc = []
            for unit, cov in sorted(entries[c], key=lambda e: (entry_key(*e), e[0])):
                if hub_mask[unit]:
                    entry_desc.append((0, unit, 0.0, cov))
                    continue
                if unit not in labels:
                    labels[unit] = len(labels)
                    label_weight.append(float(weight[unit]))
                entry_desc.append((1, labels[unit], float(weight[unit]), cov))
            group_desc.append((float(inst.cost[c]), tuple(entry_desc)))
        desc.append(tuple(group_desc))
    return tuple(desc), tuple(cands for _, _, cands in ordered), label_weight


def _configurations(
    inst: CompiledInstance,
    block: tuple[tuple[int, ...], ...],
    entries: dict[int, list[tuple[int, float]]],
    hub_mask: np.ndarray,
    b_eff: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(options per configuration, cost, private value, hub units, hub coverage per config).

    Only affordable configurations that no other one with the same hub coverage dominates
    (at most the cost, at least the value), without the empty one.
    """
    private: dict[int, None] = {}  # insertion-ordered sets
    hubs: dict[int, None] = {}
    for cands in block:
        for c in cands:
            for unit, _ in entries[c]:
                (hubs if hub_mask[unit] else private)[unit] = None
    cols = {u: i for i, u in enumerate([*private, *hubs])}
    width = len(cols)
    per_group = []
    for cands in block:
        vec = np.zeros((len(cands) + 1, width))
        cost = np.zeros(len(cands) + 1)
        for o, c in enumerate(cands, start=1):
            cost[o] = inst.cost[c]
            for unit, cov in entries[c]:
                vec[o, cols[unit]] += cov
        per_group.append((vec, cost))
    choice = np.array(list(itertools.product(*(range(len(c) + 1) for c in block))), dtype=int)
    total = np.zeros((choice.shape[0], width))
    cost = np.zeros(choice.shape[0])
    for g, (vec, c) in enumerate(per_group):
        total += vec[choice[:, g]]
        cost += c[choice[:, g]]
    priv_cols = [cols[u] for u in private]
    hub_cols = [cols[u] for u in hubs]
    h = get_saturation(inst.saturation).h
    value = (
        h(total[:, priv_cols]) @ inst.weight[list(private)] if priv_cols else np.zeros(cost.size)
    )
    hub_cov = total[:, hub_cols]
    keep = []
    best: dict[bytes, float] = {}
    for i in np.lexsort((-value, cost)):
        if cost[i] > b_eff:
            continue
        key = hub_cov[i].tobytes()
        if value[i] > best.get(key, 0.0 if not hub_cov[i].any() else -1.0):
            best[key] = value[i]
            keep.append(i)
    keep = np.array(sorted(keep), dtype=int)
    return choice[keep] - 1, cost[keep], value[keep], np.array(list(hubs), dtype=int), hub_cov[keep]


@dataclass(frozen=True)
class _Classes:
    """Blocks of a package sorted into classes of equal canonical description."""

    classes: list[list[tuple[tuple[int, ...], ...]]]
    hub_mask: np.ndarray
    entries: dict[int, list[tuple[int, float]]]
    n_blocks: int
    threshold: int


def _classes(inst: CompiledInstance, cand: np.ndarray, share: float) -> _Classes | None:
    """Blocks of the candidates ``cand`` in classes, or None when classes exceed ``share`` of
    the blocks or no two blocks are alike."""
    sub = sp.csr_array(inst.coverage[cand])
    entry_cand = np.repeat(np.arange(cand.size), np.diff(sub.indptr))
    entry_unit = sub.indices.astype(np.int64)
    entry_cov = sub.data
    useful = inst.weight[entry_unit] > 0
    entry_cand, entry_unit, entry_cov = entry_cand[useful], entry_unit[useful], entry_cov[useful]
    # Blocks repeat only if groups do: a group hash blind to unit identity (weights and
    # coverage only) must have a twin for most groups, or block finding is not worth its cost.
    blind = _mix(_mix(_bits(inst.weight[entry_unit])) ^ _mix(_bits(entry_cov)))
    cand_blind = np.zeros(cand.size, dtype=np.uint64)
    np.add.at(cand_blind, entry_cand, blind)
    cand_blind = _mix(cand_blind ^ _mix(_bits(inst.cost[cand])))
    group_blind = np.zeros(inst.n_groups, dtype=np.uint64)
    np.add.at(group_blind, inst.group_idx[cand], cand_blind)
    group_blind = np.sort(
        group_blind[np.bincount(inst.group_idx[cand], minlength=inst.n_groups) > 0]
    )
    twin = np.zeros(group_blind.size, dtype=bool)
    same = group_blind[1:] == group_blind[:-1]
    twin[1:] |= same
    twin[:-1] |= same
    if not twin.any() or twin.mean() < 1.0 - share:
        return None
    found = _find_blocks(inst, cand, entry_cand, entry_unit)
    if found is None:
        return None
    hub_mask, labels, threshold = found
    active = np.bincount(inst.group_idx[cand], minlength=inst.n_groups) > 0
    present = np.zeros(labels.max() + 1, dtype=bool)
    present[labels[active]] = True
    block_of_group = (np.cumsum(present) - 1)[labels[active]]
    n_blocks = int(present.sum())
    if n_blocks < MIN_BLOCKS:
        return None
    # An order-independent hash per block: equal descriptions give equal hashes, so few
    # distinct hashes is necessary for few classes, and costs no Python loop over entries.
    unit_key = np.where(
        hub_mask,
        _mix(np.arange(inst.n_units, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)),
        _mix(_bits(inst.weight)),
    )
    entry_hash = _mix(unit_key[entry_unit] ^ _mix(_bits(entry_cov)))
    cand_hash = np.zeros(cand.size, dtype=np.uint64)
    np.add.at(cand_hash, entry_cand, entry_hash)
    cand_hash = _mix(cand_hash ^ _mix(_bits(inst.cost[cand])))
    group_hash = np.zeros(inst.n_groups, dtype=np.uint64)
    np.add.at(group_hash, inst.group_idx[cand], cand_hash)
    block_hash = np.zeros(n_blocks, dtype=np.uint64)
    np.add.at(block_hash, block_of_group, _mix(group_hash[active]))
    n_hashes = _distinct(block_hash).size
    if n_hashes > share * n_blocks or n_hashes == n_blocks:
        return None

    cand_of_group: dict[int, list[int]] = {}
    for c in cand.tolist():
        cand_of_group.setdefault(int(inst.group_idx[c]), []).append(c)
    entries: dict[int, list[tuple[int, float]]] = {int(c): [] for c in cand}
    for c, u, a in zip(
        cand[entry_cand].tolist(), entry_unit.tolist(), entry_cov.tolist(), strict=True
    ):
        entries[c].append((u, a))
    groups_of_block: list[list[int]] = [[] for _ in range(n_blocks)]
    for g, b in zip(np.flatnonzero(active).tolist(), block_of_group.tolist(), strict=True):
        groups_of_block[b].append(g)
    classes: dict[tuple, list[tuple[tuple[int, ...], ...]]] = {}
    for groups in groups_of_block:
        desc, block, _ = _describe(inst, groups, cand_of_group, entries, hub_mask)
        classes.setdefault(desc, []).append(block)
    if len(classes) > share * n_blocks or len(classes) == n_blocks:
        return None
    return _Classes(list(classes.values()), hub_mask, entries, n_blocks, threshold)


def aggregate(inst: CompiledInstance, budget: float) -> Aggregation | None:
    """The count model when the package repeats blocks enough to pay, else None.

    Parameters
    ----------
    inst : CompiledInstance
        Saturation ``cap1`` or ``linear`` and one candidate per group; None otherwise.
    budget : float

    Returns
    -------
    Aggregation or None
    """
    if inst.group_capacity != 1 or inst.saturation not in ("cap1", "linear") or budget <= 0:
        return None
    b_eff = budget_with_tolerance(budget)
    cand = np.flatnonzero(inst.cost <= b_eff)
    if cand.size == 0:
        return None
    found = _classes(inst, cand, MAX_CLASS_SHARE)
    if found is None:
        return None
    hub_mask, entries, n_blocks, threshold = (
        found.hub_mask,
        found.entries,
        found.n_blocks,
        found.threshold,
    )
    classes = found.classes
    members = tuple(tuple(blocks) for blocks in classes)
    hub_units = np.flatnonzero(hub_mask & (inst.weight > 0))
    hub_row = np.full(inst.n_units, -1)
    linear = inst.saturation == "linear"
    n_hub = 0 if linear else hub_units.size
    hub_row[hub_units] = np.arange(hub_units.size)
    scale = float(budget)
    rows, cols, vals, obj, upper, columns = [], [], [], [], [], []
    for k, blocks in enumerate(members):
        options, cost, value, units, hub_cov = _configurations(
            inst, blocks[0], entries, hub_mask, b_eff
        )
        for i in range(cost.size):
            j = len(columns)
            columns.append((k, tuple(int(o) for o in options[i])))
            term = float(value[i])
            nz = np.flatnonzero(hub_cov[i])
            if linear:
                term += float(hub_cov[i, nz] @ inst.weight[units[nz]])
            else:
                rows.extend(hub_row[units[nz]].tolist())
                cols.extend([j] * nz.size)
                vals.extend((-hub_cov[i, nz]).tolist())
            rows.extend([n_hub, n_hub + 1 + k])
            cols.extend([j, j])
            vals.extend([float(cost[i]) / scale, 1.0])
            obj.append(term)
            upper.append(float(len(blocks)))
        if len(columns) > MAX_COUNT_COLUMNS:
            return None
    n_x = len(columns)
    if n_x == 0:
        return None
    for h in range(n_hub):
        rows.append(h)
        cols.append(n_x + h)
        vals.append(1.0)
    n_rows = n_hub + 1 + len(members)
    matrix = sp.csc_array(
        (np.array(vals, float), (np.array(rows, np.int64), np.array(cols, np.int64))),
        shape=(n_rows, n_x + n_hub),
    )
    matrix.sort_indices()
    model = {
        "n_x": n_x,
        "n_y": n_hub,
        "y_units": hub_units[:n_hub],
        "col_cost": np.concatenate([obj, inst.weight[hub_units[:n_hub]]]).astype(float),
        "col_upper": np.concatenate([upper, np.ones(n_hub)]),
        "row_upper": np.concatenate(
            [np.zeros(n_hub), [b_eff / scale], [float(len(b)) for b in members]]
        ),
        "start": matrix.indptr.astype(np.int32),
        "index": matrix.indices.astype(np.int32),
        "value": matrix.data,
        "n_rows": n_rows,
    }
    return Aggregation(
        model=model,
        members=members,
        columns=tuple(columns),
        n_blocks=int(n_blocks),
        n_hubs=int(hub_units.size),
        hub_threshold=int(threshold),
    )


# --------------------------------------------------------------------------- alignment

#: Classes with at most this many blocks are matched by an optimal assignment; larger ones
#: match equal configurations first, then the rest in order.
MAX_ASSIGNMENT_BLOCKS = 1500

_class_cache: weakref.WeakKeyDictionary = instance_cache()
_class_cache_lock = threading.Lock()


def _all_classes(inst: CompiledInstance) -> _Classes | None:
    """Classes over every candidate (valid at any budget), once per compiled instance."""
    with _class_cache_lock:
        if inst in _class_cache:
            return _class_cache[inst]
    found = _classes(inst, np.arange(inst.n_candidates), 1.0) if inst.n_candidates else None
    with _class_cache_lock:
        _class_cache[inst] = found
    return found


@dataclass(frozen=True)
class Alignment:
    """An optimum re-assigned among interchangeable blocks to agree with a reference store.

    ``selected_idx`` has the F and cost of the store it was made from (checked); ``moved``
    counts the blocks whose configuration changed, ``shared_before`` / ``shared_after`` the
    candidates it has in common with the reference.
    """

    selected_idx: tuple[int, ...]
    moved: int
    shared_before: int
    shared_after: int


def align(
    inst: CompiledInstance,
    selected_idx: Sequence[int],
    reference_idx: Sequence[int],
    budget: float | None = None,
) -> Alignment:
    """The store equal to ``selected_idx`` up to interchangeable blocks closest to a reference.

    Blocks in one class (:func:`aggregate`'s classes, over all candidates) are isomorphic, so
    handing their configurations (which candidate each group keeps) to other blocks of the
    class keeps F and cost: an optimum stays an optimum. Within each class the configurations
    go to the blocks where the reference store keeps the most of the same candidates (an
    optimal assignment for classes of at most :data:`MAX_ASSIGNMENT_BLOCKS` blocks). F is
    recomputed; if it differs (within 1e-9 of the larger of F and :func:`value_unit` at
    ``budget``), ``selected_idx`` is returned unchanged.

    Explanations use it so that a store is not said to have "missed" a fact it holds in an
    interchangeable copy (``memaudit_core.analysis.score``).

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("redundancy_heavy", seed=0, n_experiences=60))
    >>> optimum = inst.indices(["note_0_core_fact", "note_1_summary"])
    >>> store = inst.indices(["note_9_core_fact", "note_8_summary"])
    >>> al = align(inst, optimum, store)
    >>> inst.ids(al.selected_idx), al.moved, al.shared_before, al.shared_after
    (('note_8_summary', 'note_9_core_fact'), 2, 0, 2)
    """
    selected = sorted({int(i) for i in selected_idx})
    reference = {int(i) for i in reference_idx}
    shared = len(reference.intersection(selected))
    unchanged = Alignment(tuple(selected), 0, shared, shared)
    found = _all_classes(inst) if selected and reference else None
    if found is None:
        return unchanged
    chosen = set(selected)
    new_chosen = set(chosen)
    moved = 0
    for blocks in found.classes:
        if len(blocks) < 2:
            continue
        have = [_config(b, chosen) for b in blocks]
        want = [_config(b, reference) for b in blocks]
        if not any(have) or not any(want):
            continue
        order = _assign(have, want)
        for i, block in enumerate(blocks):
            if order[i] == i:
                continue
            moved += have[order[i]] != have[i]
            for g, o in have[i]:
                new_chosen.discard(block[g][o])
        for i, block in enumerate(blocks):
            if order[i] != i:
                new_chosen.update(block[g][o] for g, o in have[order[i]])
    if moved == 0:
        return unchanged
    aligned = sorted(new_chosen)
    value, new_value = evaluate(inst, selected), evaluate(inst, aligned)
    # The solvers' rule: within 1e-9 relative to the larger of F and the package's value unit
    # (an absolute floor would accept anything on a package in units of 1e-12).
    same_value = abs(new_value - value) <= 1e-9 * max(value_unit(inst, budget), abs(value))
    same_cost = math.isclose(
        inst.selection_cost(aligned), inst.selection_cost(selected), rel_tol=1e-9, abs_tol=0.0
    )
    if not (same_cost and same_value):
        return unchanged  # never reached if the classes are right; exactness first
    return Alignment(tuple(aligned), moved, shared, len(reference.intersection(aligned)))


def _config(block: tuple[tuple[int, ...], ...], keep: set[int]) -> frozenset:
    """A block's configuration in a store: the (group position, option position) it keeps."""
    return frozenset(
        (g, o) for g, cands in enumerate(block) for o, c in enumerate(cands) if c in keep
    )


def _assign(have: list[frozenset], want: list[frozenset]) -> list[int]:
    """order[i]: whose configuration block i takes, to maximise agreement with ``want``."""
    m = len(have)
    if m <= MAX_ASSIGNMENT_BLOCKS:
        kinds_h = {c: i for i, c in enumerate(dict.fromkeys(have))}
        kinds_w = {c: i for i, c in enumerate(dict.fromkeys(want))}
        agree = np.array([[len(w & h) for h in kinds_h] for w in kinds_w], dtype=float)
        rows = np.array([kinds_w[w] for w in want])
        cols = np.array([kinds_h[h] for h in have])
        gain = agree[np.ix_(rows, cols)]
        # Ties keep a block's own configuration: a store changes only where it gains.
        gain[np.arange(m), np.arange(m)] += 0.5 / (m + 1)
        # scipy.optimize takes 0.4 s to import: loaded here, where it is used, not by every
        # command and pool worker that imports the solvers (fifty-fifth session).
        from scipy.optimize import linear_sum_assignment

        _, order = linear_sum_assignment(gain, maximize=True)
        return [int(j) for j in order]
    # Too many for the assignment: equal configurations first, then each block keeps its own
    # where it is still free, and the rest fill in.
    order = [-1] * m
    free: dict[frozenset, list[int]] = {}
    for j, h in enumerate(have):
        free.setdefault(h, []).append(j)
    taken = [False] * m
    for i, w in enumerate(want):
        while free.get(w):
            j = free[w].pop()
            if not taken[j]:
                order[i], taken[j] = j, True
                break
    for i in range(m):
        if order[i] < 0 and not taken[i]:
            order[i], taken[i] = i, True
    rest = [j for j in range(m) if not taken[j]]
    for i in range(m):
        if order[i] < 0:
            order[i] = rest.pop()
    return order


__all__ = [
    "MAX_BLOCK_CONFIGS",
    "MAX_CLASS_SHARE",
    "MAX_COUNT_COLUMNS",
    "MIN_BLOCKS",
    "MAX_ASSIGNMENT_BLOCKS",
    "Aggregation",
    "Alignment",
    "aggregate",
    "align",
]
