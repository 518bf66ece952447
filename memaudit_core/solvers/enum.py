"""Engine ``enum``: vectorised exhaustive enumeration for tiny instances.

Every store is a choice of one *option* per group (the empty option, or a subset of at most
``group_capacity`` candidates). The enumeration builds all combinations group by group with
numpy — a running cost vector and a dense coverage matrix — and drops combinations over budget
as soon as they appear. It is exact for every saturation and every group capacity, and refuses
(``ValueError``) above :data:`ENUM_MAX_COMBINATIONS`.

It also hosts the tie-break shared by the exact engines (:func:`tied`, :func:`selection_key`,
:class:`TieBest`): among the stores whose value ties the highest value, those whose cost ties
the lowest of their costs, then the lexicographically smaller tuple of candidate ids (in
canonical candidate order, as :mod:`.brute` compares them) wins; values and costs within
:data:`TIE` relative tie. Ties are not transitive, so the rule is applied to a whole set of
stores, never store by store against a running best.

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

from ..compiled import CompiledInstance, budget_with_tolerance, search_limit
from ..errors import EnumerationTooLarge, count_text
from ..objective import get_saturation
from . import RawSolution, register_engine

#: Largest number of group-option combinations the engine accepts.
ENUM_MAX_COMBINATIONS = 300_000
#: Largest dense coverage matrix (combinations x units) the engine materialises.
ENUM_MAX_CELLS = 40_000_000
#: Relative tie tolerance: two values (or two costs) ``a`` and ``b`` are tied when
#: ``|a - b| <= TIE * max(1, |a|, |b|)`` (:func:`tied`), the rule of every exact engine and of
#: the reference writers (:data:`memaudit_core.writers.TIE_TOL`). Absolute, it was below the
#: rounding step of values and costs from about 1e4 on, so float noise decided which of two
#: equally good stores was returned (QA s47: bnb took a store costing 2.8e9 over one costing
#: 2.2e9 at the same F 19303889.053400442).
TIE = 1e-12


def tie_tol(a: float, b: float = 0.0) -> float:
    """How far apart ``a`` and ``b`` may be and still tie: ``TIE * max(1, |a|, |b|)``.

    >>> tie_tol(0.5), tie_tol(2e6, 1.0)
    (1e-12, 2e-06)
    """
    return TIE * max(1.0, abs(a), abs(b))


def tie_floor(top: float) -> float:
    """The lowest value that ties a maximum ``top``: ``top - tie_tol(top)``, but an infinite
    ``top`` is its own floor.

    A density overflows to inf when a gain is huge and a cost tiny (1e9 / 1e-300). There
    ``top - tie_tol(top)`` is inf - inf = NaN, which every comparison fails, so a writer found
    no candidate at the top and re-picked a closed one (QA s50). As in :func:`tied`, inf ties
    only inf.

    >>> tie_floor(2e6), tie_floor(math.inf), tie_floor(-math.inf)
    (1999999.999998, inf, -inf)
    """
    if math.isinf(top):
        return top
    return top - TIE * max(1.0, abs(top))


def tie_floors(tops: np.ndarray) -> np.ndarray:
    """Vectorised :func:`tie_floor`, element by element."""
    tops = np.asarray(tops, dtype=float)
    with np.errstate(invalid="ignore"):
        floors = tops - TIE * np.maximum(1.0, np.abs(tops))
    return np.where(np.isinf(tops), tops, floors)


def tied(a: float, b: float) -> bool:
    """Whether two values (or two costs) tie under the shared tie-break.

    >>> tied(19303889.053400442, 19303889.05340045), tied(1.0, 1.0 + 1e-9), tied(5.0, -math.inf)
    (True, False, False)
    """
    if a == b:
        return True
    d = abs(a - b)
    # tie_tol inlined: a sweep calls this about 137,000 times (review s47, target 1).
    return d < math.inf and d <= TIE * max(1.0, abs(a), abs(b))  # an infinite start ties nothing


def tied_mask(values: np.ndarray, ref: float) -> np.ndarray:
    """Vectorised :func:`tied`: which of ``values`` tie ``ref``."""
    values = np.asarray(values, dtype=float)
    scale = np.maximum(np.maximum(np.abs(values), abs(ref)), 1.0)
    with np.errstate(invalid="ignore"):
        d = np.abs(values - ref)
    return (values == ref) | ((d <= TIE * scale) & np.isfinite(d))


def tie_order(value: float, cost: float, best_value: float, best_cost: float) -> int:
    """1 when (value, cost) beats (best_value, best_cost) under the shared tie-break (higher
    value, then lower cost, both with :func:`tied` ties), -1 when it loses, 0 when both tie
    and the candidate ids decide (:func:`selection_key`). For two stores only: over more,
    ties chain, and :class:`TieBest` applies the rule.

    >>> tie_order(2.0, 5.0, 1.0, 1.0), tie_order(2e6, 3.0, 2e6 + 1e-9, 4.0)
    (1, 1)
    """
    if not tied(value, best_value):
        return 1 if value > best_value else -1
    if not tied(cost, best_cost):
        return 1 if cost < best_cost else -1
    return 0


class TieBest:
    """The shared tie-break over stores met one at a time (:mod:`.bnb`, :mod:`.brute`).

    The winner is defined on the whole set, as :meth:`_Enumeration.best_among` applies it:
    among the stores whose value ties the *highest* value, those whose cost ties the lowest of
    their costs, then the smallest ids (:func:`selection_key`). Ties are not transitive, so
    comparing each store with the winner so far drifts along a chain of ties (QA s47: three
    stores 0.9e-12 apart, the search kept the cheapest, 1.8e-12 below the optimum, not tied
    with it). Every store that can still win is kept instead: those tied with the highest value
    seen, less those another kept store beats whatever is met later (worth no less, costing no
    more, and cheaper beyond a tie or with smaller ids).

    ``offer(value, cost, key, payload)`` takes ``key`` as a callable, called (at most once)
    during the call only when ids must decide, so a caller may build it from mutable state.

    >>> tb = TieBest()
    >>> for v, c, k in [(0.9, 10.0, "a"), (0.9 - 0.9e-12, 5.0, "b"), (0.9 - 1.8e-12, 1.0, "d")]:
    ...     _ = tb.offer(v, c, lambda k=k: (k,), k)
    >>> tb.best()[3]  # "d" does not tie 0.9; of "a" and "b", "b" is cheaper
    'b'
    """

    __slots__ = ("top", "floor", "_pool", "_best")

    def __init__(self) -> None:
        self.top = -math.inf
        #: Values below it cannot tie :attr:`top` (a fast refusal; :func:`tied` decides above).
        self.floor = -math.inf
        self._pool: list[list] = []  # [value, cost, key or None, payload]
        self._best: list | None = None

    def offer(self, value: float, cost: float, key, payload) -> bool:
        """Keep the store if it can still win; True when it was kept."""
        if value < self.floor:
            return False
        if value > self.top:
            self.top = value
            self.floor = value - 2.0 * tie_tol(value)
            self._pool = [e for e in self._pool if tied(e[0], value)]
            self._best = None
        elif not tied(value, self.top):
            return False
        new_key = None
        for e in self._pool:
            if e[0] >= value and e[1] <= cost:
                if e[1] < cost and not tied(e[1], cost):
                    return False
                if new_key is None:
                    new_key = key()
                if e[2] <= new_key:
                    return False  # beaten by ids (or the same store offered again)
        survivors = []
        for e in self._pool:
            if value >= e[0] and cost <= e[1]:
                if cost < e[1] and not tied(cost, e[1]):
                    continue
                if new_key is None:
                    new_key = key()
                if new_key < e[2]:
                    continue
            survivors.append(e)
        if new_key is None:
            new_key = key()
        survivors.append([value, cost, new_key, payload])
        self._pool = survivors
        self._best = None
        return True

    def best(self) -> tuple[float, float, tuple, object] | None:
        """(value, cost, key, payload) of the winner among the stores offered, or None."""
        if self._best is None and self._pool:
            cheapest = min(e[1] for e in self._pool)
            self._best = min((e for e in self._pool if tied(e[1], cheapest)), key=lambda e: e[2])
        return None if self._best is None else tuple(self._best)


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


def group_options(inst: CompiledInstance, budget_eff: float) -> list[list[tuple[int, ...]]]:
    """Per group: the empty option and every subset of <= capacity candidates within budget."""
    cost = inst.cost
    cap = inst.group_capacity
    if cap == 1:
        # One option per affordable candidate (a one-candidate subset fits exactly when its
        # cost does), read per group from one mask: a Mem0 export of 30,000 memories is
        # 30,000 groups, and the loop below spent most of its time on range objects.
        affordable = np.flatnonzero(cost <= budget_eff)
        bounds = np.searchsorted(affordable, inst.group_start).tolist()
        picks = affordable.tolist()
        return [
            [(), *((i,) for i in picks[lo:hi])]
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
        ]
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
#: Where :func:`combination_count` stops counting: a count this large says "at least this
#: many", not how many (see :func:`combination_count_text`).
COUNT_CAP = 10**18


def _product_within(inst: CompiledInstance, budget_eff: float) -> float:
    cap = inst.group_capacity
    affordable = np.bincount(inst.group_idx[inst.cost <= budget_eff], minlength=inst.n_groups)
    # Options per group for each distinct count of affordable members (counts repeat a lot).
    m_values, m_groups = np.unique(affordable, return_counts=True)
    total = 1.0
    for m, n_groups in zip(m_values.tolist(), m_groups.tolist(), strict=True):
        options = sum(math.comb(m, k) for k in range(0, min(cap, m) + 1))
        try:
            total *= float(options) ** n_groups
        except OverflowError:  # float ** int raises where float * float gives inf
            return math.inf
    return total


def _count_within(inst: CompiledInstance, budget_eff: float) -> int:
    """Upper bound on the number of combinations with cost <= budget_eff.

    The plain product of per-group option counts, tightened by a counting DP over costs
    rounded *down* to a grid (so every feasible combination is counted; exact when costs are
    integers and the budget is at most the grid size).
    """
    product = _product_within(inst, budget_eff)
    if product <= 1 or not math.isfinite(budget_eff) or inst.group_capacity > 1:
        return int(min(product, COUNT_CAP))
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
    return int(min(product, total if math.isfinite(total) else math.inf, COUNT_CAP))


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


def combination_count_text(count: int) -> str:
    """A :func:`combination_count` as text: at :data:`COUNT_CAP` it was capped, so it reads
    "at least 10^18", never as an exact count (QA s43: "1,000,000,000,000,000,000 stores fit"
    on a package where 6^150 combinations may fit).

    >>> combination_count_text(864), combination_count_text(COUNT_CAP)
    ('864', 'at least 10^18')
    """
    if count >= COUNT_CAP:
        return f"at least 10^{round(math.log10(COUNT_CAP))}"
    return count_text(count)


def _dense_rows(sub: sp.csr_array, options: Sequence[Sequence[int]]) -> np.ndarray:
    """One dense coverage row per option (the sum of its candidates' rows, added in the
    option's order).

    Read from the CSR arrays directly, one scatter per position in the options (one in all
    when each option is one candidate): a scipy row slice per group step cost 0.1 ms, and a
    Python loop per option most of the enumeration's time on a Mem0 export of 30,000 memories.
    """
    out = np.zeros((len(options), sub.shape[1]))
    indptr, indices, data = sub.indptr, sub.indices, sub.data
    for j in range(max((len(o) for o in options), default=0)):
        rows = [k for k, o in enumerate(options) if len(o) > j]
        cands = np.array([options[k][j] for k in rows], dtype=np.int64)
        lo, hi = indptr[cands], indptr[cands + 1]
        lens = hi - lo
        # The entries of every candidate, in row order: lo[r], lo[r] + 1, ..., hi[r] - 1.
        at = np.repeat(lo - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
        # Entries of one row have distinct columns (duplicates summed), and each option
        # appears once per pass, so no (row, column) repeats within one scatter.
        out[np.repeat(rows, lens), indices[at]] += data[at]
    return out


#: Most cells (open rows x options) one batch of enumeration steps compares at once.
_BATCH_CELLS = 1 << 21


class _Enumeration:
    """All budget-feasible combinations: cost, value and the option chosen in each group.

    Rows are append-only: taking a group's empty option keeps every row where it is, and each
    step appends only the rows that take a non-empty option, with a pointer to their parent
    row. Each row's coverage is its parent's plus one option's, computed once, so the work and
    memory grow with the number of combinations, not with groups x combinations. Scoring a
    Mem0 export of 10,000 memories (one group each) took 53 s and 1.5 GB when every step kept
    pointers for all rows; it takes 6 s and 100 MB.
    """

    def __init__(self, inst: CompiledInstance, budget_eff: float, count: int | None = None):
        count = _count_within(inst, budget_eff) if count is None else count
        if count > ENUM_MAX_COMBINATIONS:
            raise EnumerationTooLarge(
                f"enum refuses {combination_count_text(count)} combinations (max "
                f"{count_text(ENUM_MAX_COMBINATIONS)}); "
                "use the 'bnb' or 'milp' solver"
            )
        self.inst = inst
        options = group_options(inst, budget_eff)
        # Units nobody can cover, or of zero weight, cannot change F: leave them out. Coverage
        # stays sparse; only the rows of one group's options are made dense (every
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
        sub.sum_duplicates()
        # count bounds the number of rows from above, so the arrays are filled in place.
        cost = np.zeros(count)
        z = np.zeros((count, units.size))
        n_rows = 1  # row 0: every group's empty option
        # Per step (group with a choice): first appended row, parent rows, options taken.
        self._starts: list[int] = []
        self._parents: list[np.ndarray] = []
        self._cols: list[np.ndarray] = []
        self._step_opts: list[list[tuple[int, ...]]] = []
        steps = [opts for opts in options if len(opts) > 1]
        # The non-empty options of every step, flat: step k's are opt_cost[ptr[k]:ptr[k + 1]].
        flat_opts = [o for opts in steps for o in opts[1:]]
        ptr = np.zeros(len(steps) + 1, dtype=np.int64)
        np.cumsum([len(opts) - 1 for opts in steps], out=ptr[1:])
        opt_cost = (
            inst.cost[np.array([o[0] for o in flat_opts], dtype=np.int64)]
            if inst.group_capacity == 1
            else np.array([float(inst.cost[list(o)].sum()) for o in flat_opts])
        )
        step_min = np.minimum.reduceat(opt_cost, ptr[:-1]) if steps else np.zeros(0)
        # A row that cannot pay the cheapest option of any later group never grows again;
        # only the others are scanned (thousands of steps over rows that are all full made
        # the scans quadratic).
        cheapest_after = np.append(np.minimum.accumulate(step_min[::-1])[::-1], np.inf)
        open_idx = np.zeros(1, dtype=np.int64)
        pos, span = 0, 16
        while pos < len(steps):
            cost_open = cost[open_idx]
            keep = cost_open + cheapest_after[pos] <= budget_eff
            open_idx, cost_open = open_idx[keep], cost_open[keep]
            if not open_idx.size:
                break  # nothing left can grow: no later step adds a row
            # Steps pos..stop-1 run as one batch when no row one of them adds can take an
            # option of another: then each step's rows come from the open rows alone, as
            # when run one by one. Rounded sums are monotone, so cheapest open row + cheapest
            # option + cheapest option over budget rules that out. A Mem0 export of 30,000
            # memories where any one fills the budget is then a few batches, not 30,000
            # steps of a dozen NumPy calls each.
            low = np.minimum.accumulate(step_min[pos : pos + span])
            apart = (cost_open.min() + low) + low > budget_eff
            stop = pos + max(1, int(np.argmin(apart)) if not apart.all() else apart.size)
            # Look further ahead after a batch that filled the window, little otherwise.
            span = min(2 * span, 1 << 16) if apart.all() else 16
            width = max(1, _BATCH_CELLS // open_idx.size)
            stop = max(pos + 1, min(stop, int(np.searchsorted(ptr, ptr[pos] + width, "right")) - 1))
            o_cost = opt_cost[ptr[pos] : ptr[stop]]
            parent_pos, col = np.nonzero(cost_open[:, None] + o_cost[None, :] <= budget_eff)
            if not parent_pos.size:
                pos = stop
                continue
            # Each step's rows together, in step order; (parent, option) order within a step.
            step = np.searchsorted(ptr, col + ptr[pos], side="right") - 1
            order = np.argsort(step, kind="stable")
            parent_pos, col, step = parent_pos[order], col[order], step[order]
            parent = open_idx[parent_pos]
            end = n_rows + parent.size
            if end > cost.size:  # _count_within bounds the rows; grow rather than trust it
                cost = np.concatenate([cost, np.zeros(end)])
                z = np.concatenate([z, np.zeros((end, z.shape[1]))])
            used_opts = np.unique(col)
            rows = _dense_rows(sub, [flat_opts[ptr[pos] + k] for k in used_opts.tolist()])
            cost[n_rows:end] = cost[parent] + o_cost[col]
            z[n_rows:end] = z[parent] + rows[np.searchsorted(used_opts, col)]
            taken, first = np.unique(step, return_index=True)
            bounds = [*first.tolist(), parent.size]
            for s, lo, hi in zip(taken.tolist(), bounds[:-1], bounds[1:], strict=True):
                self._starts.append(n_rows + lo)
                self._parents.append(parent[lo:hi])
                self._cols.append(col[lo:hi] + ptr[pos] - ptr[s] + 1)  # 0: the empty option
                self._step_opts.append(steps[s])
            open_idx = np.concatenate([open_idx, np.arange(n_rows, end)])
            n_rows = end
            pos = stop
        self.cost = cost[:n_rows]
        z = z[:n_rows]
        h = get_saturation(inst.saturation).h
        self.value = h(z) @ self.weight if units.size else np.zeros(n_rows)

    def exact_costs_near(self, limits: Sequence[float]) -> None:
        """Replace the running cost sums of rows near any of ``limits`` by their stores'
        correctly rounded costs (``math.fsum``, as
        :meth:`~memaudit_core.compiled.CompiledInstance.selection_cost`): QA s42 round 2 #2,
        enum returned a store whose running sum fit B(1 + 1e-9) and whose exact cost
        37.418418800000005 did not, and the solve was refused."""
        near = np.zeros(self.cost.size, dtype=bool)
        for limit in limits:
            # The window covers the construction's slack (QA s42 round 3, _slacked).
            window = max(1e-9 * abs(limit), 2 * (_slacked(self.inst, limit) - limit))
            near |= np.abs(self.cost - limit) <= window
        rows = np.flatnonzero(near)
        if rows.size:
            cost = self.inst.cost
            self.cost[rows] = [math.fsum(cost[list(sel)].tolist()) for sel in self.selections(rows)]

    def selections(self, rows: np.ndarray) -> list[tuple[int, ...]]:
        """Selections of many rows at once (following parent pointers in numpy)."""
        rows = np.asarray(rows, dtype=np.int64).copy()
        picks: list[list[int]] = [[] for _ in range(rows.size)]
        starts = np.asarray(self._starts, dtype=np.int64)
        live = np.flatnonzero(rows > 0)
        # Each pass moves every row one pick back; a row has at most a handful of picks.
        while live.size:
            r = rows[live]
            step = np.searchsorted(starts, r, side="right") - 1
            offset = (r - starts[step]).tolist()
            for j, s, k in zip(live.tolist(), step.tolist(), offset, strict=True):
                picks[j].extend(self._step_opts[s][self._cols[s][k]])
                rows[j] = self._parents[s][k]
            live = live[rows[live] > 0]
        return [tuple(sorted(p)) for p in picks]

    def selection(self, row: int) -> tuple[int, ...]:
        return self.selections(np.array([row]))[0]

    def best_among(self, rows: np.ndarray) -> int:
        """Apply the tie-break to the given rows (value, then cost, then ids)."""
        vals = self.value[rows]
        rows = rows[tied_mask(vals, float(vals.max()))]
        costs = self.cost[rows]
        rows = rows[tied_mask(costs, float(costs.min()))]
        if rows.size == 1:
            return int(rows[0])
        keys = [selection_key(self.inst, sel) for sel in self.selections(rows)]
        return int(rows[min(range(len(keys)), key=keys.__getitem__)])


def _slacked(inst: CompiledInstance, limit: float) -> float:
    """The limit the construction prunes against by running sums (QA s42 round 3: a store whose
    correctly rounded cost is exactly B (1 + 1e-9) had a running sum one ulp above it and was
    never built); rows are then judged by their exact costs (:meth:`exact_costs_near`)."""
    return search_limit(limit, inst.n_groups * inst.group_capacity)


def enumerate_best(inst: CompiledInstance, budget: float) -> tuple[float, tuple[int, ...], int]:
    """(OPT, its selection, number of combinations) by vectorised enumeration.

    Raises
    ------
    EnumerationTooLarge
        (a ``ValueError`` and a ``SolverError``) above :data:`ENUM_MAX_COMBINATIONS`
        combinations.
    """
    limit = budget_with_tolerance(budget)
    en = _Enumeration(inst, _slacked(inst, limit))
    en.exact_costs_near([limit])
    row = en.best_among(np.flatnonzero(en.cost <= limit))
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
    en = _Enumeration(inst, _slacked(inst, max(effs)))
    en.exact_costs_near(effs)
    order = np.argsort(en.cost, kind="stable")
    cost_sorted = en.cost[order]
    prefix_max = np.maximum.accumulate(en.value[order])
    out = []
    for b in effs:
        end = int(np.searchsorted(cost_sorted, b, side="right"))
        top = prefix_max[end - 1]
        # Cheapest combinations reaching the top value come first in cost order.
        first = int(np.argmax(tied_mask(en.value[order[:end]], top)))
        window = order[first:end]
        window = window[tied_mask(cost_sorted[first:end], float(cost_sorted[first]))]
        row = en.best_among(window[tied_mask(en.value[window], top)])
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
