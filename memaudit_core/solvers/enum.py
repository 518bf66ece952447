"""Engine ``enum``: vectorised exhaustive enumeration for tiny instances.

Every store is a choice of one *option* per group (the empty option, or a subset of at most
``group_capacity`` candidates). The enumeration builds all combinations group by group with
numpy — a running cost vector and a dense coverage matrix — and drops combinations over budget
as soon as they appear. It is exact for every saturation and every group capacity, and refuses
(``ValueError``) above :data:`ENUM_MAX_COMBINATIONS`.

It also hosts the tie-break shared by the exact engines (:func:`selection_key`,
:data:`TIE`): among optimal stores the one with higher value, then lower cost, then the
lexicographically smaller tuple of candidate ids (in canonical candidate order, as
:mod:`.brute` compares them) wins.

:func:`enum_all_budgets` answers many budgets from one enumeration (used by sweeps).

Examples
--------
>>> from memaudit_core.generators import generate
>>> from memaudit_core.compiled import compile_package
>>> inst = compile_package(generate("update_chain"))
>>> [round(v, 6) for v, _ in enum_all_budgets(inst, [3, 6, 13])]
[5.55, 7.735, 8.025]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ..compiled import CompiledInstance, budget_with_tolerance
from ..errors import EnumerationTooLarge, count_text
from ..objective import get_saturation
from . import RawSolution, register_engine

#: Largest number of group-option combinations the engine accepts.
ENUM_MAX_COMBINATIONS = 300_000
#: Largest dense coverage matrix (combinations x units) the engine materialises.
ENUM_MAX_CELLS = 40_000_000
#: Values (and costs) closer than this are ties, exactly as in :mod:`.brute`.
TIE = 1e-12


def selection_key(inst: CompiledInstance, selected_idx: Sequence[int]) -> tuple[str, ...]:
    """The last tie-break key: candidate ids of a selection, in canonical candidate order.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("update_chain"))
    >>> selection_key(inst, [8, 3])
    ('update_1_tombstone', 'update_2_tombstone')
    """
    return tuple(inst.candidate_ids[i] for i in sorted(int(i) for i in selected_idx))


def is_better(
    inst: CompiledInstance,
    value: float,
    cost: float,
    idx: Sequence[int],
    best_value: float,
    best_cost: float,
    best_idx: Sequence[int] | None,
) -> bool:
    """True when (value, cost, idx) beats the best so far under the shared tie-break."""
    if best_idx is None or value > best_value + TIE:
        return True
    if value < best_value - TIE:
        return False
    if cost < best_cost - TIE:
        return True
    if cost > best_cost + TIE:
        return False
    return selection_key(inst, idx) < selection_key(inst, best_idx)


def group_options(inst: CompiledInstance, budget_eff: float) -> list[list[tuple[int, ...]]]:
    """Per group: the empty option and every subset of <= capacity candidates within budget."""
    cost = inst.cost
    cap = inst.group_capacity
    out = []
    for g in range(inst.n_groups):
        members = [i for i in inst.group_slice(g) if cost[i] <= budget_eff]
        opts: list[tuple[int, ...]] = [()]
        for k in range(1, min(cap, len(members)) + 1):
            for combo in itertools.combinations(members, k):
                if sum(float(cost[i]) for i in combo) <= budget_eff:
                    opts.append(combo)
        out.append(opts)
    return out


#: Cells of the counting DP behind :func:`combination_count`.
_COUNT_CELLS = 512


def _product_within(inst: CompiledInstance, budget_eff: float) -> float:
    cost = inst.cost
    cap = inst.group_capacity
    total = 1.0
    for g in range(inst.n_groups):
        m = int(np.count_nonzero(cost[inst.group_start[g] : inst.group_start[g + 1]] <= budget_eff))
        total *= sum(math.comb(m, k) for k in range(0, min(cap, m) + 1))
    return total


def _count_within(inst: CompiledInstance, budget_eff: float) -> int:
    """Upper bound on the number of combinations with cost <= budget_eff.

    The plain product of per-group option counts, tightened by a counting DP over costs
    rounded *down* to a grid (so every feasible combination is counted; exact when costs are
    integers and the budget is at most the grid size).
    """
    product = _product_within(inst, budget_eff)
    if product <= 1 or not math.isfinite(budget_eff) or inst.group_capacity > 1:
        return int(min(product, 1e18))
    cells = _COUNT_CELLS
    costs = inst.cost
    integral = bool(np.all(costs == np.round(costs))) and budget_eff <= cells
    scale = 1.0 if integral else cells / max(budget_eff, 1e-300)
    q_max = int(math.floor(budget_eff * scale + 1e-7))
    with np.errstate(over="ignore"):  # a 1e308 cost: inf, clipped (it never fits)
        grid = np.minimum(np.floor(costs * scale + (1e-7 if integral else -1e-7)), q_max + 1)
    cq = np.maximum(grid, 0).astype(np.int64)
    counts = np.zeros(q_max + 1)
    counts[0] = 1.0
    with np.errstate(over="ignore", invalid="ignore"):  # huge counts may overflow to inf
        for g in range(inst.n_groups):
            new = counts.copy()
            for i in inst.group_slice(g):
                c = int(cq[i])
                if c <= q_max:
                    new[c:] += counts[: q_max + 1 - c]
            counts = new
        total = float(counts.sum())
    return int(min(product, total if math.isfinite(total) else math.inf, 1e18))


def combination_count(inst: CompiledInstance, budget: float | None = None) -> int:
    """An upper bound on the number of stores enumeration would build at ``budget``, cheaply.

    Without a budget it is the group-option product. With one it also counts, by a DP over
    costs rounded down, the combinations that fit (exact for small integer costs). For
    capacity > 1 it counts subsets by size only. It never undercounts.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("update_chain"))
    >>> combination_count(inst), combination_count(inst, 3)
    (864, 28)
    """
    b = math.inf if budget is None else budget_with_tolerance(budget)
    return _count_within(inst, b)


class _Enumeration:
    """All budget-feasible combinations: cost, value and the option chosen in each group."""

    def __init__(self, inst: CompiledInstance, budget_eff: float, count: int | None = None):
        count = _count_within(inst, budget_eff) if count is None else count
        if count > ENUM_MAX_COMBINATIONS:
            raise EnumerationTooLarge(
                f"enum refuses {count_text(count)} combinations (max "
                f"{count_text(ENUM_MAX_COMBINATIONS)}); "
                "use the 'bnb' or 'milp' solver"
            )
        self.inst = inst
        options = group_options(inst, budget_eff)
        # Units nobody can cover, or of zero weight, cannot change F: leave them out. Coverage
        # stays sparse; only the rows of one group's picked options are made dense (every
        # candidate's dense rows: 780 MB on a 5,000-experience event graph).
        used = np.array(sorted({i for opts in options for o in opts for i in o}), dtype=np.int64)
        covered = np.zeros(inst.n_units, bool)
        covered[inst.coverage[used].indices] = True
        units = np.flatnonzero(covered & (inst.weight > 0))
        if count * max(1, units.size) > ENUM_MAX_CELLS:
            raise EnumerationTooLarge(
                f"enum refuses {count_text(count)} combinations x {units.size} units; "
                "use the 'bnb' or 'milp' solver"
            )
        self.weight = inst.weight[units]
        sub = sp.csr_array(inst.coverage[:, units])
        groups = [g for g, opts in enumerate(options) if len(opts) > 1]
        self.options = [options[g] for g in groups]
        cost = np.zeros(1)
        # Parent pointers per group step; a selection is rebuilt only for the few rows asked.
        self._steps: list[tuple[np.ndarray, np.ndarray]] = []
        for opts in self.options:
            if inst.group_capacity == 1:
                o_cost = np.concatenate([[0.0], inst.cost[[o[0] for o in opts[1:]]]])
            else:
                o_cost = np.array([float(inst.cost[list(o)].sum()) for o in opts])
            new_cost = cost[:, None] + o_cost[None, :]
            rows, cols = np.nonzero(new_cost <= budget_eff)
            cost = new_cost[rows, cols]
            self._steps.append((rows, cols))
        # Coverage of every final combination, from its picks only. Copying a growing
        # (combinations x units) matrix at each group step took 12 of 20 s on a
        # 5,000-experience event graph, where most steps pick nothing. The picks are added in
        # group order, as the step-by-step sums did, so each row's floats are the same.
        picks = []
        for _, c in self._backtrack(np.arange(cost.size)):
            hit = np.flatnonzero(c)  # option 0 is the empty one
            picks.append((hit, c[hit]))
        z = np.zeros((cost.size, units.size))
        for opts, (hit, c) in zip(self.options, reversed(picks), strict=True):
            if not hit.size:
                continue
            if inst.group_capacity == 1:
                z[hit] += sub[[o[0] for o in opts[1:]]].toarray()[c - 1]
            else:
                # One row per option, indexed in numpy: no Python loop over the hit rows.
                o_cov = np.array(
                    [
                        sub[list(o)].toarray().sum(axis=0) if o else np.zeros(units.size)
                        for o in opts
                    ]
                )
                z[hit] += o_cov[c]
        self.cost = cost
        h = get_saturation(inst.saturation).h
        self.value = h(z) @ self.weight if units.size else np.zeros(cost.size)

    def _backtrack(self, rows: np.ndarray):
        """(step position, option chosen there by each row), last step first."""
        for pos in range(len(self._steps) - 1, -1, -1):
            parent, col = self._steps[pos]
            yield pos, col[rows]
            rows = parent[rows]

    def selections(self, rows: np.ndarray) -> list[tuple[int, ...]]:
        """Selections of many rows at once (backtracking the parent pointers in numpy)."""
        rows = np.asarray(rows, dtype=np.int64)
        chosen = np.empty((len(self._steps), rows.size), dtype=np.int64)
        for pos, col in self._backtrack(rows):
            chosen[pos] = col
        out = []
        for j in range(chosen.shape[1]):
            picked = [
                i for pos in range(chosen.shape[0]) for i in self.options[pos][chosen[pos, j]]
            ]
            out.append(tuple(sorted(picked)))
        return out

    def selection(self, row: int) -> tuple[int, ...]:
        return self.selections(np.array([row]))[0]

    def best_among(self, rows: np.ndarray) -> int:
        """Apply the tie-break to the given rows (value, then cost, then ids)."""
        vals = self.value[rows]
        top = vals.max()
        rows = rows[vals >= top - TIE]
        costs = self.cost[rows]
        rows = rows[costs <= costs.min() + TIE]
        if rows.size == 1:
            return int(rows[0])
        keys = [selection_key(self.inst, sel) for sel in self.selections(rows)]
        return int(rows[min(range(len(keys)), key=keys.__getitem__)])


def enumerate_best(inst: CompiledInstance, budget: float) -> tuple[float, tuple[int, ...], int]:
    """(OPT, its selection, number of combinations) by vectorised enumeration.

    Raises
    ------
    EnumerationTooLarge
        (a ``ValueError`` and a ``SolverError``) above :data:`ENUM_MAX_COMBINATIONS`
        combinations.
    """
    en = _Enumeration(inst, budget_with_tolerance(budget))
    row = en.best_among(np.arange(en.cost.size))
    return max(float(en.value[row]), 0.0), en.selection(row), int(en.cost.size)


def enum_all_budgets(
    inst: CompiledInstance, budgets: Sequence[float]
) -> list[tuple[float, tuple[int, ...]]]:
    """OPT and an optimal selection for each budget, from one enumeration.

    Combinations are sorted by cost once; OPT(B) is the prefix maximum of value up to B.
    The same tie-break as :func:`enumerate_best` applies at every budget.

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("temporal_interval"))
    >>> [round(v, 6) for v, _ in enum_all_budgets(inst, [3, 6, 13])]
    [3.2, 6.0, 10.635]
    """
    if not budgets:
        return []
    effs = [budget_with_tolerance(b) for b in budgets]
    en = _Enumeration(inst, max(effs))
    order = np.argsort(en.cost, kind="stable")
    cost_sorted = en.cost[order]
    prefix_max = np.maximum.accumulate(en.value[order])
    out = []
    for b in effs:
        end = int(np.searchsorted(cost_sorted, b, side="right"))
        top = prefix_max[end - 1]
        # Cheapest combinations reaching the top value come first in cost order.
        first = int(np.argmax(en.value[order[:end]] >= top - TIE))
        window = order[first:end]
        window = window[cost_sorted[first:end] <= cost_sorted[first] + TIE]
        row = en.best_among(window[en.value[window] >= top - TIE])
        out.append((max(float(en.value[row]), 0.0), en.selection(row)))
    return out


@register_engine("enum")
def solve_enum(
    inst, budget, *, time_limit=None, node_limit=None, incumbent_idx=None
) -> RawSolution:
    """Exhaustive enumeration (limits are ignored: it either finishes or refuses).

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> raw = solve_enum(compile_package(generate("update_chain")), 6)
    >>> round(raw.value, 6), raw.status
    (7.735, 'optimal')
    """
    value, chosen, count = enumerate_best(inst, budget)
    return RawSolution(
        chosen,
        value,
        value,
        "optimal",
        nodes=count,
        detail={"method": "enumeration", "combinations": count},
    )
