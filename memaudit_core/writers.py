"""Reference writers (DESIGN.md section 6) behind one registry, :data:`WRITERS`.

A writer turns a compiled instance and a budget into a store: a set of candidate positions that
respects the budget (1e-9 relative tolerance) and the group capacity (one candidate per
experience unless the instance says otherwise). All reference writers here are *oracle*
writers: they read exact marginal gains F(X + u) - F(X) from the package, so they calibrate the
package and the solver rather than model a deployed memory system.

Shared rules:

- a candidate whose marginal gain is <= 1e-12 (:data:`~memaudit_core.objective.GAIN_EPS`) is
  never taken, so writers never spend budget on nothing;
- groups arrive in canonical order (experience time, then id) and candidates inside a group are
  ordered by (cost, id), so "smaller id" in a tie rule is "lower position" in the instance;
- floating-point ties (within 1e-12 relative) are ties, so a tie rule decides them rather than
  the last bit of a sum.

Examples
--------
>>> from memaudit_core.generators import generate
>>> from memaudit_core.compiled import compile_package
>>> inst = compile_package(generate("update_chain"))
>>> res = run_writer("gvt", inst, 6)
>>> round(res.value, 3), res.cost
(7.735, 5.0)
>>> run_writer("density", inst, 6).selected
('version_0_atomic_fact', 'update_1_tombstone', 'update_2_tombstone', 'update_3_tombstone')
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .compiled import CompiledInstance
from .errors import MemAuditError, UnknownNameError, WriterError
from .objective import GAIN_EPS, CoverageState, evaluate, get_saturation

#: Relative tolerance under which two gains, densities or costs count as tied.
TIE_TOL = 1e-12

WriterFn = Callable[[CompiledInstance, float], tuple[int, ...]]


@dataclass(frozen=True)
class WriterInfo:
    """One registered writer.

    Attributes
    ----------
    name : str
        Registry key (used by the CLI, the app and sweeps).
    description : str
        One plain-language sentence for menus and tooltips.
    kind : str
        ``"oracle"`` for writers that read exact package marginals (every reference writer).
    fn : callable
        ``fn(inst, budget) -> tuple[int, ...]`` of selected candidate positions.
    """

    name: str
    description: str
    kind: str
    fn: WriterFn


@dataclass(frozen=True)
class WriterResult:
    """The store a writer wrote at one budget (``value`` recomputed with ``evaluate``)."""

    writer: str
    budget: float
    selected_idx: tuple[int, ...]
    selected: tuple[str, ...]
    value: float
    cost: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "writer": self.writer,
            "budget": self.budget,
            "selected": list(self.selected),
            "selected_idx": list(self.selected_idx),
            "value": self.value,
            "cost": self.cost,
        }


# --------------------------------------------------------------------------- small helpers


def _budget_tol(budget: float) -> float:
    # Same tolerance as CompiledInstance.is_feasible, so a writer never disagrees with it.
    return 1e-9 * max(1.0, abs(budget))


def _tied(a: float, b: float) -> bool:
    return abs(a - b) <= TIE_TOL * max(1.0, abs(a), abs(b))


def _beats(key_a: tuple[float, ...], key_b: tuple[float, ...]) -> bool:
    """Lexicographic "a is strictly better than b", maximising every key with tolerant ties.

    A full tie is not a win; callers then fall back to the smaller candidate id.
    """
    for a, b in zip(key_a, key_b, strict=True):
        if _tied(a, b):
            continue
        return a > b
    return False


def _tied_best(keys: list[np.ndarray]) -> np.ndarray:
    """Vectorised :func:`_beats`: indices of the rows tied for best on every key."""
    mask = np.ones(len(keys[0]), dtype=bool)
    for arr in keys:
        top = float(arr[mask].max())
        mask &= arr >= top - TIE_TOL * max(1.0, abs(top))
    return np.flatnonzero(mask)


class _Prep:
    """Per-instance arrays the writers reuse across budgets (cached weakly by instance)."""

    __slots__ = (
        "types",
        "costs",
        "starts",
        "suffix_min_cost",
        "entry_weight",
        "entry_row",
        "h",
        "__weakref__",
    )

    def __init__(self, inst: CompiledInstance):
        self.types = np.array(inst.candidate_types, dtype=object)
        # Python floats / ints: the per-group loops index these scalars many times, and
        # indexing a numpy array element by element is several times slower.
        self.costs: list[float] = inst.cost.tolist()
        self.starts: list[int] = inst.group_start.tolist()
        # Cheapest candidate in groups g.. (inf past the end): lets a pass stop as soon as
        # nothing later can fit.
        mins = np.full(inst.n_groups + 1, np.inf)
        for g in range(inst.n_groups - 1, -1, -1):
            lo, hi = inst.group_start[g], inst.group_start[g + 1]
            here = float(inst.cost[lo:hi].min()) if hi > lo else np.inf
            mins[g] = min(here, mins[g + 1])
        self.suffix_min_cost: list[float] = mins.tolist()
        self.entry_weight = inst.weight[inst.coverage.indices]
        self.entry_row = inst.nnz_row
        self.h = get_saturation(inst.saturation).h


_PREP: weakref.WeakKeyDictionary[CompiledInstance, _Prep] = weakref.WeakKeyDictionary()


def _prep(inst: CompiledInstance) -> _Prep:
    prep = _PREP.get(inst)
    if prep is None:
        prep = _PREP[inst] = _Prep(inst)
    return prep


def _slice_gains(
    inst: CompiledInstance, prep: _Prep, z: np.ndarray, lo: int, hi: int
) -> np.ndarray:
    """Marginal gains of candidates lo:hi only (a group), given running coverage ``z``.

    Same formula as :meth:`CoverageState.gains` restricted to the slice's coverage entries;
    single-pass writers only ever look at one group, so this avoids touching every candidate.
    """
    cov = inst.coverage
    p0, p1 = int(cov.indptr[lo]), int(cov.indptr[hi])
    if p0 == p1:
        return np.zeros(hi - lo)
    cols = cov.indices[p0:p1]
    zc = z[cols]
    per = prep.entry_weight[p0:p1] * (prep.h(zc + cov.data[p0:p1]) - prep.h(zc))
    return np.bincount(prep.entry_row[p0:p1] - lo, weights=per, minlength=hi - lo)


# --------------------------------------------------------------------------- writers


def _gvt(inst: CompiledInstance, budget: float) -> tuple[int, ...]:
    """Grouped value threshold (DESIGN.md section 6).

    Thresholds are {F({u}) / c_u : c_u <= B} plus 0, descending. For each threshold, one pass
    over groups in arrival order inserts, per group, the feasible candidate with gain / cost >=
    threshold (tolerance 1e-12) and the largest (gain, -cost, smaller id). The pass with the
    best F wins; ties go to lower cost, then the earlier (higher) threshold.

    Running one pass per threshold repeats most work: passes with nearby thresholds make the
    same decisions on their first groups. So the passes are run together as a decision tree:
    at each group the gains are computed once, and the (descending) thresholds still alive at
    that node are split into contiguous runs that make the same choice. Every leaf is exactly
    the pass of each threshold it holds, so the result equals the naive loop.
    """
    prep = _prep(inst)
    cost, starts, suffix_min = prep.costs, prep.starts, prep.suffix_min_cost
    ids = inst.candidate_ids
    cap = inst.group_capacity
    limit = budget + _budget_tol(budget)
    n_groups = inst.n_groups

    root = CoverageState(inst)
    single = root.gains()
    fits = inst.cost <= limit
    dens = np.sort(single[fits] / inst.cost[fits])[::-1]
    thresholds: list[float] = []
    for t in [*dens.tolist(), 0.0]:
        if t >= 0.0 and (not thresholds or not _tied(thresholds[-1], t)):
            thresholds.append(t)

    # Best leaf so far: (value, cost, first threshold index, state).
    best: tuple[float, float, int, CoverageState] | None = None
    # Node: (group, picks already made in this group, state, spent, threshold indices).
    stack: list[tuple[int, int, CoverageState, float, list[int]]] = [
        (0, 0, root, 0.0, list(range(len(thresholds))))
    ]
    while stack:
        g, used, state, spent, taus = stack.pop()
        if g >= n_groups or spent + suffix_min[g] > limit:
            # A finished pass (nothing later can fit). Best F; tie: lower cost, then the
            # earlier (higher) threshold.
            value = state.value
            if (
                best is None
                or (value > best[0] and not _tied(value, best[0]))
                or (_tied(value, best[0]) and (spent, taus[0]) < (best[1], best[2]))
            ):
                best = (value, spent, taus[0], state)
            continue
        lo, hi = starts[g], starts[g + 1]
        gains = _slice_gains(inst, prep, state.z, lo, hi).tolist()
        taken = set(state.selected) if used else ()
        elig: list[tuple[float, float, int]] = []  # (density, gain, position)
        for k, gain in enumerate(gains):
            i = lo + k
            if gain > GAIN_EPS and spent + cost[i] <= limit and i not in taken:
                elig.append((gain / cost[i], gain, i))
        if not elig:
            stack.append((g + 1, 0, state, spent, taus))
            continue
        # Walk thresholds from high to low; the admissible set only grows, so the choice
        # changes at most len(elig) times and equal choices form contiguous runs.
        elig.sort(key=lambda e: -e[0])
        runs: list[tuple[int | None, list[int]]] = []
        choice: int | None = None
        choice_key: tuple[float, float] = (0.0, 0.0)
        j = 0
        for t_idx in taus:
            floor = thresholds[t_idx] - TIE_TOL
            while j < len(elig) and elig[j][0] >= floor:
                _, gain, i = elig[j]
                key = (gain, -cost[i])
                # Largest gain, then lower cost, then smaller id (= lower position).
                if (
                    choice is None
                    or _beats(key, choice_key)
                    or (not _beats(choice_key, key) and ids[i] < ids[choice])
                ):
                    choice, choice_key = i, key
                j += 1
            if runs and runs[-1][0] == choice:
                runs[-1][1].append(t_idx)
            else:
                runs.append((choice, [t_idx]))
        for pick, run_taus in runs:
            if pick is None:
                stack.append((g + 1, 0, state, spent, run_taus))
                continue
            child = state.copy()
            child.add(pick)
            used_next = used + 1
            if used_next < cap and used_next < hi - lo:
                stack.append((g, used_next, child, spent + cost[pick], run_taus))
            else:
                stack.append((g + 1, 0, child, spent + cost[pick], run_taus))
    assert best is not None  # the root always reaches a leaf
    return tuple(sorted(best[3].selected))


def _density(inst: CompiledInstance, budget: float) -> tuple[int, ...]:
    """One pass over groups; per group the best (density, gain, -cost, smaller id)."""
    prep = _prep(inst)
    cost, starts, suffix_min = prep.costs, prep.starts, prep.suffix_min_cost
    ids = inst.candidate_ids
    limit = budget + _budget_tol(budget)
    state = CoverageState(inst)
    spent = 0.0
    for g in range(inst.n_groups):
        if spent + suffix_min[g] > limit:
            break
        lo, hi = starts[g], starts[g + 1]
        for _ in range(min(inst.group_capacity, hi - lo)):
            gains = _slice_gains(inst, prep, state.z, lo, hi).tolist()
            choice, choice_key = None, None
            for k, gain in enumerate(gains):
                i = lo + k
                c = cost[i]
                if gain <= GAIN_EPS or spent + c > limit or i in state.selected:
                    continue
                key = (gain / c, gain, -c)
                if (
                    choice is None
                    or _beats(key, choice_key)
                    or (not _beats(choice_key, key) and ids[i] < ids[choice])
                ):
                    choice, choice_key = i, key
            if choice is None:
                break
            state.add(choice)
            spent += cost[choice]
    return tuple(sorted(state.selected))


def _greedy_over(
    inst: CompiledInstance, budget: float, allowed: np.ndarray | None
) -> tuple[int, ...]:
    """Global cost-benefit greedy by (gain/cost, gain, -cost, smaller id) over open groups."""
    cost = inst.cost
    limit = budget + _budget_tol(budget)
    open_ = np.ones(inst.n_candidates, dtype=bool) if allowed is None else allowed.copy()
    group_count = np.zeros(inst.n_groups, dtype=np.int64)
    state = CoverageState(inst)
    spent = 0.0
    while True:
        open_ &= cost <= limit - spent
        if not open_.any():
            break
        gains = state.gains()
        cand = np.flatnonzero(open_ & (gains > GAIN_EPS))
        if cand.size == 0:
            break
        g, c = gains[cand], cost[cand]
        tied = cand[_tied_best([g / c, g, -c])]
        # Full ties across groups go to the smaller id (positions follow arrival order, not ids).
        pick = int(min(tied, key=lambda i: inst.candidate_ids[i]))
        state.add(pick)
        spent += float(cost[pick])
        open_[pick] = False
        grp = int(inst.group_idx[pick])
        group_count[grp] += 1
        if group_count[grp] >= inst.group_capacity:
            open_[inst.group_start[grp] : inst.group_start[grp + 1]] = False
    return tuple(sorted(state.selected))


def _greedy(inst: CompiledInstance, budget: float) -> tuple[int, ...]:
    return _greedy_over(inst, budget, None)


def _fact_only(inst: CompiledInstance, budget: float) -> tuple[int, ...]:
    return _greedy_over(inst, budget, _prep(inst).types == "atomic_fact")


def _summary_only(inst: CompiledInstance, budget: float) -> tuple[int, ...]:
    return _greedy_over(inst, budget, _prep(inst).types == "summary")


def _recency_raw(inst: CompiledInstance, budget: float) -> tuple[int, ...]:
    """raw_span candidates newest first (time desc, cost, id); add each one that fits."""
    cost = inst.cost
    limit = budget + _budget_tol(budget)
    raw = np.flatnonzero(_prep(inst).types == "raw_span").tolist()
    times, ids = inst.candidate_times, inst.candidate_ids
    raw.sort(key=lambda i: (-float(times[i]), float(cost[i]), ids[i]))
    state = CoverageState(inst)
    group_count: dict[int, int] = {}
    spent = 0.0
    for i in raw:
        c = float(cost[i])
        grp = int(inst.group_idx[i])
        if spent + c > limit or group_count.get(grp, 0) >= inst.group_capacity:
            continue
        if state.gain(i) <= GAIN_EPS:
            continue
        state.add(i)
        spent += c
        group_count[grp] = group_count.get(grp, 0) + 1
    return tuple(sorted(state.selected))


def _no_validity_gvt(inst: CompiledInstance, budget: float) -> tuple[int, ...]:
    """gvt on the pool without tombstone / compound_update, mapped back to ``inst`` positions."""
    pool = inst.pool_instance("no_validity")
    picked = _gvt(pool, budget)
    return tuple(sorted(inst.candidate_idx(pool.candidate_ids[i]) for i in picked))


WRITERS: dict[str, WriterInfo] = {}


def register_writer(info: WriterInfo) -> WriterInfo:
    """Add a writer to :data:`WRITERS` (the one registry the CLI, app and sweeps read)."""
    WRITERS[info.name] = info
    return info


for _info in (
    WriterInfo(
        "gvt",
        "Grouped value threshold: for each density threshold, one pass over experiences keeping "
        "the admissible representation with the largest gain; best pass wins.",
        "oracle",
        _gvt,
    ),
    WriterInfo(
        "density",
        "Density only (negative control): one pass, per experience the representation with the "
        "best gain per cost.",
        "oracle",
        _density,
    ),
    WriterInfo(
        "greedy",
        "Global cost-benefit greedy: repeatedly add the best gain-per-cost candidate anywhere.",
        "oracle",
        _greedy,
    ),
    WriterInfo("fact_only", "Cost-benefit greedy over atomic facts only.", "oracle", _fact_only),
    WriterInfo("summary_only", "Cost-benefit greedy over summaries only.", "oracle", _summary_only),
    WriterInfo(
        "recency_raw",
        "Raw spans only, newest experience first, each one kept if it still fits.",
        "oracle",
        _recency_raw,
    ),
    WriterInfo(
        "no_validity_gvt",
        "gvt without tombstones and compound updates (how much the writer needs validity types).",
        "oracle",
        _no_validity_gvt,
    ),
):
    register_writer(_info)


def writer_names() -> tuple[str, ...]:
    """Registered writer names in registration order."""
    return tuple(WRITERS)


def get_writer(name: str) -> WriterInfo:
    """Look a writer up by name.

    Raises
    ------
    UnknownNameError
        Naming the known writers.
    """
    try:
        return WRITERS[name]
    except KeyError:
        raise UnknownNameError(f"unknown writer {name!r} (known: {', '.join(WRITERS)})") from None


def run_writer(name: str, inst: CompiledInstance, budget: float) -> WriterResult:
    """Run a registered writer and return its store with F recomputed independently.

    Parameters
    ----------
    name : str
        A key of :data:`WRITERS`.
    inst : CompiledInstance
    budget : float
        Budget B >= 0 (same units as candidate costs).

    Returns
    -------
    WriterResult

    Raises
    ------
    UnknownNameError
        For an unknown writer name.
    MemAuditError
        For a budget that is not a finite number >= 0.
    WriterError
        If the writer broke the budget or the group capacity (a bug in a writer).

    Examples
    --------
    >>> from memaudit_core.generators import generate
    >>> from memaudit_core.compiled import compile_package
    >>> inst = compile_package(generate("memaudit-small", seed=0))
    >>> res = run_writer("recency_raw", inst, 8)
    >>> res.selected, res.cost
    (('s0_pref_1_update_raw_span',), 6.0)
    """
    info = get_writer(name)
    try:
        b = float(budget)
    except (TypeError, ValueError):
        raise MemAuditError(f"budget must be a number, got {budget!r}") from None
    if not math.isfinite(b) or b < 0:
        raise MemAuditError(f"budget must be a finite number >= 0, got {budget!r}")
    selected = tuple(sorted(int(i) for i in info.fn(inst, b)))
    idx = np.asarray(selected, dtype=np.int64)
    cost = float(inst.cost[idx].sum()) if selected else 0.0
    if not inst.is_feasible(idx, b):
        raise WriterError(
            f"writer {name!r} returned an infeasible store at budget {b:g} "
            f"(cost {cost:g}, {len(selected)} candidates)"
        )
    return WriterResult(
        writer=name,
        budget=b,
        selected_idx=selected,
        selected=inst.ids(selected),
        value=evaluate(inst, idx),
        cost=cost,
    )


__all__ = [
    "TIE_TOL",
    "WRITERS",
    "WriterInfo",
    "WriterResult",
    "get_writer",
    "register_writer",
    "run_writer",
    "writer_names",
]
